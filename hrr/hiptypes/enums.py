"""hip-python's enums and plain constants.

Enums are hip-python's own classes when hip-python is importable (so a member an app
passes is literally hip-python's), otherwise IntEnums with the same names and values
(``_ENUMS``, ``_HIP_ERRORS``, ``_HIPRTC_RESULTS``). ``ENUM_TYPES`` names every enum hrr
uses, ``CONSTANTS`` every plain int constant it offers.
"""
from __future__ import annotations

import enum
from typing import Any

from hrr.hiptypes.installed import _real

_HIP_ERRORS = {
    "hipSuccess": 0, "hipErrorInvalidValue": 1, "hipErrorOutOfMemory": 2,
    "hipErrorNotInitialized": 3, "hipErrorDeinitialized": 4, "hipErrorProfilerDisabled": 5,
    "hipErrorProfilerNotInitialized": 6, "hipErrorProfilerAlreadyStarted": 7,
    "hipErrorProfilerAlreadyStopped": 8, "hipErrorInvalidConfiguration": 9,
    "hipErrorInvalidPitchValue": 12, "hipErrorInvalidSymbol": 13,
    "hipErrorInvalidDevicePointer": 17, "hipErrorInvalidMemcpyDirection": 21,
    "hipErrorInsufficientDriver": 35, "hipErrorMissingConfiguration": 52,
    "hipErrorPriorLaunchFailure": 53, "hipErrorInvalidDeviceFunction": 98,
    "hipErrorNoDevice": 100, "hipErrorInvalidDevice": 101, "hipErrorInvalidImage": 200,
    "hipErrorInvalidContext": 201, "hipErrorContextAlreadyCurrent": 202,
    "hipErrorMapFailed": 205, "hipErrorUnmapFailed": 206, "hipErrorArrayIsMapped": 207,
    "hipErrorAlreadyMapped": 208, "hipErrorNoBinaryForGpu": 209,
    "hipErrorAlreadyAcquired": 210, "hipErrorNotMapped": 211,
    "hipErrorNotMappedAsArray": 212, "hipErrorNotMappedAsPointer": 213,
    "hipErrorECCNotCorrectable": 214, "hipErrorUnsupportedLimit": 215,
    "hipErrorContextAlreadyInUse": 216, "hipErrorPeerAccessUnsupported": 217,
    "hipErrorInvalidKernelFile": 218, "hipErrorInvalidGraphicsContext": 219,
    "hipErrorInvalidSource": 300, "hipErrorFileNotFound": 301,
    "hipErrorSharedObjectSymbolNotFound": 302, "hipErrorSharedObjectInitFailed": 303,
    "hipErrorOperatingSystem": 304, "hipErrorInvalidHandle": 400,
    "hipErrorIllegalState": 401, "hipErrorNotFound": 500, "hipErrorNotReady": 600,
    "hipErrorIllegalAddress": 700, "hipErrorLaunchOutOfResources": 701,
    "hipErrorLaunchTimeOut": 702, "hipErrorPeerAccessAlreadyEnabled": 704,
    "hipErrorPeerAccessNotEnabled": 705, "hipErrorSetOnActiveProcess": 708,
    "hipErrorContextIsDestroyed": 709, "hipErrorAssert": 710,
    "hipErrorHostMemoryAlreadyRegistered": 712, "hipErrorHostMemoryNotRegistered": 713,
    "hipErrorLaunchFailure": 719, "hipErrorCooperativeLaunchTooLarge": 720,
    "hipErrorNotSupported": 801, "hipErrorStreamCaptureUnsupported": 900,
    "hipErrorStreamCaptureInvalidated": 901, "hipErrorStreamCaptureMerge": 902,
    "hipErrorStreamCaptureUnmatched": 903, "hipErrorStreamCaptureUnjoined": 904,
    "hipErrorStreamCaptureIsolation": 905, "hipErrorStreamCaptureImplicit": 906,
    "hipErrorCapturedEvent": 907, "hipErrorStreamCaptureWrongThread": 908,
    "hipErrorGraphExecUpdateFailure": 910, "hipErrorInvalidChannelDescriptor": 911,
    "hipErrorInvalidTexture": 912, "hipErrorInvalidResourceType": 914,
    "hipErrorInvalidResourceConfiguration": 915, "hipErrorStreamDetached": 916,
    "hipErrorUnknown": 999, "hipErrorRuntimeMemory": 1052, "hipErrorRuntimeOther": 1053,
    "hipErrorInvalidClusterSize": 1054, "hipErrorTbd": 1055,
}
_ENUMS = {
    "hipMemcpyKind": {"hipMemcpyHostToHost": 0, "hipMemcpyHostToDevice": 1,
                      "hipMemcpyDeviceToHost": 2, "hipMemcpyDeviceToDevice": 3,
                      "hipMemcpyDefault": 4, "hipMemcpyDeviceToDeviceNoCU": 1024},
    "hipStreamCaptureStatus": {"hipStreamCaptureStatusNone": 0,
                               "hipStreamCaptureStatusActive": 1,
                               "hipStreamCaptureStatusInvalidated": 2},
    "hipStreamCaptureMode": {"hipStreamCaptureModeGlobal": 0,
                             "hipStreamCaptureModeThreadLocal": 1,
                             "hipStreamCaptureModeRelaxed": 2},
    "hipMemoryType": {"hipMemoryTypeUnregistered": 0, "hipMemoryTypeHost": 1,
                      "hipMemoryTypeDevice": 2, "hipMemoryTypeManaged": 3,
                      "hipMemoryTypeArray": 10, "hipMemoryTypeUnified": 11},
}
_HIPRTC_RESULTS = {
    "HIPRTC_SUCCESS": 0, "HIPRTC_ERROR_OUT_OF_MEMORY": 1,
    "HIPRTC_ERROR_PROGRAM_CREATION_FAILURE": 2, "HIPRTC_ERROR_INVALID_INPUT": 3,
    "HIPRTC_ERROR_INVALID_PROGRAM": 4, "HIPRTC_ERROR_INVALID_OPTION": 5,
    "HIPRTC_ERROR_COMPILATION": 6, "HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE": 7,
    "HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION": 8,
    "HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION": 9,
    "HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID": 10, "HIPRTC_ERROR_INTERNAL_ERROR": 11,
    "HIPRTC_ERROR_LINKING": 100,
}


