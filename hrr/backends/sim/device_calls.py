"""The sim's bodies of the device, error, peer and context calls (catalogue families
``device``, ``error``, ``peer``, ``context``), over the device model (``device.py``).

Each body is registered with ``@body`` (``hrr.backends.bodies``); ``api.py`` builds
``hip`` from them.
"""
from __future__ import annotations

import functools
import re
from typing import Any, Callable

from hrr import hiptypes as ht
from hrr.backends import surface
from hrr.backends.bodies import Bodies
from hrr.backends.devicemodels import DeviceModel
from hrr.backends.error_strings import error_string
from hrr.hiptypes import CStr, as_handle_value, hipError_t
from hrr.backends.sim.device import DEVICE_COUNT, SCRATCH_MAX, SCRATCH_MIN, STACK_SIZE_MAX, refuse_during_capture
from hrr.backends.sim.device import current as _dev
from hrr.backends.surface import HipError, irregular

SUCCESS = hipError_t.hipSuccess


body = Bodies("device", "error", "peer", "context")


# -- device and errors --------------------------------------------------------------------
@body
def hipSetDevice(deviceId: int) -> None:
    if int(deviceId) != 0:
        raise HipError("hipErrorInvalidDevice", f"device {deviceId} does not exist (the sim has 1)")


@body
def hipDeviceSynchronize() -> None:
    dev = _dev()
    dev.check_capture_safe("hipDeviceSynchronize")
    dev.wait_all()


@body
def hipDeviceReset() -> None:
    """Destroy every allocation (device, pinned, registered), stream, event, module, graph
    and capture of this process; queued work is dropped, not run. Device addresses are
    never reused, so a stale pointer stays invalid."""
    _dev().reset()


@body
@irregular(records=False)  # reports the last error: never records its own result
def hipGetLastError() -> tuple:
    dev = _dev()
    code, _ = dev.last_error()
    dev.clear_last_error()
    return (hipError_t(code),)


@body
@irregular(records=False)
def hipPeekAtLastError() -> tuple:
    return (hipError_t(_dev().last_error()[0]),)


@body
@irregular(raw=True)  # any int is accepted: an unknown one is hipErrorUnknown, not a failure
def hipGetErrorName(hip_error: Any) -> tuple:
    return (SUCCESS, CStr(surface.error_name(hip_error)))


@body
@irregular(raw=True)
def hipGetErrorString(hipError: Any) -> tuple:
    name = surface.error_name(hipError)
    return (SUCCESS, CStr(error_string(name)))


@body
def hipMemGetInfo() -> tuple:
    memory = _dev().memory
    return (SUCCESS, memory.total_bytes - memory.device_bytes_used, memory.total_bytes)


HIP_VERSION = 70100000          # HIP 7.1.0 (HIP_VERSION_MAJOR * 10^7 + MINOR * 10^5 + PATCH)


INT32_MAX = (1 << 31) - 1


UUID = b"hrr sim device 0"


PCI = (0, 0, 0, 0)              # domain, bus, device, function


