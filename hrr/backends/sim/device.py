"""The one simulated device's state, and the lock that makes the API thread-safe.

Everything mutable lives on a ``Device``; ``reset_device()`` swaps in a fresh one.
Handle values are deterministic: a per-kind base plus a counter.
"""
from __future__ import annotations

import itertools
import threading

from hrr.backends.sim.memory import Memory
from hrr.backends.sim.streams import Scheduler

_HANDLE_BASES = {"stream": 0x5100_0000, "event": 0x5200_0000, "module": 0x5300_0000,
                 "function": 0x5400_0000, "graph": 0x5500_0000, "graph_exec": 0x5600_0000,
                 "program": 0x5700_0000}


class Device:
    """Memory, streams, events, modules, graphs and per-thread error state."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.memory = Memory()
        self.scheduler = Scheduler(self.lock)
        self.streams: dict[int, object] = {0: self.scheduler.null}
        self.events: dict[int, object] = {}
        self.modules: dict[int, object] = {}
        self.functions: dict[int, object] = {}
        self.graphs: dict[int, object] = {}
        self.graph_execs: dict[int, object] = {}
        self.programs: dict[int, object] = {}
        self.captures: list = []   # active CaptureSessions
        self._counters = {k: itertools.count(1) for k in _HANDLE_BASES}
        self._capture_ids = itertools.count(1)
        self.tls = threading.local()

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
