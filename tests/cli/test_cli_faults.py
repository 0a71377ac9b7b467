"""Faults while recording, through the real command line: kills, crashes and signals (no call
that returned is lost), multiprocessing children (each closed, every call kept), a full disk
and the file-size limit (recording stops, the program does not), archive modes whatever the
umask."""
from __future__ import annotations

import json
import os
import resource
import signal
import stat
import subprocess
import sys
from collections import Counter

import pytest
import smallfs
from cli_helpers import APPS, BASE_PLUGINS, app, capture, describe, hrr, info_json

from hrr.archive import Record, open_archive

LOOP_APIS = {"hipMemcpy", "hipMemset", "hipDeviceSynchronize"}


def _default_signals() -> None:
    """The program starts with SIGHUP and SIGTERM at their default action, as from a shell,
    even when pytest itself runs under nohup (which would leave SIGHUP ignored, and hrr
    keeps a disposition the program inherited)."""
    for signum in (signal.SIGHUP, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)


class _Capture:
    """`hrr capture` of a program that reports on stdout each call that returned to it."""

    def __init__(self, root, *app_args, **popen) -> None:
        env = dict(os.environ)
        env.pop("HRR_MODE", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hrr.cli.main", "capture", "-o", str(root), "--plugins", BASE_PLUGINS,
             "--content", "--", *app(*app_args)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_default_signals, **popen)
        self.returned = 0           # the last call count the program reported
        self.other = b""            # the rest of its stdout
        line = self.proc.stdout.readline().split()
        assert line and line[0] == b"pid", line
        self.app_pid = int(line[1])

    def _take(self, line: bytes) -> None:
        if line.strip().isdigit():
            self.returned = int(line)
        else:
            self.other += line

    def wait_for(self, n: int) -> None:
        """Block until the program reports that its n-th call has returned."""
        for line in self.proc.stdout:
            self._take(line)
            if self.returned >= n:
                return
        raise AssertionError(f"the program ended before {n} calls: {self.proc.stderr.read().decode()}")

    def finish(self) -> str:
        """Read what is left once everything has ended; returns hrr's stderr."""
        try:
            for line in self.proc.stdout:
                self._take(line)
            err = self.proc.stderr.read().decode()
            self.proc.wait(timeout=60)
            return err
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.proc.stdout.close()
            self.proc.stderr.close()


def _loop_calls(root) -> tuple[int, bool, dict]:
    """(loop calls in the archive as it was left, whether it is closed, its manifest)."""
    with open_archive(root) as archive:
        (proc,) = archive.processes
        records = list(proc.events())
        assert all(isinstance(r, Record) for r in records)
        return sum(r.value[2] in LOOP_APIS for r in records), proc.clean, proc.manifest


@pytest.mark.parametrize("after", [1, 1000])
def test_sigkill_keeps_every_call_that_returned(tmp_path, after):
    root = tmp_path / "a"
    run = _Capture(root, "report_calls.py", "loop")
    run.wait_for(after)
    os.kill(run.app_pid, signal.SIGKILL)
    run.finish()
    assert run.proc.returncode == 128 + signal.SIGKILL
    kept, clean, _ = _loop_calls(root)
    assert after <= run.returned <= kept <= run.returned + 1 and not clean   # +1: recorded, not yet reported
    assert "repaired" in hrr("repair", root, check=0).stdout
    assert _loop_calls(root)[:2] == (kept, True)


@pytest.mark.parametrize("mode,signum", [("segv", signal.SIGSEGV), ("abort", signal.SIGABRT)])
def test_crash_keeps_every_call_that_returned(tmp_path, mode, signum):
    root = tmp_path / "a"
    run = _Capture(root, "report_calls.py", mode, 700)
    err = run.finish()
    assert run.proc.returncode == 128 + signum, err
    assert run.returned == 700
    kept, clean, manifest = _loop_calls(root)
    assert kept == 700 and not clean and manifest["clean_shutdown"] is False
    assert "not closed" in err and "hrr repair" in err
    assert "repaired" in hrr("repair", root, check=0).stdout
    assert _loop_calls(root)[:2] == (700, True)


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP"])
def test_termination_signal_closes_the_archive_and_still_kills(tmp_path, signame):
    signum = getattr(signal, signame)
    root = tmp_path / "a"
    run = _Capture(root, "report_calls.py", "loop")
    run.wait_for(300)
    os.kill(run.app_pid, signum)
    err = run.finish()
    assert run.proc.returncode == 128 + signum, err
    kept, clean, manifest = _loop_calls(root)
    assert clean and manifest["closed_on_signal"] == signame
    assert 300 <= run.returned <= kept <= run.returned + 1
    assert "already complete" in hrr("repair", root, check=0).stdout


