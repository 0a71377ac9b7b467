"""Memory arenas: the sim's device memory and pinned host memory as shareable files.

Each arena is one sparse ``memfd`` (Linux) mapped once into this process: pages cost
memory only once written, and released ranges are punched back to holes. Sharing the
file lets the native kernel worker map the very same bytes, at the addresses the sim
hands out (device memory at ``DEVICE_BASE``, pinned memory at ``PINNED_BASE``), so a
pointer means the same thing on both sides.

This process maps the device arena wherever the kernel likes and reserves the device
range itself with no access, so a host dereference of a device pointer still faults. The
pinned arena is mapped at ``PINNED_BASE`` so that hipHostMalloc pointers are real host
memory here and in the worker; when the kernel refuses that address the arena is mapped
elsewhere and ``fixed`` is False (native kernels then cannot reach pinned memory).

Both arenas exist once per process (made on first use). A fork gives the child a private
copy of each: a MAP_SHARED mapping would otherwise let the child write into its parent's
device memory. The copy is made in the parent while the fork handler holds the sim's
device lock (so it is consistent) and mapped in the child over the same addresses (so
every view the child inherited stays valid).

Where ``memfd_create`` is missing (not Linux) an arena is anonymous private memory: the
sim works, native kernels cannot share it (``shareable`` is False).
"""
from __future__ import annotations

import ctypes
import mmap
import os
import sys
import threading

import numpy as np

PAGE = mmap.PAGESIZE
DEVICE_BASE = 0x4000_0000_0000
DEVICE_SPAN = 1 << 40
DEVICE_END = DEVICE_BASE + DEVICE_SPAN
PINNED_BASE = 0x3000_0000_0000
PINNED_SPAN = 1 << 40

_PROT_NONE, _PROT_READ, _PROT_WRITE = 0, 1, 2
_MAP_SHARED, _MAP_PRIVATE, _MAP_FIXED, _MAP_ANONYMOUS = 0x01, 0x02, 0x10, 0x20
_MAP_NORESERVE, _MAP_FIXED_NOREPLACE = 0x4000, 0x100000
_MADV_DONTNEED, _MADV_REMOVE = 4, 9
_MFD_CLOEXEC, _MFD_EXEC = 0x1, 0x10
_SEEK_DATA, _SEEK_HOLE = 3, 4
_MAP_FAILED = ctypes.c_void_p(-1).value

_libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
if _libc is not None:
    _libc.mmap.restype = ctypes.c_void_p
    _libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                           ctypes.c_long]
    _libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    _libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]


class ArenaError(OSError):
    """An arena could not be made or mapped."""


def map_memory(addr: int, size: int, prot: int, flags: int, fd: int = -1) -> int:
    """mmap(2) through libc; the mapped address (ArenaError on failure). With
    MAP_FIXED_NOREPLACE a kernel that maps elsewhere (pre-4.17 ignores the flag) is a failure."""
    assert _libc is not None
    got = _libc.mmap(addr or None, size, prot, flags, fd, 0)
    if got in (None, _MAP_FAILED):
        err = ctypes.get_errno()
        raise ArenaError(err, f"mmap of {size} bytes at 0x{addr:x}: {os.strerror(err)}")
    if flags & _MAP_FIXED_NOREPLACE and got != addr:
        _libc.munmap(got, size)
        raise ArenaError(0, f"the kernel would not map at 0x{addr:x}")
    return int(got)


def _file_refused(size: int) -> str:
    """Why a ``size``-byte file cannot be made here ("" when it can): growing a file past
    RLIMIT_FSIZE (`ulimit -f`) fails and raises SIGXFSZ, which kills by default."""
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    except (ImportError, OSError, ValueError):
        return ""
    if soft != resource.RLIM_INFINITY and soft < size:
        return f"the file-size limit (ulimit -f, {soft} bytes) is below the arena's {size} bytes"
    return ""


def _memfd(name: str) -> int:
    # MFD_EXEC: device memory holds kernel images, and a system may default memfds to noexec.
    try:
        return os.memfd_create(name, _MFD_CLOEXEC | _MFD_EXEC)
    except OSError:
        return os.memfd_create(name, _MFD_CLOEXEC)