def _int_enum(name: str, members: Any) -> Any:
    # Typed Any like hip-python's own enums in the other branch, so callers see one type.
    return enum.IntEnum(name, members)


def _enum_type(name: str, module: int, members: Any) -> Any:
    """hip-python's enum ``name`` (from its hip, 0, or hiprtc, 1, module) when it is
    installed, else an IntEnum with the same members and values."""
    return getattr(_real[module], name) if _real is not None else _int_enum(name, members)


hipError_t = _enum_type("hipError_t", 0, _HIP_ERRORS)
hipMemcpyKind = _enum_type("hipMemcpyKind", 0, _ENUMS["hipMemcpyKind"])
hipStreamCaptureStatus = _enum_type("hipStreamCaptureStatus", 0, _ENUMS["hipStreamCaptureStatus"])
hipStreamCaptureMode = _enum_type("hipStreamCaptureMode", 0, _ENUMS["hipStreamCaptureMode"])
hipMemoryType = _enum_type("hipMemoryType", 0, _ENUMS["hipMemoryType"])
hiprtcResult = _enum_type("hiprtcResult", 1, _HIPRTC_RESULTS)
ENUM_SOURCE = "hip-python" if _real is not None else "hrr"

ENUM_TYPES = {e.__name__: e for e in (hipError_t, hipMemcpyKind, hipStreamCaptureStatus,
                                       hipStreamCaptureMode, hipMemoryType, hiprtcResult)}

