"""The progress bar: on stderr only, stdout byte for byte the same; off on a pipe unless
--progress; on a terminal by default, --no-progress turns it off."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import hrr.cli.progress as progress_mod
from hrr.cli.main import cli

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "inspect"))
import dump_archive_gen  # noqa: E402

N_RECORDS = 2_345   # over the redraw step, so the bar is updated mid-way, not only at the end


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> str:
    return dump_archive_gen.write_archive(str(tmp_path_factory.mktemp("progress") / "a"), N_RECORDS)


def _commands(archive: str, out_dir: Path) -> dict[str, list[str]]:
    return {
        "info": ["info", archive],
        "dump": ["dump", "--jsonl", archive],
        "replay": ["replay", "--max-host-bytes", "67108864", archive],
        "repair": ["repair", archive],
        "export": ["export", "--chrome-trace", str(out_dir / "t.json"), archive],
    }


def _run(argv: list[str]) -> tuple[int, bytes, str]:
    result = CliRunner().invoke(cli, argv, catch_exceptions=False)
    return result.exit_code, result.stdout_bytes, result.stderr


@pytest.mark.parametrize("command", ["info", "dump", "replay", "repair", "export"])
def test_progress_on_a_pipe_goes_to_stderr_and_leaves_stdout_alone(archive, tmp_path, command):
    root = str(tmp_path / "a")
    shutil.copytree(archive, root)   # repair may write: each test its own copy
    argv = _commands(root, tmp_path)[command]
    code, out, err = _run(argv)
    code_p, out_p, err_p = _run(argv[:1] + ["--progress"] + argv[1:])
    assert (code_p, out_p) == (code, out)
    name = f"{command} pid-4242"
    assert name not in err and "rec/s" not in err and "\x1b[" not in err   # nothing added without it
    assert name in err_p and "rec/s" in err_p and f"{N_RECORDS}/{N_RECORDS}" in err_p, err_p
    # The command's own stderr lines are all still there, after the bar.
    for line in err.splitlines():
        assert line in err_p
    code_n, out_n, err_n = _run(argv[:1] + ["--no-progress"] + argv[1:])
    assert (code_n, out_n, err_n) == (code, out, err)


def test_info_progress_counts_to_the_manifest_total(archive):
    _, _, err = _run(["info", "--progress", archive])
    assert f"{N_RECORDS}/{N_RECORDS}" in err, err


def test_a_terminal_gets_the_bar_by_default_and_no_progress_turns_it_off(archive, monkeypatch):
    # stderr (whatever sys.stderr is at the time) is a terminal; stdout is not.
    monkeypatch.setattr(progress_mod, "_isatty", lambda stream: stream is sys.stderr)
    assert "info pid-4242" in _run(["info", archive])[2]
    assert "dump pid-4242" in _run(["dump", archive])[2]
    assert "pid-4242" not in _run(["info", "--no-progress", archive])[2]
    # Both on the terminal: dump's own lines show its progress, so no bar by default.
    monkeypatch.setattr(progress_mod, "_isatty", lambda stream: True)
    assert "pid-4242" not in _run(["dump", archive])[2]
    assert "info pid-4242" in _run(["info", archive])[2]


def test_wanted_follows_the_flag_then_the_terminal(monkeypatch):
    monkeypatch.setattr(progress_mod, "_isatty", lambda stream: False)
    assert progress_mod.wanted(True) and not progress_mod.wanted(None) and not progress_mod.wanted(False)
    monkeypatch.setattr(progress_mod, "_isatty", lambda stream: True)
    assert progress_mod.wanted(None) and not progress_mod.wanted(False)
    assert not progress_mod.wanted(None, streaming_stdout=True)


def test_bar_redraws_in_steps_not_per_record(monkeypatch):
    updates = []

    class FakeProgress:
        tasks = [type("T", (), {"total": 10_000})()]

        def start(self) -> None: ...

        def stop(self) -> None: ...

        def add_task(self, name, total):
            return 0

        def update(self, task, **kw):
            updates.append(kw)

    monkeypatch.setattr(progress_mod, "_make_progress", lambda out: FakeProgress())
    monotonic = iter(range(0, 10 ** 6))   # a clock that never passes the time step
    monkeypatch.setattr(progress_mod.time, "monotonic", lambda: next(monotonic) * 1e-9)
    with progress_mod.progress_bar(True) as bar:
        bar.task("x", 10_000)
        for n in range(1, 10_001):
            bar(n)
    completed = [u["completed"] for u in updates if "completed" in u]
    assert completed[-1] == 10_000 and len(completed) <= 10_000 // progress_mod._EVERY_RECORDS + 1
