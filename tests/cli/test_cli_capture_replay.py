"""capture / replay / info / repair / run end to end through the real command line."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from cli_helpers import (EXAMPLE, app, capture, copy_archive, describe, hrr, info_json,
                         looping_capture, only_pid_dir, only_process, replay_json, rewrite_events)

MANIFEST_FIELDS = {"format_version", "backend", "plugins", "content_mode", "host_snapshots",
                   "unreplayable_apis", "counts", "clean_shutdown"}


@pytest.fixture(scope="module")
def basic_archive(tmp_path_factory):
    root = tmp_path_factory.mktemp("basic") / "archive"
    proc = capture(root, *app("basic.py"))
    assert "basic: ok" in proc.stdout
    return root


@pytest.mark.parametrize("status", [0, 3, 42])
def test_capture_exits_with_child_status(tmp_path, status):
    proc = capture(tmp_path / "a", *app("basic.py", status), check=None)
    assert proc.returncode == status, describe(proc)
    assert "basic: ok" in proc.stdout
    assert "1 process(es) recorded" in proc.stderr


def test_capture_child_killed_by_signal(tmp_path):
    proc = capture(tmp_path / "a", "python", "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)",
                   check=None)
    assert proc.returncode == 128 + signal.SIGTERM, describe(proc)


def test_replay_ok_and_summary(basic_archive):
    """The printed summary is the CLI's contract: these lines, exit 0."""
    proc = hrr("replay", "--strict", basic_archive, check=0)
    out = proc.stdout
    assert "Device-to-host checks: 1 passed, 0 failed" in out
    assert "Pinned host snapshots: 0 restored, 0 refused, 0 skipped (graph capture)" in out
    assert out.rstrip().endswith("Result: OK")


def test_info_json_has_manifest_fields(basic_archive):
    data = info_json(basic_archive)
    (proc,) = data["processes"]
    m = proc["manifest"]
    assert MANIFEST_FIELDS <= set(m), MANIFEST_FIELDS - set(m)
    assert m["format_version"] == 3
    assert m["backend"] == "sim"
    assert set(m["plugins"]) == {"privacy"}
    assert m["content_mode"] == "content"
    assert m["clean_shutdown"] is True and proc["clean"] is True and proc["torn"] is False
    assert isinstance(m["unreplayable_apis"], list)
    assert m["counts"]["events"] == sum(proc["calls"].values())
    assert proc["calls"]["hipModuleLaunchKernel"] == 1
    assert proc["pid"] == int(only_pid_dir(basic_archive).name[4:])
    text = hrr("info", basic_archive, check=0).stdout
    assert "clean" in text and "hipModuleLaunchKernel" in text


def test_info_events_json(basic_archive):
    (proc,) = info_json(basic_archive, events=True)["processes"]
    apis = [e["api"] for e in proc["events"]]
    assert apis[:3] == ["hipInit", "hipModuleLoadData", "hipModuleGetFunction"]
    assert [e["seq"] for e in proc["events"]] == list(range(len(apis)))
    assert "hipInit" in hrr("info", "--events", basic_archive, check=0).stdout


def test_metadata_only_is_strict_failure(tmp_path):
    root = tmp_path / "meta"
    capture(root, *app("basic.py"), content=False)
    assert info_json(root)["processes"][0]["manifest"]["content_mode"] == "metadata-only"
    proc, result = replay_json(root, "--strict")
    assert proc.returncode == 1, describe(proc)
    assert only_process(result)["content_mode"] == "metadata-only"
    assert any("metadata-only" in reason for reason in only_process(result)["strict_reasons"]), describe(proc)


def test_divergence_exits_2(basic_archive, tmp_path):
    """A recorded call that failed with an error replay does not reproduce: exit 2, and the
    printed verdict says DIVERGED (the CLI's contract)."""
    bad = copy_archive(basic_archive, tmp_path / "diverged")

    def fail_first_malloc(events):
        for ev in events:
            if ev[2] == "hipMalloc":
                ev[4] = 2  # hipErrorOutOfMemory, as if the recording ran out of memory
                break
        return events

    rewrite_events(only_pid_dir(bad), fail_first_malloc)
    proc = hrr("replay", bad)
    assert proc.returncode == 2, describe(proc)
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "Result: DIVERGED" in proc.stdout
    assert "hipMalloc" in proc.stdout + proc.stderr
    # --keep-going replays the rest and reports a failure instead.
    proc = hrr("replay", "--keep-going", bad)
    assert proc.returncode == 1, describe(proc)


def test_failed_d2h_check_exits_1(tmp_path):
    """The example reads pinned memory in its kernels; captured without the
    pinned_snapshot plugin, replay cannot restore those inputs and its D2H checks fail."""
    root = tmp_path / "nopinned"
    proc = capture(root, "python", EXAMPLE)
    assert "all results correct" in proc.stdout
    proc, result = replay_json(root)
    assert proc.returncode == 1, describe(proc)
    assert "Traceback" not in proc.stdout + proc.stderr
    replayed = only_process(result)
    assert any(f.startswith("record") and "bytes differ from the recording" in f for f in replayed["failures"])
    assert replayed["checks_failed"] > 0 and result["outcome"] == "FAILED", describe(proc)


def test_run_records_nothing(tmp_path):
    proc = hrr("run", "--backend", "sim", "--", "python", EXAMPLE, cwd=tmp_path, check=0)
    assert "serving step: all results correct" in proc.stdout
    assert os.listdir(tmp_path) == []


