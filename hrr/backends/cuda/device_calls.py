"""The cuda backend's bodies of the device calls (catalogue families ``device``,
``error``, ``peer`` and ``context``): errors and the last error, device selection,
properties and attributes, limits, peers and contexts, as HIP on NVIDIA makes them: each
is the CUDA runtime or driver call that means the same.

hipDeviceGetAttribute maps each hipDeviceAttribute_t member to the CUdevice_attribute of
the same meaning (``ATTRIBUTES``); a member with no CUDA equivalent (AMD-only ones, the
array-valued texture limits, the range markers) is hipErrorInvalidValue, as HIP's own
NVIDIA path answers (docs/cuda-backend.md lists them). Enums whose numbering differs are
translated (hipDeviceP2PAttr is CUDA's minus one; hipLimit_t's HIP-only scratch limits are
unsupported). Contexts are the driver's CUcontext handles. A failed call is its thread's
last error (``_tls``, kept by ``hip_api``'s frame).

Each body is registered with ``@body`` or ``body.table`` (``hrr.backends.bodies``);
``hip_api`` builds ``hip`` from them.
"""
from __future__ import annotations

import sys

import threading
from typing import Any, Callable

from hrr import hiptypes as ht
from hrr.backends import surface
from hrr.backends.bodies import Bodies
from hrr.backends.cuda import _runtime, memory, modules
from hrr.backends.cuda._errors import HIP_TO_CUDA, SUCCESS
from hrr.backends.cuda._errors import hip_error as _err
from hrr.backends.cuda._runtime import STATE as S
from hrr.backends.cuda.onecall import as_int as _int
from hrr.backends.cuda.onecall import one_call as C
from hrr.backends.error_strings import error_string
from hrr.backends.surface import HipError, irregular

E = ht.hipError_t
INT32_MAX = (1 << 31) - 1
VMM_SUPPORTED = 102        # CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED (driver only)

# hipDeviceAttribute_t (name after "hipDeviceAttribute") -> CUdevice_attribute / cudaDeviceAttr
ATTRIBUTES: dict[str, int] = {
    "EccEnabled": 32, "AccessPolicyMaxWindowSize": 109, "AsyncEngineCount": 40, "CanMapHostMemory": 19,
    "CanUseHostPointerForRegisteredMem": 91, "ClockRate": 13, "ComputeMode": 20, "ComputePreemptionSupported": 90,
    "ConcurrentKernels": 31, "ConcurrentManagedAccess": 89, "CooperativeLaunch": 95, "DeviceOverlap": 15,
    "DirectManagedMemAccessFromHost": 101, "GlobalL1CacheSupported": 79, "HostNativeAtomicSupported": 86,
    "Integrated": 18, "IsMultiGpuBoard": 84, "KernelExecTimeout": 17, "L2CacheSize": 38,
    "LocalL1CacheSupported": 80, "ComputeCapabilityMajor": 75, "ComputeCapabilityMinor": 76, "ManagedMemory": 83,
    "MaxBlocksPerMultiProcessor": 106, "MaxBlockDimX": 2, "MaxBlockDimY": 3, "MaxBlockDimZ": 4, "MaxGridDimX": 5,
    "MaxGridDimY": 6, "MaxGridDimZ": 7, "MaxSurface1D": 55, "MaxSurfaceCubemap": 66, "MaxTexture1DWidth": 21,
    "MaxTexture1DLinear": 69, "MaxTexture1DMipmap": 77, "MaxTexture2DWidth": 22, "MaxTexture2DHeight": 23,
    "MaxTexture3DWidth": 24, "MaxTexture3DHeight": 25, "MaxTexture3DDepth": 26, "MaxTextureCubemap": 52,
    "MaxThreadsPerBlock": 1, "MaxThreadsPerMultiProcessor": 39, "MaxPitch": 11, "MemoryBusWidth": 37,
    "MemoryClockRate": 36, "MultiGpuBoardGroupID": 85, "MultiprocessorCount": 16, "PageableMemoryAccess": 88,
    "PageableMemoryAccessUsesHostPageTables": 100, "PciBusId": 33, "PciDeviceId": 34, "PciDomainId": 50,
    "PersistingL2CacheMaxSize": 108, "MaxRegistersPerBlock": 12, "MaxRegistersPerMultiprocessor": 82,
    "ReservedSharedMemPerBlock": 111, "MaxSharedMemoryPerBlock": 8, "SharedMemPerBlockOptin": 97,
    "SharedMemPerMultiprocessor": 81, "SingleToDoublePrecisionPerfRatio": 87, "StreamPrioritiesSupported": 78,
    "SurfaceAlignment": 30, "TccDriver": 35, "TextureAlignment": 14, "TexturePitchAlignment": 51,
    "TotalConstantMemory": 9, "UnifiedAddressing": 41, "WarpSize": 10, "MemoryPoolsSupported": 115,
    "VirtualMemoryManagementSupported": VMM_SUPPORTED, "HostRegisterSupported": 99,
    "MemoryPoolSupportedHandleTypes": 119, "HostNumaId": 134, "GPUDirectRDMAWithHipVMMSupported": 116,
    "MaxSharedMemoryPerMultiprocessor": 81, "PhysicalMultiProcessorCount": 16, "PciChipId": 139,
}
# Answers that are facts of every device CUDA 13 runs, not attributes it has.
CONSTANT_ATTRIBUTES: dict[str, int] = {
    "CooperativeMultiDeviceLaunch": 0,   # multi-device cooperative launches were removed in CUDA 12
    "CooperativeMultiDeviceUnmatchedFunc": 0, "CooperativeMultiDeviceUnmatchedGridDim": 0,
    "CooperativeMultiDeviceUnmatchedBlockDim": 0, "CooperativeMultiDeviceUnmatchedSharedMem": 0,
    "CanUseStreamWaitValue": 1,          # cuStreamWaitValue32 is always available since CUDA 12
}
_PREFIX = len("hipDeviceAttribute")
_BY_VALUE: dict[int, tuple[str, int]] = {}
for _name, _member in ht.hipDeviceAttribute_t.__members__.items():
    _short = _name[_PREFIX:]
    if _short in ATTRIBUTES:
        _BY_VALUE[int(_member)] = ("attr", ATTRIBUTES[_short])
    elif _short in CONSTANT_ATTRIBUTES:
        _BY_VALUE[int(_member)] = ("const", CONSTANT_ATTRIBUTES[_short])
    elif _short == "TotalGlobalMem":
        _BY_VALUE[int(_member)] = ("total_mem", 0)

