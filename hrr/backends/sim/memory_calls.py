"""The sim's bodies of the memory and module/launch rows of issue 10: memsets of 8/16/32-bit
elements and 2D regions, pitched allocations, 2D and peer copies, managed memory, address
queries, function attributes, occupancy and the extra launch entry points.

Managed memory (hipMallocManaged) is host memory that the device also reaches, as on a GPU
with unified memory: the sim hands out a pinned-style allocation (page-aligned, real
process memory) marked ``managed``, so the host reads and writes it at ``int(ptr)`` and
kernels and copies reach it through ``Memory.resolve``. Pitched allocations round each row
up to ``PITCH_ALIGN`` bytes. The occupancy model is the device model's (``Device.model``, as
its hipDeviceProp_t says): its compute units, each holding ``max_threads_per_cu`` threads in
whole wavefronts, at most ``max_blocks_per_cu`` blocks and ``lds`` bytes of shared memory.
"""
from __future__ import annotations

import ctypes
from typing import Any, Callable

import numpy as np

from hrr.backends import hiptypes as ht
from hrr.backends import kernelsource, surface
from hrr.backends.hiptypes import DeviceArray, Pointer, hipError_t, hipMemcpyKind
from hrr.backends.codefile import read_code_file
from hrr.backends.kernargs import pack_kernel_args
from hrr.backends.sim import device as _device
from hrr.backends.sim.kernels import (CodeObjectError, Function, KernelLibrary, Module, kernel_name,
                                      resolve_code_object)
from hrr.backends.sim.memory import _MUST_BE_DEVICE, HOST_PINNED, Allocation, Memory, MemoryError_, checked_size
from hrr.backends.sim.streams import Op, Stream
from hrr.backends.surface import HipError, irregular

SUCCESS = hipError_t.hipSuccess
PITCH_ALIGN = 256
MAX_BLOCK = 1024   # every AMD GPU's work-group limit (hipFuncAttributes.maxThreadsPerBlock)
_dev = _device.current
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
                from hrr.backends.sim.kernels import DeviceFault
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
                from hrr.backends.sim.kernels import DeviceFault
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
    alloc = _dev().memory.malloc(pitch * height)
    if alloc is None:
        raise HipError("hipErrorOutOfMemory", f"{what}: cannot allocate {height} rows of {pitch} bytes")
    return (SUCCESS, DeviceArray(alloc.base, pitch * height), pitch)


def hipMallocPitch(width: Any, height: Any) -> tuple:
    return _pitched(width, height, "hipMallocPitch")


def hipMemAllocPitch(widthInBytes: Any, height: Any, elementSizeBytes: Any) -> tuple:
    if int(elementSizeBytes) not in (4, 8, 16):
        raise HipError("hipErrorInvalidValue", f"element size {elementSizeBytes} is not 4, 8 or 16")
    return _pitched(widthInBytes, height, "hipMemAllocPitch")


def hipMallocManaged(size: Any, flags: Any) -> tuple:
    _dev().check_capture_safe("hipMallocManaged")
    if int(flags) not in (ht.CONSTANTS_MANAGED["hipMemAttachGlobal"], ht.CONSTANTS_MANAGED["hipMemAttachHost"]):
        raise HipError("hipErrorInvalidValue", f"hipMallocManaged: flags {flags}")
    n = checked_size(size)
    if n == 0:
        raise HipError("hipErrorInvalidValue", "hipMallocManaged of 0 bytes")
    alloc = _dev().memory.host_malloc(n, 0)
    if alloc is None:
        raise HipError("hipErrorOutOfMemory", f"hipMallocManaged: cannot allocate {n} bytes")
    alloc.managed = True
    return (SUCCESS, DeviceArray(alloc.base, n))


