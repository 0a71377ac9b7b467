"""The one simulated device's state, and the lock that makes the API thread-safe.

Everything mutable lives on a ``Device``; ``reset_device()`` swaps in a fresh one (tests),
``Device.reset()`` empties it in place (``hipDeviceReset``). Handle values are
deterministic: a per-kind base plus a counter.

Fork: the device lock is taken by the fork handler (rank ``RANK_BACKEND`` in
``hrr.archive.forking``), so a fork waits until no other thread is inside a sim call and
the child gets a consistent copy of the device, never a lock held by a thread that does
not exist there. The child then rebuilds the scheduler's condition variable and forgets
the parent's threads. The sim has no worker threads (work runs on the calling thread when
the host waits), so none is lost. Unlike a GPU runtime, whose context a forked child
cannot use, the sim is process memory: the child keeps the parent's handles and
allocations (replay rebuilds them from the parent's records, see DESIGN.md).
"""
from __future__ import annotations

import itertools
import threading
from typing import Any

from hrr.backends.sim.memory import Memory
from hrr.backends.sim.streams import Scheduler

_HANDLE_BASES = {"stream": 0x5100_0000, "event": 0x5200_0000, "module": 0x5300_0000,
                 "function": 0x5400_0000, "graph": 0x5500_0000, "graph_exec": 0x5600_0000,
                 "program": 0x5700_0000}


class Device:
    """Memory, streams, events, modules, graphs and per-thread error state."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.tls = threading.local()
        self._fresh_state(Memory())

    def _fresh_state(self, memory: Memory) -> None:
        self.memory = memory
        self.scheduler = Scheduler(self.lock)
        self.streams: dict[int, Any] = {0: self.scheduler.null}
        self.events: dict[int, Any] = {}
        self.modules: dict[int, Any] = {}
        self.functions: dict[int, Any] = {}
        self.graphs: dict[int, Any] = {}
        self.graph_execs: dict[int, Any] = {}
        self.programs: dict[int, Any] = {}
        self.captures: list = []   # active CaptureSessions
        self._counters = {k: itertools.count(1) for k in _HANDLE_BASES}
        self._capture_ids = itertools.count(1)

    def reset(self) -> None:
        """Destroy every allocation, stream, event, module, graph and capture (the caller
        holds the lock). Device addresses keep counting up, so none is ever reused."""
        self._fresh_state(self.memory.successor())

    def after_fork_in_child(self) -> None:
        """Forget what the parent's other threads left: their condition-variable waits and
        their identities (the lock itself was taken by the forking thread)."""
        self.scheduler.cond = threading.Condition(self.lock)
        self.scheduler.waiting_threads = 0
        self.scheduler.api_threads = {threading.get_ident()}

    def new_handle(self, kind: str) -> int:
        return _HANDLE_BASES[kind] + 0x10 * next(self._counters[kind])

    def new_capture_id(self) -> int:
        return next(self._capture_ids)

    # Per-thread state, as HIP keeps it.
    def set_last_error(self, code: int, detail: str = "") -> None:
        self.tls.last_error = code
        self.tls.last_detail = detail

    def clear_last_error(self) -> None:
        """hipGetLastError: the code resets; the detail stays readable for diagnostics."""
        self.tls.last_error = 0

    def last_error(self) -> tuple[int, str]:
        return getattr(self.tls, "last_error", 0), getattr(self.tls, "last_detail", "")

    @property
    def thread_capture_mode(self) -> int:
        return getattr(self.tls, "capture_mode", 0)

    @thread_capture_mode.setter
    def thread_capture_mode(self, mode: int) -> None:
        self.tls.capture_mode = mode


_current = Device()


def current() -> Device:
    return _current


def reset_device() -> None:
    """Replace the device with a fresh one (tests); outstanding handles become invalid."""
    global _current
    _current = Device()


class _ForkGuard:
    """The current device's lock, as the fork handler takes it (whichever device is current)."""

    def __init__(self) -> None:
        self._taken: list[Device] = []

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        dev = _current
        ok = dev.lock.acquire(blocking, timeout)
        if ok:
            self._taken.append(dev)
        return ok

    def release(self) -> None:
        self._taken.pop().lock.release()

    def in_child(self) -> None:
        _current.after_fork_in_child()


def _register_fork_handler() -> None:
    from hrr.archive.forking import RANK_BACKEND, register_fork_lock

    guard = _ForkGuard()
    register_fork_lock(guard, RANK_BACKEND, in_child=guard.in_child)


_register_fork_handler()