# Each thread's last error (hipGetLastError), as hip_api's frame records it.
_tls = threading.local()

body = Bodies("device", "error", "peer", "context")


# -------------------------------------------------------------- errors, the last error

@body
@irregular(bare=True)  # needs no driver
def hipGetErrorName(hip_error: Any) -> tuple:
    return (SUCCESS, ht.CStr(surface.error_name(hip_error)))


# the codes whose CUDA message differs from HIP's: HIP's message (error_strings)
_HIP_STRINGS = {int(E[name]): error_string(name).encode() for name in (
    "hipSuccess", "hipErrorInvalidValue", "hipErrorOutOfMemory", "hipErrorStreamCaptureUnsupported",
    "hipErrorStreamCaptureInvalidated")}


@body
@irregular(bare=True)  # needs no driver
def hipGetErrorString(hipError: Any) -> tuple:
    code = int(hipError)
    text = _HIP_STRINGS.get(code)
    if text is None and code in HIP_TO_CUDA:
        try:
            from cuda.bindings import runtime as rt
            err, s = rt.cudaGetErrorString(HIP_TO_CUDA[code])
            if int(err) == 0 and s:
                text = bytes(s)
        except Exception:  # noqa: BLE001 - fall back to the name
            text = None
    if text is None:
        text = bytes(hipGetErrorName(hipError)[1])
    return (SUCCESS, ht.CStr(text))


@body
@irregular(bare=True)  # reports the last error; the driver is loaded by hand
def hipGetLastError() -> tuple:
    """The last error of any hip call on this thread (then reset), or the runtime's."""
    own = getattr(_tls, "last", SUCCESS)
    _tls.last = SUCCESS
    rt_err = SUCCESS
    if S.ready:
        rt_err = _err(S.rt.cudaGetLastError()[0])
    elif own == SUCCESS:
        try:
            _runtime.require_driver()
        except _runtime.DriverUnavailable as exc:   # no driver, or a fork()ed child: the runtime's error
            return (E[exc.hip_error],)
        rt_err = _err(S.rt.cudaGetLastError()[0])
    return (own if own else rt_err,)


