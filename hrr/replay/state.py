"""Replay's maps from the recording's world to its own: allocations and handles."""
from __future__ import annotations

from typing import Any

import attrs

from hrr.api.catalogue import HANDLE_KINDS
from hrr.capture.allocations import Allocation, AllocationTable


@attrs.define
class ReplayAllocation:
    capture_base: int
    replay_base: int
    size: int
    kind: str
    keepalive: Any = None   # replay-owned host memory backing it, if any


class ReplayMemory:
    """Capture address ranges → the allocations replay itself made."""

    def __init__(self) -> None:
        self._table = AllocationTable()
        self._by_base: dict[int, ReplayAllocation] = {}

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

    def find(self, capture_addr: int) -> ReplayAllocation | None:
        a = self._table.find(capture_addr)
        return None if a is None else self._by_base.get(a.base)

    def translate(self, capture_addr: int) -> int | None:
        r = self.find(capture_addr)
        return None if r is None else r.replay_base + (capture_addr - r.capture_base)

    def __len__(self) -> int:
        return len(self._by_base)


class HandleMaps:
    """One map per handle kind: capture handle value → replay's handle object."""

    def __init__(self) -> None:
        self._maps: dict[str, dict[int, Any]] = {k: {} for k in HANDLE_KINDS}

    def bind(self, kind: str, capture_value: int, replay_obj: Any) -> None:
        self._maps[kind][capture_value] = replay_obj

    def drop(self, kind: str, capture_value: int) -> None:
        self._maps[kind].pop(capture_value, None)

    def lookup(self, kind: str, capture_value: int) -> Any:
        """The replay handle, None for the null handle; KeyError when unknown."""
        if not capture_value:
            return None
        return self._maps[kind][capture_value]

    def count(self, kind: str) -> int:
        return len(self._maps[kind])