# What the sim offers whatever AMD GPU it models (hipDeviceProp_t fields HIP takes from the
# runtime and driver, not the chip): no image (texture/surface) support, so every texture and
# surface limit is 0, no managed memory and no cooperative launches.
SIM_PROPERTIES: dict[str, Any] = dict(
    memPitch=INT32_MAX, totalConstMem=INT32_MAX, textureAlignment=256, surfaceAlignment=256,
    texturePitchAlignment=256, deviceOverlap=1, kernelExecTimeoutEnabled=0, integrated=0, canMapHostMemory=1,
    computeMode=0, concurrentKernels=1, ECCEnabled=0, pciBusID=PCI[1], pciDeviceID=PCI[2], pciDomainID=PCI[0],
    tccDriver=0, asyncEngineCount=1, unifiedAddressing=1, streamPrioritiesSupported=1, globalL1CacheSupported=1,
    localL1CacheSupported=1, managedMemory=0, isMultiGpuBoard=0, multiGpuBoardGroupID=PCI[2],
    hostNativeAtomicSupported=1, singleToDoublePrecisionPerfRatio=0, pageableMemoryAccess=0,
    concurrentManagedAccess=0, computePreemptionSupported=0, canUseHostPointerForRegisteredMem=1,
    cooperativeLaunch=0, cooperativeMultiDeviceLaunch=0, pageableMemoryAccessUsesHostPageTables=0,
    directManagedMemAccessFromHost=0, accessPolicyMaxWindowSize=0, reservedSharedMemPerBlock=0,
    hostRegisterSupported=1, memoryPoolsSupported=1, memoryPoolSupportedHandleTypes=0, ipcEventSupported=0,
    clockInstructionRate=100_000, isLargeBar=0, luidDeviceNodeMask=0, cooperativeMultiDeviceUnmatchedFunc=0,
    cooperativeMultiDeviceUnmatchedGridDim=0, cooperativeMultiDeviceUnmatchedBlockDim=0,
    cooperativeMultiDeviceUnmatchedSharedMem=0, sparseHipArraySupported=0, hostRegisterReadOnlySupported=0,
    timelineSemaphoreInteropSupported=0, gpuDirectRDMASupported=0, gpuDirectRDMAFlushWritesOptions=0,
    gpuDirectRDMAWritesOrdering=0, deferredMappingHipArraySupported=0, clusterLaunch=0, unifiedFunctionPointers=0,
    maxTexture1D=0, maxTexture1DMipmap=0, maxTexture1DLinear=0, maxTexture2D=[0, 0], maxTexture2DMipmap=[0, 0],
    maxTexture2DLinear=[0, 0, 0], maxTexture2DGather=[0, 0], maxTexture3D=[0, 0, 0], maxTexture3DAlt=[0, 0, 0],
    maxTextureCubemap=0, maxTexture1DLayered=[0, 0], maxTexture2DLayered=[0, 0, 0],
    maxTextureCubemapLayered=[0, 0], maxSurface1D=0, maxSurface2D=[0, 0], maxSurface3D=[0, 0, 0],
    maxSurface1DLayered=[0, 0], maxSurface2DLayered=[0, 0, 0], maxSurfaceCubemap=0,
    maxSurfaceCubemapLayered=[0, 0])


ARCH_FLAGS = dict(hasGlobalInt32Atomics=1, hasGlobalFloatAtomicExch=1, hasSharedInt32Atomics=1,
                  hasSharedFloatAtomicExch=1, hasFloatAtomicAdd=1, hasGlobalInt64Atomics=1,
                  hasSharedInt64Atomics=1, hasDoubles=1, hasWarpVote=1, hasWarpBallot=1, hasWarpShuffle=1,
                  hasFunnelShift=0, hasThreadFenceSystem=1, hasSyncThreadsExt=0, hasSurfaceFuncs=0, has3dGrid=1,
                  hasDynamicParallelism=0)


@functools.cache
def properties_of(model: DeviceModel) -> dict[str, Any]:
    """The hipDeviceProp_t of the sim as ``model``: the chip's numbers derived as HIP derives
    them (ROCm/clr hip_device.cpp), the rest ``SIM_PROPERTIES``."""
    return dict(
        SIM_PROPERTIES, name=model.name.encode(), gcnArchName=model.gcn_arch_name.encode(),
        totalGlobalMem=model.total_global_mem, sharedMemPerBlock=model.lds, sharedMemPerBlockOptin=model.lds,
        maxSharedMemoryPerMultiProcessor=model.lds, sharedMemPerMultiprocessor=model.lds * model.compute_units,
        regsPerBlock=model.registers, regsPerMultiprocessor=model.registers, warpSize=model.wavefront,
        maxThreadsPerBlock=model.max_threads_per_block, maxThreadsDim=list(model.max_threads_dim),
        maxGridSize=list(model.max_grid_size), clockRate=model.clock_khz, memoryClockRate=model.memory_clock_khz,
        memoryBusWidth=model.memory_bus_width, major=model.major, minor=model.minor,
        multiProcessorCount=model.compute_units, l2CacheSize=model.l2_cache, persistingL2CacheMaxSize=model.l2_cache,
        maxThreadsPerMultiProcessor=model.max_threads_per_cu, maxBlocksPerMultiProcessor=model.max_blocks_per_cu,
        asicRevision=model.asic_revision)


