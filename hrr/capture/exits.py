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
import os
import signal
import sys
from typing import Any

CLOSING_SIGNALS = ("SIGTERM", "SIGHUP", "SIGINT")
_session: list[Any] = []    # the process's capture session (the same object after a fork)


def install_exit_handlers(session: Any) -> None:
    """Close ``session``'s archive at exit, on SIGTERM/SIGHUP/SIGINT and in multiprocessing children."""
    _session[:] = [session]
    atexit.register(session.close)
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
    os.register_at_fork(after_in_child=_wrap_multiprocessing_exit)


def _close_and_die(signum: int, frame: Any) -> None:
    """Close the archive, then end the process by ``signum``'s default action."""
    try:
        if _session:
            _session[0].close(signal_name=signal.Signals(signum).name)
    finally:
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
            if _session:
                _session[0].close()

    _exit_function._hrr_closes = True   # type: ignore[attr-defined]
    util._exit_function = _exit_function
