"""Registered host memory for native kernels (hipHostRegister).

A program's registered memory (a numpy buffer, say) is its own, in no arena the worker
maps. So the worker gets a *window* over each registered range's pages, at the program's
addresses, backed by one memfd; the client copies the registered bytes in before each
launch and back after it, only those the kernel changed (a host thread may write other
bytes of the range meanwhile, as it may on a GPU). Only the registered bytes themselves are
ever copied: the rest of a window's pages is zeros, never the program's neighbouring memory.
The worker maps windows when it starts, so a launch after a registration or an
unregistration starts a new worker (``generation`` says when).
"""
from __future__ import annotations

import ctypes
import mmap
import os

import numpy as np

PAGE = mmap.PAGESIZE
_MFD_CLOEXEC = 0x1


def _program_bytes(addr: int, n: int) -> np.ndarray:
    return np.ctypeslib.as_array((ctypes.c_uint8 * n).from_address(addr))


class HostWindows:
    """The windows of a set of registered ranges, and the copies around a launch."""

    def __init__(self) -> None:
        self.fd = -1
        self.generation = 0
        self._key: tuple[tuple[int, int], ...] = ()
        self._map: mmap.mmap | None = None
        self._windows: list[tuple[int, int, int]] = []   # (page address, bytes, memfd offset)
        self._ranges: list[tuple[int, int, int]] = []    # (address, bytes, memfd offset)
        self._before: list[np.ndarray] = []

    @property
    def windows(self) -> list[tuple[int, int, int]]:
        """(address, bytes, offset in ``fd``) of each window, page-aligned, address order."""
        return list(self._windows)

    def update(self, ranges: list[tuple[int, int]]) -> bool:
        """Lay out windows for ``ranges`` ((address, bytes) each); True when they changed."""
        key = tuple(sorted((a, n) for a, n in ranges if n > 0))
        if key == self._key:
            return False
        self._release()
        self._key, self.generation = key, self.generation + 1
        spans: list[list[int]] = []
        for addr, n in key:
            lo, hi = addr // PAGE * PAGE, -(-(addr + n) // PAGE) * PAGE
            if spans and lo <= spans[-1][1]:
                spans[-1][1] = max(spans[-1][1], hi)
            else:
                spans.append([lo, hi])
        offset = 0
        for lo, hi in spans:
            self._windows.append((lo, hi - lo, offset))
            offset += hi - lo
        for addr, n in key:
            lo, _, off = next(w for w in self._windows if w[0] <= addr < w[0] + w[1])
            self._ranges.append((addr, n, off + addr - lo))
        if offset:
            self.fd = os.memfd_create("hrr-sim-registered", _MFD_CLOEXEC)
            os.ftruncate(self.fd, offset)
            self._map = mmap.mmap(self.fd, offset)
        return True

    def copy_in(self) -> None:
        """The registered bytes into their windows (kept, to see what the launch changes)."""
        if self._map is None:
            return
        whole = np.frombuffer(self._map, np.uint8)
        self._before = []
        for addr, n, off in self._ranges:
            now = _program_bytes(addr, n).copy()
            whole[off:off + n] = now
            self._before.append(now)

    def copy_out(self) -> None:
        """Back into the program: the bytes the launch changed."""
        if self._map is None or not self._before:
            return
        whole = np.frombuffer(self._map, np.uint8)
        for (addr, n, off), before in zip(self._ranges, self._before, strict=True):
            after = whole[off:off + n]
            changed = np.flatnonzero(after != before)
            if changed.size:
                _program_bytes(addr, n)[changed] = after[changed]
        self._before = []

    def _release(self) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        self._windows, self._ranges, self._before = [], [], []

    def close(self) -> None:
        self._release()
        self._key = ()