@functools.cache
def attributes_of(model: DeviceModel) -> dict[str, int]:
    """hipDeviceGetAttribute as the sim answers it as ``model``: the attribute (its name after
    "hipDeviceAttribute") -> its value, read from the properties as HIP reads them
    (ROCm/clr hip_device_runtime.cpp). The set is HIP's (ROCm 7); the rest of
    hipDeviceAttribute_t is hipErrorInvalidValue there (the range markers, the unused slots, the
    array-valued texture/surface limits, Luid, MaxThreadsDim, TccDriver,
    SingleToDoublePrecisionPerfRatio, ClockInstructionRate)."""
    p = properties_of(model)
    return {
        "EccEnabled": p["ECCEnabled"], "AccessPolicyMaxWindowSize": p["accessPolicyMaxWindowSize"],
        "AsyncEngineCount": p["asyncEngineCount"], "CanMapHostMemory": p["canMapHostMemory"],
        "CanUseHostPointerForRegisteredMem": p["canUseHostPointerForRegisteredMem"], "ClockRate": p["clockRate"],
        "ComputeMode": p["computeMode"], "ComputePreemptionSupported": p["computePreemptionSupported"],
        "ConcurrentKernels": p["concurrentKernels"], "ConcurrentManagedAccess": p["concurrentManagedAccess"],
        "CooperativeLaunch": p["cooperativeLaunch"], "CooperativeMultiDeviceLaunch": p["cooperativeMultiDeviceLaunch"],
        "DeviceOverlap": int(p["asyncEngineCount"] > 0),
        "DirectManagedMemAccessFromHost": p["directManagedMemAccessFromHost"],
        "GlobalL1CacheSupported": p["globalL1CacheSupported"],
        "HostNativeAtomicSupported": p["hostNativeAtomicSupported"],
        "Integrated": p["integrated"], "IsMultiGpuBoard": p["isMultiGpuBoard"],
        "KernelExecTimeout": p["kernelExecTimeoutEnabled"], "L2CacheSize": p["l2CacheSize"],
        "LocalL1CacheSupported": p["localL1CacheSupported"], "LuidDeviceNodeMask": p["luidDeviceNodeMask"],
        "ComputeCapabilityMajor": p["major"], "ComputeCapabilityMinor": p["minor"],
        "ManagedMemory": p["managedMemory"], "MaxBlocksPerMultiProcessor": p["maxBlocksPerMultiProcessor"],
        "MaxBlockDimX": p["maxThreadsDim"][0], "MaxBlockDimY": p["maxThreadsDim"][1],
        "MaxBlockDimZ": p["maxThreadsDim"][2], "MaxGridDimX": p["maxGridSize"][0],
        "MaxGridDimY": p["maxGridSize"][1], "MaxGridDimZ": p["maxGridSize"][2],
        "MaxSurface1D": p["maxSurface1D"], "MaxTexture1DWidth": p["maxTexture1D"],
        "MaxTexture1DLinear": p["maxTexture1DLinear"], "MaxTexture1DMipmap": p["maxTexture1DMipmap"],
        "MaxTexture2DWidth": p["maxTexture2D"][0], "MaxTexture2DHeight": p["maxTexture2D"][1],
        "MaxTexture3DWidth": p["maxTexture3D"][0], "MaxTexture3DHeight": p["maxTexture3D"][1],
        "MaxTexture3DDepth": p["maxTexture3D"][2], "MaxTextureCubemap": p["maxTextureCubemap"],
        "MaxThreadsPerBlock": p["maxThreadsPerBlock"], "MaxThreadsPerMultiProcessor": p["maxThreadsPerMultiProcessor"],
        "MaxPitch": min(p["memPitch"], INT32_MAX), "MemoryBusWidth": p["memoryBusWidth"],
        "MemoryClockRate": p["memoryClockRate"], "MultiGpuBoardGroupID": p["multiGpuBoardGroupID"],
        "MultiprocessorCount": p["multiProcessorCount"], "PageableMemoryAccess": p["pageableMemoryAccess"],
        "PageableMemoryAccessUsesHostPageTables": p["pageableMemoryAccessUsesHostPageTables"],
        "PciBusId": p["pciBusID"], "PciDeviceId": p["pciDeviceID"], "PciDomainId": p["pciDomainID"],
        "PersistingL2CacheMaxSize": p["persistingL2CacheMaxSize"], "MaxRegistersPerBlock": p["regsPerBlock"],
        "MaxRegistersPerMultiprocessor": p["regsPerMultiprocessor"],
        "ReservedSharedMemPerBlock": p["reservedSharedMemPerBlock"], "MaxSharedMemoryPerBlock": p["sharedMemPerBlock"],
        "SharedMemPerBlockOptin": p["sharedMemPerBlockOptin"],
        "SharedMemPerMultiprocessor": p["sharedMemPerMultiprocessor"],
        "StreamPrioritiesSupported": p["streamPrioritiesSupported"], "SurfaceAlignment": p["surfaceAlignment"],
        "TextureAlignment": p["textureAlignment"], "TexturePitchAlignment": p["texturePitchAlignment"],
        "TotalConstantMemory": min(p["totalConstMem"], INT32_MAX),
        "TotalGlobalMem": min(p["totalGlobalMem"], INT32_MAX),
        "UnifiedAddressing": 1, "WarpSize": p["warpSize"], "MemoryPoolsSupported": p["memoryPoolsSupported"],
        "VirtualMemoryManagementSupported": 0, "HostRegisterSupported": 1,
        "MemoryPoolSupportedHandleTypes": p["memoryPoolSupportedHandleTypes"], "HostNumaId": 0, "DmaBufSupported": 0,
        "GPUDirectRDMAWithHipVMMSupported": 0, "HandleTypeFabricSupported": 0,
        "MaxSharedMemoryPerMultiprocessor": p["maxSharedMemoryPerMultiProcessor"],
        "HdpMemFlushCntl": 0, "HdpRegFlushCntl": 0,   # no HDP registers: their addresses are NULL
        "CooperativeMultiDeviceUnmatchedFunc": p["cooperativeMultiDeviceUnmatchedFunc"],
        "CooperativeMultiDeviceUnmatchedGridDim": p["cooperativeMultiDeviceUnmatchedGridDim"],
        "CooperativeMultiDeviceUnmatchedBlockDim": p["cooperativeMultiDeviceUnmatchedBlockDim"],
        "CooperativeMultiDeviceUnmatchedSharedMem": p["cooperativeMultiDeviceUnmatchedSharedMem"],
        "IsLargeBar": p["isLargeBar"], "AsicRevision": p["asicRevision"],
        "CanUseStreamWaitValue": 1, "ImageSupport": 0, "PhysicalMultiProcessorCount": model.physical_compute_units,
        "FineGrainSupport": 1, "WallClockRate": 100_000, "NumberOfXccs": model.xccs,
        "MaxAvailableVgprsPerThread": model.max_vgprs_per_thread, "PciChipId": model.pci_chip_id,
        "ExpertSchedMode": 0, "MaxDynDataPrefetchRegions": 0,
    }


