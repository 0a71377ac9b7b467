"""The sim's bodies of the memory, copy and pinned-memory calls (catalogue families
``memory``, ``copy``, ``pinned``), over the sim's ``memory.Memory``.

Each body is registered with ``@body`` (``hrr.backends.bodies``); ``api.py`` builds
``hip`` from them.
"""
from __future__ import annotations

import ctypes
import struct
from typing import Any, Callable

import numpy as np

from hrr import hiptypes as ht
from hrr.backends.bodies import Bodies
from hrr.hiptypes import DeviceArray, Pointer, hipError_t, hipMemcpyKind
from hrr.backends.sim import pool_calls
from hrr.backends.sim.device import current as _dev
from hrr.backends.sim.device import refuse_if_capturing
from hrr.backends.sim.kernels import DeviceFault
from hrr.backends.sim.memory import (
    _MUST_BE_DEVICE,
    HOST_PINNED,
    HOST_REGISTERED,
    Allocation,
    Memory,
    MemoryError_,
    allocate,
    checked_size,
)
from hrr.backends.sim.memory import checked_size as _size
from hrr.backends.sim.streams import Op, Stream
from hrr.backends.surface import HipError

SUCCESS = hipError_t.hipSuccess


# Calls that are a constant, a deletion or another call's body with fixed arguments.
_H2D, _D2H, _D2D = (hipMemcpyKind.hipMemcpyHostToDevice, hipMemcpyKind.hipMemcpyDeviceToHost,
                    hipMemcpyKind.hipMemcpyDeviceToDevice)


body = Bodies("memory", "copy", "pinned")


@body
def hipPointerGetAttributes(addr: int) -> tuple:
    return (SUCCESS, _dev().memory.pointer_attributes(addr))


# -- device memory --------------------------------------------------------------------------
def _device_malloc(size: Any, what: str) -> tuple:
    alloc = allocate(_dev().memory, size, what)
    return (SUCCESS, None if alloc is None else DeviceArray(alloc.base, alloc.size))


@body
def hipMalloc(size: int) -> tuple:
    _dev().check_capture_safe("hipMalloc")
    return _device_malloc(size, "hipMalloc")


def _free(addr: int, device: bool) -> None:
    """hipFree (``device``: device memory, or pinned, as HIP's hipFree also frees
    hipHostMalloc memory) and hipHostFree (pinned memory only)."""
    if not addr:
        return
    dev = _dev()
    dev.wait_all()  # like a GPU's free, wait for work that may still use the memory
    dev.memory.free(addr, device)


@body
def hipMallocAsync(size: int, s: Stream) -> tuple:
    """From the device's current memory pool (its default pool unless hipDeviceSetMemPool)."""
    return pool_calls.malloc_from(_dev().current_pool, size, s, "hipMallocAsync")


@body
def hipFreeAsync(addr: int, s: Stream) -> None:
    refuse_if_capturing(s, "hipFreeAsync")
    if not addr:
        return
    _dev().submit(s, _dev().memory.free_async_op(addr))


def _copy_op(dst: int, src: int, size: Any, kind: hipMemcpyKind) -> Callable[[], Op]:
    return _dev().memory.copy_op(dst, src, size, kind)


def _sync_on_null(make: Callable[[], Op], what: str) -> None:
    _dev().sync_on_null(make, what)


# -- pinned host memory ---------------------------------------------------------------------
def _host_malloc(size: Any, flags: int, what: str) -> tuple:
    _dev().check_capture_safe(what)
    alloc = allocate(_dev().memory, size, what, pinned_flags=int(flags))
    return (SUCCESS, None if alloc is None else Pointer(alloc.base))


@body
def hipHostRegister(addr: int, sizeBytes: int, flags: int) -> None:
    _dev().memory.register(addr, _size(sizeBytes), int(flags))


@body
def hipHostUnregister(addr: int) -> None:
    memory = _dev().memory
    memory.check_registered(addr)
    _dev().wait_all()
    memory.free_host(addr, HOST_REGISTERED)


@body
def hipHostGetDevicePointer(addr: int, flags: int) -> tuple:
    if _dev().memory.find_host(addr) is None:
        raise HipError("hipErrorInvalidValue", f"0x{addr:x} is not pinned or registered host memory")
    return (SUCCESS, Pointer(addr))  # unified addressing: the device uses the host address


PITCH_ALIGN = 256


_D2D = hipMemcpyKind.hipMemcpyDeviceToDevice