@body
@irregular(bare=True)
def hipPeekAtLastError() -> tuple:
    own = getattr(_tls, "last", SUCCESS)
    if not S.ready:
        try:
            _runtime.require_driver()
        except _runtime.DriverUnavailable as exc:
            return (own if own else E[exc.hip_error],)
    rt_err = _err(S.rt.cudaPeekAtLastError()[0])
    return (own if own else rt_err,)


def _drv_error_text(hipError: Any, string: bool) -> tuple:
    """hipDrvGetErrorName/String: HIP's texts. A value outside hipError_t failed its
    conversion (hipErrorInvalidValue, as HIP answers, unlike hipGetErrorName's
    "hipErrorUnknown"); like HIP's NVIDIA path (cuGetErrorName) it needs the driver."""
    return (SUCCESS, ht.CStr(error_string(hipError.name) if string else hipError.name))


# ---------------------------------------------------------- devices and their properties

@body
def hipSetDevice(deviceId: Any) -> tuple:
    (err,) = S.rt.cudaSetDevice(int(deviceId))
    _runtime.forget_context()
    return (_err(err),)


@body
def hipDeviceReset() -> tuple:
    """Destroy every allocation, stream, event, module and host registration of the
    device (cudaDeviceReset) and forget what this backend knew about them."""
    (err,) = S.rt.cudaDeviceReset()
    memory.forget_all()
    modules.forget_all()
    _runtime.forget_all_contexts()
    _tls.last = SUCCESS
    return (_err(err),)


def _s(v: Any) -> str:
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).split(b"\0", 1)[0].decode(errors="replace")
    return str(v)


# cudaDeviceProp's fields that hipDeviceProp_t has under the same name, as ints
_PROPS = ("totalGlobalMem sharedMemPerBlock regsPerBlock warpSize maxThreadsPerBlock totalConstMem major minor "
          "multiProcessorCount l2CacheSize maxThreadsPerMultiProcessor memoryBusWidth pciBusID pciDeviceID "
          "pciDomainID integrated canMapHostMemory concurrentKernels asyncEngineCount unifiedAddressing "
          "managedMemory isMultiGpuBoard sharedMemPerMultiprocessor pageableMemoryAccess "
          "concurrentManagedAccess").split()


def _props(p: Any) -> ht.hipDeviceProp_t | None:
    if p is None:
        return None
    fields: dict[str, Any] = {f: int(getattr(p, f)) for f in _PROPS}
    fields.update(name=_s(p.name), gcnArchName=f"sm_{p.major}{p.minor}", maxThreadsDim=list(p.maxThreadsDim),
                  maxGridSize=list(p.maxGridSize))
    for extra in ("clockRate", "memoryClockRate", "computeMode"):
        if hasattr(p, extra):  # removed from cudaDeviceProp in CUDA 13
            fields[extra] = int(getattr(p, extra))
    fields.update(more_props(p))
    return ht.hipDeviceProp_t(**fields)


# cudaDeviceProp's fields that hipDeviceProp_t has under the same name, beyond those
# hip_api._props has always copied (ints, or lists of ints for the array-valued limits)
_MORE_PROPS = ("luidDeviceNodeMask memPitch textureAlignment texturePitchAlignment maxTexture1D maxTexture1DMipmap "
               "maxTexture1DLinear maxTexture2D maxTexture2DMipmap maxTexture2DLinear maxTexture2DGather maxTexture3D "
               "maxTexture3DAlt maxTextureCubemap maxTexture1DLayered maxTexture2DLayered maxTextureCubemapLayered "
               "maxSurface1D maxSurface2D maxSurface3D maxSurface1DLayered maxSurface2DLayered maxSurfaceCubemap "
               "maxSurfaceCubemapLayered surfaceAlignment ECCEnabled tccDriver persistingL2CacheMaxSize "
               "streamPrioritiesSupported globalL1CacheSupported localL1CacheSupported regsPerMultiprocessor "
               "multiGpuBoardGroupID hostNativeAtomicSupported computePreemptionSupported "
               "canUseHostPointerForRegisteredMem cooperativeLaunch sharedMemPerBlockOptin "
               "pageableMemoryAccessUsesHostPageTables directManagedMemAccessFromHost maxBlocksPerMultiProcessor "
               "accessPolicyMaxWindowSize reservedSharedMemPerBlock hostRegisterSupported "
               "hostRegisterReadOnlySupported timelineSemaphoreInteropSupported memoryPoolsSupported "
               "gpuDirectRDMASupported gpuDirectRDMAFlushWritesOptions gpuDirectRDMAWritesOrdering "
               "memoryPoolSupportedHandleTypes ipcEventSupported clusterLaunch unifiedFunctionPointers "
               "kernelExecTimeoutEnabled deviceOverlap singleToDoublePrecisionPerfRatio").split()