@functools.cache
def _by_value(model: DeviceModel) -> dict[int, int]:
    """hipDeviceAttribute_t value -> answer, for the members of the installed release only."""
    answers = attributes_of(model)
    return {int(m): answers[name[len("hipDeviceAttribute"):]]
            for name, m in ht.hipDeviceAttribute_t.__members__.items()
            if name[len("hipDeviceAttribute"):] in answers}


def _model() -> DeviceModel:
    return _dev().model


def _device(device: Any) -> int:
    """A device ordinal argument: hipErrorInvalidDevice unless it names the sim's device."""
    d = int(device)
    if not 0 <= d < DEVICE_COUNT:
        raise HipError("hipErrorInvalidDevice", f"device {d} does not exist (the sim has {DEVICE_COUNT})")
    return d


def properties() -> Any:
    """A fresh hipDeviceProp_t of the sim's device (the program may write to it)."""
    return ht.hipDeviceProp_t(**properties_of(_model()), uuid=ht.device_uuid(UUID), arch=ht.device_arch(**ARCH_FLAGS))


@body
def hipGetDeviceProperties(deviceId: int) -> tuple:
    _device(deviceId)
    return (SUCCESS, properties())


@body
def hipDeviceGetAttribute(attr: Any, deviceId: Any) -> tuple:
    _device(deviceId)
    value = _by_value(_model()).get(int(attr))
    if value is None:
        raise HipError("hipErrorInvalidValue", f"{attr.name} is not an attribute HIP answers")
    return (SUCCESS, value)