# ---- hiprtc: programs and the link API --------------------------------------
# hiprtc's link API takes hipJitInputType / hipJitOption (hiprtcJITInputType and
# hiprtcJIT_option are their hiprtc names). HIP's hiprtc.h also spells the input types
# HIPRTC_JIT_INPUT_* (macros over the hipJitInput* values): hip-python does not, and its
# examples use those names (hiprtcJITInputType.HIPRTC_JIT_INPUT_LLVM_BITCODE), so they are
# added as attributes of the enum class (not members: hip-python's own members stay as
# they are).
_ENUMS["hipJitInputType"] = {
    "hipJitInputCubin": 0, "hipJitInputPtx": 1, "hipJitInputFatBinary": 2, "hipJitInputObject": 3,
    "hipJitInputLibrary": 4, "hipJitInputNvvm": 5, "hipJitNumLegacyInputTypes": 6,
    "hipJitInputLLVMBitcode": 100, "hipJitInputLLVMBundledBitcode": 101,
    "hipJitInputLLVMArchivesOfBundledBitcode": 102, "hipJitInputSpirv": 103, "hipJitNumInputTypes": 10}
_ENUMS["hipJitOption"] = {name: i for i, name in enumerate((
    "hipJitOptionMaxRegisters", "hipJitOptionThreadsPerBlock", "hipJitOptionWallTime",
    "hipJitOptionInfoLogBuffer", "hipJitOptionInfoLogBufferSizeBytes", "hipJitOptionErrorLogBuffer",
    "hipJitOptionErrorLogBufferSizeBytes", "hipJitOptionOptimizationLevel",
    "hipJitOptionTargetFromContext", "hipJitOptionTarget", "hipJitOptionFallbackStrategy",
    "hipJitOptionGenerateDebugInfo", "hipJitOptionLogVerbose", "hipJitOptionGenerateLineInfo",
    "hipJitOptionCacheMode", "hipJitOptionSm3xOpt", "hipJitOptionFastCompile",
    "hipJitOptionGlobalSymbolNames", "hipJitOptionGlobalSymbolAddresses", "hipJitOptionGlobalSymbolCount",
    "hipJitOptionLto", "hipJitOptionFtz", "hipJitOptionPrecDiv", "hipJitOptionPrecSqrt", "hipJitOptionFma",
    "hipJitOptionPositionIndependentCode", "hipJitOptionMinCTAPerSM", "hipJitOptionMaxThreadsPerBlock",
    "hipJitOptionOverrideDirectiveValues", "hipJitOptionNumOptions"))}
_ENUMS["hipJitOption"].update(hipJitOptionIRtoISAOptExt=10000, hipJitOptionIRtoISAOptCountExt=10001)
hipJitInputType = _enum_type("hipJitInputType", 1, _ENUMS["hipJitInputType"])
hipJitOption = _enum_type("hipJitOption", 1, _ENUMS["hipJitOption"])
_HIPRTC_INPUT_NAMES = {
    "HIPRTC_JIT_INPUT_CUBIN": "hipJitInputCubin", "HIPRTC_JIT_INPUT_PTX": "hipJitInputPtx",
    "HIPRTC_JIT_INPUT_FATBINARY": "hipJitInputFatBinary", "HIPRTC_JIT_INPUT_OBJECT": "hipJitInputObject",
    "HIPRTC_JIT_INPUT_LIBRARY": "hipJitInputLibrary", "HIPRTC_JIT_INPUT_NVVM": "hipJitInputNvvm",
    "HIPRTC_JIT_NUM_LEGACY_INPUT_TYPES": "hipJitNumLegacyInputTypes",
    "HIPRTC_JIT_INPUT_LLVM_BITCODE": "hipJitInputLLVMBitcode",
    "HIPRTC_JIT_INPUT_LLVM_BUNDLED_BITCODE": "hipJitInputLLVMBundledBitcode",
    "HIPRTC_JIT_INPUT_LLVM_ARCHIVES_OF_BUNDLED_BITCODE": "hipJitInputLLVMArchivesOfBundledBitcode",
    "HIPRTC_JIT_NUM_INPUT_TYPES": "hipJitNumInputTypes"}
for _legacy, _member in _HIPRTC_INPUT_NAMES.items():
    if _legacy not in hipJitInputType.__members__ and _member in hipJitInputType.__members__:
        setattr(hipJitInputType, _legacy, hipJitInputType[_member])
ENUM_TYPES.update(hipJitInputType=hipJitInputType, hipJitOption=hipJitOption)
# ---- end of hiprtc ------------------------------------------------------------------

