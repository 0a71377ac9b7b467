"""The sim device's memory model.

Device memory lives at addresses from ``DEVICE_BASE`` (0x4000_0000_0000) to
``DEVICE_END`` (1 TiB above), a range this process reserves with no access, so a device
pointer dereferenced by the host faults instead of silently reading something.
Allocation is a deterministic bump allocator (256-byte aligned, or more on request;
addresses never reused) whose storage is the device arena (``native.arena``): the
allocation at address A is arena offset A - DEVICE_BASE, and the native kernel worker
maps the same arena at DEVICE_BASE. Freeing gives whole pages back to the system.
Pinned host memory (hipHostMalloc, and managed memory) is real memory of the process
from the pinned arena, page aligned, at ``PINNED_BASE`` where the kernel allows, so the
worker sees it at the same addresses; hipHostRegister records a range of the caller's
own memory, which native kernels see through the worker's windows over it
(``native.windows``). Kernels and copies reach all of them through ``resolve``.
"""
from __future__ import annotations

import bisect
import ctypes
from typing import Any, Callable

import attrs
import numpy as np

from hrr.hiptypes import hipMemcpyKind, hipMemoryType, hipPointerAttribute_t
from hrr.backends.sim.kernels import DeviceFault
from hrr.backends.sim.native import arena as arenas
from hrr.backends.sim.native.arena import DEVICE_BASE, DEVICE_END
from hrr.backends.sim.streams import Op
from hrr.backends.surface import HipError

DEVICE_ALIGN = 256
_PAGE_SHIFT = arenas.PAGE.bit_length() - 1
_RELEASE_BATCH = 1 << 20     # dead device pages are given back once this many are pending...
_RELEASE_AT_ONCE = 64 << 10  # ...or at once when one free makes this many
HOST_ALIGN = arenas.PAGE
TOTAL_DEVICE_BYTES = 16 << 30
# Pinned host memory the sim hands out in all (a real runtime fails hipHostMalloc with
# hipErrorOutOfMemory long before the machine does; so does the sim).
TOTAL_PINNED_BYTES = 16 << 30

DEVICE, HOST_PINNED, HOST_REGISTERED = "device", "host_pinned", "host_registered"

# kind -> whether (dst, src) must be device-visible: the device end(s) its name gives
_MUST_BE_DEVICE = {k: (k.name.endswith(("ToDevice", "ToDeviceNoCU")), "DeviceTo" in k.name) for k in hipMemcpyKind}


def checked_size(value: Any) -> int:
    """A size argument as an int (hipErrorInvalidValue when negative)."""
    size = int(value)
    if size < 0:
        raise HipError("hipErrorInvalidValue", f"negative size {size}")
    return size


def allocate(memory: "Memory", size: Any, what: str, *, pinned_flags: int | None = None) -> "Allocation | None":
    """An allocation call's rule for its size: checked (negative: hipErrorInvalidValue), no
    allocation for 0 bytes (None: HIP answers success and a NULL pointer), else a new device
    allocation (pinned host memory with ``pinned_flags``), hipErrorOutOfMemory when full."""
    n = checked_size(size)
    if n == 0:
        return None
    alloc = memory.malloc(n) if pinned_flags is None else memory.host_malloc(n, pinned_flags)
    if alloc is None:
        where = "" if pinned_flags is None else " of pinned memory"
        raise HipError("hipErrorOutOfMemory", f"{what}: cannot allocate {n} bytes{where}")
    return alloc


@attrs.define(eq=False)
class Allocation:
    """One range the device can reach; ``storage`` is kept alive for device and pinned."""

    kind: str
    base: int
    size: int
    storage: np.ndarray | None = None
    flags: int = 0
    free_pending: bool = False  # a hipFreeAsync is queued for it
    managed: bool = False       # hipMallocManaged: host memory the device also reaches
    advice: dict = attrs.Factory(dict)  # managed memory: hipMemAdvise's state, the last prefetch
    pool: Any = None            # the memory pool a stream-ordered allocation came from

    @property
    def host_address(self) -> int:
        """The real process address of the first byte."""
        if self.kind == HOST_REGISTERED:
            return self.base
        return self.storage.ctypes.data  # type: ignore[union-attr]


class MemoryError_(ValueError):
    """A HIP call gave a bad address or size (reported as hipErrorInvalidValue)."""


def host_view(addr: int, nbytes: int) -> np.ndarray:
    """A writable uint8 numpy view of real process memory."""
    if nbytes == 0:
        return np.zeros(0, np.uint8)
    return np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(addr))