def _text(value: bytes, length: Any) -> CStr:
    """A C string written into a ``length``-byte buffer (truncated, NUL-terminated)."""
    n = int(length)
    if n <= 0:
        raise HipError("hipErrorInvalidValue", f"a buffer of {n} bytes")
    return CStr(value[:n - 1])


def _pci_bus_id() -> bytes:
    return b"%04x:%02x:%02x.%01x" % PCI


@body
def hipDeviceGetPCIBusId(len: Any, device: Any) -> tuple:  # noqa: A002 - hip-python's name
    _device(device)
    if int(len) <= 12:   # HIP fills what fits, then says the buffer was too small
        raise HipError("hipErrorInvalidValue", f"a PCI bus id needs 13 bytes, the buffer has {int(len)}")
    return (SUCCESS, _text(_pci_bus_id(), len))


_PCI_ID = re.compile(rb"\s*([0-9a-fA-F]{1,4}):([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-9a-fA-F])")


@body
def hipDeviceGetByPCIBusId(pciBusId: Any) -> tuple:
    text = pciBusId.encode() if isinstance(pciBusId, str) else bytes(pciBusId) if pciBusId is not None else b""
    m = _PCI_ID.match(text)
    if m is None or tuple(int(g, 16) for g in m.groups()) != PCI:
        raise HipError("hipErrorInvalidValue", f"no device has PCI bus id {text!r}")
    return (SUCCESS, 0)


def _limit(limit: Any) -> str:
    name = limit.name
    if name == "hipLimitRange":
        raise HipError("hipErrorInvalidValue", "hipLimitRange is not a limit")
    if name not in ("hipLimitStackSize", "hipLimitMallocHeapSize", "hipExtLimitScratchMin",
                    "hipExtLimitScratchMax", "hipExtLimitScratchCurrent"):
        raise HipError("hipErrorUnsupportedLimit", f"{name} is not supported")
    return name


@body
def hipDeviceGetLimit(limit: Any) -> tuple:
    s, name = _dev().settings, _limit(limit)
    return (SUCCESS, {"hipLimitStackSize": s.stack_size, "hipLimitMallocHeapSize": s.malloc_heap_size,
                      "hipExtLimitScratchMin": SCRATCH_MIN, "hipExtLimitScratchMax": SCRATCH_MAX,
                      "hipExtLimitScratchCurrent": s.scratch_current}[name])