# Plain int constants, hip-python's values.
CONSTANTS = {
    "HIP_LAUNCH_PARAM_BUFFER_POINTER": 1, "HIP_LAUNCH_PARAM_BUFFER_SIZE": 2,
    "HIP_LAUNCH_PARAM_END": 3,
    "hipHostMallocDefault": 0, "hipHostMallocPortable": 1, "hipHostMallocMapped": 2,
    "hipHostMallocWriteCombined": 4, "hipHostMallocNumaUser": 0x20000000,
    "hipHostMallocCoherent": 0x40000000, "hipHostMallocNonCoherent": -0x80000000,
    "hipHostRegisterDefault": 0, "hipHostRegisterPortable": 1, "hipHostRegisterMapped": 2,
    "hipHostRegisterIoMemory": 4,
    "hipStreamDefault": 0, "hipStreamNonBlocking": 1,
    "hipEventDefault": 0, "hipEventBlockingSync": 1, "hipEventDisableTiming": 2,
    "hipEventInterprocess": 4,
    "hipStreamWaitValueGte": 0, "hipStreamWaitValueEq": 1, "hipStreamWaitValueAnd": 2,
    "hipStreamWaitValueNor": 3,
    "hipGraphInstantiateFlagAutoFreeOnLaunch": 1,
}
HIP_LAUNCH_PARAM_BUFFER_POINTER = 1
HIP_LAUNCH_PARAM_BUFFER_SIZE = 2
HIP_LAUNCH_PARAM_END = 3

# memory and modules: managed-memory constants.
CONSTANTS_MANAGED = {"hipMemAttachGlobal": 1, "hipMemAttachHost": 2, "hipMemAttachSingle": 4,
                     "hipCpuDeviceId": -1, "hipInvalidDeviceId": -2, "hipDeviceMallocDefault": 0,
                     "hipDeviceMallocFinegrained": 1, "hipMallocSignalMemory": 2, "hipOccupancyDefault": 0,
                     "hipCooperativeLaunchMultiDeviceNoPreSync": 1,
                     "hipCooperativeLaunchMultiDeviceNoPostSync": 2}
CONSTANTS.update(CONSTANTS_MANAGED)

