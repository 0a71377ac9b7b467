"""``hrr capture`` and ``hrr run``: starting COMMAND (its environment, its interpreter, its
signals) and, for capture, what is said about the archive once it ended."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from typing import Any, Callable

import click

from hrr.config import MODE_ENV
from hrr.errors import HrrError, InterpreterError, UsageError

BOOTSTRAP_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                             "capture", "bootstrap")


def child_env(mode: str, backend: str | None, extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env[MODE_ENV] = mode
    if backend:
        env["HRR_BACKEND"] = backend
    env["PYTHONPATH"] = os.pathsep.join(p for p in (BOOTSTRAP_DIR, env.get("PYTHONPATH")) if p)
    # `python` in COMMAND should be the interpreter hrr runs in (where hrr is installed).
    env["PATH"] = os.pathsep.join(p for p in (os.path.dirname(sys.executable), env.get("PATH")) if p)
    env.update(extra)
    return env


_PYTHON_NAME = re.compile(r"(python|pypy)(\d+(\.\d+)*)?")


def check_interpreter(command: tuple[str, ...], env: dict[str, str]) -> None:
    """Before anything is created: a COMMAND that starts another Python interpreter than
    hrr's must be able to import hrr, or it would stop at once with nothing recorded.
    InterpreterError (one line naming it and how to install hrr there) when it cannot."""
    if not command:
        return
    exe = command[0] if os.sep in command[0] else shutil.which(command[0], path=env.get("PATH"))
    if (not exe or not _PYTHON_NAME.fullmatch(os.path.basename(exe))
            or os.path.abspath(exe) == os.path.abspath(sys.executable)):
        return
    probe_env = {k: v for k, v in env.items() if k != MODE_ENV}
    try:
        probe = subprocess.run([exe, "-c", "import importlib.util as u, sys; sys.exit(u.find_spec('hrr') is None)"],
                               env=probe_env, capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return   # not runnable here: starting COMMAND says so
    if probe.returncode != 1:
        return
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    source = root if os.path.exists(os.path.join(root, "pyproject.toml")) else "hrr"
    raise InterpreterError(
        f"{command[0]}{f' ({exe})' if exe != command[0] else ''} cannot import hrr: hrr is installed "
        f"for {sys.executable}",
        hint=f"install it there: {exe} -m pip install {source}; or run the program with `python`, "
             "which under hrr is the interpreter hrr is installed in")


def run_child(command: tuple[str, ...], env: dict[str, str], started: list | None = None,
              while_running: Callable[[], Any] | None = None) -> int:
    """Run COMMAND and wait for it (its pid is appended to ``started``; ``while_running`` is
    called once it has started, e.g. to import what comes after it meanwhile). While it runs,
    SIGINT is left to the child (a terminal sends it to both; the child closes its archive
    on its way out, and hrr must not kill it meanwhile) and SIGTERM/SIGHUP sent to hrr are
    passed on to the child."""
    if not command:
        raise UsageError("no command given", hint="put it after --, e.g. hrr capture -- python app.py")
    try:
        child = subprocess.Popen(list(command), env=env)
    except FileNotFoundError:
        raise UsageError(f"command not found: {command[0]}") from None
    except PermissionError:
        raise UsageError(f"command not executable: {command[0]}") from None
    if started is not None:
        started.append(child.pid)

    def forward(signum: int, frame: Any) -> None:
        child.send_signal(signum)

    previous = {sig: signal.signal(sig, handler) for sig, handler in
                ((signal.SIGINT, signal.SIG_IGN), (signal.SIGTERM, forward), (signal.SIGHUP, forward))}
    try:
        if while_running is not None:
            try:
                while_running()
            except Exception:  # noqa: BLE001 - never leave COMMAND unwaited; what needs it after says why
                pass
        status = child.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    # A child killed by signal N exits as a shell reports it: 128 + N.
    return 128 - status if status < 0 else status


def correct_the_ending(path: str, pid: int, status: int) -> None:
    """COMMAND's own process knows its exit status only when it left through sys.exit or
    an exception; a bare ``raise SystemExit(N)`` or ``os._exit(N)`` reads as 0 there. hrr
    saw the real status: where the closed manifest says a plain exit with another status,
    it is corrected (renamed into place, never written through a link)."""
    from hrr.archive.fsutil import open_dir_nofollow, replace_file
    from hrr.archive.manifest import encode

    if status == 0 or status >= 128:   # success, or a signal (its handler recorded it, if any)
        return
    try:
        dir_fd = open_dir_nofollow(os.path.join(path, f"pid-{pid}"))
    except OSError:
        return   # COMMAND was not a recorded Python process
    try:
        fd = os.open("manifest.json", os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0), dir_fd=dir_fd)
        with os.fdopen(fd, "rb") as f:
            manifest = json.loads(f.read(1 << 22))
        ended = manifest.get("ended")
        if isinstance(ended, dict) and ended.get("how") == "exit" and ended.get("status") != status:
            manifest["ended"] = {"how": "exit", "status": status}
            replace_file("manifest.json", encode(manifest), dir_fd=dir_fd, fsync=True)
    except (OSError, ValueError):
        pass   # an archive hrr cannot read back is reported by info and replay
    finally:
        os.close(dir_fd)


def size_and_pack_env(max_archive_bytes: int | None, pack_blobs: bool | None) -> dict[str, str]:
    """The environment that carries --max-archive-bytes and --pack-blobs to the recorded processes."""
    from hrr.config import MAX_ARCHIVE_BYTES_ENV, PACK_BLOBS_ENV

    env = {MAX_ARCHIVE_BYTES_ENV: str(max_archive_bytes)} if max_archive_bytes is not None else {}
    if pack_blobs is not None:
        env[PACK_BLOBS_ENV] = "1" if pack_blobs else "0"
    return env


def report_capture_state(archive: str, path: str) -> tuple[int, int]:
    """Say which process archives stopped recording early or are not closed; return how
    many are incomplete and how many are not closed (the archive unreadable: 0, 1).
    Processes that outlive COMMAND (multiprocessing's fork server and resource tracker end
    just after it) get up to two seconds to close their archives."""
    from hrr.archive import open_archive

    deadline = time.monotonic() + 2.0
    while True:
        # Which processes live is asked before their manifests are read: one that closes and
        # ends in between is then read as closed, never taken for killed.
        alive = {int(d[4:]) for d in os.listdir(path) if d.startswith("pid-") and d[4:].isdigit()
                 and _alive(int(d[4:]))}
        try:
            opened = open_archive(path)
        except HrrError as exc:
            click.echo(f"hrr: warning: cannot read the archive back: {exc}", err=True)
            return 0, 1
        with opened:
            states = [(p.pid, p.manifest.get("incomplete"), p.manifest.get("clean_shutdown") is True)
                      for p in opened.processes]
        running = [pid for pid, _, closed in states if not closed and pid in alive]
        if not running or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    incomplete = 0
    unclosed = sum(1 for _, _, closed in states if not closed)
    for pid, stopped, closed in states:
        if isinstance(stopped, dict):
            incomplete += 1
            lost = stopped.get("calls_not_recorded")
            click.echo(f"hrr: pid-{pid}: INCOMPLETE: {stopped.get('reason')}; the "
                       f"{stopped.get('events_recorded')} calls before it are recorded"
                       + (f", the {lost} after it are not" if lost is not None else ""), err=True)
        if closed:
            continue
        if pid in running:
            click.echo(f"hrr: pid-{pid}: still running after COMMAND ended; its archive is closed when it ends",
                       err=True)
        else:
            click.echo(f"hrr: pid-{pid}: not closed (the process was killed); every call it made is kept: "
                       f"`hrr repair {archive}` closes it", err=True)
    return incomplete, unclosed


def capture_summary(archive: str, path: str, status: int, plugins_on: list[str], unclosed: int = 0) -> None:
    """One line saying what capture recorded: processes, calls, blobs, size on disk, content
    mode and why (the manifests' ``content_why``), plugins; with content off, the flag that
    turns it on. Then, if COMMAND ended on a signal, a line saying so, naming `hrr repair`
    only when ``unclosed`` process archives were left open."""
    from hrr.archive import open_archive

    events = blobs = 0
    modes: set[str] = set()
    whys: set[str] = set()
    processes = sorted(d for d in os.listdir(path) if d.startswith("pid-"))
    try:
        with open_archive(path) as opened:
            for proc in opened.processes:
                counts = proc.manifest.get("counts") or {}
                events += counts.get("events", 0) if isinstance(counts.get("events"), int) else 0
                blobs += counts.get("blobs", 0) if isinstance(counts.get("blobs"), int) else 0
                modes.add(str(proc.manifest.get("content_mode") or "unknown"))
                if isinstance(proc.manifest.get("content_why"), str) and proc.manifest["content_why"]:
                    whys.add(proc.manifest["content_why"])
    except HrrError:
        pass   # already said by report_capture_state; the line below still counts what it can
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)
    mode = ",".join(sorted(modes)) or "none"
    why = f" ({'; '.join(sorted(whys))})" if whys else ""
    line = (f"hrr: archive {archive}: {len(processes)} process(es) recorded, {events} calls, {blobs} blobs, "
            f"{size} bytes on disk, content: {mode}{why}, "
            f"plugins: {', '.join(plugins_on) or 'none'}")
    if modes and modes != {"content"}:
        line += ("; to record content (what --strict and device-to-host checks need) pass --content "
                 "or set HIP_HRR_CAPTURE_CONTENT=1")
    elif modes == {"content"} and whys == {"no running plugin vetoed content"}:
        line += "; --metadata-only records none of the program's data"
    click.echo(line, err=True)
    if status > 128 and status - 128 in signal.valid_signals():
        name = signal.Signals(status - 128).name
        if unclosed:
            click.echo(f"hrr: COMMAND was killed by {name}: an archive it left open is kept; "
                       f"`hrr repair {archive}` closes it", err=True)
        else:
            click.echo(f"hrr: COMMAND ended on {name}; every process archive was closed on its way out "
                       "(nothing to repair)", err=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
