"""The sim's memory pools: what stream-ordered allocation (hipMallocAsync,
hipMallocFromPoolAsync) draws from, and the figures hipMemPoolGetAttribute reports.

A pool does not own addresses: its allocations are ordinary device allocations of
``memory.Memory`` (never reused, so a stale pointer stays invalid), each tagged with the
pool it came from. The pool keeps the accounting a GPU's pool keeps: bytes in use (an
allocation counts from its malloc call until its free runs on its stream), bytes it holds
after frees (kept for reuse up to the release threshold, which it releases down to when a
free completes, as a GPU does at the next synchronisation, since the sim runs a free
only when the host waits) and the high-water marks of both.
"""
from __future__ import annotations

import attrs

# hipMemPoolAttr's values
REUSE_FOLLOW_EVENT_DEPENDENCIES, REUSE_ALLOW_OPPORTUNISTIC, REUSE_ALLOW_INTERNAL_DEPENDENCIES = 1, 2, 3
RELEASE_THRESHOLD, RESERVED_CURRENT, RESERVED_HIGH, USED_CURRENT, USED_HIGH = 4, 5, 6, 7, 8
INT32_ATTRIBUTES = (REUSE_FOLLOW_EVENT_DEPENDENCIES, REUSE_ALLOW_OPPORTUNISTIC, REUSE_ALLOW_INTERNAL_DEPENDENCIES)


class PoolAttributeError(ValueError):
    """An attribute the pool cannot be given that value (hipErrorInvalidValue)."""


@attrs.define(eq=False)
class MemPool:
    """One memory pool of the sim's device (``is_default``: the device's own, never destroyed)."""

    handle: int
    max_size: int = 0            # hipMemPoolProps.maxSize: 0 is unlimited
    handle_types: int = 0        # hipMemPoolProps.handleTypes (recorded, no IPC in the sim)
    is_default: bool = False
    used: int = 0                # bytes of live allocations (an enqueued free still counts)
    held: int = 0                # freed bytes kept for reuse
    used_high: int = 0
    reserved_high: int = 0
    threshold: int = 0           # hipMemPoolAttrReleaseThreshold
    reuse: dict[int, int] = attrs.Factory(lambda: dict.fromkeys(INT32_ATTRIBUTES, 1))

    @property
    def reserved(self) -> int:
        """Bytes the pool has from the device: in use or held."""
        return self.used + self.held

    def fits(self, size: int) -> bool:
        """Whether ``size`` more bytes stay within the pool's maximum size."""
        return not self.max_size or self.used + size <= self.max_size

    def allocated(self, size: int) -> None:
        """An allocation of ``size`` bytes was made from the pool (held bytes are reused first)."""
        self.held -= min(self.held, size)
        self.used += size
        self.used_high = max(self.used_high, self.used)
        self.reserved_high = max(self.reserved_high, self.reserved)

    def freed(self, size: int) -> None:
        """An allocation's free ran: its bytes are held, down to the release threshold."""
        self.used = max(0, self.used - size)
        self.held += size
        self.trim(self.threshold)

    def trim(self, keep: int) -> None:
        """Release held bytes until the pool reserves at most ``keep`` (hipMemPoolTrimTo);
        bytes in use are never released."""
        if self.reserved > keep:
            self.held = max(0, min(self.held, keep - self.used))

    def get(self, attr: int) -> int:
        """hipMemPoolGetAttribute's answer for ``attr``."""
        if attr in INT32_ATTRIBUTES:
            return self.reuse[attr]
        return {RELEASE_THRESHOLD: self.threshold, RESERVED_CURRENT: self.reserved,
                RESERVED_HIGH: self.reserved_high, USED_CURRENT: self.used, USED_HIGH: self.used_high}[attr]

    def set(self, attr: int, value: int) -> None:
        """hipMemPoolSetAttribute: the reuse flags and the threshold take any value, the
        high-water marks only 0 (a reset, to the current figure); the current figures none."""
        if attr in INT32_ATTRIBUTES:
            self.reuse[attr] = value
        elif attr == RELEASE_THRESHOLD:
            self.threshold = value
        elif attr in (RESERVED_HIGH, USED_HIGH) and value == 0:
            if attr == RESERVED_HIGH:
                self.reserved_high = self.reserved
            else:
                self.used_high = self.used
        else:
            raise PoolAttributeError(f"hipMemPoolAttr {attr} cannot be set to {value}")