# -- device: attributes, limits, caches, peers -----------------------------------------
# hipDeviceAttribute_t's members in value order, from each run's first value (hip-python 10.x;
# the look-alike where hip-python is absent). Aliases follow.
_ATTRIBUTE_RUNS = {
    0: "CudaCompatibleBegin AccessPolicyMaxWindowSize AsyncEngineCount CanMapHostMemory "
       "CanUseHostPointerForRegisteredMem ClockRate ComputeMode ComputePreemptionSupported ConcurrentKernels "
       "ConcurrentManagedAccess CooperativeLaunch CooperativeMultiDeviceLaunch DeviceOverlap "
       "DirectManagedMemAccessFromHost GlobalL1CacheSupported HostNativeAtomicSupported Integrated "
       "IsMultiGpuBoard KernelExecTimeout L2CacheSize LocalL1CacheSupported Luid LuidDeviceNodeMask "
       "ComputeCapabilityMajor ManagedMemory MaxBlocksPerMultiProcessor MaxBlockDimX MaxBlockDimY MaxBlockDimZ "
       "MaxGridDimX MaxGridDimY MaxGridDimZ MaxSurface1D MaxSurface1DLayered MaxSurface2D MaxSurface2DLayered "
       "MaxSurface3D MaxSurfaceCubemap MaxSurfaceCubemapLayered MaxTexture1DWidth MaxTexture1DLayered "
       "MaxTexture1DLinear MaxTexture1DMipmap MaxTexture2DWidth MaxTexture2DHeight MaxTexture2DGather "
       "MaxTexture2DLayered MaxTexture2DLinear MaxTexture2DMipmap MaxTexture3DWidth MaxTexture3DHeight "
       "MaxTexture3DDepth MaxTexture3DAlt MaxTextureCubemap MaxTextureCubemapLayered MaxThreadsDim "
       "MaxThreadsPerBlock MaxThreadsPerMultiProcessor MaxPitch MemoryBusWidth MemoryClockRate "
       "ComputeCapabilityMinor MultiGpuBoardGroupID MultiprocessorCount Unused1 PageableMemoryAccess "
       "PageableMemoryAccessUsesHostPageTables PciBusId PciDeviceId PciDomainId PersistingL2CacheMaxSize "
       "MaxRegistersPerBlock MaxRegistersPerMultiprocessor ReservedSharedMemPerBlock MaxSharedMemoryPerBlock "
       "SharedMemPerBlockOptin SharedMemPerMultiprocessor SingleToDoublePrecisionPerfRatio "
       "StreamPrioritiesSupported SurfaceAlignment TccDriver TextureAlignment TexturePitchAlignment "
       "TotalConstantMemory TotalGlobalMem UnifiedAddressing Unused2 WarpSize MemoryPoolsSupported "
       "VirtualMemoryManagementSupported HostRegisterSupported MemoryPoolSupportedHandleTypes HostNumaId "
       "DmaBufSupported GPUDirectRDMAWithHipVMMSupported HandleTypeFabricSupported",
    9999: "CudaCompatibleEnd",
    10000: "AmdSpecificBegin Unused3 MaxSharedMemoryPerMultiprocessor Unused4 Unused5 HdpMemFlushCntl "
           "HdpRegFlushCntl CooperativeMultiDeviceUnmatchedFunc CooperativeMultiDeviceUnmatchedGridDim "
           "CooperativeMultiDeviceUnmatchedBlockDim CooperativeMultiDeviceUnmatchedSharedMem IsLargeBar "
           "AsicRevision CanUseStreamWaitValue ImageSupport PhysicalMultiProcessorCount FineGrainSupport "
           "WallClockRate NumberOfXccs MaxAvailableVgprsPerThread PciChipId ExpertSchedMode "
           "MaxDynDataPrefetchRegions",
    19999: "AmdSpecificEnd",
    20000: "VendorSpecificBegin",
}
_ATTRIBUTE_ALIASES = {"EccEnabled": 0, "PciDomainID": 69, "ClockInstructionRate": 10000}
_ENUMS["hipDeviceAttribute_t"] = {
    **{f"hipDeviceAttribute{name}": start + i for start, run in _ATTRIBUTE_RUNS.items()
       for i, name in enumerate(run.split())},
    **{f"hipDeviceAttribute{name}": value for name, value in _ATTRIBUTE_ALIASES.items()}}
_ENUMS["hipLimit_t"] = {"hipLimitStackSize": 0, "hipLimitPrintfFifoSize": 1, "hipLimitMallocHeapSize": 2,
                        "hipExtLimitScratchMin": 4096, "hipExtLimitScratchMax": 4097,
                        "hipExtLimitScratchCurrent": 4098, "hipLimitRange": 4099}
_ENUMS["hipFuncCache_t"] = {"hipFuncCachePreferNone": 0, "hipFuncCachePreferShared": 1,
                            "hipFuncCachePreferL1": 2, "hipFuncCachePreferEqual": 3}
_ENUMS["hipSharedMemConfig"] = {"hipSharedMemBankSizeDefault": 0, "hipSharedMemBankSizeFourByte": 1,
                                "hipSharedMemBankSizeEightByte": 2}
_ENUMS["hipDeviceP2PAttr"] = {"hipDevP2PAttrPerformanceRank": 0, "hipDevP2PAttrAccessSupported": 1,
                              "hipDevP2PAttrNativeAtomicSupported": 2, "hipDevP2PAttrHipArrayAccessSupported": 3}
_DEVICE_ENUMS = ("hipDeviceAttribute_t", "hipLimit_t", "hipFuncCache_t", "hipSharedMemConfig", "hipDeviceP2PAttr")
for _name in _DEVICE_ENUMS:
    ENUM_TYPES[_name] = _enum_type(_name, 0, _ENUMS[_name])