class Arena:
    """One arena: ``size`` bytes of a sparse file mapped at ``address`` in this process.

    ``base`` is the address the sim's pointers into it start at (``DEVICE_BASE`` for
    device memory, ``address`` itself for pinned memory)."""

    def __init__(self, name: str, size: int, base: int | None, want_address: int | None) -> None:
        self.name, self.size = name, size
        self.fd = -1
        self.fixed = False
        self.not_shared = ""   # why another process cannot map it ("" when it can)
        self._high = 0   # bytes past the last one ever handed out: nothing beyond is written
        self._lock = threading.Lock()
        if _libc is not None:
            self.not_shared = _file_refused(size)
            if not self.not_shared:
                try:
                    self.fd = _memfd(name)
                    os.ftruncate(self.fd, size)
                except OSError as exc:
                    if self.fd >= 0:
                        os.close(self.fd)
                        self.fd = -1
                    self.not_shared = f"no shareable file: {exc}"
            # shared file pages, or private memory (no fd) that costs nothing until touched
            flags = _MAP_SHARED | _MAP_NORESERVE if self.fd >= 0 else _MAP_PRIVATE | _MAP_ANONYMOUS | _MAP_NORESERVE
            self.address = self._map(want_address, flags)
            self._whole = np.ctypeslib.as_array((ctypes.c_uint8 * self.size).from_address(self.address))
        else:   # private memory; smaller when the system will not reserve it all
            self.not_shared = f"no memfd on {sys.platform}"
            while True:
                try:
                    self._mm = mmap.mmap(-1, self.size)
                    break
                except (OSError, OverflowError, MemoryError):
                    if self.size <= 1 << 30:
                        raise
                    self.size //= 2
            self._whole = np.frombuffer(self._mm, np.uint8)
            self.address = self._whole.ctypes.data
        self.base = self.address if base is None else base

    def _map(self, want_address: int | None, flags: int) -> int:
        """Map the arena (at ``want_address`` if the kernel allows: ``fixed``), halving its
        size while the address space will not take it (ulimit -v)."""
        while True:
            try:
                if want_address is not None:
                    try:
                        addr = map_memory(want_address, self.size, _PROT_READ | _PROT_WRITE,
                                          flags | _MAP_FIXED_NOREPLACE, self.fd)
                        self.fixed = True
                        return addr
                    except ArenaError:
                        pass
                return map_memory(0, self.size, _PROT_READ | _PROT_WRITE, flags, self.fd)
            except ArenaError:
                if self.size <= _MIN_SPAN:
                    raise
                self.size //= 2

    @property
    def shareable(self) -> bool:
        """Whether another process can map these bytes (through ``fd``)."""
        return self.fd >= 0

    def view(self, offset: int, nbytes: int) -> np.ndarray:
        """A writable uint8 view of ``nbytes`` at ``offset``; marks them handed out."""
        end = offset + nbytes
        if end > self._high:
            self._high = end
        return self._whole[offset:end]

    def discard(self, offset: int, nbytes: int) -> None:
        """Give back the whole pages inside [offset, offset + nbytes): they read as zeros.
        Bytes past the last one handed out count as inside (nothing lives there)."""
        lo, end = -(-offset // PAGE) * PAGE, offset + nbytes
        hi = -(-end // PAGE) * PAGE if end >= self._high else end // PAGE * PAGE
        if hi <= lo:
            return
        if _libc is not None:   # file pages punched out, or private pages dropped
            advice = _MADV_REMOVE if self.fd >= 0 else _MADV_DONTNEED
            if _libc.madvise(self.address + lo, hi - lo, advice) == 0:
                return
        self._whole[lo:hi] = 0

    def discard_all(self) -> None:
        """Every page back to zero (a fresh device restarts at the arena's first address)."""
        self.discard(0, self._high)
        self._high = 0

    def _data_extents(self) -> list[tuple[int, int]]:
        """(offset, length) of the written parts of the file (holes skipped)."""
        extents, pos = [], 0
        while pos < self._high:
            try:
                start = os.lseek(self.fd, pos, _SEEK_DATA)
            except OSError:   # ENXIO: no data past pos
                break
            if start >= self._high:
                break
            end = min(os.lseek(self.fd, start, _SEEK_HOLE), self._high)
            extents.append((start, end - start))
            pos = end
        return extents

    def private_copy(self) -> int:
        """A new memfd holding a copy of this arena's bytes (for a forked child); -1 when
        there is nothing to share."""
        if self.fd < 0:
            return -1
        refused = _file_refused(self.size)
        if refused:
            raise OSError(27, refused)   # EFBIG, without the SIGXFSZ that trying would raise
        fd = _memfd(self.name)
        try:
            os.ftruncate(fd, self.size)
            for start, length in self._data_extents():
                done = 0
                while done < length:
                    try:
                        n = os.copy_file_range(self.fd, fd, length - done, start + done, start + done)
                    except OSError:
                        n = 0
                    if n <= 0:   # no in-kernel copy: write from the mapping
                        os.pwrite(fd, self._whole[start + done:start + length].data, start + done)
                        break
                    done += n
        except BaseException:
            os.close(fd)
            raise
        return fd

    def go_private(self) -> None:
        """Keep the bytes but stop sharing them (a forked child whose copy could not be
        made): copy-on-write from here on, never written back to the file."""
        if self.fd < 0:
            return
        map_memory(self.address, self.size, _PROT_READ | _PROT_WRITE, _MAP_PRIVATE | _MAP_NORESERVE | _MAP_FIXED,
                   self.fd)
        os.close(self.fd)
        self.fd = -1
        self.not_shared = "a forked child whose private copy could not be made"

    def adopt(self, fd: int) -> None:
        """Map ``fd`` (a ``private_copy``) over this arena at the same address and use it."""
        map_memory(self.address, self.size, _PROT_READ | _PROT_WRITE, _MAP_SHARED | _MAP_NORESERVE | _MAP_FIXED, fd)
        os.close(self.fd)
        self.fd = fd


_MIN_SPAN = 64 << 20


def _span(full: int, share: int) -> int:
    """An arena's size: ``full``, or under an address-space limit (ulimit -v) the largest
    power of two within 1/``share`` of it, so the program keeps room for everything else."""
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):
        return full
    if soft == resource.RLIM_INFINITY:
        return full
    return max(_MIN_SPAN, min(full, 1 << max(0, (soft // share).bit_length() - 1)))


_arenas: dict[str, Arena] = {}
_make_lock = threading.Lock()


def device_arena() -> Arena:
    """The process's device-memory arena (made on first use): pointer A is offset
    A - DEVICE_BASE. Making it also reserves the device range here with no access."""
    with _make_lock:
        arena = _arenas.get("device")
        if arena is None:
            span = _span(DEVICE_SPAN, 4)
            if _libc is not None:
                try:   # nothing else may land there, and a host dereference faults
                    map_memory(DEVICE_BASE, span, _PROT_NONE,
                               _MAP_PRIVATE | _MAP_ANONYMOUS | _MAP_NORESERVE | _MAP_FIXED_NOREPLACE)
                except ArenaError:
                    pass
            arena = _arenas["device"] = Arena("hrr-sim-device", span, DEVICE_BASE, None)
    _register_fork_copy()
    return arena


def pinned_arena() -> Arena:
    """The process's pinned-host-memory arena (made on first use), at ``PINNED_BASE`` when
    the kernel allows (``fixed``)."""
    with _make_lock:
        arena = _arenas.get("pinned")
        if arena is None:
            arena = _arenas["pinned"] = Arena("hrr-sim-pinned", _span(PINNED_SPAN, 8), None, PINNED_BASE)
    _register_fork_copy()
    return arena


def existing_arenas() -> list[Arena]:
    """The arenas made so far in this process."""
    with _make_lock:
        return list(_arenas.values())


class _ForkCopy:
    """Taken by hrr's fork handler after the sim's device lock: copies every arena for
    the child in the parent (memory is quiet then), maps the copies in the child."""

    def __init__(self) -> None:
        self._copies: list[tuple[Arena, int]] = []
        self._pid = 0

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        self._pid = os.getpid()
        self._copies = []
        for arena in existing_arenas():
            if arena.shareable:
                try:
                    fd = arena.private_copy()
                except OSError:   # out of memory or descriptors: the child goes private
                    fd = -1
                self._copies.append((arena, fd))
        return True

    def release(self) -> None:
        copies, self._copies = self._copies, []
        in_child = os.getpid() != self._pid
        for arena, fd in copies:
            if in_child and fd >= 0:
                arena.adopt(fd)
            elif in_child:
                arena.go_private()
            elif fd >= 0:
                os.close(fd)


_fork_copy: _ForkCopy | None = None


def _register_fork_copy() -> None:
    global _fork_copy
    with _make_lock:
        if _fork_copy is not None:
            return
        _fork_copy = _ForkCopy()
    from hrr.archive.forking import RANK_BACKEND, register_fork_lock

    # Just after the device lock (RANK_BACKEND): device memory is quiet while it copies.
    register_fork_lock(_fork_copy, RANK_BACKEND + 1)