@body
def hipDeviceSetLimit(limit: Any, value: Any) -> None:
    s, name, v = _dev().settings, _limit(limit), int(value)
    bounds = {"hipLimitStackSize": (0, STACK_SIZE_MAX), "hipLimitMallocHeapSize": (0, _model().total_global_mem),
              "hipExtLimitScratchCurrent": (SCRATCH_MIN, SCRATCH_MAX)}.get(name)
    if bounds is None:
        raise HipError("hipErrorUnsupportedLimit", f"{name} cannot be set")
    if not bounds[0] <= v <= bounds[1]:
        raise HipError("hipErrorInvalidValue", f"{name} = {v} is outside [{bounds[0]}, {bounds[1]}]")
    setattr(s, {"hipLimitStackSize": "stack_size", "hipLimitMallocHeapSize": "malloc_heap_size",
                "hipExtLimitScratchCurrent": "scratch_current"}[name], v)


@body
def hipDeviceSetCacheConfig(cacheConfig: Any) -> None:
    refuse_during_capture("hipDeviceSetCacheConfig")
    _dev().settings.cache_config = int(cacheConfig)


@body
def hipDeviceSetSharedMemConfig(config: Any) -> None:
    refuse_during_capture("hipDeviceSetSharedMemConfig")
    _dev().settings.shared_mem_config = int(config)


_SCHEDULE_MASK, _MAP_HOST, _LMEM_RESIZE = 7, 8, 16


@body
def hipSetDeviceFlags(flags: Any) -> None:
    f = int(flags)
    if f < 0 or f & ~(_SCHEDULE_MASK | _MAP_HOST | _LMEM_RESIZE) or (f & _SCHEDULE_MASK) not in (0, 1, 2, 4):
        raise HipError("hipErrorInvalidValue", f"device flags 0x{f:x}: unknown, or more than one schedule")
    _dev().settings.flags = f & _SCHEDULE_MASK   # HIP keeps the schedule; host mapping is always on


@body
def hipChooseDevice(prop: Any) -> tuple:
    if prop is None:
        raise HipError("hipErrorInvalidValue", "hipChooseDevice without properties")
    return (SUCCESS, 0)   # HIP picks the best match, and device 0 when none matches


@body
@irregular(raw=True)  # a stream that is not live is -1, never an error
def hipGetStreamDeviceId(stream: Any) -> tuple:
    dev = _dev()
    try:
        dev.lookup(dev.streams, stream, "stream")
    except HipError:
        return (SUCCESS, -1)
    return (SUCCESS, 0)   # every live stream is on the sim's one device


def _peer(device: Any, peer: Any) -> int:
    """HIP's canAccessPeer: a device is not its own peer; a device that does not exist is
    hipErrorInvalidDevice. The sim has no second device, so no peer is ever accessible."""
    if int(device) == int(peer):
        return 0
    _device(device)
    _device(peer)
    return 0


@body
def hipDeviceCanAccessPeer(deviceId: Any, peerDeviceId: Any) -> tuple:
    return (SUCCESS, _peer(deviceId, peerDeviceId))


@body
def hipDeviceEnablePeerAccess(peerDeviceId: Any, flags: Any) -> None:
    if int(flags):
        raise HipError("hipErrorInvalidValue", "peer access flags must be 0")
    if not _peer(0, peerDeviceId):
        raise HipError("hipErrorInvalidDevice", f"device {int(peerDeviceId)} is not a peer of device 0")


@body
def hipDeviceDisablePeerAccess(peerDeviceId: Any) -> None:
    if not _peer(0, peerDeviceId):
        raise HipError("hipErrorInvalidDevice", f"device {int(peerDeviceId)} is not a peer of device 0")


@body
def hipDeviceGetP2PAttribute(attr: Any, srcDevice: Any, dstDevice: Any) -> tuple:
    src, dst = int(srcDevice), int(dstDevice)
    if src == dst:
        raise HipError("hipErrorInvalidDevice", "a link needs two devices")
    _device(src)
    _device(dst)
    return (SUCCESS, 0)   # unreachable with one device


def _context(ctx: Any) -> Any:
    """A context argument as the device's context (hipErrorInvalidContext for any other)."""
    dev = _dev()
    return dev.lookup(dev.contexts, ctx, "context", "hipErrorInvalidContext")


