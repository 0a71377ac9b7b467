"""The cuda backend's bodies of the memory and module/launch rows (memsets of
8/16/32-bit elements and 2D regions, pitched, managed and peer memory, address queries,
function attributes, occupancy, extra launch entry points), over cuda-bindings.

HIP's enum values for these calls equal CUDA's (hipFunction_attribute and
CUfunction_attribute, hipFuncCache_t and CUfunc_cache, hipMemoryAdvise 1-6 and
cudaMemoryAdvise), so they pass as ints. A call that is one CUDA call is an entry of
``CALLS`` (``onecall.one_call``); the rest are ``BODIES``.
"""
from __future__ import annotations

import ctypes
from typing import Any, Callable

from hrr.backends import hiptypes as ht
from hrr.backends.codefile import read_code_file
from hrr.backends.cuda import memory, modules
from hrr.backends.cuda._errors import SUCCESS, hip_error
from hrr.backends.cuda._runtime import STATE as S
from hrr.backends.cuda._runtime import driver
from hrr.backends.cuda.onecall import as_int as _int
from hrr.backends.cuda.onecall import cuda_kind as _kind
from hrr.backends.cuda.onecall import one_call
from hrr.backends.kernargs import LaunchArgsError, pack_kernel_args

E = ht.hipError_t


def _device_array(size: Any) -> Callable[[Any], Any]:
    return lambda v: None if v is None or not int(v) else ht.DeviceArray(int(v), int(size))


def _pitched(res: tuple, height: Any) -> tuple:
    err, ptr, pitch = res
    if int(err) or not ptr:
        return (hip_error(err), None, None)
    return (SUCCESS, ht.DeviceArray(int(ptr), int(pitch) * int(height)), int(pitch))


def hipMallocPitch(width: Any, height: Any) -> tuple:
    return _pitched(S.rt.cudaMallocPitch(int(width), int(height)), height)


def hipMemAllocPitch(widthInBytes: Any, height: Any, elementSizeBytes: Any) -> tuple:
    return _pitched(driver().cuMemAllocPitch(int(widthInBytes), int(height), int(elementSizeBytes)), height)


def hipMallocManaged(size: Any, flags: Any) -> tuple:
    err, ptr = S.rt.cudaMallocManaged(int(size), int(flags))
    if int(err) or not ptr:
        return (hip_error(err), None)
    return (SUCCESS, ht.DeviceArray(int(ptr), int(size)))


def hipMemcpyWithStream(dst: int, src: int, sizeBytes: Any, kind: Any, stream: int) -> tuple:
    """A copy ordered on ``stream`` that returns once the stream has run it."""
    err = S.rt.cudaMemcpyAsync(dst, src, int(sizeBytes), _kind(kind), stream)[0]
    if int(err) == 0:
        err = S.rt.cudaStreamSynchronize(stream)[0]
    return (hip_error(err),)


def _location(device: Any) -> Any:
    """CUDA 13's cudaMemLocation for a device id (hipCpuDeviceId -1: the host)."""
    from cuda.bindings import runtime as rt
    loc = rt.cudaMemLocation()
    if int(device) < 0:
        loc.type = rt.cudaMemLocationType.cudaMemLocationTypeHost
        loc.id = 0
    else:
        loc.type = rt.cudaMemLocationType.cudaMemLocationTypeDevice
        loc.id = int(device)
    return loc


def hipMemPrefetchAsync(dev_ptr: int, count: Any, device: Any, stream: int) -> tuple:
    return (hip_error(S.rt.cudaMemPrefetchAsync(dev_ptr, int(count), _location(device), 0, stream)[0]),)


def hipMemAdvise(dev_ptr: int, count: Any, advice: Any, device: Any) -> tuple:
    if int(advice) not in range(1, 7):  # the coarse-grain advice is AMD's own
        return (E.hipErrorInvalidValue,)
    return (hip_error(S.rt.cudaMemAdvise(dev_ptr, int(count), int(advice), _location(device))[0]),)