def hipExtMallocWithFlags(sizeBytes: Any, flags: Any) -> tuple:
    _dev().check_capture_safe("hipExtMallocWithFlags")
    if int(flags) not in (0, 1, 2, 3, 4):  # default, fine-grained, signal, uncached, contiguous
        raise HipError("hipErrorInvalidValue", f"hipExtMallocWithFlags: flags {flags}")
    n = checked_size(sizeBytes)
    if n == 0:
        return (SUCCESS, None)
    alloc = _dev().memory.malloc(n)
    if alloc is None:
        raise HipError("hipErrorOutOfMemory", f"cannot allocate {n} bytes")
    return (SUCCESS, DeviceArray(alloc.base, n))


def hipMemAllocHost(size: Any) -> tuple:
    _dev().check_capture_safe("hipMemAllocHost")
    n = checked_size(size)
    if n == 0:
        return (SUCCESS, None)
    alloc = _dev().memory.host_malloc(n, 0)
    if alloc is None:
        raise HipError("hipErrorOutOfMemory", f"hipMemAllocHost: cannot allocate {n} bytes")
    return (SUCCESS, Pointer(alloc.base))


# -- copies --------------------------------------------------------------------------------------
def hipMemcpy2D(dst: int, dpitch: Any, src: int, spitch: Any, width: Any, height: Any, kind: hipMemcpyKind) -> None:
    _dev().sync_on_null(copy2d_op(_dev().memory, dst, dpitch, src, spitch, width, height, kind), "hipMemcpy2D")


def hipMemcpy2DAsync(dst: int, dpitch: Any, src: int, spitch: Any, width: Any, height: Any,
                     kind: hipMemcpyKind, s: Stream) -> None:
    _dev().submit(s, copy2d_op(_dev().memory, dst, dpitch, src, spitch, width, height, kind))


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


def hipMemcpyPeer(dst: int, dstDeviceId: Any, src: int, srcDeviceId: Any, sizeBytes: Any) -> None:
    _peer(dstDeviceId, srcDeviceId)
    _dev().sync_on_null(_dev().memory.copy_op(dst, src, sizeBytes, _D2D), "hipMemcpyPeer")


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


def hipMemPrefetchAsync(dev_ptr: int, count: Any, device: Any, s: Stream) -> None:
    if int(device) not in (0, ht.CONSTANTS_MANAGED["hipCpuDeviceId"]):
        raise HipError("hipErrorInvalidDevice", f"device {device} does not exist")
    alloc = _managed(dev_ptr, count, "hipMemPrefetchAsync")
    # one address space: the migration itself is a no-op, ordered on the stream
    _dev().submit(s, lambda: Op(f"prefetch(0x{dev_ptr:x})", lambda: None, 0.1))
    alloc.advice["last_prefetch"] = int(device)


