"""The device section's calls (issue 10), each at least once, for every_api_app: queries,
settings, the errors a one-device machine gives for peers, contexts and a context reset.
Called before the app allocates anything (hipDevicePrimaryCtxReset destroys it all)."""
from __future__ import annotations


def exercise_device(hip) -> None:
    A, L = hip.hipDeviceAttribute_t, hip.hipLimit_t
    for attr in (A.hipDeviceAttributeWarpSize, A.hipDeviceAttributeMaxThreadsDim, A.hipDeviceAttributeTotalGlobalMem):
        hip.hipDeviceGetAttribute(attr, 0)
    hip.hipDeviceGetAttribute(A.hipDeviceAttributeWarpSize, 7)          # no such device
    hip.hipDeviceGetName(64, 0)
    err, bus = hip.hipDeviceGetPCIBusId(64, 0)
    hip.hipDeviceGetByPCIBusId(bytes(bus) if bus is not None else b"")
    hip.hipDeviceGetByPCIBusId(b"ffff:ff:1f.7")                         # no device there
    hip.hipDeviceComputeCapability(0)
    hip.hipDeviceTotalMem(0)
    hip.hipDeviceGet(0)
    hip.hipDriverGetVersion()
    hip.hipRuntimeGetVersion()
    hip.hipDeviceGetLimit(L.hipLimitStackSize)
    hip.hipDeviceSetLimit(L.hipLimitStackSize, 2048)
    hip.hipDeviceGetLimit(L.hipLimitStackSize)
    hip.hipDeviceGetLimit(L.hipLimitPrintfFifoSize)
    hip.hipDeviceGetCacheConfig()
    hip.hipDeviceSetCacheConfig(hip.hipFuncCache_t.hipFuncCachePreferShared)
    hip.hipDeviceGetSharedMemConfig()
    hip.hipDeviceSetSharedMemConfig(hip.hipSharedMemConfig.hipSharedMemBankSizeFourByte)
    hip.hipGetDeviceFlags()
    hip.hipSetDeviceFlags(hip.hipDeviceScheduleAuto)
    hip.hipSetDeviceFlags(hip.hipDeviceScheduleSpin | hip.hipDeviceScheduleYield)   # two schedules: invalid
    hip.hipChooseDevice(hip.hipDeviceProp_t())
    hip.hipDeviceGetStreamPriorityRange()
    hip.hipGetStreamDeviceId(None)
    hip.hipDeviceCanAccessPeer(0, 0)
    hip.hipDeviceCanAccessPeer(0, 1)
    hip.hipDeviceEnablePeerAccess(1, 0)
    hip.hipDeviceDisablePeerAccess(1)
    hip.hipDeviceGetP2PAttribute(hip.hipDeviceP2PAttr.hipDevP2PAttrAccessSupported, 0, 1)
    hip.hipDeviceGetUuid(0)
    err, ctx = hip.hipCtxGetCurrent()
    hip.hipCtxSetCurrent(ctx)
    hip.hipCtxGetDevice()
    hip.hipCtxSynchronize()
    hip.hipCtxGetApiVersion(ctx)
    hip.hipCtxGetFlags()
    err, pctx = hip.hipDevicePrimaryCtxRetain(0)
    hip.hipDevicePrimaryCtxGetState(0)
    hip.hipDevicePrimaryCtxSetFlags(0, 0)
    hip.hipDevicePrimaryCtxRelease(0)
    hip.hipDevicePrimaryCtxReset(0)
    hip.hipDeviceGetLimit(L.hipLimitStackSize)                          # the reset restored it
    hip.hipDrvGetErrorName(hip.hipError_t.hipErrorInvalidValue)
    hip.hipDrvGetErrorString(hip.hipError_t.hipErrorInvalidValue)
    hip.hipProfilerStart()
    hip.hipProfilerStop()
