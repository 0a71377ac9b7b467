"""Replay's maps from the recording's world to its own: allocations and handles, and
the host-memory budget every allocation replay makes is charged against."""
from __future__ import annotations

import weakref
from typing import Any

import attrs
import numpy as np

from hrr.api.catalogue import HANDLE_KINDS
from hrr.allocations import Allocation, AllocationTable
from hrr.pipeline.context import EventRefused


@attrs.define
class ReplayAllocation:
    capture_base: int
    replay_base: int
    size: int
    kind: str
    keepalive: Any = None   # replay-owned host memory backing it, if any
    charged: int = 0        # bytes of the host budget it holds until it is released


class ReplayMemory:
    """Capture address ranges → the allocations replay itself made."""

    def __init__(self) -> None:
        self._table = AllocationTable()
        self._by_base: dict[int, ReplayAllocation] = {}

    @property
    def version(self) -> int:
        """Moves with every change (the table's count): a cache of translations is good while it holds."""
        return self._table.version

    def add(self, alloc: ReplayAllocation, owner: int = 0) -> None:
        self._table.add(Allocation(alloc.capture_base, alloc.size, alloc.kind, owner))
        self._by_base[alloc.capture_base] = alloc

    def remove(self, capture_base: int) -> ReplayAllocation | None:
        if self._table.remove(capture_base) is None:
            return None
        gone = self._by_base.pop(capture_base, None)
        live = {a.base for a in self._table}
        for base in [b for b in self._by_base if b not in live]:  # its aliases went too
            self._by_base.pop(base)
        return gone

    def clear(self) -> int:
        """Forget every allocation (the device was reset); returns the host bytes they
        held against the budget."""
        charged = sum(a.charged for a in self._by_base.values())
        self._table.clear()
        self._by_base.clear()
        return charged

    def find(self, capture_addr: int) -> ReplayAllocation | None:
        a = self._table.find(capture_addr)
        return None if a is None else self._by_base.get(a.base)

    def translate(self, capture_addr: int) -> int | None:
        r = self.find(capture_addr)
        return None if r is None else r.replay_base + (capture_addr - r.capture_base)

    def __len__(self) -> int:
        return len(self._by_base)


class HostBudget:
    """Host memory replay holds on the archive's behalf (``--max-host-bytes``): pinned
    allocations, the sim's device memory, host buffers replay creates and blobs queued
    for a restore. Every allocation is charged *before* it is made."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.used = 0
        self.peak = 0

    def charge(self, n: int, what: str) -> int:
        """Reserve ``n`` bytes for ``what``; EventRefused (category ``limit``) when over the cap."""
        if n < 0 or self.used + n > self.cap:
            raise self.refusal(f"{what} needs {n} bytes of host memory, {self.used} already held: "
                               f"over --max-host-bytes ({self.cap})")
        self.used += n
        self.peak = max(self.peak, self.used)
        return n

    def release(self, n: int) -> None:
        self.used = max(0, self.used - n)

    def buffer(self, n: int, what: str) -> np.ndarray:
        """A zeroed replay-owned host buffer of ``n`` bytes, charged before it is made and
        released when it is garbage collected, wherever replay kept it."""
        size = max(n, 1)
        self.charge(size, what)
        try:
            buf = np.zeros(size, dtype=np.uint8)
        except MemoryError:
            self.release(size)
            raise self.refusal(f"{what}: the machine has no {size} bytes to give") from None
        weakref.finalize(buf, self.release, size)
        return buf

    @staticmethod
    def refusal(reason: str) -> EventRefused:
        return EventRefused(reason, category="limit")


class HandleMaps:
    """One map per handle kind: capture handle value → replay's handle object."""

    def __init__(self) -> None:
        self._maps: dict[str, dict[int, Any]] = {k: {} for k in HANDLE_KINDS}

    def bind(self, kind: str, capture_value: int, replay_obj: Any) -> None:
        self._maps[kind][capture_value] = replay_obj

    def drop(self, kind: str, capture_value: int) -> None:
        self._maps[kind].pop(capture_value, None)

    def clear(self) -> None:
        """Forget every handle (the device was reset)."""
        for handles in self._maps.values():
            handles.clear()

    def lookup(self, kind: str, capture_value: int) -> Any:
        """The replay handle, None for the null handle; KeyError when unknown."""
        if not capture_value:
            return None
        return self._maps[kind][capture_value]

    def count(self, kind: str) -> int:
        return len(self._maps[kind])

    def table(self, kind: str) -> dict[int, Any]:
        """The live map of one kind (kept, cleared in place), for a hot path's ``get``."""
        return self._maps[kind]