# -- strided regions -------------------------------------------------------------------------
def _region(pitch: Any, width: Any, height: Any, elem: int) -> tuple[int, int, int, int]:
    """(pitch, row bytes, height, extent) of a 2D region; hipErrorInvalidValue when a row
    is wider than the pitch."""
    pitch, width, height = checked_size(pitch), checked_size(width) * elem, checked_size(height)
    if height > 1 and pitch < width:
        raise HipError("hipErrorInvalidValue", f"a row of {width} bytes does not fit a pitch of {pitch}")
    return pitch, width, height, (pitch * (height - 1) + width if width and height else 0)


def _rows(view: np.ndarray, pitch: int, width: int, height: int) -> list[np.ndarray]:
    return [view[r * pitch:r * pitch + width] for r in range(height)]


def fill_op(memory: Memory, addr: int, pattern: bytes, pitch: int, width: int, height: int,
            what: str) -> Callable[[], Op]:
    """Validate a memset of ``height`` rows of ``width`` bytes (``pitch`` apart) now; the node
    factory fills them with ``pattern`` repeated when its op runs."""
    elem = len(pattern)
    extent = pitch * (height - 1) + width if width and height else 0
    if addr % elem:
        raise HipError("hipErrorInvalidValue", f"{what}: 0x{addr:x} is not {elem}-byte aligned")
    try:
        memory.copy_endpoint(addr, extent, True)
    except MemoryError_ as exc:
        raise HipError("hipErrorInvalidValue", f"{what}: {exc}") from None
    row = np.frombuffer(pattern * (width // elem), np.uint8)

    def make() -> Op:
        def run() -> None:
            try:
                view = memory.copy_endpoint(addr, extent, True)
            except MemoryError_ as exc:
                raise DeviceFault("hipErrorIllegalAddress", str(exc)) from None
            for r in _rows(view, pitch, width, height):  # type: ignore[arg-type]
                r[:] = row
        return Op(f"{what}(0x{addr:x}, {height}x{width})", run, 1.0 + extent / 20_000)
    return make


def copy2d_op(memory: Memory, dst: int, dpitch: Any, src: int, spitch: Any, width: Any, height: Any,
              kind: hipMemcpyKind) -> Callable[[], Op]:
    """Validate a 2D copy now; pageable host rows are staged at once (as a driver does)."""
    width_b, height_n = checked_size(width), checked_size(height)
    dpitch, spitch = checked_size(dpitch), checked_size(spitch)
    if height_n and width_b and (dpitch < width_b or spitch < width_b):
        raise HipError("hipErrorInvalidPitchValue", f"a row of {width_b} bytes, pitches {dpitch} and {spitch}")
    dext = dpitch * (height_n - 1) + width_b if width_b and height_n else 0
    sext = spitch * (height_n - 1) + width_b if width_b and height_n else 0
    dst_dev, src_dev = _MUST_BE_DEVICE[kind]
    src_end = memory.check_copy(dst, dext, src, sext, kind, "hipMemcpy2D")
    staged = _gather(src_end, spitch, width_b, height_n) if isinstance(src_end, int) else None

    def make() -> Op:
        def run() -> None:
            try:
                d = memory.copy_endpoint(dst, dext, dst_dev)
                data = staged if staged is not None else _gather(
                    memory.copy_endpoint(src, sext, src_dev), spitch, width_b, height_n)
            except MemoryError_ as exc:
                raise DeviceFault("hipErrorIllegalAddress", str(exc)) from None
            _scatter(d, dpitch, width_b, height_n, data)
        return Op(f"memcpy2D(0x{dst:x} <- 0x{src:x}, {height_n}x{width_b})", run, 1.0 + dext / 10_000)
    return make


def _gather(end: np.ndarray | int, pitch: int, width: int, height: int) -> bytes:
    if isinstance(end, np.ndarray):
        return b"".join(r.tobytes() for r in _rows(end, pitch, width, height))
    return b"".join(ctypes.string_at(end + r * pitch, width) for r in range(height))


def _scatter(end: np.ndarray | int, pitch: int, width: int, height: int, data: bytes) -> None:
    for r in range(height):
        chunk = data[r * width:(r + 1) * width]
        if isinstance(end, np.ndarray):
            end[r * pitch:r * pitch + width] = np.frombuffer(chunk, np.uint8)
        elif chunk:
            ctypes.memmove(end + r * pitch, chunk, width)


# -- memsets -----------------------------------------------------------------------------------
def _memset(elem: int, sync: bool, two_d: bool) -> Callable[..., None]:
    """The body of hipMemsetD{8,16,32}[Async] and hipMemset2D[Async] / hipMemsetD2D{8,16,32}."""
    mask = (1 << (8 * elem)) - 1

    def body(dst: int, *a: Any) -> None:
        if two_d:
            pitch, value, width, height, *stream = a
        else:
            value, count, *stream = a
            pitch, width, height = count * elem, count, 1
        pitch, row, height, _ = _region(pitch, width, height, elem)
        pattern = (int(value) & mask).to_bytes(elem, "little")
        make = fill_op(_dev().memory, dst, pattern, pitch, row, height, "memset")
        if sync:
            _dev().sync_on_null(make, "hipMemset")
        else:
            _dev().submit(stream[0], make)
    return body


# -- allocations -------------------------------------------------------------------------------
def _pitched(width: Any, height: Any, what: str) -> tuple:
    _dev().check_capture_safe(what)
    width, height = checked_size(width), checked_size(height)
    if not width or not height:
        return (SUCCESS, None, 0)
    pitch = -(-width // PITCH_ALIGN) * PITCH_ALIGN
    alloc = allocate(_dev().memory, pitch * height, f"{what} ({height} rows of {pitch} bytes)")
    assert alloc is not None   # width and height are not 0
    return (SUCCESS, DeviceArray(alloc.base, pitch * height), pitch)


@body
def hipMallocPitch(width: Any, height: Any) -> tuple:
    return _pitched(width, height, "hipMallocPitch")


@body
def hipMemAllocPitch(widthInBytes: Any, height: Any, elementSizeBytes: Any) -> tuple:
    if int(elementSizeBytes) not in (4, 8, 16):
        raise HipError("hipErrorInvalidValue", f"element size {elementSizeBytes} is not 4, 8 or 16")
    return _pitched(widthInBytes, height, "hipMemAllocPitch")


@body
def hipMallocManaged(size: Any, flags: Any) -> tuple:
    _dev().check_capture_safe("hipMallocManaged")
    if int(flags) not in (ht.CONSTANTS_MANAGED["hipMemAttachGlobal"], ht.CONSTANTS_MANAGED["hipMemAttachHost"]):
        raise HipError("hipErrorInvalidValue", f"hipMallocManaged: flags {flags}")
    alloc = allocate(_dev().memory, size, "hipMallocManaged", pinned_flags=0)
    if alloc is None:
        raise HipError("hipErrorInvalidValue", "hipMallocManaged of 0 bytes")
    alloc.managed = True
    return (SUCCESS, DeviceArray(alloc.base, alloc.size))


@body
def hipExtMallocWithFlags(sizeBytes: Any, flags: Any) -> tuple:
    _dev().check_capture_safe("hipExtMallocWithFlags")
    if int(flags) not in (0, 1, 2, 3, 4):  # default, fine-grained, signal, uncached, contiguous
        raise HipError("hipErrorInvalidValue", f"hipExtMallocWithFlags: flags {flags}")
    return _device_malloc(sizeBytes, "hipExtMallocWithFlags")


@body
def hipMemAllocHost(size: Any) -> tuple:
    return _host_malloc(size, 0, "hipMemAllocHost")


# -- copies --------------------------------------------------------------------------------------
@body
def hipMemcpy2D(dst: int, dpitch: Any, src: int, spitch: Any, width: Any, height: Any, kind: hipMemcpyKind) -> None:
    _dev().sync_on_null(copy2d_op(_dev().memory, dst, dpitch, src, spitch, width, height, kind), "hipMemcpy2D")


@body
def hipMemcpy2DAsync(dst: int, dpitch: Any, src: int, spitch: Any, width: Any, height: Any,
                     kind: hipMemcpyKind, s: Stream) -> None:
    _dev().submit(s, copy2d_op(_dev().memory, dst, dpitch, src, spitch, width, height, kind))


@body
def hipMemcpyWithStream(dst: int, src: int, sizeBytes: Any, kind: hipMemcpyKind, s: Stream) -> None:
    """A copy ordered on ``s`` that returns once it is done (the host waits for ``s``)."""
    dev = _dev()
    dev.check_capture_safe("hipMemcpyWithStream")
    dev.submit(s, dev.memory.copy_op(dst, src, sizeBytes, kind))
    dev.wait(dev.scheduler.barrier_positions(s))


def _peer(*devices: Any) -> None:
    for d in devices:
        if int(d) != 0:
            raise HipError("hipErrorInvalidDevice", f"device {d} does not exist (the sim has 1)")


@body
def hipMemcpyPeer(dst: int, dstDeviceId: Any, src: int, srcDeviceId: Any, sizeBytes: Any) -> None:
    _peer(dstDeviceId, srcDeviceId)
    _dev().sync_on_null(_dev().memory.copy_op(dst, src, sizeBytes, _D2D), "hipMemcpyPeer")


@body
def hipMemcpyPeerAsync(dst: int, dstDeviceId: Any, src: int, srcDevice: Any, sizeBytes: Any, s: Stream) -> None:
    _peer(dstDeviceId, srcDevice)
    _dev().submit(s, _dev().memory.copy_op(dst, src, sizeBytes, _D2D))


# -- managed memory and address queries -------------------------------------------------------------
def _managed(addr: int, count: Any, what: str) -> Allocation:
    n = checked_size(count)
    alloc = _dev().memory.find_host(addr, max(n, 1))
    if alloc is None or not alloc.managed:
        raise HipError("hipErrorInvalidValue", f"{what}: 0x{addr:x}+{n} is not managed memory")
    return alloc


@body
def hipMemPrefetchAsync(dev_ptr: int, count: Any, device: Any, s: Stream) -> None:
    if int(device) not in (0, ht.CONSTANTS_MANAGED["hipCpuDeviceId"]):
        raise HipError("hipErrorInvalidDevice", f"device {device} does not exist")
    alloc = _managed(dev_ptr, count, "hipMemPrefetchAsync")
    # one address space: the migration itself is a no-op, ordered on the stream
    _dev().submit(s, lambda: Op(f"prefetch(0x{dev_ptr:x})", lambda: None, 0.1))
    alloc.advice["last_prefetch"] = int(device)


_ADVICE = (1, 2, 3, 4, 5, 6, 100, 101)   # hipMemoryAdvise's values


@body
def hipMemAdvise(dev_ptr: int, count: Any, advice: Any, device: Any) -> None:
    if int(advice) not in _ADVICE:
        raise HipError("hipErrorInvalidValue", f"hipMemAdvise: advice {advice}")
    if int(device) not in (0, ht.CONSTANTS_MANAGED["hipCpuDeviceId"]):
        raise HipError("hipErrorInvalidDevice", f"device {device} does not exist")
    state = _managed(dev_ptr, count, "hipMemAdvise").advice   # per allocation, not per page
    advice, device = int(advice), int(device)
    if advice in (1, 2):
        state["read_mostly"] = advice == 1
    elif advice in (3, 4):
        state["preferred"] = device if advice == 3 else _INVALID_DEVICE
    elif advice in (5, 6):
        accessed = set(state.get("accessed_by", ()))
        state["accessed_by"] = sorted(accessed | {device} if advice == 5 else accessed - {device})
    else:
        state["coarse"] = advice == 100


_INVALID_DEVICE = -2   # hipInvalidDeviceId


def _write_ints(data: int, size: int, values: list[int], fmt: str) -> None:
    item = struct.calcsize(fmt)
    if data == 0 or size < item:
        raise HipError("hipErrorInvalidValue", f"{size} bytes cannot hold the answer")
    out = b"".join(struct.pack(fmt, v) for v in values[:size // item])
    ctypes.memmove(data, out, len(out))


@body
def hipMemRangeGetAttribute(data: int, data_size: Any, attribute: Any, dev_ptr: int, count: Any) -> None:
    """The managed range's advice (the sim keeps one state per allocation)."""
    state = _managed(dev_ptr, count, "hipMemRangeGetAttribute").advice
    size, attribute = checked_size(data_size), int(attribute)
    if attribute == 1:
        values = [int(state.get("read_mostly", False))]
    elif attribute == 2:
        values = [state.get("preferred", _INVALID_DEVICE)]
    elif attribute == 3:      # every slot of the array: devices with access, then "none"
        accessed = list(state.get("accessed_by", ()))
        values = accessed + [_INVALID_DEVICE] * (size // 4 - len(accessed))
    elif attribute == 4:
        values = [state.get("last_prefetch", _INVALID_DEVICE)]
    elif attribute == 100:    # hipMemRangeCoherencyMode: fine-grain 0, coarse-grain 1
        values = [int(state.get("coarse", False))]
    else:
        raise HipError("hipErrorInvalidValue", f"memory range attribute {attribute}")
    if attribute != 3 and size != 4:
        raise HipError("hipErrorInvalidValue", f"memory range attribute {attribute} is 4 bytes, not {size}")
    _write_ints(data, size, values, "<i")


@body
def hipPointerGetAttribute(data: int, attribute: Any, ptr: int) -> None:
    """One attribute of ``ptr`` written to ``data`` (an 8-byte word for addresses, sizes and
    ids, a 4-byte one otherwise)."""
    memory = _dev().memory
    alloc, attribute = memory.find(ptr), int(attribute)
    if alloc is None:
        raise HipError("hipErrorInvalidValue", f"0x{ptr:x} is in no allocation")
    device = alloc.kind == "device"
    kind = 3 if alloc.managed else 2 if device else 1   # hipMemoryType: managed, device, host
    words = {1: 1, 3: ptr, 4: 0 if device else ptr, 7: alloc.base, 11: alloc.base, 12: alloc.size}
    ints = {2: kind, 6: 0, 8: int(alloc.managed), 9: 0, 13: 1}
    if attribute in words:
        _write_ints(data, 8, [words[attribute]], "<Q")
    elif attribute in ints:
        _write_ints(data, 4, [ints[attribute]], "<I")
    else:
        raise HipError("hipErrorInvalidValue", f"pointer attribute {attribute}")


@body
def hipMemGetAddressRange(dptr: int) -> tuple:
    memory = _dev().memory
    alloc = memory.find_device(dptr) if memory.is_device_address(dptr) else memory.find_host(dptr)
    if alloc is None or (alloc.kind != "device" and not alloc.managed):
        raise HipError("hipErrorNotFound", f"0x{dptr:x} is in no device allocation")
    return (SUCCESS, Pointer(alloc.base), alloc.size)


@body
def hipMemPtrGetInfo(ptr: int) -> tuple:
    alloc = _dev().memory.find(ptr)
    if alloc is None:
        raise HipError("hipErrorInvalidValue", f"0x{ptr:x} is in no allocation")
    return (SUCCESS, alloc.size)


@body
def hipHostGetFlags(hostPtr: int) -> tuple:
    alloc = _dev().memory.find_host(hostPtr)
    if alloc is None or alloc.kind != HOST_PINNED or alloc.managed:
        raise HipError("hipErrorInvalidValue", f"0x{hostPtr:x} is not pinned host memory")
    return (SUCCESS, alloc.flags)


body.table({
    "hipMemset": lambda dst, value, n: _sync_on_null(_dev().memory.memset_op(dst, value, n), "hipMemset"),
    "hipMemsetAsync": lambda dst, value, n, s: _dev().submit(s, _dev().memory.memset_op(dst, value, n)),
    "hipMemcpy": lambda dst, src, n, kind: _sync_on_null(_copy_op(dst, src, n, kind), "hipMemcpy"),
    "hipMemcpyAsync": lambda dst, src, n, kind, s: _dev().submit(s, _copy_op(dst, src, n, kind)),
    "hipMemcpyHtoD": lambda dst, src, n: _sync_on_null(_copy_op(dst, src, n, _H2D), "hipMemcpyHtoD"),
    "hipMemcpyDtoH": lambda dst, src, n: _sync_on_null(_copy_op(dst, src, n, _D2H), "hipMemcpyDtoH"),
    "hipMemcpyDtoD": lambda dst, src, n: _sync_on_null(_copy_op(dst, src, n, _D2D), "hipMemcpyDtoD"),
    "hipMemcpyHtoDAsync": lambda dst, src, n, s: _dev().submit(s, _copy_op(dst, src, n, _H2D)),
    "hipMemcpyDtoHAsync": lambda dst, src, n, s: _dev().submit(s, _copy_op(dst, src, n, _D2H)),
    "hipMemcpyDtoDAsync": lambda dst, src, n, s: _dev().submit(s, _copy_op(dst, src, n, _D2D)),
    "hipHostMalloc": lambda size, flags: _host_malloc(size, flags, "hipHostMalloc"),
    "hipMallocHost": lambda size: _host_malloc(size, 0, "hipMallocHost"),
    "hipHostAlloc": lambda size, flags: _host_malloc(size, flags, "hipHostAlloc"),
    "hipFree": lambda ptr: _free(ptr, True),
    "hipHostFree": lambda ptr: _free(ptr, False),
    "hipFreeHost": lambda ptr: _free(ptr, False),
    "hipMemsetD8": _memset(1, True, False),
    "hipMemsetD16": _memset(2, True, False),
    "hipMemsetD32": _memset(4, True, False),
    "hipMemsetD8Async": _memset(1, False, False),
    "hipMemsetD16Async": _memset(2, False, False),
    "hipMemsetD32Async": _memset(4, False, False),
    "hipMemset2D": _memset(1, True, True),
    "hipMemset2DAsync": _memset(1, False, True),
    "hipMemsetD2D8": _memset(1, True, True),
    "hipMemsetD2D16": _memset(2, True, True),
    "hipMemsetD2D32": _memset(4, True, True),
})