def hipMemGetAddressRange(dptr: int) -> tuple:
    err, base, size = driver().cuMemGetAddressRange(dptr)
    if int(err):
        return (hip_error(err), None, None)
    return (SUCCESS, ht.Pointer(int(base)), int(size))


def hipMemPtrGetInfo(ptr: int) -> tuple:
    err, _base, size = driver().cuMemGetAddressRange(ptr)
    return (hip_error(err), int(size) if int(err) == 0 else None)


def hipExtMallocWithFlags(sizeBytes: Any, flags: Any) -> tuple:
    """Device memory; the AMD-specific flags (fine-grained, uncached...) have no CUDA meaning."""
    return memory.malloc(sizeBytes)


_WORD_ATTRIBUTES = (1, 3, 4, 7, 11, 12, 17)   # context, pointers, buffer id, range, mempool: 8 bytes


def _write(data: int, values: list[int], fmt: str) -> None:
    import struct
    mask = (1 << (8 * struct.calcsize(fmt))) - 1
    out = b"".join(struct.pack(fmt, v if fmt[-1].islower() else v & mask) for v in values)   # signed as is
    ctypes.memmove(data, out, len(out))


def hipPointerGetAttribute(data: int, attribute: Any, ptr: int) -> tuple:
    """cuPointerGetAttribute (HIP's attribute numbers are CUDA's), its answer written to
    ``data`` as an 8-byte word (addresses, sizes, handles) or a 4-byte one."""
    attribute = int(attribute)
    if attribute == 5 or not data:   # P2P tokens: a CUDA struct with no HIP counterpart
        return (E.hipErrorInvalidValue,)
    drv = driver()
    err, value = drv.cuPointerGetAttribute(drv.CUpointer_attribute(attribute), ptr)   # an enum member, not an int
    if int(err):
        return (hip_error(err),)
    _write(data, [int(value or 0)], "<Q" if attribute in _WORD_ATTRIBUTES else "<I")
    return (SUCCESS,)


