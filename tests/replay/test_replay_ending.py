"""How a recording ended: --strict fails on an archive its program never closed (killed,
crashed) and on a process with no records; every replay fails when the record count the
trailer or a clean manifest states is not what events.bin holds."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile import HostileArchive, describe, keep_frames, split_frames
from hrrtest import only, replay

from hrr.archive import open_archive, repair
from hrr.cli.info import archive_info, render_info
from hrr.replay.result import Outcome, ProcessResult

APP = Path(__file__).resolve().parent / "apps" / "ending.py"
NOT_CLOSED = ("the archive was not closed (no trailer, manifest clean_shutdown false): its "
              "program was killed or crashed, so calls it made may be missing")
NO_CALLS = "the process recorded no calls: there was nothing to replay or check"


def _hrr(*args, **kw) -> list[str]:
    env = dict(os.environ)
    env.pop("HRR_MODE", None)
    return [sys.executable, "-m", "hrr.cli.main", *map(str, args)], env


def _capture(root: Path, mode: str) -> subprocess.CompletedProcess:
    cmd, env = _hrr("capture", "-o", root, "--plugins", "privacy", "--content", "--", sys.executable, APP, mode)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)


def _info(root: Path) -> str:
    return render_info(archive_info(str(root)))


def _replay(root: Path, strict: bool = False) -> tuple[int, ProcessResult]:
    """In process: (exit code, the one process's result)."""
    result = replay(root, backend="sim", strict=strict)
    return result.exit_code, only(result)


@pytest.mark.parametrize("mode,signum", [("none", signal.SIGKILL), ("segv", signal.SIGSEGV)])
def test_a_process_killed_before_or_at_its_first_call_fails_strict(tmp_path, mode, signum):
    root = tmp_path / mode
    proc = _capture(root, mode)
    assert proc.returncode == 128 + signum, describe(proc)
    assert "NOT closed" in _info(root)
    code, out = _replay(root, strict=True)
    assert code == 1 and NOT_CLOSED in out.strict_reasons and NO_CALLS in out.strict_reasons, out
    assert out.outcome is Outcome.REFUSED
    code, out = _replay(root)   # replays what is there (nothing) and says so
    assert code == 0, out
    assert "Archive: NOT closed (no trailer, manifest clean_shutdown false): replayed the 0 complete " \
           "records it holds" in out.notes and "Archive: the process recorded no calls" in out.notes, out


def test_a_run_killed_by_sigkill_fails_strict_and_replays_what_it_holds(tmp_path):
    """Deterministic: the program makes its calls, says READY and blocks; the test waits
    until its records are on disk, then kills it with SIGKILL."""
    root = tmp_path / "killed"
    cmd, env = _hrr("capture", "-o", root, "--plugins", "privacy", "--content", "--",
                    sys.executable, APP, "wait")
    capture = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert capture.stdout.readline().strip() == "READY"
        (pid_dir,) = [p for p in root.iterdir() if p.name.startswith("pid-")]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:   # the writer flushes within ~50 ms
            with open_archive(root) as archive:
                state = archive.processes[0].scan()
            if state.frames == 4 and not state.torn:
                break
            time.sleep(0.01)
        assert state.frames == 4 and not state.torn, state
        os.kill(int(pid_dir.name[4:]), signal.SIGKILL)
        assert capture.wait(timeout=60) == 128 + signal.SIGKILL
    finally:
        if capture.poll() is None:
            capture.kill()
            capture.wait()
        for f in (capture.stdin, capture.stdout, capture.stderr):
            f.close()
    assert "NOT closed" in _info(root)
    code, out = _replay(root, strict=True)
    assert code == 1 and NOT_CLOSED in out.strict_reasons and NO_CALLS not in out.strict_reasons, out
    assert out.checks == (1, 0, 0)
    code, out = _replay(root)
    assert code == 0, out
    assert "Archive: NOT closed (no trailer, manifest clean_shutdown false): replayed the 4 complete " \
           "records it holds" in out.notes and out.outcome is Outcome.OK, out


def test_a_closed_process_with_no_calls_fails_strict(tmp_path):
    HostileArchive(tmp_path / "a").close()
    code, out = _replay(tmp_path / "a", strict=True)
    assert code == 1 and NO_CALLS in out.strict_reasons, out
    assert not any("not closed" in line for line in out.strict_reasons + out.notes + out.failures), out
    assert _replay(tmp_path / "a")[0] == 0


def _archive_of_33(root: Path) -> Path:
    a = HostileArchive(root)
    for _ in range(33):
        a.call("hipInit", [0])
    a.close()
    return a.path


@pytest.mark.parametrize("strict", [False, True])
def test_frames_cut_out_behind_a_valid_trailer_fail_replay(tmp_path, strict):
    """3 of 33 records kept, the trailer (and the clean manifest) still claim 33: it
    replayed 3 and said OK; now it fails with the counts, strict or not."""
    pid_dir = _archive_of_33(tmp_path / "a")
    keep_frames(pid_dir, slice(0, 3))
    code, out = _replay(tmp_path / "a", strict=strict)
    assert code == 1, out
    assert "its trailer says the process recorded 33 records, events.bin holds 3: records " \
           "were lost or removed" in out.failures, out
    assert "its manifest says the process recorded 33 records, events.bin holds 3: records " \
           "were lost or removed" in out.failures, out
    assert out.outcome is Outcome.FAILED


def test_events_truncated_at_a_frame_boundary_fail_against_the_clean_manifest(tmp_path):
    """No torn tail, no trailer: only the manifest (clean_shutdown true) knows there were 33."""
    pid_dir = _archive_of_33(tmp_path / "a")
    keep_frames(pid_dir, slice(0, 3), trailer=False)
    code, out = _replay(tmp_path / "a")
    assert code == 1, out
    assert "its manifest says the process recorded 33 records, events.bin holds 3: records " \
           "were lost or removed" in out.failures, out
    assert "NOT closed" in _info(tmp_path / "a")


def test_frames_added_behind_the_trailer_fail_replay(tmp_path):
    pid_dir = _archive_of_33(tmp_path / "a")
    keep_frames(pid_dir, list(range(33)) + [5])
    code, out = _replay(tmp_path / "a")
    assert code == 1, out
    assert "its trailer says the process recorded 33 records, events.bin holds 34: records " \
           "were added" in out.failures, out
    assert any(note.startswith("Archive: NOT closed (the trailer's count is not the records'): replayed the 34 ")
               for note in out.notes), out


def test_bytes_after_the_trailer_fail_strict(tmp_path):
    """A frame appended after the trailer is never read: the 33 records replay, and
    --strict fails because the archive is not as its capture closed it."""
    pid_dir = _archive_of_33(tmp_path / "a")
    events = pid_dir / "events.bin"
    head, frames = split_frames(pid_dir)
    events.write_bytes(events.read_bytes() + frames[0][1])
    code, out = _replay(tmp_path / "a")
    assert code == 0 and out.backend == "sim" and out.records == 33, out
    code, out = _replay(tmp_path / "a", strict=True)
    assert code == 1 and any(reason.startswith("the archive was not closed (bytes after the trailer)")
                             for reason in out.strict_reasons), out


def test_an_intact_archive_passes_the_count_check(tmp_path):
    _archive_of_33(tmp_path / "a")
    code, out = _replay(tmp_path / "a", strict=True)
    assert code == 0 and out.notes == () and not any("records were" in f for f in out.failures), out


def test_a_repaired_archive_replays_but_fails_strict(tmp_path):
    a = HostileArchive(tmp_path / "a")
    a.call("hipInit", [0])
    a.leave_open()
    report = repair(str(tmp_path / "a"))
    assert report.count("repaired") == 1, report.summary()
    assert _replay(tmp_path / "a")[0] == 0
    code, out = _replay(tmp_path / "a", strict=True)
    assert code == 1, out
    assert "the archive was closed by `hrr repair`, not by its program: calls it made may be " \
           "missing" in out.strict_reasons, out
