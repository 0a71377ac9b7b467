"""Fork a child that must finish, never hang: a generous bound, the child killed on failure."""
from __future__ import annotations

import os
import threading
import time
import traceback
from typing import Callable

CHILD_BOUND_S = 30.0   # generous: a healthy child takes milliseconds
_at_fork_hook: list[Callable[[], None]] = []
_registered = False


def on_next_fork(hook: Callable[[], None]) -> None:
    """Run ``hook`` in the forking thread at the start of the next fork (before hrr's own
    fork handler, which Python runs later because it was registered earlier)."""
    global _registered
    if not _registered:
        os.register_at_fork(before=_run_hook)
        _registered = True
    _at_fork_hook.append(hook)


def _run_hook() -> None:
    while _at_fork_hook:
        _at_fork_hook.pop()()


def run_child(body: Callable[[], int], bound_s: float = CHILD_BOUND_S) -> int | None:
    """Fork; the child runs ``body`` and exits with its result (2 on an exception). Returns
    the child's exit code, or None when it did not finish within ``bound_s`` (then killed)."""
    pid = os.fork()
    if pid == 0:
        code = 2
        try:
            code = int(body())
        except BaseException:  # noqa: BLE001 - the child reports through its exit code
            traceback.print_exc()
        os._exit(code)
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)   # polling, not a race: the bound is what matters
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return None


class HeldLock:
    """Another thread holds ``lock`` until a fork begins, then lets it go.

    The thread takes the lock, says so, and releases it only when the forking thread runs
    its at-fork hook, so the fork starts while the lock is held: a fork handler that takes
    the lock must wait for the release, and without one the child inherits it held."""

    def __init__(self, lock) -> None:
        self._lock = lock
        self._held = threading.Event()
        self._go = threading.Event()
        self._thread = threading.Thread(target=self._hold, daemon=True)

    def _hold(self) -> None:
        with self._lock:
            self._held.set()
            self._go.wait(CHILD_BOUND_S)

    def __enter__(self) -> "HeldLock":
        self._thread.start()
        assert self._held.wait(CHILD_BOUND_S)
        on_next_fork(self._go.set)
        return self

    def __exit__(self, *exc) -> None:
        self._go.set()
        self._thread.join(CHILD_BOUND_S)