class Memory:
    """Device allocations and pinned/registered host ranges, looked up by address.

    The arenas are the process's own (one device, one pinned): a new Memory owns them
    from then on, so it starts by zeroing whatever an earlier one left there."""

    def __init__(self, next_device: int = DEVICE_BASE, total_bytes: int = TOTAL_DEVICE_BYTES) -> None:
        for arena in arenas.existing_arenas():
            arena.discard_all()
        self._next_device = next_device
        self.total_bytes = total_bytes   # the device model's memory: allocations past it fail
        self.device_bytes_used = 0
        self._device: dict[int, Allocation] = {}
        self._device_starts: list[int] = []  # sorted (bump allocation appends in order)
        self._host: dict[int, Allocation] = {}
        self._registered: dict[int, Allocation] = {}   # the HOST_REGISTERED ones of _host
        self._host_starts: list[int] = []  # sorted bases of _host, for bisect
        self.pinned_bytes_used = 0
        self._pinned_holes: list[tuple[int, int]] = []   # (offset, bytes) freed, sorted
        self._pinned_top = 0                               # arena offset past every pinned range
        self._device_arena: arenas.Arena | None = None     # the process's, on first use
        self._pending_release: list[tuple[int, int]] = []  # dead device pages not yet given back
        self._pending_bytes = 0
        self._pinned_arena: arenas.Arena | None = None

    @property
    def device_arena(self) -> arenas.Arena:
        """The arena holding device memory (what the native kernel worker maps)."""
        if self._device_arena is None:
            self._device_arena = arenas.device_arena()
        return self._device_arena

    @property
    def pinned_arena(self) -> arenas.Arena:
        """The arena holding pinned host memory (what the native kernel worker maps)."""
        if self._pinned_arena is None:
            self._pinned_arena = arenas.pinned_arena()
        return self._pinned_arena

    def successor(self) -> "Memory":
        """An empty memory whose device addresses continue after this one's (hipDeviceReset:
        an address is never handed out twice)."""
        return Memory(self._next_device, self.total_bytes)

    # -- allocation -------------------------------------------------------------------
    def malloc(self, size: int, align: int = DEVICE_ALIGN) -> Allocation | None:
        """A new zeroed device allocation at a multiple of ``align`` (a power of two, at
        least 256), or None when the device is out of memory."""
        base = -(-self._next_device // align) * align
        padded = -(-max(size, 1) // DEVICE_ALIGN) * DEVICE_ALIGN
        arena = self.device_arena
        if self.device_bytes_used + padded > self.total_bytes or base + padded > DEVICE_BASE + arena.size:
            return None
        storage = arena.view(base - DEVICE_BASE, max(size, 1))
        alloc = Allocation(DEVICE, base, size, storage)
        left, self._next_device = self._next_device, base + padded
        if base >> _PAGE_SHIFT != left >> _PAGE_SHIFT:
            self._leave_frontier(left, base)
        self.device_bytes_used += padded
        self._device[alloc.base] = alloc
        self._device_starts.append(alloc.base)
        return alloc

    def free_device(self, base: int) -> Allocation:
        alloc = self._device.get(base)
        if alloc is None:
            raise MemoryError_(f"0x{base:x} is not the start of a live device allocation")
        i = bisect.bisect_left(self._device_starts, base)
        # Whole pages between the live neighbours go back to the system (addresses are never
        # handed out again). Pages of the gap outside this allocation's own went back when
        # their allocations were freed, so only those this one touches need giving back.
        lo = self._device_end(self._device[self._device_starts[i - 1]]) if i else DEVICE_BASE
        hi = self._device_starts[i + 1] if i + 1 < len(self._device_starts) else self._next_device
        del self._device[base]
        del self._device_starts[i]
        end = self._device_end(alloc)
        self.device_bytes_used -= end - base
        if alloc.pool is not None:
            alloc.pool.freed(alloc.size)
        self._release(max(lo, base >> _PAGE_SHIFT << _PAGE_SHIFT), min(hi, -(-end >> _PAGE_SHIFT) << _PAGE_SHIFT))
        return alloc

    def _leave_frontier(self, left: int, base: int) -> None:
        """The bump allocator moved from ``left`` on to ``base``'s page: the pages it left
        that no live allocation touches are dead for good (a free skipped the page that
        was still being filled)."""
        last = self._device_end(self._device[self._device_starts[-1]]) if self._device_starts else 0
        self._release(max(last, left >> _PAGE_SHIFT << _PAGE_SHIFT), base)

    def _release(self, lo: int, hi: int) -> None:
        """Give back the whole pages inside [lo, hi) that lie below the page the bump
        allocator is filling; small ranges are batched (one madvise per MiB or so)."""
        lo = -(-lo >> _PAGE_SHIFT) << _PAGE_SHIFT
        hi = min(hi, self._next_device) >> _PAGE_SHIFT << _PAGE_SHIFT
        if hi <= lo:
            return
        pending = self._pending_release
        if pending and pending[-1][1] == lo:
            pending[-1] = (pending[-1][0], hi)
        else:
            pending.append((lo, hi))
        self._pending_bytes += hi - lo
        if self._pending_bytes >= _RELEASE_BATCH or hi - lo >= _RELEASE_AT_ONCE:
            arena = self.device_arena
            for a, b in pending:
                arena.discard(a - DEVICE_BASE, b - a)
            pending.clear()
            self._pending_bytes = 0

    @staticmethod
    def _device_end(alloc: Allocation) -> int:
        return alloc.base + -(-max(alloc.size, 1) // DEVICE_ALIGN) * DEVICE_ALIGN

    def host_malloc(self, size: int, flags: int) -> Allocation | None:
        """New zeroed pinned host memory (page aligned), or None when the sim (or its
        arena) is out of it."""
        if self.pinned_bytes_used + max(size, 1) > TOTAL_PINNED_BYTES:
            return None
        pages = -(-max(size, 1) // HOST_ALIGN) * HOST_ALIGN
        arena = self.pinned_arena
        offset = self._take_pinned(pages, arena.size)
        if offset is None:
            return None
        storage = arena.view(offset, max(size, 1))
        alloc = Allocation(HOST_PINNED, arena.base + offset, size, storage, flags)
        self._add_host(alloc)
        self.pinned_bytes_used += max(size, 1)
        return alloc

    def _take_pinned(self, pages: int, limit: int) -> int | None:
        """First fit among the freed ranges, else the top of the arena."""
        for i, (off, n) in enumerate(self._pinned_holes):
            if n >= pages:
                if n == pages:
                    del self._pinned_holes[i]
                else:
                    self._pinned_holes[i] = (off + pages, n - pages)
                return off
        if self._pinned_top + pages > limit:
            return None
        self._pinned_top += pages
        return self._pinned_top - pages

    def _give_pinned(self, alloc: Allocation) -> None:
        """Return a pinned range's pages (zeroed) to the arena, merging neighbouring holes."""
        arena = self.pinned_arena
        off, n = alloc.base - arena.base, -(-max(alloc.size, 1) // HOST_ALIGN) * HOST_ALIGN
        arena.discard(off, n)
        holes = self._pinned_holes
        i = bisect.bisect(holes, (off, n))
        holes.insert(i, (off, n))
        if i + 1 < len(holes) and off + n == holes[i + 1][0]:
            holes[i] = (off, n + holes.pop(i + 1)[1])
        if i and holes[i - 1][0] + holes[i - 1][1] == off:
            prev = holes.pop(i - 1)
            holes[i - 1] = (prev[0], prev[1] + holes[i - 1][1])
        if holes and holes[-1][0] + holes[-1][1] == self._pinned_top:
            self._pinned_top = holes.pop()[0]

    def host_register(self, addr: int, size: int, flags: int) -> Allocation:
        if self.find_host(addr, max(size, 1), whole=False) is not None or any(
                a.base >= addr and a.base < addr + size for a in self._host.values()):
            raise MemoryError_("already registered")
        alloc = Allocation(HOST_REGISTERED, addr, size, None, flags)
        self._add_host(alloc)
        self._registered[addr] = alloc
        return alloc

    def registered_ranges(self) -> list[tuple[int, int]]:
        """(address, bytes) of every registered host range."""
        return [(a.base, a.size) for a in self._registered.values()]

    def free_host(self, base: int, kind: str) -> Allocation:
        alloc = self._host.get(base)
        if alloc is None or alloc.kind != kind:
            raise MemoryError_(f"0x{base:x} is not a live {kind.replace('_', ' ')} range")
        del self._host[base]
        self._registered.pop(base, None)
        self._host_starts.remove(base)
        if kind == HOST_PINNED:
            self.pinned_bytes_used -= max(alloc.size, 1)
            self._give_pinned(alloc)
        return alloc

    def _add_host(self, alloc: Allocation) -> None:
        self._host[alloc.base] = alloc
        bisect.insort(self._host_starts, alloc.base)

    # -- lookup -------------------------------------------------------------------------
    def is_device_address(self, addr: int) -> bool:
        return DEVICE_BASE <= addr < DEVICE_END

    def find_device(self, addr: int) -> Allocation | None:
        """The device allocation containing ``addr`` (bump allocation: search by base)."""
        i = bisect.bisect_right(self._device_starts, addr) - 1
        if i < 0:
            return None
        alloc = self._device[self._device_starts[i]]
        return alloc if addr < alloc.base + max(alloc.size, 1) else None

    def find_host(self, addr: int, nbytes: int = 1, whole: bool = True) -> Allocation | None:
        """The pinned/registered range containing ``addr`` (and, if ``whole``, all ``nbytes``)."""
        i = bisect.bisect_right(self._host_starts, addr) - 1
        if i < 0:
            return None
        alloc = self._host[self._host_starts[i]]
        end = alloc.base + max(alloc.size, 1)
        if addr >= end or (whole and addr + nbytes > end):
            return None
        return alloc

    def find(self, addr: int) -> Allocation | None:
        return self.find_device(addr) if self.is_device_address(addr) else self.find_host(addr)

    def device_visible(self, addr: int, nbytes: int) -> np.ndarray | None:
        """A writable view of ``nbytes`` at ``addr`` when the device may touch all of it."""
        alloc = self.find_device(addr) if self.is_device_address(addr) else self.find_host(addr)
        if alloc is None or addr + nbytes > alloc.base + alloc.size:
            return None
        off = addr - alloc.base
        if alloc.storage is not None:
            return alloc.storage[off:off + nbytes]
        return host_view(addr, nbytes)

    def resolve_for_kernel(self, addr: int, nbytes: int) -> np.ndarray:
        """``device_visible`` that raises the fault a GPU reports for a bad access."""
        view = self.device_visible(addr, nbytes) if nbytes else np.zeros(0, np.uint8)
        if view is None:
            raise DeviceFault("hipErrorIllegalAddress",
                              f"illegal address: {nbytes} bytes at 0x{addr:x} are neither "
                              f"device memory nor pinned/registered host memory")
        return view

    def copy_endpoint(self, addr: int, nbytes: int, must_be_device: bool) -> np.ndarray | int:
        """A copy's source or destination: a numpy view for device-visible memory, or the
        raw address of ordinary (pageable) host memory. Raises MemoryError_ when a device
        address is out of range, or ``must_be_device`` and it is pageable host memory."""
        if not addr and nbytes:
            raise MemoryError_("NULL pointer")
        view = self.device_visible(addr, nbytes) if nbytes else np.zeros(0, np.uint8)
        if view is not None:
            return view
        if self.is_device_address(addr):
            raise MemoryError_(f"{nbytes} bytes at 0x{addr:x} lie outside any device allocation")
        # A range that starts in pinned or registered memory must end there: the sim would
        # otherwise read or write past the buffer it handed out.
        inside = self.find_host(addr, whole=False)
        if inside is not None:
            raise MemoryError_(f"{nbytes} bytes at 0x{addr:x} run past the end of the "
                               f"{inside.size}-byte host range at 0x{inside.base:x}")
        if must_be_device:
            raise MemoryError_(f"0x{addr:x} is not device memory (nor pinned host memory)")
        return addr

    def pointer_attributes(self, addr: int) -> hipPointerAttribute_t:
        """hipPointerGetAttributes: device, pinned/registered host, or unregistered memory."""
        alloc = self.find(addr)
        if alloc is None:
            if self.is_device_address(addr):
                raise HipError("hipErrorInvalidValue", f"0x{addr:x} is not in a device allocation")
            return hipPointerAttribute_t(hipMemoryType.hipMemoryTypeUnregistered, -1, 0, addr)
        if alloc.kind == DEVICE:
            return hipPointerAttribute_t(hipMemoryType.hipMemoryTypeDevice, 0, addr, 0)
        if alloc.managed:
            return hipPointerAttribute_t(hipMemoryType.hipMemoryTypeManaged, 0, addr, addr, isManaged=1)
        return hipPointerAttribute_t(hipMemoryType.hipMemoryTypeHost, 0, addr, addr, allocationFlags=alloc.flags)

    def free(self, addr: int, device: bool) -> None:
        """hipFree (``device``: device memory, or pinned, as HIP's hipFree also frees
        hipHostMalloc memory) and hipHostFree (pinned memory only); hipErrorInvalidValue
        when ``addr`` is no such allocation."""
        try:
            if device and self.is_device_address(addr):
                self.free_device(addr)
            else:
                self.free_host(addr, HOST_PINNED)
        except MemoryError_ as exc:
            raise HipError("hipErrorInvalidValue", str(exc)) from None

    def register(self, addr: int, n: int, flags: int) -> None:
        """hipHostRegister: a non-NULL host range that overlaps no pinned or registered one."""
        if not addr or not n or self.is_device_address(addr):
            raise HipError("hipErrorInvalidValue", "hipHostRegister needs a non-NULL host range")
        try:
            self.host_register(addr, n, flags)
        except MemoryError_:
            raise HipError("hipErrorHostMemoryAlreadyRegistered",
                           f"0x{addr:x}+{n} overlaps registered or pinned memory") from None

    def check_registered(self, addr: int) -> None:
        """hipHostUnregister's check: ``addr`` starts a registered range."""
        alloc = self.find_host(addr)
        if alloc is None or alloc.kind != HOST_REGISTERED or alloc.base != addr:
            raise HipError("hipErrorHostMemoryNotRegistered", f"0x{addr:x} is not registered")

    def check_copy(self, dst: int, dst_bytes: int, src: int, src_bytes: int, kind: hipMemcpyKind,
                   api: str) -> np.ndarray | int:
        """A copy's two ends checked for ``kind`` (hipErrorInvalidValue naming ``api``); returns
        the source end (``copy_endpoint``'s view or pageable address)."""
        dst_dev, src_dev = _MUST_BE_DEVICE[kind]
        try:
            self.copy_endpoint(dst, dst_bytes, dst_dev)
            return self.copy_endpoint(src, src_bytes, src_dev)
        except MemoryError_ as exc:
            raise HipError("hipErrorInvalidValue", f"{api}: {exc}") from None

    def copy_op(self, dst_addr: int, src_addr: int, size: Any, kind: hipMemcpyKind) -> Callable[[], Op]:
        """Validate a copy now; the returned node factory copies when its op runs."""
        n = checked_size(size)
        dst_dev, src_dev = _MUST_BE_DEVICE[kind]
        src_end = self.check_copy(dst_addr, n, src_addr, n, kind, "hipMemcpy")
        # Pageable host memory is staged at enqueue, as a GPU driver does; device-visible
        # memory (device and pinned host) is read when the copy runs.
        staged = read_endpoint(src_end, n) if isinstance(src_end, int) else None

        def make() -> Op:
            def run() -> None:
                try:
                    d = self.copy_endpoint(dst_addr, n, dst_dev)
                    data = staged if staged is not None else read_endpoint(
                        self.copy_endpoint(src_addr, n, src_dev), n)
                except MemoryError_ as exc:
                    raise DeviceFault("hipErrorIllegalAddress", str(exc)) from None
                write_endpoint(d, data)
            return Op(f"memcpy(0x{dst_addr:x} <- 0x{src_addr:x}, {n})", run, 1.0 + n / 10_000)
        return make

    def memset_op(self, addr: int, value: int, size: Any) -> Callable[[], Op]:
        """Validate a memset now; the returned node factory fills the bytes when its op runs."""
        n, byte = checked_size(size), int(value) & 0xFF
        try:
            self.copy_endpoint(addr, n, True)
        except MemoryError_ as exc:
            raise HipError("hipErrorInvalidValue", f"hipMemset: {exc}") from None

        def make() -> Op:
            def run() -> None:
                try:
                    self.copy_endpoint(addr, n, True)[:] = byte  # type: ignore[index]
                except MemoryError_ as exc:
                    raise DeviceFault("hipErrorIllegalAddress", str(exc)) from None
            return Op(f"memset(0x{addr:x}, {byte}, {n})", run, 1.0 + n / 20_000)
        return make

    def free_async_op(self, addr: int) -> Callable[[], Op]:
        """Mark the device allocation at ``addr`` free-pending; the node factory frees it."""
        alloc = self.find_device(addr) if self.is_device_address(addr) else None
        if alloc is None or alloc.base != addr or alloc.free_pending:
            raise HipError("hipErrorInvalidValue", f"0x{addr:x} is not a live device allocation")
        alloc.free_pending = True

        def make() -> Op:
            def run() -> None:
                if self.find_device(addr) is alloc:
                    self.free_device(addr)
            return Op(f"free(0x{addr:x})", run, 0.1)
        return make

    def value_address(self, addr: int) -> int:
        """``addr`` when a 32-bit stream memory operation may use it, else hipErrorInvalidValue."""
        if self.device_visible(addr, 4) is None:
            raise HipError("hipErrorInvalidValue", f"0x{addr:x} is not device-visible memory")
        return addr


def read_endpoint(src: np.ndarray | int, nbytes: int) -> bytes:
    return src.tobytes() if isinstance(src, np.ndarray) else ctypes.string_at(src, nbytes)


def write_endpoint(dst: np.ndarray | int, data: bytes) -> None:
    if isinstance(dst, np.ndarray):
        dst[:] = np.frombuffer(data, np.uint8)
    elif data:
        ctypes.memmove(dst, data, len(data))
