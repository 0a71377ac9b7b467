"""Closing a recording process's archive however the process ends.

* A normal exit (``sys.exit``, end of the program, KeyboardInterrupt): ``atexit``.
* SIGTERM and SIGHUP (and SIGINT where Python's own handler is not installed), when the
  program has not installed a handler of its own: close the archive, then die of the same
  signal with its default action (the exit status a parent sees is unchanged).
* ``multiprocessing`` children started by fork or forkserver leave through ``os._exit``
  after ``Process._bootstrap``, which skips ``atexit``; ``_bootstrap`` calls
  ``multiprocessing.util._exit_function`` last, so that function is wrapped to close the
  archive. (Spawned children exit through ``sys.exit``; Pool workers are ended by SIGTERM.)
* How the process ended is recorded at close as the manifest's ``ended``:
  ``{"how": "exit", "status": N}`` (``sys.exit``, ``exit()``, the end of the program),
  ``{"how": "exception", "exception": "ValueError"}`` (uncaught; its message only in
  content mode) or ``{"how": "signal", "signal": "SIGTERM"}``. A ``raise SystemExit(N)``
  that bypasses ``sys.exit`` and ``exit()`` reads as status 0 there; ``hrr capture``
  corrects the status of the process it started from what the operating system reports.
* SIGKILL, a segfault, ``abort()``: no code runs. Every call that returned is already in
  the mapped events.bin (see the archive writer); the archive is left open with its
  manifest saying ``clean_shutdown: false``, and ``hrr repair`` closes it.

A closing signal that arrives while the session is being set up, or while the archive is
being closed, is held (a Pool worker can be sent SIGTERM while it starts, or while it
closes on its way out) and acted on as soon as that is done. The handlers are installed
before the session is built, because a signal blocked in the main thread would go to any
other thread (numpy's BLAS threads start at import) and kill the process at once.
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
_busy: list[bool] = []      # non-empty while the session is set up or its archive closed
_held: list[int] = []       # a closing signal that arrived meanwhile
_ending: dict[str, Any] = {}   # how the process is ending, as far as it is known yet


def closing_signals() -> set[int]:
    """The signals whose handler closes the archive (those this platform has)."""
    return {getattr(signal, name) for name in CLOSING_SIGNALS if hasattr(signal, name)}


@contextlib.contextmanager
def setting_up() -> Iterator[None]:
    """Around building the session and calling :func:`install_exit_handlers` (main thread):
    the closing signals' handlers are installed first, where the program's interpreter
    still has the default action; one that arrives meanwhile is acted on when setup ends."""
    for signum in closing_signals():
        try:
            if signal.getsignal(signum) is signal.SIG_DFL:   # not the program's, not Python's own
                signal.signal(signum, _close_and_die)
        except (ValueError, OSError):   # not the main thread, or not settable here
            pass
    _busy.append(True)
    try:
        yield
    finally:
        _busy.pop()
        _act_on_held()


def install_exit_handlers(session: Any) -> None:
    """Close ``session``'s archive at exit, on a closing signal and in multiprocessing children.

    Call it after registering the session's own fork handler: a forked child then holds
    the closing signals back until the session has opened the child's archive.
    """
    _session[:] = [session]
    atexit.register(close_archive)
    _watch_ending()
    _wrap_multiprocessing_exit()
    # `before` handlers run in reverse order of registration (this one first) and
    # `after_in_child` ones in order (this one after the session's). A forked child has
    # only the forking thread, and inherits its mask: its closing signals stay pending
    # until its own archive is open.
    os.register_at_fork(before=_block_for_fork, after_in_parent=_unblock_after_fork,
                        after_in_child=_child_ready)


def close_archive(signal_name: str | None = None) -> None:
    """Close the session's archive (once); a closing signal that arrives meanwhile waits."""
    if not _session or _busy:
        return
    _busy.append(True)
    try:
        _session[0].close(signal_name=signal_name)
    finally:
        _busy.pop()
        _act_on_held()


def ended(signal_name: str | None = None, content: bool = False) -> dict[str, Any]:
    """How this process ended, for the manifest's ``ended`` (called while it closes).
    An exception's message is program data: kept only when ``content`` is true."""
    if signal_name is not None:
        return {"how": "signal", "signal": signal_name}
    if _ending.get("how") == "exception":
        out = {"how": "exception", "exception": _ending["exception"]}
        if content:
            out["message"] = _ending.get("message", "")
        return out
    return {"how": "exit", "status": _ending.get("status", 0)}