_ADVICE = (1, 2, 3, 4, 5, 6, 100, 101)   # hipMemoryAdvise's values


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
    import struct
    item = struct.calcsize(fmt)
    if data == 0 or size < item:
        raise HipError("hipErrorInvalidValue", f"{size} bytes cannot hold the answer")
    out = b"".join(struct.pack(fmt, v) for v in values[:size // item])
    ctypes.memmove(data, out, len(out))


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


def hipMemGetAddressRange(dptr: int) -> tuple:
    memory = _dev().memory
    alloc = memory.find_device(dptr) if memory.is_device_address(dptr) else memory.find_host(dptr)
    if alloc is None or (alloc.kind != "device" and not alloc.managed):
        raise HipError("hipErrorNotFound", f"0x{dptr:x} is in no device allocation")
    return (SUCCESS, Pointer(alloc.base), alloc.size)


def hipMemPtrGetInfo(ptr: int) -> tuple:
    alloc = _dev().memory.find(ptr)
    if alloc is None:
        raise HipError("hipErrorInvalidValue", f"0x{ptr:x} is in no allocation")
    return (SUCCESS, alloc.size)


def hipHostGetFlags(hostPtr: int) -> tuple:
    alloc = _dev().memory.find_host(hostPtr)
    if alloc is None or alloc.kind != HOST_PINNED or alloc.managed:
        raise HipError("hipErrorInvalidValue", f"0x{hostPtr:x} is not pinned host memory")
    return (SUCCESS, alloc.flags)


# -- modules -----------------------------------------------------------------------------------
def new_module(library: KernelLibrary, kernels: tuple) -> Module:
    """A loaded module: a handle, and its own zeroed device copy of each global its library
    declares (hipErrorOutOfMemory, and no module, when they do not fit)."""
    memory = _dev().memory
    made: dict[str, int] = {}
    for name, size in sorted(library.globals.items()):
        alloc = memory.malloc(size)
        if alloc is None:
            for base in made.values():
                memory.free_device(base)
            raise HipError("hipErrorOutOfMemory", f"the module's global {name!r} ({size} bytes)")
        made[name] = alloc.base
    return _dev().keep("module", lambda h: Module(h, library, kernels, made))


def free_globals(mod: Module) -> None:
    """hipModuleUnload: the module's globals (a native module's image, which holds them) go with it."""
    memory = _dev().memory
    if mod.image_base is not None:
        if memory.find_device(mod.image_base) is not None:
            memory.free_device(mod.image_base)
        mod.globals.clear()
        return
    for base in mod.globals.values():
        if memory.find_device(base) is not None:
            memory.free_device(base)
    mod.globals.clear()


def load_module(image: bytes) -> Module:
    """A module from a code object's bytes: a kernel library's kernels, or a program's HIP C++
    source compiled for the CPU (``native``)."""
    try:
        if kernelsource.is_kernel_source(image):
            from hrr.backends.sim.native import module as native
            dev = _dev()
            loaded = native.load(dev, image)
            return dev.keep("module", lambda h: Module(h, loaded.library, tuple(loaded.library.kernels),
                                                       loaded.globals, loaded.image_base))
        library, co = resolve_code_object(image)
    except CodeObjectError as exc:
        raise HipError(exc.code, str(exc)) from None
    return new_module(library, co.kernels)


def hipModuleGetGlobal(hmod: Module, name: Any) -> tuple:
    key = kernel_name(name)
    base = hmod.globals.get(key)
    if base is None:
        raise HipError("hipErrorNotFound", f"the module has no global {key!r}")
    return (SUCCESS, Pointer(base), hmod.library.globals[key])


def hipModuleLoadDataEx(image: Any, numOptions: Any, optionValues: Any) -> tuple:
    from hrr.backends.sim.kernels import image_bytes
    try:
        data = image_bytes(image)
    except CodeObjectError as exc:
        raise HipError(exc.code, str(exc)) from None
    return (SUCCESS, load_module(data), None)


@irregular(raw=True)  # a path, not an address
def hipModuleLoad(fname: Any) -> tuple:
    try:
        data = read_code_file(fname)
    except (OSError, ValueError):
        raise HipError("hipErrorFileNotFound", f"hipModuleLoad: cannot read {fname!r}") from None
    return (SUCCESS, load_module(data))


def hipModuleGetFunctionCount(mod: Module) -> tuple:
    return (SUCCESS, len(mod.kernels))


# hipFunction_attribute -> value for the sim's kernels (no registers, no static shared memory)
_FUNC_ATTR_DEFAULTS = {0: MAX_BLOCK, 1: 0, 2: 0, 3: 0, 4: 0, 5: 94, 6: 94, 7: 0}
_MAX_DYNAMIC_SHARED, _CARVEOUT = 8, 9          # hipFuncAttribute's values (also hipFunction_attribute's)


def _func_attr(fn: Function, attrib: int) -> int:
    if attrib in _FUNC_ATTR_DEFAULTS:
        return _FUNC_ATTR_DEFAULTS[attrib]
    if attrib == _MAX_DYNAMIC_SHARED:
        return int(fn.attributes.get(_MAX_DYNAMIC_SHARED, _dev().model.lds))
    if attrib == _CARVEOUT:
        return int(fn.attributes.get(_CARVEOUT, -1))
    raise HipError("hipErrorInvalidValue", f"function attribute {attrib}")


def hipFuncGetAttributes(fn: Function) -> tuple:
    attrs = ht.hipFuncAttributes()
    for field, code in (("maxThreadsPerBlock", 0), ("sharedSizeBytes", 1), ("constSizeBytes", 2),
                        ("localSizeBytes", 3), ("numRegs", 4), ("ptxVersion", 5), ("binaryVersion", 6),
                        ("cacheModeCA", 7), ("maxDynamicSharedSizeBytes", 8), ("preferredShmemCarveout", 9)):
        setattr(attrs, field, _func_attr(fn, code))
    return (SUCCESS, attrs)


def hipFuncGetAttribute(attrib: Any, fn: Function) -> tuple:
    return (SUCCESS, _func_attr(fn, int(attrib)))


def hipFuncSetAttribute(fn: Function, attr: Any, value: Any) -> None:
    attr, value = int(attr), int(value)
    if attr == _MAX_DYNAMIC_SHARED and 0 <= value <= _dev().model.lds:
        fn.attributes[attr] = value
    elif attr == _CARVEOUT and -1 <= value <= 100:
        fn.attributes[attr] = value
    else:
        raise HipError("hipErrorInvalidValue", f"hipFuncSetAttribute: attribute {attr} = {value}")


def hipFuncSetCacheConfig(fn: Function, config: Any) -> None:
    if int(config) not in (0, 1, 2, 3):
        raise HipError("hipErrorInvalidValue", f"cache config {config}")
    fn.attributes["cache_config"] = int(config)


def hipFuncSetSharedMemConfig(fn: Function, config: Any) -> None:
    if int(config) not in (0, 1, 2):
        raise HipError("hipErrorInvalidValue", f"shared memory config {config}")
    fn.attributes["shared_mem_config"] = int(config)


# -- occupancy -----------------------------------------------------------------------------------
def active_blocks(fn: Function, block_size: Any, shared: Any) -> int:
    """Blocks of ``block_size`` threads and ``shared`` dynamic bytes one compute unit holds."""
    block_size, shared, model = int(block_size), checked_size(shared), _dev().model
    if not 0 < block_size <= model.max_threads_per_block:
        raise HipError("hipErrorInvalidValue", f"block size {block_size}")
    if shared > int(fn.attributes.get(_MAX_DYNAMIC_SHARED, model.lds)):
        return 0
    threads = -(-block_size // model.wavefront) * model.wavefront   # a block takes whole wavefronts
    return min(model.max_blocks_per_cu, model.max_threads_per_cu // threads,
               model.lds // shared if shared else model.max_blocks_per_cu)


def _flags(flags: Any) -> bool:
    """False for valid occupancy flags (so ``_flags(f) or ...`` reads on); raises otherwise."""
    if int(flags) not in (0, 1):  # hipOccupancyDefault, hipOccupancyDisableCachingOverride
        raise HipError("hipErrorInvalidValue", f"occupancy flags {flags}")
    return False


def _potential(fn: Function, shared: Any, limit: Any) -> tuple:
    top = min(MAX_BLOCK, int(limit) or MAX_BLOCK)
    if top < 1:
        raise HipError("hipErrorInvalidValue", f"block size limit {limit}")
    best = (0, top)
    for size in range(top, 0, -64 if top >= 64 else -1):
        threads = active_blocks(fn, size, shared) * size
        if threads > best[0] * 1:
            best = (threads, size)
    size = best[1]
    return (SUCCESS, active_blocks(fn, size, shared) * _dev().model.compute_units, size)


def _occupancy_bodies() -> dict[str, Callable]:
    return {
        "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor":
            lambda f, bs, sh: (SUCCESS, active_blocks(f, bs, sh)),
        "hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags":
            lambda f, bs, sh, fl: _flags(fl) or (SUCCESS, active_blocks(f, bs, sh)),
        "hipOccupancyMaxActiveBlocksPerMultiprocessor":
            lambda f, bs, sh: (SUCCESS, active_blocks(f, bs, sh)),
        "hipModuleOccupancyMaxPotentialBlockSize": _potential,
        "hipModuleOccupancyMaxPotentialBlockSizeWithFlags":
            lambda f, sh, lim, fl: _flags(fl) or _potential(f, sh, lim),
        "hipOccupancyMaxPotentialBlockSize": _potential,
    }


# -- launches --------------------------------------------------------------------------------------
def _function(f: Any, code: str) -> Function:
    dev = _dev()
    return dev.lookup(dev.functions, f, "kernel function", code)


def _launch(fn: Function, grid: tuple, block: tuple, shared: Any, stream: Any, kernel_params: Any,
            cooperative: bool) -> Stream:
    grid, block = tuple(int(v) for v in grid), tuple(int(v) for v in block)
    if min(grid + block) < 1 or block[0] * block[1] * block[2] > MAX_BLOCK:
        raise HipError("hipErrorInvalidConfiguration", f"launch shape {grid} x {block}")
    if cooperative:
        fits = active_blocks(fn, block[0] * block[1] * block[2], shared or 0) * _dev().model.compute_units
        if grid[0] * grid[1] * grid[2] > fits:
            raise HipError("hipErrorCooperativeLaunchTooLarge",
                           f"{grid} blocks are more than the {fits} that can be resident at once")
    dev = _dev()
    s = dev.lookup(dev.streams, stream, "stream")
    kernargs = pack_kernel_args(fn.kernel.layout, kernel_params, None)
    dev.launch(s, fn.kernel, kernargs, grid, block, int(shared or 0))
    return s


@irregular(raw=True)  # the function and events are looked up by hand (null events are allowed)
def hipExtLaunchKernel(function_address: Any, numBlocks: Any, dimBlocks: Any, args: Any, sharedMemBytes: Any,
                       stream: Any, startEvent: Any, stopEvent: Any, flags: Any) -> None:
    dev = _dev()
    fn = _function(function_address, "hipErrorInvalidDeviceFunction")
    events = [dev.lookup(dev.events, e, "event") if ht.handle_or_zero(e) else None for e in (startEvent, stopEvent)]
    s = dev.lookup(dev.streams, stream, "stream")
    if events[0] is not None:
        dev.record_event(events[0], s)
    _launch(fn, surface.dims(numBlocks), surface.dims(dimBlocks), sharedMemBytes, stream, args, False)
    if events[1] is not None:
        dev.record_event(events[1], s)


@irregular(raw=True)
def hipModuleLaunchCooperativeKernel(f: Any, gridDimX: Any, gridDimY: Any, gridDimZ: Any, blockDimX: Any,
                                     blockDimY: Any, blockDimZ: Any, sharedMemBytes: Any, stream: Any,
                                     kernelParams: Any) -> None:
    _launch(_function(f, "hipErrorInvalidHandle"), (gridDimX, gridDimY, gridDimZ),
            (blockDimX, blockDimY, blockDimZ), sharedMemBytes, stream, kernelParams, True)


@irregular(raw=True)
def hipLaunchCooperativeKernel(f: Any, gridDim: Any, blockDimX: Any, kernelParams: Any, sharedMemBytes: Any,
                               stream: Any) -> None:
    _launch(_function(f, "hipErrorInvalidDeviceFunction"), surface.dims(gridDim), surface.dims(blockDimX),
            sharedMemBytes, stream, kernelParams, True)


BODIES: dict[str, Callable] = {
    "hipMemsetD8": _memset(1, True, False), "hipMemsetD16": _memset(2, True, False),
    "hipMemsetD32": _memset(4, True, False), "hipMemsetD8Async": _memset(1, False, False),
    "hipMemsetD16Async": _memset(2, False, False), "hipMemsetD32Async": _memset(4, False, False),
    "hipMemset2D": _memset(1, True, True), "hipMemset2DAsync": _memset(1, False, True),
    "hipMemsetD2D8": _memset(1, True, True), "hipMemsetD2D16": _memset(2, True, True),
    "hipMemsetD2D32": _memset(4, True, True),
    **{name: fn for name, fn in globals().items() if name.startswith("hip") and callable(fn)},
    **_occupancy_bodies(),
}