def test_programs_own_sigterm_handler_is_kept(tmp_path):
    root = tmp_path / "a"
    run = _Capture(root, "report_calls.py", "handler")
    run.wait_for(100)
    os.kill(run.app_pid, signal.SIGTERM)
    err = run.finish()
    assert run.proc.returncode == 0 and b"app handler" in run.other, err
    kept, clean, manifest = _loop_calls(root)
    assert clean and "closed_on_signal" not in manifest and run.returned <= kept <= run.returned + 1


def test_ctrl_c_reaches_the_program_and_hrr_waits_for_it(tmp_path):
    """A terminal's SIGINT goes to the whole process group: the program ends through its
    KeyboardInterrupt (closing its archive) while hrr waits for it instead of killing it."""
    root = tmp_path / "a"
    run = _Capture(root, "report_calls.py", "loop", start_new_session=True)
    run.wait_for(200)
    os.killpg(run.proc.pid, signal.SIGINT)
    err = run.finish()
    assert run.proc.returncode == 128 + signal.SIGINT, err
    assert "KeyboardInterrupt" in err
    assert "hrr repair" not in err and "ended on SIGINT" in err, err   # the archive is closed already
    kept, clean, _ = _loop_calls(root)
    assert clean and run.returned <= kept <= run.returned + 1


@pytest.mark.parametrize("method,end", [("fork", "terminate"), ("fork", "join"), ("forkserver", "join"),
                                        ("spawn", "terminate")])