_ARCH = ("hasGlobalInt32Atomics hasGlobalFloatAtomicExch hasSharedInt32Atomics hasSharedFloatAtomicExch "
         "hasFloatAtomicAdd hasGlobalInt64Atomics hasSharedInt64Atomics hasDoubles hasWarpVote hasWarpBallot "
         "hasWarpShuffle hasFunnelShift hasThreadFenceSystem hasSyncThreadsExt hasSurfaceFuncs has3dGrid "
         "hasDynamicParallelism").split()


def more_props(p: Any) -> dict[str, Any]:
    """hipDeviceProp_t fields from a cudaDeviceProp beyond hip_api._props' own: every field
    of the same name CUDA has, the UUID and LUID, and what follows from them (the shared
    memory per multiprocessor HIP also names, the overlap flag CUDA 13 dropped, the
    architecture flags every device CUDA 13 runs has)."""
    fields: dict[str, Any] = {}
    for f in _MORE_PROPS:
        if hasattr(p, f):
            v = getattr(p, f)
            fields[f] = [int(x) for x in v] if isinstance(v, (list, tuple)) else int(v)
    uuid = getattr(getattr(p, "uuid", None), "bytes", None)
    if uuid is not None:
        fields["uuid"] = ht.device_uuid(bytes(uuid))
    if hasattr(p, "luid"):
        # CUDA leaves the LUID undefined off Windows; zeros, as HIP gives there, also end the
        # UUID before it for hip-python 7.x, whose hipUUID_t.bytes reads a C string
        fields["luid"] = bytes(p.luid)[:8] if sys.platform == "win32" else bytes(8)
    if hasattr(p, "sharedMemPerMultiprocessor"):
        fields["maxSharedMemoryPerMultiProcessor"] = int(p.sharedMemPerMultiprocessor)
    if "deviceOverlap" not in fields and hasattr(p, "asyncEngineCount"):
        fields["deviceOverlap"] = int(int(p.asyncEngineCount) > 0)
    fields["arch"] = ht.device_arch(**dict.fromkeys(_ARCH, 1))
    return fields


def _cu_device(device: Any) -> Any:
    """The driver's CUdevice for an ordinal (HipError with CUDA's answer when it is none)."""
    err, cudev = S.drv.cuDeviceGet(int(device))
    if int(err):
        raise HipError(_err(err), f"device {int(device)}")
    return cudev


def _check(res: Any) -> tuple:
    """A CUDA result tuple with its error raised as HipError."""
    if int(res[0]):
        raise HipError(_err(res[0]))
    return tuple(res[1:])


@body
def hipDeviceGetAttribute(attr: Any, deviceId: Any) -> tuple:
    how, value = _BY_VALUE.get(int(attr), ("none", 0))
    if how == "none":
        raise HipError(E.hipErrorInvalidValue, f"{attr.name} has no CUDA equivalent")
    if how == "total_mem":   # as HIP answers: the byte count clamped to an int
        (total,) = _check(S.drv.cuDeviceTotalMem(_cu_device(deviceId)))
        return (SUCCESS, min(int(total), INT32_MAX))
    if how == "const":
        _check(S.rt.cudaDeviceGetAttribute(16, int(deviceId)))   # the device must exist
        return (SUCCESS, value)
    if value == VMM_SUPPORTED:
        attrib = S.drv.CUdevice_attribute(value)
        return (SUCCESS, int(_check(S.drv.cuDeviceGetAttribute(attrib, _cu_device(deviceId)))[0]))
    return (SUCCESS, int(_check(S.rt.cudaDeviceGetAttribute(value, int(deviceId)))[0]))


def _c_string(raw: Any) -> ht.CStr:
    return ht.CStr(bytes(raw or b"").split(b"\0", 1)[0])


@body
def hipDeviceGetName(len: Any, device: Any) -> tuple:  # noqa: A002 - hip-python's name
    (name,) = _check(S.drv.cuDeviceGetName(int(len), _cu_device(device)))
    return (SUCCESS, _c_string(name))


@body
def hipDeviceGetPCIBusId(len: Any, device: Any) -> tuple:  # noqa: A002
    (text,) = _check(S.rt.cudaDeviceGetPCIBusId(int(len), int(device)))
    return (SUCCESS, _c_string(text))


