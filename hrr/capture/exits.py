"""Closing a recording process's archive however the process ends.

* A normal exit (``sys.exit``, end of the program, KeyboardInterrupt): ``atexit``.
* SIGTERM and SIGHUP (and SIGINT where Python's own handler is not installed), when the
  program has not installed a handler of its own: close the archive, then die of the same
  signal with its default action (the exit status a parent sees is unchanged).
* ``multiprocessing`` children started by fork or forkserver leave through ``os._exit``
  after ``Process._bootstrap``, which skips ``atexit``; ``_bootstrap`` calls
  ``multiprocessing.util._exit_function`` last, so that function is wrapped to close the
  archive. (Spawned children exit through ``sys.exit``; Pool workers are ended by SIGTERM.)
* SIGKILL, a segfault, ``abort()``: no code runs. Every call that returned is already in
  the mapped events.bin (see the archive writer); the archive is left open with its
  manifest saying ``clean_shutdown: false``, and ``hrr repair`` closes it.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
from typing import Any, Iterator

CLOSING_SIGNALS = ("SIGTERM", "SIGHUP", "SIGINT")
_session: list[Any] = []    # the process's capture session (the same object after a fork)


def closing_signals() -> set[int]:
    """The signals whose handler closes the archive (those this platform has)."""
    return {getattr(signal, name) for name in CLOSING_SIGNALS if hasattr(signal, name)}


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold the closing signals back (blocked in this thread) while a session or its writer
    is being set up: one arriving then is handled right after, when there is an archive to
    close (a Pool worker can be sent SIGTERM while it is still starting)."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, closing_signals())
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def install_exit_handlers(session: Any) -> None:
    """Close ``session``'s archive at exit, on SIGTERM/SIGHUP/SIGINT and in multiprocessing children.

    Call it after registering the session's own fork handler: a forked child then holds
    the closing signals back until the session has opened the child's archive.
    """
    _session[:] = [session]
    atexit.register(close_archive)
    for name in CLOSING_SIGNALS:
        signum = getattr(signal, name, None)
        if signum is None:
            continue
        try:
            if signal.getsignal(signum) is signal.SIG_DFL:   # not the program's, not Python's own
                signal.signal(signum, _close_and_die)
        except (ValueError, OSError):   # not the main thread, or not settable here
            pass
    _wrap_multiprocessing_exit()
    # `before` handlers run in reverse order of registration (this one first) and
    # `after_in_child` ones in order (this one after the session's): the child inherits
    # the forking thread's mask, so its signals wait until its archive is open.
    os.register_at_fork(before=_defer_in_fork, after_in_parent=_restore_after_fork,
                        after_in_child=_child_ready)


_fork_mask: list[set[int]] = []


def _defer_in_fork() -> None:
    _fork_mask.append(signal.pthread_sigmask(signal.SIG_BLOCK, closing_signals()))


def _restore_after_fork() -> None:
    if _fork_mask:
        signal.pthread_sigmask(signal.SIG_SETMASK, _fork_mask.pop())


def _child_ready() -> None:
    _closing.clear()     # forked while another thread was closing: this child's archive is new
    _wrap_multiprocessing_exit()
    _restore_after_fork()


_closing: list[int | None] = []   # non-empty while close_archive runs: [a signal to die of after]


def close_archive(signal_name: str | None = None) -> None:
    """Close the session's archive. A closing signal that arrives meanwhile (a Pool worker
    leaving normally as the pool terminates it) waits for the close, then ends the process."""
    if not _session or _closing:
        return
    _closing.append(None)
    try:
        _session[0].close(signal_name=signal_name)
    finally:
        pending = _closing.pop()
        if pending is not None:
            _die_of(pending)


def _close_and_die(signum: int, frame: Any) -> None:
    """Close the archive, then end the process by ``signum``'s default action."""
    if _closing:              # this handler interrupted a close: let it finish, then die
        _closing[0] = signum
        return
    try:
        close_archive(signal_name=signal.Signals(signum).name)
    finally:
        _die_of(signum)


def _die_of(signum: int) -> None:
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)   # only if the signal is blocked in this thread


def _wrap_multiprocessing_exit() -> None:
    """Make multiprocessing's last call in a child process close the archive (once per process)."""
    util = sys.modules.get("multiprocessing.util")
    if util is None or getattr(util._exit_function, "_hrr_closes", False):
        return
    original = util._exit_function

    def _exit_function(*args: Any, **kwargs: Any) -> Any:
        try:
            return original(*args, **kwargs)
        finally:
            close_archive()

    _exit_function._hrr_closes = True   # type: ignore[attr-defined]
    util._exit_function = _exit_function