@body
@irregular(raw=True)  # NULL is accepted (it leaves the device's context current)
def hipCtxSetCurrent(ctx: Any) -> None:
    if as_handle_value(ctx):
        _context(ctx)


def _not_supported(what: str) -> Callable[..., None]:
    """A call HIP's runtime implements as hipErrorNotSupported on AMD GPUs."""
    def body(*args: Any) -> None:
        raise HipError("hipErrorNotSupported", f"{what} is not supported (as in HIP on AMD GPUs)")
    body.__name__ = what
    return irregular(raw=True)(body)


@body
def hipDevicePrimaryCtxSetFlags(dev: Any, flags: Any) -> None:
    _device(dev)
    raise HipError("hipErrorContextAlreadyInUse", "the primary context is active")


@body
def hipDevicePrimaryCtxReset(dev: Any) -> None:
    """As cuDevicePrimaryCtxReset: everything of the device's context is destroyed (see
    hipDeviceReset); HIP keeps the same primary context handle."""
    _device(dev)
    _dev().reset()


def _drv_error_text(hipError: Any, string: bool) -> tuple:
    """hipDrvGetErrorName/String: a value outside hipError_t failed its conversion
    (hipErrorInvalidValue, as HIP answers), unlike hipGetErrorName's "hipErrorUnknown"."""
    return (SUCCESS, CStr(error_string(hipError.name) if string else hipError.name))


body.table({
    "hipInit": lambda flags: None,
    "hipGetDeviceCount": lambda: (SUCCESS, 1),
    "hipGetDevice": lambda: (SUCCESS, 0),
    "hipDeviceGetName": lambda n, device: (_device(device), (SUCCESS, _text(_model().name.encode(), n)))[1],
    "hipDeviceComputeCapability": lambda device: (_device(device), (SUCCESS, _model().major, _model().minor))[1],
    "hipDeviceTotalMem": lambda device: (_device(device), (SUCCESS, _model().total_global_mem))[1],
    "hipDeviceGet": lambda ordinal: (SUCCESS, _device(ordinal)),
    "hipDeviceGetUuid": lambda device: (_device(device), (SUCCESS, ht.device_uuid(UUID)))[1],
    "hipDriverGetVersion": lambda: (SUCCESS, HIP_VERSION),
    "hipRuntimeGetVersion": lambda: (SUCCESS, HIP_VERSION),
    "hipDeviceGetCacheConfig": lambda: (SUCCESS, ht.hipFuncCache_t(_dev().settings.cache_config)),
    "hipDeviceGetSharedMemConfig": lambda: (SUCCESS, ht.hipSharedMemConfig(_dev().settings.shared_mem_config)),
    "hipGetDeviceFlags": lambda: (SUCCESS, _dev().settings.flags),
    "hipDeviceGetStreamPriorityRange": lambda: (SUCCESS, 1, -1),
    "hipCtxGetCurrent": lambda: (SUCCESS, ht.ihipCtx_t(_dev().settings.handle)),
    "hipCtxGetDevice": lambda: (SUCCESS, 0),
    "hipDevicePrimaryCtxRetain": lambda dev: (_device(dev), (SUCCESS, ht.ihipCtx_t(_dev().settings.handle)))[1],
    "hipDevicePrimaryCtxRelease": lambda dev: (_device(dev), None)[1],
    "hipDevicePrimaryCtxGetState": lambda dev: (_device(dev), (SUCCESS, 0, 1))[1],
    "hipCtxSynchronize": _not_supported("hipCtxSynchronize"),
    "hipCtxGetApiVersion": _not_supported("hipCtxGetApiVersion"),
    "hipCtxGetFlags": _not_supported("hipCtxGetFlags"),
    "hipProfilerStart": _not_supported("hipProfilerStart"),
    "hipProfilerStop": _not_supported("hipProfilerStop"),
    "hipDrvGetErrorName": lambda hipError: _drv_error_text(hipError, False),
    "hipDrvGetErrorString": lambda hipError: _drv_error_text(hipError, True),
})