hipDeviceAttribute_t: Any = ENUM_TYPES["hipDeviceAttribute_t"]
hipLimit_t: Any = ENUM_TYPES["hipLimit_t"]
hipFuncCache_t: Any = ENUM_TYPES["hipFuncCache_t"]
hipSharedMemConfig: Any = ENUM_TYPES["hipSharedMemConfig"]
hipDeviceP2PAttr: Any = ENUM_TYPES["hipDeviceP2PAttr"]
CONSTANTS.update({"hipDeviceScheduleAuto": 0, "hipDeviceScheduleSpin": 1, "hipDeviceScheduleYield": 2,
                  "hipDeviceScheduleBlockingSync": 4, "hipDeviceScheduleMask": 7, "hipDeviceMapHost": 8,
                  "hipDeviceLmemResizeToMax": 16})


# -- graphs: node types and exec-update results ----------------------------------------
_ENUMS["hipGraphNodeType"] = {f"hipGraphNodeType{k}": v for v, k in enumerate((
    "Kernel", "Memcpy", "Memset", "Host", "Graph", "Empty", "WaitEvent", "EventRecord", "ExtSemaphoreSignal",
    "ExtSemaphoreWait", "MemAlloc", "MemFree", "MemcpyFromSymbol", "MemcpyToSymbol", "BatchMemOp", "Count"))}
_ENUMS["hipGraphExecUpdateResult"] = {f"hipGraphExecUpdate{k}": v for v, k in enumerate((
    "Success", "Error", "ErrorTopologyChanged", "ErrorNodeTypeChanged", "ErrorFunctionChanged",
    "ErrorParametersChanged", "ErrorNotSupported", "ErrorUnsupportedFunctionChange"))}
hipGraphNodeType = _enum_type("hipGraphNodeType", 0, _ENUMS["hipGraphNodeType"])
hipGraphExecUpdateResult = _enum_type("hipGraphExecUpdateResult", 0, _ENUMS["hipGraphExecUpdateResult"])
ENUM_TYPES.update({e.__name__: e for e in (hipGraphNodeType, hipGraphExecUpdateResult)})

CONSTANTS.update({"hipGraphInstantiateFlagUpload": 2, "hipGraphInstantiateFlagDeviceLaunch": 4,
                  "hipGraphInstantiateFlagUseNodePriority": 8})

# ---- memory pools: the enums a row or a pool's properties name ----------------------------
_ENUMS["hipMemPoolAttr"] = {
    "hipMemPoolReuseFollowEventDependencies": 1, "hipMemPoolReuseAllowOpportunistic": 2,
    "hipMemPoolReuseAllowInternalDependencies": 3, "hipMemPoolAttrReleaseThreshold": 4,
    "hipMemPoolAttrReservedMemCurrent": 5, "hipMemPoolAttrReservedMemHigh": 6,
    "hipMemPoolAttrUsedMemCurrent": 7, "hipMemPoolAttrUsedMemHigh": 8}
_ENUMS["hipMemAllocationType"] = {"hipMemAllocationTypeInvalid": 0, "hipMemAllocationTypePinned": 1,
                                  "hipMemAllocationTypeManaged": 2, "hipMemAllocationTypeUncached": 0x40000000,
                                  "hipMemAllocationTypeMax": 0x7FFFFFFF}
_ENUMS["hipMemLocationType"] = {"hipMemLocationTypeInvalid": 0, "hipMemLocationTypeDevice": 1,
                                "hipMemLocationTypeHost": 2, "hipMemLocationTypeHostNuma": 3,
                                "hipMemLocationTypeHostNumaCurrent": 4}
_ENUMS["hipMemAllocationHandleType"] = {"hipMemHandleTypeNone": 0, "hipMemHandleTypePosixFileDescriptor": 1,
                                        "hipMemHandleTypeWin32": 2, "hipMemHandleTypeWin32Kmt": 4,
                                        "hipMemHandleTypeFabric": 8}
for _name in ("hipMemPoolAttr", "hipMemAllocationType", "hipMemLocationType", "hipMemAllocationHandleType"):
    ENUM_TYPES[_name] = _enum_type(_name, 0, _ENUMS[_name])
hipMemPoolAttr: Any = ENUM_TYPES["hipMemPoolAttr"]