@body
def hipDeviceGetByPCIBusId(pciBusId: Any) -> tuple:
    text = pciBusId.encode() if isinstance(pciBusId, str) else bytes(pciBusId) if pciBusId is not None else b""
    (device,) = _check(S.rt.cudaDeviceGetByPCIBusId(text))
    return (SUCCESS, int(device))


@body
def hipDeviceComputeCapability(device: Any) -> tuple:
    (major,) = _check(S.rt.cudaDeviceGetAttribute(75, int(device)))
    (minor,) = _check(S.rt.cudaDeviceGetAttribute(76, int(device)))
    return (SUCCESS, int(major), int(minor))


@body
def hipDeviceTotalMem(device: Any) -> tuple:
    (total,) = _check(S.drv.cuDeviceTotalMem(_cu_device(device)))
    return (SUCCESS, int(total))


@body
def hipDeviceGet(ordinal: Any) -> tuple:
    return (SUCCESS, int(_cu_device(ordinal)))


@body
def hipDeviceGetUuid(device: Any) -> tuple:
    (uuid,) = _check(S.drv.cuDeviceGetUuid(_cu_device(device)))
    return (SUCCESS, ht.device_uuid(bytes(uuid.bytes)))


# hipLimit_t -> cudaLimit (hipExtLimitScratch* are HIP's own: CUDA has no such limit)
_LIMITS = {"hipLimitStackSize": 0, "hipLimitPrintfFifoSize": 1, "hipLimitMallocHeapSize": 2}


def _cuda_limit(limit: Any) -> int:
    if limit.name == "hipLimitRange":
        raise HipError(E.hipErrorInvalidValue, "hipLimitRange is not a limit")
    if limit.name not in _LIMITS:
        raise HipError(E.hipErrorUnsupportedLimit, f"{limit.name} has no CUDA equivalent")
    return _LIMITS[limit.name]


@body
def hipDeviceGetLimit(limit: Any) -> tuple:
    (value,) = _check(S.rt.cudaDeviceGetLimit(_cuda_limit(limit)))
    return (SUCCESS, int(value))


@body
def hipDeviceSetLimit(limit: Any, value: Any) -> tuple:
    return (_err(S.rt.cudaDeviceSetLimit(_cuda_limit(limit), int(value))[0]),)


@body
def hipChooseDevice(prop: Any) -> tuple:
    """cudaChooseDevice over a cudaDeviceProp holding the fields HIP matches on."""
    if prop is None:
        raise HipError(E.hipErrorInvalidValue, "hipChooseDevice without properties")
    want = S.rt.cudaDeviceProp()
    for field in ("major", "minor", "totalGlobalMem", "sharedMemPerBlock", "maxThreadsPerBlock", "totalConstMem",
                  "multiProcessorCount", "maxThreadsPerMultiProcessor", "memoryBusWidth", "l2CacheSize",
                  "regsPerBlock", "warpSize"):
        if hasattr(want, field):
            setattr(want, field, int(getattr(prop, field, 0) or 0))
    (device,) = _check(S.rt.cudaChooseDevice(want))
    return (SUCCESS, int(device))


@body
def hipGetStreamDeviceId(stream: Any) -> tuple:
    """The stream's device; -1 for a stream CUDA does not know (HIP never fails this call)."""
    err, device = S.rt.cudaStreamGetDevice(int(stream))
    return (SUCCESS, int(device) if int(err) == 0 else -1)


@body
def hipDeviceGetP2PAttribute(attr: Any, srcDevice: Any, dstDevice: Any) -> tuple:
    # hipDevP2PAttrPerformanceRank is 0, cudaDevP2PAttrPerformanceRank 1, and so on
    (value,) = _check(S.rt.cudaDeviceGetP2PAttribute(int(attr) + 1, int(srcDevice), int(dstDevice)))
    return (SUCCESS, int(value))


# ---------------------------------------------------------------------------- contexts

def _drv() -> Any:
    _runtime.ensure_context()
    return S.drv


def _ctx(v: Any) -> Any:
    return ht.ihipCtx_t(int(v)) if v is not None and int(v) else None


@body
def hipCtxSetCurrent(ctx: Any) -> tuple:
    res = S.drv.cuCtxSetCurrent(int(ctx))
    _runtime.forget_context()   # the next driver call looks the current context up again
    return (_err(res[0]),)