def _loaded_under(mode: str, prefixes: tuple[str, ...], tmp_path) -> str:
    """What a one-call program under ``hrr MODE`` on the sim has loaded of ``prefixes``
    (printed as a sorted list)."""
    (tmp_path / "mods.py").write_text(
        "import sys\nfrom hip import hip\nassert hip.hipGetDeviceCount()[1] >= 1\n"
        f"print(sorted(m for m in sys.modules if m.startswith({prefixes!r})))\n")
    args = ("-o", "a.hrr") if mode == "capture" else ()
    proc = hrr(mode, *args, "--backend", "sim", "--", "python", "mods.py", cwd=tmp_path, check=0)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    return proc.stdout.strip()


def test_run_loads_none_of_the_recorder(tmp_path):
    """``hrr run``'s processes pay none of capture's start-up: no session, recorder or plugins."""
    prefixes = ("hrr.capture.session", "hrr.capture.recorder", "hrr.pipeline", "hrr_plugins")
    assert _loaded_under("run", prefixes, tmp_path) == "[]"


def test_a_recorded_process_loads_no_reader_or_codec(tmp_path):
    """Recording writes events without the archive reader or the event codec (their start-up
    is the schema's checks, built from the catalogue); replay and hrr info load them."""
    assert _loaded_under("capture", ("hrr.archive.reader", "hrr.events.codec"), tmp_path) == "[]"


@pytest.mark.parametrize("mode", ["run", "capture"])
def test_the_program_starts_with_the_collector_on_and_no_collection_spent_on_hrr(tmp_path, mode):
    """hrr's start-up objects are long-lived: the collector is off while they are made (the
    program's first line sees the collections Python's own start made, and no full one) and
    on again for the program."""
    (tmp_path / "gcstate.py").write_text(
        "import gc, json\nprint(json.dumps([gc.isenabled()] + [s['collections'] for s in gc.get_stats()]))\n")
    plain = subprocess.run([sys.executable, "gcstate.py"], cwd=tmp_path, capture_output=True, text=True, check=True)
    args = ("-o", "a.hrr") if mode == "capture" else ()
    proc = hrr(mode, *args, "--backend", "sim", "--", "python", "gcstate.py", cwd=tmp_path, check=0)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    (on, *under_hrr), (_, *alone) = json.loads(proc.stdout), json.loads(plain.stdout)
    # without the pause: about a hundred more, and a full collection in capture's start
    assert on is True and under_hrr[2] == alone[2] and sum(under_hrr) <= sum(alone) + 5, (under_hrr, alone)


def test_run_exit_status(tmp_path):
    assert hrr("run", "--", *app("basic.py", 5), cwd=tmp_path).returncode == 5
    assert os.listdir(tmp_path) == []


def test_killed_capture_opens_repairs_and_replays(tmp_path):
    root = tmp_path / "killed"
    with looping_capture(root) as hrr_proc:   # the app has made 5 whole steps; all are recorded
        (pid_dir,) = [p for p in root.iterdir() if p.name.startswith("pid-")]
        os.kill(int(pid_dir.name[4:]), signal.SIGKILL)   # wherever it is now, mid-step or not
        assert hrr_proc.wait(timeout=30) == 128 + signal.SIGKILL

    data = info_json(root)
    (proc,) = data["processes"]
    assert proc["clean"] is False and proc["manifest"]["clean_shutdown"] is False
    assert proc["calls"]["hipModuleLaunchKernel"] >= 5
    assert "NOT closed" in hrr("info", root, check=0).stdout

    repaired = hrr("repair", root, check=0)
    assert "repaired" in repaired.stdout, describe(repaired)
    (proc2,) = info_json(root)["processes"]
    assert proc2["clean"] is True and proc2["torn"] is False
    assert proc2["manifest"]["clean_shutdown"] is True
    assert "already complete" in hrr("repair", root, check=0).stdout

    replayed, result = replay_json(root)
    assert replayed.returncode == 0, describe(replayed)
    assert result["outcome"] == "OK"
    assert only_process(result)["checks_passed"] >= 5


def _installed_plugins() -> set[str]:
    from hrr.pipeline.manager import installed_plugins
    return set(installed_plugins())


def test_example_round_trip_with_every_plugin(tmp_path):
    """No --plugins: every installed plugin runs (pinned_snapshot included), and the
    example replays --strict with every check passing (the README's main job)."""
    root = tmp_path / "all"
    proc = capture(root, "python", EXAMPLE, plugins=None)
    assert "all results correct" in proc.stdout
    (info,) = info_json(root)["processes"]
    assert set(info["manifest"]["plugins"]) == _installed_plugins()
    assert info["manifest"]["host_snapshots"] is True
    proc, result = replay_json(root, "--strict")
    assert proc.returncode == 0, describe(proc)
    replayed = only_process(result)
    assert (replayed["checks_passed"], replayed["checks_failed"], replayed["checks_unverifiable"]) == (5, 0, 0)
    assert set(replayed["pinned"]) == {"restored", "refused", "skipped_graph_capture"}
    assert result["outcome"] == "OK", describe(proc)


def test_plugins_command_lists_every_installed_plugin():
    proc = hrr("plugins", check=0)
    for name in _installed_plugins():
        assert any(ln.startswith(f"{name} ") for ln in proc.stdout.splitlines()), proc.stdout
    assert "hooks: " in proc.stdout
