"""The cuda backend's device queries and settings (catalogue section "device"),
as HIP on NVIDIA makes them: each is the CUDA runtime or driver call that means the same.

hipDeviceGetAttribute maps each hipDeviceAttribute_t member to the CUdevice_attribute of
the same meaning (``ATTRIBUTES``); a member with no CUDA equivalent (AMD-only ones, the
array-valued texture limits, the range markers) is hipErrorInvalidValue, as HIP's own
NVIDIA path answers (docs/cuda-backend.md lists them). Enums whose numbering differs are
translated (hipDeviceP2PAttr is CUDA's minus one; hipLimit_t's HIP-only scratch limits are
unsupported). Contexts are the driver's CUcontext handles.
"""
from __future__ import annotations

from typing import Any, Callable

from hrr.backends import hiptypes as ht
from hrr.backends.cuda import _runtime, memory, modules
from hrr.backends.cuda._errors import hip_error as _err
from hrr.backends.error_strings import error_string
from hrr.backends.surface import HipError

E = ht.hipError_t
SUCCESS = E.hipSuccess
S = _runtime.STATE
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


def hipDeviceGetName(len: Any, device: Any) -> tuple:  # noqa: A002 - hip-python's name
    (name,) = _check(S.drv.cuDeviceGetName(int(len), _cu_device(device)))
    return (SUCCESS, _c_string(name))


def hipDeviceGetPCIBusId(len: Any, device: Any) -> tuple:  # noqa: A002
    (text,) = _check(S.rt.cudaDeviceGetPCIBusId(int(len), int(device)))
    return (SUCCESS, _c_string(text))


def hipDeviceGetByPCIBusId(pciBusId: Any) -> tuple:
    text = pciBusId.encode() if isinstance(pciBusId, str) else bytes(pciBusId) if pciBusId is not None else b""
    (device,) = _check(S.rt.cudaDeviceGetByPCIBusId(text))
    return (SUCCESS, int(device))


def hipDeviceComputeCapability(device: Any) -> tuple:
    (major,) = _check(S.rt.cudaDeviceGetAttribute(75, int(device)))
    (minor,) = _check(S.rt.cudaDeviceGetAttribute(76, int(device)))
    return (SUCCESS, int(major), int(minor))


def hipDeviceTotalMem(device: Any) -> tuple:
    (total,) = _check(S.drv.cuDeviceTotalMem(_cu_device(device)))
    return (SUCCESS, int(total))


def hipDeviceGet(ordinal: Any) -> tuple:
    return (SUCCESS, int(_cu_device(ordinal)))


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


def hipDeviceGetLimit(limit: Any) -> tuple:
    (value,) = _check(S.rt.cudaDeviceGetLimit(_cuda_limit(limit)))
    return (SUCCESS, int(value))


def hipDeviceSetLimit(limit: Any, value: Any) -> tuple:
    return (_err(S.rt.cudaDeviceSetLimit(_cuda_limit(limit), int(value))[0]),)


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


def hipGetStreamDeviceId(stream: Any) -> tuple:
    """The stream's device; -1 for a stream CUDA does not know (HIP never fails this call)."""
    err, device = S.rt.cudaStreamGetDevice(int(stream))
    return (SUCCESS, int(device) if int(err) == 0 else -1)


def hipDeviceGetP2PAttribute(attr: Any, srcDevice: Any, dstDevice: Any) -> tuple:
    # hipDevP2PAttrPerformanceRank is 0, cudaDevP2PAttrPerformanceRank 1, and so on
    (value,) = _check(S.rt.cudaDeviceGetP2PAttribute(int(attr) + 1, int(srcDevice), int(dstDevice)))
    return (SUCCESS, int(value))


def _drv() -> Any:
    _runtime.ensure_context()
    return S.drv


def _ctx(v: Any) -> Any:
    return ht.ihipCtx_t(int(v)) if v is not None and int(v) else None


def hipCtxSetCurrent(ctx: Any) -> tuple:
    res = S.drv.cuCtxSetCurrent(int(ctx))
    _runtime.forget_context()   # the next driver call looks the current context up again
    return (_err(res[0]),)


def hipDevicePrimaryCtxReset(dev: Any) -> tuple:
    """cuDevicePrimaryCtxReset destroys what the context held, as hipDeviceReset does:
    forget the pinned allocations, modules and current contexts this backend knew."""
    err = S.drv.cuDevicePrimaryCtxReset(_cu_device(dev))[0]
    memory.forget_all()
    modules.forget_all()
    _runtime.forget_all_contexts()
    return (_err(err),)


def _drv_error_text(hipError: Any, string: bool) -> tuple:
    """hipDrvGetErrorName/String: HIP's texts. A value outside hipError_t failed its
    conversion (hipErrorInvalidValue, as HIP answers, unlike hipGetErrorName's
    "hipErrorUnknown"); like HIP's NVIDIA path (cuGetErrorName) it needs the driver."""
    return (SUCCESS, ht.CStr(error_string(hipError.name) if string else hipError.name))


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


CALLS: dict[str, Callable[..., tuple]] = {
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
}
BODIES: dict[str, Callable] = {
    **{name: fn for name, fn in globals().items() if name.startswith("hip") and callable(fn)
       and getattr(fn, "__module__", None) == __name__}, **CALLS}


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
        fields["luid"] = bytes(p.luid)[:8]
    if hasattr(p, "sharedMemPerMultiprocessor"):
        fields["maxSharedMemoryPerMultiProcessor"] = int(p.sharedMemPerMultiprocessor)
    if "deviceOverlap" not in fields and hasattr(p, "asyncEngineCount"):
        fields["deviceOverlap"] = int(int(p.asyncEngineCount) > 0)
    fields["arch"] = ht.device_arch(**dict.fromkeys(_ARCH, 1))
    return fields