def _exit_status(code: Any) -> int:
    """The status the interpreter exits with for ``SystemExit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    return 1   # a message: printed to stderr, status 1


def _watch_ending() -> None:
    """Note uncaught exceptions (``sys.excepthook``) and exit statuses (``sys.exit``,
    ``exit()``, ``quit()``), chaining to whatever was installed before."""
    import builtins

    if getattr(sys.excepthook, "_hrr_watch", False):
        return
    previous_hook, previous_exit = sys.excepthook, sys.exit

    def excepthook(kind: type, value: BaseException, tb: Any) -> Any:
        _ending.update(how="exception", exception=kind.__name__, message=str(value)[:1000])
        return previous_hook(kind, value, tb)

    def exit(code: Any = None) -> Any:   # noqa: A001 -- stands in for sys.exit
        _ending.update(how="exit", status=_exit_status(code))
        return previous_exit(code)

    excepthook._hrr_watch = True   # type: ignore[attr-defined]
    sys.excepthook, sys.exit = excepthook, exit
    for name in ("exit", "quit"):
        quitter = getattr(builtins, name, None)
        if quitter is not None and not getattr(quitter, "_hrr_watch", False):
            setattr(builtins, name, _watched_quitter(quitter))


def _watched_quitter(quitter: Any) -> Any:
    """``exit()``/``quit()`` as the site module makes them, noting the status first."""
    class Watched(type(quitter)):   # type: ignore[misc]
        _hrr_watch = True

        def __call__(self, code: Any = None) -> Any:
            _ending.update(how="exit", status=_exit_status(code))
            return quitter(code)

    watched = Watched.__new__(Watched)
    watched.__dict__.update(quitter.__dict__)
    return watched


def _close_and_die(signum: int, frame: Any) -> None:
    """Close the archive, then end the process by ``signum``'s default action."""
    if _busy:                 # setting up or closing (maybe interrupted right here): after that
        _held[:] = [signum]
        return
    try:
        close_archive(signal_name=signal.Signals(signum).name)
    finally:
        _die_of(signum)


def _act_on_held() -> None:
    if _held and not _busy:
        signum = _held.pop()
        try:
            close_archive(signal_name=signal.Signals(signum).name)   # nothing if already closed
        finally:
            _die_of(signum)


def _die_of(signum: int) -> None:
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)   # only if the signal is blocked in this thread


_fork_mask: list[set[int]] = []


def _block_for_fork() -> None:
    _fork_mask.append(signal.pthread_sigmask(signal.SIG_BLOCK, closing_signals()))


def _unblock_after_fork() -> None:
    if _fork_mask:
        signal.pthread_sigmask(signal.SIG_SETMASK, _fork_mask.pop())


def _child_ready() -> None:
    _busy.clear()     # forked while another thread was closing: this child's archive is new
    _held.clear()
    _ending.clear()   # the parent's sys.exit in progress is not this child's ending
    _wrap_multiprocessing_exit()
    _unblock_after_fork()


def _note_exception_in_flight() -> None:
    """``Process._bootstrap`` calls ``_exit_function`` in a ``finally`` while the exception
    that ended ``run()``, if one did, is still in flight; the child then exits with that
    SystemExit's status, or with 1 for any other exception (its traceback printed): note
    that status, not a clean exit (a spawned child exits through ``sys.exit`` with it)."""
    exc = sys.exc_info()[1]
    if isinstance(exc, SystemExit):
        _ending.update(how="exit", status=_exit_status(exc.code))
    elif exc is not None:
        _ending.update(how="exit", status=1)


def _wrap_multiprocessing_exit() -> None:
    """Make multiprocessing's last call in a child process close the archive (once per process)."""
    util: Any = sys.modules.get("multiprocessing.util")
    if util is None or getattr(util._exit_function, "_hrr_closes", False):
        return
    original = util._exit_function

    def _exit_function(*args: Any, **kwargs: Any) -> Any:
        _note_exception_in_flight()
        try:
            return original(*args, **kwargs)
        finally:
            close_archive()

    _exit_function._hrr_closes = True   # type: ignore[attr-defined]
    util._exit_function = _exit_function
