"""The live allocation table: which address ranges belong to which allocation."""
from __future__ import annotations

import bisect
import threading
from typing import Iterator

import attrs

DEVICE, PINNED, REGISTERED = "device", "pinned", "registered"


@attrs.frozen
class Allocation:
    base: int
    size: int
    kind: str           # DEVICE, PINNED or REGISTERED
    owner: int = 0      # for an alias (a device address of host memory): the host base

    def contains(self, addr: int) -> bool:
        return self.base <= addr < self.base + self.size


class AllocationTable:
    """Non-overlapping address ranges, looked up by any address inside them. Thread-safe."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._allocs: list[Allocation] = []
        self.lock = threading.RLock()
        # The same lists, for a hot path that inlines find (never reassigned, only changed
        # in place): capture's scan of a launch's pointer words.
        self.starts, self.allocs = self._starts, self._allocs
        #: Bumped by every change (under the lock, before it): an answer computed from the
        #: table while it still reads the same number is current (capture's scan caches one).
        self.version = 0

    def add(self, alloc: Allocation) -> None:
        with self.lock:
            self.version += 1
            self.remove(alloc.base)
            i = bisect.bisect_left(self._starts, alloc.base)
            self._starts.insert(i, alloc.base)
            self._allocs.insert(i, alloc)

    def clear(self) -> None:
        """Forget every range (the device was reset)."""
        with self.lock:
            self.version += 1
            self._starts.clear()
            self._allocs.clear()

    def remove(self, base: int) -> Allocation | None:
        """Drop the allocation that starts at ``base`` (and aliases of it)."""
        with self.lock:
            i = bisect.bisect_left(self._starts, base)
            if i == len(self._starts) or self._starts[i] != base:
                return None
            self.version += 1
            del self._starts[i]
            gone = self._allocs.pop(i)
            for alias in [a for a in self._allocs if a.owner == base and a.base != base]:
                self.remove(alias.base)
            return gone

    def add_alias(self, host: int, alias: int) -> Allocation | None:
        """Track ``alias`` (hipHostGetDevicePointer's device address for the host
        address ``host``) as another range of the allocation holding ``host``; it goes
        when that allocation is removed. None when there is nothing new to track."""
        with self.lock:
            owner = self.find(host)
            if owner is None or not alias or alias == host:
                return None
            start = alias - (host - owner.base)
            if self.find(start) is not None:
                return None
            added = Allocation(start, owner.size, owner.kind, owner.owner or owner.base)
            self.add(added)
            return added

    def find(self, addr: int) -> Allocation | None:
        """The allocation containing ``addr``, or None."""
        starts = self._starts
        i = bisect.bisect_right(starts, addr) - 1
        if i < 0:
            return None
        try:
            alloc = self._allocs[i]
        except IndexError:  # a concurrent removal; the caller retries under the lock
            return None
        return alloc if alloc.base <= addr < alloc.base + alloc.size else None

    def __iter__(self) -> Iterator[Allocation]:
        with self.lock:
            return iter(list(self._allocs))

    def __len__(self) -> int:
        return len(self._allocs)