@body
def hipDevicePrimaryCtxReset(dev: Any) -> tuple:
    """cuDevicePrimaryCtxReset destroys what the context held, as hipDeviceReset does:
    forget the pinned allocations, modules and current contexts this backend knew."""
    err = S.drv.cuDevicePrimaryCtxReset(_cu_device(dev))[0]
    memory.forget_all()
    modules.forget_all()
    _runtime.forget_all_contexts()
    return (_err(err),)


def _call(where: str, name: str, *outs: Callable[[Any], Any], device: int | None = None) -> Callable[..., tuple]:
    """A body that is one call: ``rt.NAME`` (runtime) or ``drv.NAME`` (driver, with the
    context current); the argument at ``device`` is an ordinal made a CUdevice; each of
    ``outs`` converts an output (None when the call failed)."""
    def body(*args: Any) -> tuple:
        a: list = [int(x) for x in args]
        if device is not None:
            a[device] = _cu_device(a[device])
        api = S.rt if where == "rt" else _drv()
        res = getattr(api, name)(*a)
        ok = int(res[0]) == 0
        return (_err(res[0]), *(conv(res[1 + i]) if ok else None for i, conv in enumerate(outs)))
    body.__name__ = name
    return body


# Calls that are one CUDA call (see onecall.one_call and _call): its name, how each output
# converts and, where they differ from the row's, the CUDA call's arguments.
body.table({
    "hipInit": C("cu.cuInit"),
    "hipGetDeviceCount": C("rt.cudaGetDeviceCount", _int),
    "hipGetDevice": C("rt.cudaGetDevice", _int),
    "hipGetDeviceProperties": C("rt.cudaGetDeviceProperties", _props),
    "hipMemGetInfo": C("rt.cudaMemGetInfo", _int, _int),
    "hipDeviceSynchronize": C("rt.cudaDeviceSynchronize"),
    "hipDriverGetVersion": _call("rt", "cudaDriverGetVersion", int),
    "hipRuntimeGetVersion": _call("rt", "cudaRuntimeGetVersion", int),
    "hipDeviceGetCacheConfig": _call("rt", "cudaDeviceGetCacheConfig", lambda v: ht.hipFuncCache_t(int(v))),
    "hipDeviceSetCacheConfig": _call("rt", "cudaDeviceSetCacheConfig"),
    "hipDeviceGetSharedMemConfig": _call("rt", "cudaDeviceGetSharedMemConfig",
                                         lambda v: ht.hipSharedMemConfig(int(v))),
    "hipDeviceSetSharedMemConfig": _call("rt", "cudaDeviceSetSharedMemConfig"),
    "hipGetDeviceFlags": _call("rt", "cudaGetDeviceFlags", int),
    "hipSetDeviceFlags": _call("rt", "cudaSetDeviceFlags"),
    "hipDeviceGetStreamPriorityRange": _call("rt", "cudaDeviceGetStreamPriorityRange", int, int),
    "hipDeviceCanAccessPeer": _call("rt", "cudaDeviceCanAccessPeer", int),
    "hipDeviceEnablePeerAccess": _call("rt", "cudaDeviceEnablePeerAccess"),
    "hipDeviceDisablePeerAccess": _call("rt", "cudaDeviceDisablePeerAccess"),
    "hipProfilerStart": _call("rt", "cudaProfilerStart"),
    "hipProfilerStop": _call("rt", "cudaProfilerStop"),
    "hipCtxGetCurrent": _call("drv", "cuCtxGetCurrent", _ctx),
    "hipCtxGetDevice": _call("drv", "cuCtxGetDevice", int),
    "hipCtxSynchronize": _call("drv", "cuCtxSynchronize"),
    "hipCtxGetApiVersion": _call("drv", "cuCtxGetApiVersion", int),
    "hipCtxGetFlags": _call("drv", "cuCtxGetFlags", int),
    "hipDevicePrimaryCtxRetain": _call("drv", "cuDevicePrimaryCtxRetain", _ctx, device=0),
    "hipDevicePrimaryCtxRelease": _call("drv", "cuDevicePrimaryCtxRelease", device=0),
    "hipDevicePrimaryCtxGetState": _call("drv", "cuDevicePrimaryCtxGetState", int, int, device=0),
    "hipDevicePrimaryCtxSetFlags": _call("drv", "cuDevicePrimaryCtxSetFlags", device=0),
    "hipDrvGetErrorName": lambda hipError: _drv_error_text(hipError, False),
    "hipDrvGetErrorString": lambda hipError: _drv_error_text(hipError, True),
})