def test_multiprocessing_pool_workers_close_their_archives_with_every_call(tmp_path, method, end):
    root = tmp_path / "a"
    out = capture(root, *app("mp_pool.py", method, end)).stdout
    calls = {int(k): v for k, v in json.loads(out.split("CALLS ", 1)[1].splitlines()[0]).items()}
    main = int(out.split("MAIN ", 1)[1].split()[0])
    workers = {int(p) for p in out.split("WORKERS ", 1)[1].splitlines()[0].split()}
    assert sum(calls.values()) == 32 and set(calls) <= workers
    with open_archive(root) as archive:
        seen = {}
        for proc in archive.processes:
            if proc.pid not in workers and proc.pid != main:
                continue   # multiprocessing's fork server or resource tracker: they end after COMMAND
            assert proc.clean, (proc.pid, proc.manifest)
            seen[proc.pid] = Counter(r.value[2] for r in proc.events())
    # Every worker that started recording closed its archive, idle ones too (a spawned worker
    # that SIGTERM ends before its interpreter has started has no archive at all).
    assert set(calls) | {main} <= set(seen) and (method == "spawn" or workers <= set(seen))
    for pid, n in calls.items():
        assert seen[pid] == {"hipMalloc": 1 * n // 4, "hipMemcpy": 2 * n // 4, "hipFree": n // 4}, pid


def _limit_file_size(limit: int):
    def preexec() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return preexec


def test_file_size_limit_stops_recording_not_the_program(tmp_path):
    """`ulimit -f`, with SIGXFSZ at its default action (the program set it): going over the
    limit would kill it, so hrr checks the limit before writing."""
    root = tmp_path / "a"
    steps = 400
    env = dict(os.environ)
    env.pop("HRR_MODE", None)
    proc = subprocess.run(
        [sys.executable, "-m", "hrr.cli.main", "capture", "-o", str(root), "--plugins", BASE_PLUGINS,
         "--content", "--", *app("fill.py", 1024, steps, "--sigxfsz-default")],
        env=env, capture_output=True, text=True, timeout=120, preexec_fn=_limit_file_size(64 << 10))
    assert proc.returncode == 74, describe(proc)
    assert "fill: ok" in proc.stdout and f"step {steps - 1}" in proc.stdout
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr
    assert "recording stopped" in proc.stderr and "file-size limit" in proc.stderr, proc.stderr
    assert "INCOMPLETE" in proc.stderr
    (info,) = info_json(root)["processes"]
    stopped = info["manifest"]["incomplete"]
    assert "File too large" in stopped["reason"] and info["clean"] is True
    recorded = sum(info["calls"].values())
    assert stopped["events_recorded"] == recorded > 0
    assert recorded + stopped["calls_not_recorded"] == 1 + 3 * steps + 1     # every call, once
    replayed = hrr("replay", root)
    assert replayed.returncode == 0, describe(replayed)


FULL_DISK = r"""
import json, os, shutil, subprocess, sys
mnt, fill = sys.argv[1], sys.argv[2]
def hrr(*args):
    p = subprocess.run([sys.executable, "-m", "hrr.cli.main", *args], capture_output=True, text=True)
    return {"rc": p.returncode, "out": p.stdout, "err": p.stderr}
def capture(name, *extra):
    return hrr("capture", "-o", f"{mnt}/{name}", "--plugins", "privacy", "--content", "--",
               sys.executable, fill, "65536", "64", *extra)
out = {"capture": capture("a")}
out["info"] = json.loads(hrr("info", "--json", f"{mnt}/a")["out"])
out["replay"] = hrr("replay", f"{mnt}/a")
out["repair"] = hrr("repair", f"{mnt}/a")
shutil.rmtree(f"{mnt}/a")
out["capture_killed"] = capture("b", "--die")
fd = os.open(f"{mnt}/filler", os.O_WRONLY | os.O_CREAT, 0o600)   # leave no free block at all
try:
    while True:
        os.write(fd, b"x" * 4096)
except OSError:
    os.close(fd)
out["free_blocks"] = os.statvfs(mnt).f_bavail
out["repair_killed"] = hrr("repair", f"{mnt}/b")
out["info_killed"] = json.loads(hrr("info", "--json", f"{mnt}/b")["out"])
print(json.dumps(out))
"""


def test_full_disk_stops_recording_not_the_program_and_repair_needs_no_space(tmp_path):
    reason = smallfs.unavailable_reason()
    if reason:
        pytest.skip(reason)
    done = smallfs.run_python_on_tmpfs("2m", tmp_path / "mnt", FULL_DISK, str(APPS / "fill.py"))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    cap = out["capture"]
    assert cap["rc"] == 74 and "fill: ok" in cap["out"], cap
    assert "No space left on device" in cap["err"] and "INCOMPLETE" in cap["err"], cap["err"]
    assert "Traceback" not in cap["err"] and "ArchiveError" not in cap["err"], cap["err"]
    (info,) = out["info"]["processes"]
    assert info["clean"] is True and "No space left" in info["manifest"]["incomplete"]["reason"]
    assert info["manifest"]["incomplete"]["events_recorded"] == sum(info["calls"].values()) > 0
    assert out["replay"]["rc"] == 0, out["replay"]
    assert "already complete (its recording had stopped early" in out["repair"]["out"], out["repair"]
    killed = out["capture_killed"]
    assert killed["rc"] == 128 + signal.SIGKILL and "fill: ok" in killed["out"], killed
    assert out["free_blocks"] == 0
    rep = out["repair_killed"]
    # Repaired on the full disk (free_blocks was 0). Whether the manifest needed rewriting in
    # place depends on whether cutting events.bin's reserved tail gives a block back (with
    # framing v1 it did not, so the manifest was rewritten in place; with v2 on the H200
    # machine's tmpfs it did, and repair wrote a new copy).
    assert rep["rc"] == 0 and "repaired" in rep["out"], rep
    (info,) = out["info_killed"]["processes"]
    assert info["clean"] is True and info["manifest"]["repaired"] is True
    assert info["manifest"]["incomplete"]["events_recorded"] == sum(info["calls"].values()) > 0


def _modes(root):
    for dirpath, _, filenames in os.walk(root):
        yield dirpath, stat.S_IMODE(os.stat(dirpath).st_mode)
        for f in filenames:
            yield os.path.join(dirpath, f), stat.S_IMODE(os.stat(os.path.join(dirpath, f)).st_mode)


def test_archive_modes_whatever_the_umask(tmp_path):
    root = tmp_path / "new" / "archive"            # a missing parent too
    env = dict(os.environ)
    env.pop("HRR_MODE", None)
    proc = subprocess.run(
        [sys.executable, "-m", "hrr.cli.main", "capture", "-o", str(root), "--plugins", BASE_PLUGINS,
         "--content", "--", *app("basic.py")],
        env=env, capture_output=True, text=True, timeout=60, preexec_fn=lambda: os.umask(0o277))
    assert proc.returncode == 0, describe(proc)
    modes = dict(_modes(tmp_path / "new"))
    assert len(modes) > 5                          # root, pid dir, events, manifest, blobs...
    for path, mode in modes.items():
        assert mode == (0o700 if os.path.isdir(path) else 0o600), (path, oct(mode))


def test_existing_open_folder_is_made_private(tmp_path):
    root = tmp_path / "shared"
    root.mkdir()
    os.chmod(root, 0o777)
    capture(root, *app("basic.py"))
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
    assert all(mode in (0o700, 0o600) for _, mode in _modes(root))


EXITS_STUB = r"""
import os, signal, sys, threading, time
from hrr.capture import exits
log, when = sys.argv[1], sys.argv[2]

def note(line):
    with open(log, "a") as f:
        f.write(f"{os.getpid()} {line}\n")

class Session:                       # the two methods exits.py and fork handlers use
    closed, archive = False, "parent"
    def close(self, signal_name=None):
        if self.closed:
            return
        self.closed = True
        note(f"close {self.archive} start")
        if when == "during-close":
            os.kill(os.getpid(), signal.SIGTERM)
        note(f"close {self.archive} end {signal_name}")
    def after_fork_in_child(self):
        self.closed = False
        if when == "during-fork":
            os.kill(os.getpid(), signal.SIGTERM)
        self.archive = "child"       # the child's own archive is open from here on

if when == "during-setup":           # another thread (numpy's BLAS starts some at import)
    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
with exits.setting_up():
    if when == "during-setup":
        note("setup start")
        os.kill(os.getpid(), signal.SIGTERM)
    session = Session()
    os.register_at_fork(after_in_child=session.after_fork_in_child)
    exits.install_exit_handlers(session)
if when == "during-setup":
    for _ in range(200):             # the handler runs here at the latest, once it has been told
        time.sleep(0.05)
    note("went on")
if when == "during-fork":
    pid = os.fork()
    if pid == 0:
        note("child went on")
        os._exit(0)
    note(f"child status {os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])}")
"""


def _stub(tmp_path, when):
    log = tmp_path / "log"
    proc = subprocess.run([sys.executable, "-c", EXITS_STUB, str(log), when], capture_output=True, text=True,
                          timeout=60)
    return proc, [line.split(" ", 1)[1] for line in log.read_text().splitlines()]


def test_signal_during_a_close_waits_for_it_then_kills(tmp_path):
    """A Pool worker leaving normally is sent SIGTERM by pool.terminate() while it closes."""
    proc, log = _stub(tmp_path, "during-close")
    assert log == ["close parent start", "close parent end None"], log
    assert proc.returncode == -signal.SIGTERM, proc.stderr


def test_signal_while_a_forked_child_sets_up_closes_the_childs_own_archive(tmp_path):
    proc, log = _stub(tmp_path, "during-fork")
    assert proc.returncode == 0, proc.stderr
    assert log == ["close child start", "close child end SIGTERM", f"child status {-signal.SIGTERM}",
                   "close parent start", "close parent end None"], log


def test_signal_while_the_session_is_set_up_closes_it_once_built(tmp_path):
    """A spawned Pool worker can be sent SIGTERM while it starts; with another thread
    around, a signal blocked in the main thread would go to that thread and kill at once."""
    proc, log = _stub(tmp_path, "during-setup")
    assert log == ["setup start", "close parent start", "close parent end SIGTERM"], log
    assert proc.returncode == -signal.SIGTERM, proc.stderr


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_multiprocessing_child_whose_target_raises_records_its_ending(tmp_path, method):
    """multiprocessing catches the target's exception and exits 1 (SystemExit: its status):
    the child's manifest says so, never a clean exit."""
    root = tmp_path / "a"
    out = capture(root, *app("mp_raises.py", method)).stdout
    assert "EXITCODES 1 3" in out, out
    raised, left = (int(p) for p in out.split("PIDS ", 1)[1].split()[:2])
    with open_archive(root) as archive:
        ended = {p.pid: p.manifest["ended"] for p in archive.processes}
    assert ended[raised] == {"how": "exit", "status": 1}
    assert ended[left] == {"how": "exit", "status": 3}
