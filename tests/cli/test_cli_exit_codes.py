"""Exit codes that cannot be mistaken (hrr/exitcodes.py is the one table)."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from cli_helpers import app, capture, describe, hrr

from hrr import exitcodes
from hrr.cli.main import cli

COMMANDS = ("capture", "run", "replay", "info", "repair", "plugins", "export", "diff", "dump")


def test_the_codes_are_distinct_and_replay_keeps_its_contract():
    codes = [code for code, _ in exitcodes.TABLE]
    assert len(codes) == len(set(codes))
    assert (exitcodes.OK, exitcodes.FAILED, exitcodes.DIVERGED) == (0, 1, 2)
    assert exitcodes.USAGE not in (1, 2) and exitcodes.ARCHIVE_UNREADABLE != exitcodes.FAILED


@pytest.mark.parametrize("command", COMMANDS)
def test_every_help_lists_the_exit_codes(command):
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0, result.output
    assert "Exit codes:" in result.output
    for code, text in exitcodes.TABLE:
        assert f"{code:>3}  {text}" in result.output, (code, result.output)


@pytest.mark.parametrize("argv", [["replay", "--no-such-option", "x"], ["info"],
                                  ["replay", "--max-events", "lots", "x"], ["no-such-command"]])
def test_a_usage_error_exits_64_not_2(argv):
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == exitcodes.USAGE == 64, result.output


@pytest.mark.parametrize("argv", [["replay", "{}"], ["info", "{}"], ["repair", "{}"], ["dump", "{}"],
                                  ["export", "--chrome-trace", "{}.json", "{}"], ["diff", "{}", "{}"]])
def test_a_missing_archive_exits_4_not_1(tmp_path, argv):
    missing = str(tmp_path / "missing")
    proc = hrr(*[a.replace("{}", missing) for a in argv])
    assert proc.returncode == exitcodes.ARCHIVE_UNREADABLE == 4, describe(proc)
    assert "no such archive" in proc.stderr and "Traceback" not in proc.stderr, describe(proc)


def test_ctrl_c_during_replay_prints_a_partial_summary_and_exits_130(tmp_path, monkeypatch):
    root = tmp_path / "a"
    capture(root, *app("basic.py"))
    from hrr.replay.engine import ProcessReplayer

    real, seen = ProcessReplayer._replay_wire, []

    def interrupted_at_the_third(self, ev):
        seen.append(ev)
        if len(seen) == 3:
            raise KeyboardInterrupt
        return real(self, ev)
    monkeypatch.setattr(ProcessReplayer, "_replay_wire", interrupted_at_the_third)
    result = CliRunner().invoke(cli, ["replay", str(root)])
    assert result.exit_code == exitcodes.INTERRUPTED == 130, result.output
    assert "Aborted!" not in result.output
    assert "Device-to-host checks:" in result.output   # the partial summary
    assert "Result: INTERRUPTED (Ctrl-C) after 3 records" in result.output, result.output


def test_ctrl_c_in_info_prints_the_partial_tables_and_exits_130(tmp_path, monkeypatch):
    root = tmp_path / "a"
    capture(root, *app("basic.py"))
    from hrr.archive.reader import ProcessArchive

    real = ProcessArchive.checked_events

    def interrupted_after_three(self):
        for n, item in enumerate(real(self)):
            if n == 3:
                raise KeyboardInterrupt
            yield item
    monkeypatch.setattr(ProcessArchive, "checked_events", interrupted_after_three)
    result = CliRunner().invoke(cli, ["info", "--json", str(root)])
    assert result.exit_code == exitcodes.INTERRUPTED == 130, result.output
    assert "Aborted!" not in result.output
    data = json.loads(result.stdout)
    assert data["interrupted"]["after_records"] == 3 and data["processes"][0]["records"] == 3
    assert "after 3 records: the tables above are partial" in result.stderr, result.output


def test_ctrl_c_in_repair_says_how_far_it_got_and_exits_130(tmp_path, monkeypatch):
    import importlib
    root = tmp_path / "a"
    capture(root, *app("basic.py"))
    repair_module = importlib.import_module("hrr.archive.recovery")

    def interrupt(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(repair_module, "_repair_one", interrupt)
    result = CliRunner().invoke(cli, ["repair", str(root)])
    assert result.exit_code == 130, result.output
    assert "Aborted!" not in result.output
    assert "Repair summary: 0 repaired" in result.stdout, result.output
    assert "run `hrr repair" in result.stderr and "again to finish" in result.stderr, result.output


def test_ctrl_c_outside_a_loop_still_ends_with_one_line_and_130(tmp_path, monkeypatch):
    root = tmp_path / "a"
    capture(root, *app("basic.py"))

    def interrupt(*a, **k):
        raise KeyboardInterrupt
    import hrr.cli.info
    monkeypatch.setattr(hrr.cli.info, "archive_info", interrupt)
    result = CliRunner().invoke(cli, ["info", str(root)])
    assert result.exit_code == 130, result.output
    assert "Aborted!" not in result.output and "hrr: interrupted (Ctrl-C)" in result.output, result.output


@pytest.mark.parametrize("command", ["run", "capture", "replay"])
def test_the_hip_backend_is_refused_up_front_with_one_line(tmp_path, command):
    archive = tmp_path / "out"
    argv = {"run": ["run", "--backend", "hip", "--", *app("basic.py")],
            "capture": ["capture", "-o", archive, "--backend", "hip", "--", *app("basic.py")],
            "replay": ["replay", "--backend", "hip", tmp_path]}[command]
    proc = hrr(*argv, env={"ROCM_PATH": str(tmp_path)})   # a ROCm tree without libamdhip64.so
    assert proc.returncode == exitcodes.BACKEND_UNAVAILABLE == 69, describe(proc)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "libamdhip64.so cannot be loaded" in lines[0] and "sim" in lines[0], describe(proc)
    assert "basic: ok" not in proc.stdout and not archive.exists()   # nothing started


def test_hrr_backend_env_is_checked_too(tmp_path):
    proc = hrr("run", "--", *app("basic.py"), env={"HRR_BACKEND": "hip", "ROCM_PATH": str(tmp_path)})
    assert proc.returncode == 69 and "HRR_BACKEND hip" in proc.stderr, describe(proc)


def test_cuda_without_a_gpu_is_refused_up_front(tmp_path):
    from hrr.backends.cuda._runtime import gpu_unavailable_reason
    reason = gpu_unavailable_reason()
    if reason is None:
        pytest.skip("a GPU is usable here")
    proc = hrr("run", "--backend", "cuda", "--", *app("basic.py"))
    assert proc.returncode == 69 and reason in proc.stderr and "Traceback" not in proc.stderr, describe(proc)