def hipMemRangeGetAttribute(data: int, data_size: Any, attribute: Any, dev_ptr: int, count: Any) -> tuple:
    """cudaMemRangeGetAttribute: int32 answers (an array of them for AccessedBy)."""
    if int(attribute) not in (1, 2, 3, 4) or not data:   # AMD's coherency mode has no CUDA counterpart
        return (E.hipErrorInvalidValue,)
    err, value = S.rt.cudaMemRangeGetAttribute(int(data_size), S.rt.cudaMemRangeAttribute(int(attribute)),
                                               dev_ptr, int(count))
    if int(err):
        return (hip_error(err),)
    values = [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value or 0)]
    _write(data, values[:int(data_size) // 4], "<i")
    return (SUCCESS,)


# -- modules ------------------------------------------------------------------------------------
def hipModuleLoadDataEx(image: Any, numOptions: Any, optionValues: Any) -> tuple:
    return (*modules.load_data(image), None)


def hipModuleLoad(fname: Any) -> tuple:
    try:
        data = read_code_file(fname)
    except (OSError, ValueError):
        return (E.hipErrorFileNotFound, None)
    return modules.load_data(data)


def hipModuleGetGlobal(hmod: int, name: Any) -> tuple:
    """cuModuleGetGlobal: a __device__ global of the module, its address and size."""
    key = name.encode() if isinstance(name, str) else bytes(name).rstrip(b"\0")
    err, dptr, size = driver().cuModuleGetGlobal(hmod, key)
    if int(err):
        return (hip_error(err), None, None)
    return (SUCCESS, ht.Pointer(int(dptr)), int(size))


_ATTR_FIELDS = ("maxThreadsPerBlock", "sharedSizeBytes", "constSizeBytes", "localSizeBytes", "numRegs",
                "ptxVersion", "binaryVersion", "cacheModeCA", "maxDynamicSharedSizeBytes", "preferredShmemCarveout")


def hipFuncGetAttributes(func: int) -> tuple:
    attrs = ht.hipFuncAttributes()
    drv = driver()
    for code, field in enumerate(_ATTR_FIELDS):  # CUfunction_attribute 0-9, in this order
        err, value = drv.cuFuncGetAttribute(code, func)
        if int(err):
            return (hip_error(err), None)
        setattr(attrs, field, int(value))
    return (SUCCESS, attrs)


def _potential(func: int, dynSharedMemPerBlk: Any, blockSizeLimit: Any, *flags: Any) -> tuple:
    """cuOccupancyMaxPotentialBlockSize[WithFlags] with no per-block-size shared memory callback."""
    drv = driver()
    call = drv.cuOccupancyMaxPotentialBlockSizeWithFlags if flags else drv.cuOccupancyMaxPotentialBlockSize
    err, grid, block = call(func, None, int(dynSharedMemPerBlk), int(blockSizeLimit), *map(int, flags))
    if int(err):
        return (hip_error(err), None, None)
    return (SUCCESS, int(grid), int(block))


def hipModuleOccupancyMaxPotentialBlockSize(f: int, dynSharedMemPerBlk: Any, blockSizeLimit: Any) -> tuple:
    return _potential(f, dynSharedMemPerBlk, blockSizeLimit)


def hipModuleOccupancyMaxPotentialBlockSizeWithFlags(f: int, dynSharedMemPerBlk: Any, blockSizeLimit: Any,
                                                     flags: Any) -> tuple:
    return _potential(f, dynSharedMemPerBlk, blockSizeLimit, flags)


def hipOccupancyMaxPotentialBlockSize(f: int, dynSharedMemPerBlk: Any, blockSizeLimit: Any) -> tuple:
    return _potential(f, dynSharedMemPerBlk, blockSizeLimit)


def hipFuncSetSharedMemConfig(func: int, config: Any) -> tuple:
    """cuFuncSetSharedMemConfig; a driver without it (the call is deprecated: bank sizes are
    fixed) takes the hint as accepted, as AMD devices do."""
    if int(config) not in (0, 1, 2):
        return (E.hipErrorInvalidValue,)
    try:
        return (hip_error(driver().cuFuncSetSharedMemConfig(func, int(config))[0]),)
    except RuntimeError:   # cuda-bindings: the driver does not export it
        return (SUCCESS,)


# -- launches ------------------------------------------------------------------------------------
def hipExtLaunchKernel(function_address: int, numBlocks: tuple, dimBlocks: tuple, args: Any, sharedMemBytes: Any,
                       stream: int, startEvent: int, stopEvent: int, flags: Any) -> tuple:
    """hipLaunchKernel between two optional event records on the same stream."""
    if startEvent:
        err = S.rt.cudaEventRecord(startEvent, stream)[0]
        if int(err):
            return (hip_error(err),)
    result = modules.launch(function_address, numBlocks, dimBlocks, sharedMemBytes, stream, args, None,
                            E.hipErrorInvalidDeviceFunction)
    if int(result[0]) == 0 and stopEvent:
        return (hip_error(S.rt.cudaEventRecord(stopEvent, stream)[0]),)
    return result


def cooperative(fh: int, grid: tuple, block: tuple, shared: Any, stream: int, kernel_params: Any,
                missing: Any) -> tuple:
    """cuLaunchCooperativeKernel: CUDA takes no ``extra`` here, so the packed arguments go
    as kernelParams pointing at each parameter's offset in one kernarg buffer."""
    try:
        layout = modules.kernel_layout(fh)
    except KeyError:
        return (missing,)
    try:
        kernarg = pack_kernel_args(layout, kernel_params, None)
    except (LaunchArgsError, ht.PointerConversionError, ValueError):
        return (E.hipErrorInvalidValue,)
    buf = ctypes.create_string_buffer(kernarg, max(len(kernarg), 1))
    params = (ctypes.c_void_p * max(len(layout.params), 1))(
        *(ctypes.addressof(buf) + p.offset for p in layout.params))
    res = driver().cuLaunchCooperativeKernel(fh, *grid, *block, int(shared), stream, ctypes.addressof(params))
    del buf, params
    return (hip_error(res[0]),)


def hipModuleLaunchCooperativeKernel(f: int, gridDimX: Any, gridDimY: Any, gridDimZ: Any, blockDimX: Any,
                                     blockDimY: Any, blockDimZ: Any, sharedMemBytes: Any, stream: int,
                                     kernelParams: Any) -> tuple:
    return cooperative(f, (int(gridDimX), int(gridDimY), int(gridDimZ)), (int(blockDimX), int(blockDimY),
                       int(blockDimZ)), sharedMemBytes, stream, kernelParams, E.hipErrorInvalidHandle)


def hipLaunchCooperativeKernel(f: int, gridDim: tuple, blockDimX: tuple, kernelParams: Any, sharedMemBytes: Any,
                               stream: int) -> tuple:
    return cooperative(f, tuple(gridDim), tuple(blockDimX), sharedMemBytes, stream, kernelParams,
                       E.hipErrorInvalidDeviceFunction)


C = one_call
# One-call rows; the value of a memset as the C API's unsigned char / short / int takes it.
CALLS: dict[str, Callable[..., tuple]] = {
    "hipMemsetD8": C("drv.cuMemsetD8", args=lambda d, v, n: (d, int(v) & 0xFF, n)),
    "hipMemsetD16": C("drv.cuMemsetD16", args=lambda d, v, n: (d, int(v) & 0xFFFF, n)),
    "hipMemsetD32": C("drv.cuMemsetD32", args=lambda d, v, n: (d, int(v) & 0xFFFFFFFF, n)),
    "hipMemsetD8Async": C("drv.cuMemsetD8Async", args=lambda d, v, n, s: (d, int(v) & 0xFF, n, s)),
    "hipMemsetD16Async": C("drv.cuMemsetD16Async", args=lambda d, v, n, s: (d, int(v) & 0xFFFF, n, s)),
    "hipMemsetD32Async": C("drv.cuMemsetD32Async", args=lambda d, v, n, s: (d, int(v) & 0xFFFFFFFF, n, s)),
    "hipMemset2D": C("rt.cudaMemset2D"), "hipMemset2DAsync": C("rt.cudaMemset2DAsync"),
    "hipMemsetD2D8": C("drv.cuMemsetD2D8", args=lambda d, p, v, w, h: (d, p, int(v) & 0xFF, w, h)),
    "hipMemsetD2D16": C("drv.cuMemsetD2D16", args=lambda d, p, v, w, h: (d, p, int(v) & 0xFFFF, w, h)),
    "hipMemsetD2D32": C("drv.cuMemsetD2D32", args=lambda d, p, v, w, h: (d, p, int(v) & 0xFFFFFFFF, w, h)),
    "hipMemcpy2D": C("rt.cudaMemcpy2D", args=lambda d, dp, s, sp, w, h, k: (d, dp, s, sp, w, h, _kind(k))),
    "hipMemcpy2DAsync": C("rt.cudaMemcpy2DAsync",
                          args=lambda d, dp, s, sp, w, h, k, st: (d, dp, s, sp, w, h, _kind(k), st)),
    "hipMemcpyPeer": C("rt.cudaMemcpyPeer"), "hipMemcpyPeerAsync": C("rt.cudaMemcpyPeerAsync"),
    "hipHostGetFlags": C("rt.cudaHostGetFlags", _int),
    "hipModuleGetFunctionCount": C("drv.cuModuleGetFunctionCount", _int),
    "hipFuncGetAttribute": C("drv.cuFuncGetAttribute", _int),
    "hipFuncSetAttribute": C("drv.cuFuncSetAttribute"),
    "hipFuncSetCacheConfig": C("drv.cuFuncSetCacheConfig"),
    "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor": C("drv.cuOccupancyMaxActiveBlocksPerMultiprocessor",
                                                            _int),
    "hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags": C(
        "drv.cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", _int),
    "hipOccupancyMaxActiveBlocksPerMultiprocessor": C("drv.cuOccupancyMaxActiveBlocksPerMultiprocessor", _int),
    "hipMemAllocHost": lambda size: memory.host_alloc(size, 0),
}
BODIES: dict[str, Callable] = {name: fn for name, fn in globals().items() if name.startswith("hip")
                               and callable(fn) and getattr(fn, "__module__", "") == __name__}
