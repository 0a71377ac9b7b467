"""The sim's device section (issue 10): attributes and properties agree, every member of
hipDeviceAttribute_t answers as HIP does, settings live on the device model and a reset
restores them, a one-device machine's peer errors, contexts."""
from __future__ import annotations

import pytest

from hrr import hiptypes as ht
from hrr.backends.sim import device_calls
from hrr.backends.sim import hip

E = ht.hipError_t
A = ht.hipDeviceAttribute_t
L = ht.hipLimit_t
OK = E.hipSuccess

# The members HIP (ROCm 7) answers hipErrorInvalidValue for.
NOT_ANSWERED = {
    "Luid", "MaxSurface1DLayered", "MaxSurface2D", "MaxSurface2DLayered", "MaxSurface3D", "MaxSurfaceCubemap",
    "MaxSurfaceCubemapLayered", "MaxTexture1DLayered", "MaxTexture2DGather", "MaxTexture2DLayered",
    "MaxTexture2DLinear", "MaxTexture2DMipmap", "MaxTexture3DAlt", "MaxTextureCubemapLayered", "MaxThreadsDim",
    "Unused1", "SingleToDoublePrecisionPerfRatio", "TccDriver", "Unused2", "CudaCompatibleEnd", "AmdSpecificBegin",
    "Unused3", "Unused4", "Unused5", "AmdSpecificEnd", "VendorSpecificBegin"}


def test_every_attribute_answers_as_hip_does():
    """hip-python's hip_deviceattributes walks the members: each is a plausible int or HIP's
    hipErrorInvalidValue, never anything else."""
    for member in A:
        err, value = hip.hipDeviceGetAttribute(member, 0)
        short = member.name[len("hipDeviceAttribute"):]
        if short in NOT_ANSWERED:
            assert (err, value) == (E.hipErrorInvalidValue, None), member
        else:
            assert err == OK and type(value) is int and -1 <= value < 1 << 31, (member, value)


def test_attributes_and_properties_agree():
    err, props = hip.hipGetDeviceProperties(0)
    assert err == OK
    pairs = {"WarpSize": props.warpSize, "MaxBlockDimX": props.maxThreadsDim[0],
             "MaxGridDimZ": props.maxGridSize[2], "MultiprocessorCount": props.multiProcessorCount,
             "ComputeCapabilityMajor": props.major, "ComputeCapabilityMinor": props.minor,
             "ClockRate": props.clockRate, "L2CacheSize": props.l2CacheSize, "PciBusId": props.pciBusID,
             "MaxSharedMemoryPerBlock": props.sharedMemPerBlock, "TotalGlobalMem": min(props.totalGlobalMem, 2**31 - 1),
             "SurfaceAlignment": props.surfaceAlignment}
    for short, want in pairs.items():
        assert hip.hipDeviceGetAttribute(getattr(A, "hipDeviceAttribute" + short), 0) == (OK, want), short
    assert hip.hipDeviceComputeCapability(0) == (OK, props.major, props.minor)
    assert hip.hipDeviceTotalMem(0) == (OK, props.totalGlobalMem)
    assert hip.hipDeviceGetUuid(0)[1].bytes == props.uuid.bytes == b"hrr sim device 0"
    assert props.arch.hasDoubles == 1 and props.arch.hasDynamicParallelism == 0


def test_every_property_is_set_by_the_sim():
    """hip_deviceproperties prints every field: each one the sim fills (the rest are
    hip-python's defaults: reserved words, HDP register addresses the sim has not, LUID)."""
    unset = {f for f in ht.hipDeviceProp_t.PROPERTIES() if f not in device_calls.properties().__dict__}
    assert unset == {"reserved", "hipReserved", "hdpMemFlushCntl", "hdpRegFlushCntl", "luid"}, unset


@pytest.mark.parametrize("call,args", [
    ("hipDeviceGetAttribute", (A.hipDeviceAttributeWarpSize, 1)), ("hipDeviceGetName", (32, 1)),
    ("hipDeviceGetPCIBusId", (32, -1)), ("hipDeviceComputeCapability", (1,)), ("hipDeviceTotalMem", (2,)),
    ("hipDeviceGet", (1,)), ("hipDeviceGetUuid", (1,)), ("hipGetDeviceProperties", (1,)),
    ("hipDevicePrimaryCtxRetain", (1,)), ("hipDevicePrimaryCtxGetState", (3,)),
    ("hipDevicePrimaryCtxSetFlags", (1, 0)), ("hipDevicePrimaryCtxRelease", (1,)),
    ("hipDevicePrimaryCtxReset", (1,))])
def test_a_device_that_does_not_exist(call, args):
    result = getattr(hip, call)(*args)
    assert result[0] == E.hipErrorInvalidDevice and all(v is None for v in result[1:])


def test_names_and_pci_ids():
    assert hip.hipDeviceGetName(64, 0) == (OK, ht.CStr(b"AMD Instinct MI300X"))   # the default model's
    assert hip.hipDeviceGetName(4, 0) == (OK, ht.CStr(b"AMD"))          # truncated, NUL-terminated
    assert hip.hipDeviceGetName(0, 0) == (E.hipErrorInvalidValue, None)
    err, bus = hip.hipDeviceGetPCIBusId(13, 0)
    assert (err, bytes(bus)) == (OK, b"0000:00:00.0")
    assert hip.hipDeviceGetPCIBusId(12, 0) == (E.hipErrorInvalidValue, None)   # no room for the NUL
    assert hip.hipDeviceGetByPCIBusId(bus) == (OK, 0)
    assert hip.hipDeviceGetByPCIBusId("0000:00:00.0") == (OK, 0)
    assert hip.hipDeviceGetByPCIBusId(b"0000:00:00") == (E.hipErrorInvalidValue, None)   # no function
    assert hip.hipDeviceGetByPCIBusId(b"0000:01:00.0") == (E.hipErrorInvalidValue, None)
    assert hip.hipDeviceGet(0) == (OK, 0)


def test_limits_are_device_settings_and_a_reset_restores_them():
    assert hip.hipDeviceGetLimit(L.hipLimitStackSize) == (OK, 1024)
    assert hip.hipDeviceSetLimit(L.hipLimitStackSize, 4096) == (OK,)
    assert hip.hipDeviceSetLimit(L.hipLimitMallocHeapSize, 1 << 20) == (OK,)
    assert hip.hipDeviceGetLimit(L.hipLimitStackSize) == (OK, 4096)
    assert hip.hipDeviceGetLimit(L.hipLimitMallocHeapSize) == (OK, 1 << 20)
    assert hip.hipDeviceSetLimit(L.hipLimitStackSize, 1 << 20) == (E.hipErrorInvalidValue,)   # over HIP's bound
    assert hip.hipDeviceSetLimit(L.hipLimitPrintfFifoSize, 1) == (E.hipErrorUnsupportedLimit,)
    assert hip.hipDeviceGetLimit(L.hipLimitPrintfFifoSize) == (E.hipErrorUnsupportedLimit, None)
    assert hip.hipDeviceGetLimit(L.hipLimitRange) == (E.hipErrorInvalidValue, None)
    assert hip.hipDeviceGetLimit(99) == (E.hipErrorInvalidValue, None)           # not a hipLimit_t
    assert hip.hipDeviceSetLimit(L.hipExtLimitScratchMin, 4096) == (E.hipErrorUnsupportedLimit,)
    assert hip.hipDeviceSetLimit(L.hipExtLimitScratchCurrent, 1 << 20) == (OK,)
    assert hip.hipDeviceGetLimit(L.hipExtLimitScratchCurrent) == (OK, 1 << 20)
    assert hip.hipDeviceSetCacheConfig(ht.hipFuncCache_t.hipFuncCachePreferL1) == (OK,)
    assert hip.hipDeviceSetSharedMemConfig(ht.hipSharedMemConfig.hipSharedMemBankSizeEightByte) == (OK,)
    assert hip.hipSetDeviceFlags(hip.hipDeviceScheduleBlockingSync | hip.hipDeviceMapHost) == (OK,)
    assert hip.hipDeviceGetCacheConfig() == (OK, ht.hipFuncCache_t.hipFuncCachePreferL1)
    assert hip.hipDeviceGetSharedMemConfig() == (OK, ht.hipSharedMemConfig.hipSharedMemBankSizeEightByte)
    assert hip.hipGetDeviceFlags() == (OK, hip.hipDeviceScheduleBlockingSync)   # HIP keeps the schedule only
    assert hip.hipDeviceReset() == (OK,)
    assert hip.hipDeviceGetLimit(L.hipLimitStackSize) == (OK, 1024)
    assert hip.hipDeviceGetLimit(L.hipLimitMallocHeapSize) == (OK, 4 << 20)
    assert hip.hipDeviceGetCacheConfig() == (OK, ht.hipFuncCache_t.hipFuncCachePreferNone)
    assert hip.hipDeviceGetSharedMemConfig() == (OK, ht.hipSharedMemConfig.hipSharedMemBankSizeFourByte)
    assert hip.hipGetDeviceFlags() == (OK, 0)


def test_device_flags_take_one_schedule():
    for bad in (hip.hipDeviceScheduleSpin | hip.hipDeviceScheduleYield, 0x100, -1):
        assert hip.hipSetDeviceFlags(bad) == (E.hipErrorInvalidValue,), bad
    assert hip.hipGetDeviceFlags() == (OK, 0)


def test_cache_settings_are_refused_while_a_stream_captures():
    err, s = hip.hipStreamCreate()
    assert hip.hipStreamBeginCapture(s, ht.hipStreamCaptureMode.hipStreamCaptureModeGlobal) == (OK,)
    assert hip.hipDeviceSetCacheConfig(ht.hipFuncCache_t.hipFuncCachePreferL1) == (E.hipErrorStreamCaptureUnsupported,)
    assert hip.hipDeviceSetSharedMemConfig(1) == (E.hipErrorStreamCaptureUnsupported,)
    err, graph = hip.hipStreamEndCapture(s)
    assert err == OK, "HIP refuses the setting without invalidating the capture"
    assert hip.hipDeviceGetCacheConfig() == (OK, ht.hipFuncCache_t.hipFuncCachePreferNone)
    hip.hipGraphDestroy(graph)
    hip.hipStreamDestroy(s)


def test_peers_on_a_one_device_machine():
    assert hip.hipDeviceCanAccessPeer(0, 0) == (OK, 0)     # a device is not its own peer
    assert hip.hipDeviceCanAccessPeer(3, 3) == (OK, 0)     # HIP answers that before it checks the ordinals
    assert hip.hipDeviceCanAccessPeer(0, 1) == (E.hipErrorInvalidDevice, None)
    assert hip.hipDeviceCanAccessPeer(-1, 0) == (E.hipErrorInvalidDevice, None)
    assert hip.hipDeviceEnablePeerAccess(1, 0) == (E.hipErrorInvalidDevice,)
    assert hip.hipDeviceEnablePeerAccess(0, 0) == (E.hipErrorInvalidDevice,)
    assert hip.hipDeviceEnablePeerAccess(1, 1) == (E.hipErrorInvalidValue,)   # flags first
    assert hip.hipDeviceDisablePeerAccess(1) == (E.hipErrorInvalidDevice,)
    P2P = ht.hipDeviceP2PAttr
    for attr in P2P:
        assert hip.hipDeviceGetP2PAttribute(attr, 0, 1) == (E.hipErrorInvalidDevice, None)
        assert hip.hipDeviceGetP2PAttribute(attr, 0, 0) == (E.hipErrorInvalidDevice, None)


def test_contexts():
    err, ctx = hip.hipCtxGetCurrent()
    assert err == OK and type(ctx) is ht.ihipCtx_t and int(ctx)
    assert hip.hipDevicePrimaryCtxRetain(0) == (OK, ctx)
    assert hip.hipCtxSetCurrent(ctx) == (OK,)
    assert hip.hipCtxSetCurrent(None) == (OK,)
    assert hip.hipCtxSetCurrent(ht.ihipCtx_t(0x1234)) == (E.hipErrorInvalidContext,)
    assert hip.hipCtxGetDevice() == (OK, 0)
    assert hip.hipDevicePrimaryCtxGetState(0) == (OK, 0, 1)
    assert hip.hipDevicePrimaryCtxSetFlags(0, 0) == (E.hipErrorContextAlreadyInUse,)
    assert hip.hipDevicePrimaryCtxRelease(0) == (OK,)
    # what HIP's runtime does not implement on AMD GPUs
    for call, args in (("hipCtxSynchronize", ()), ("hipCtxGetApiVersion", (ctx,)), ("hipCtxGetFlags", ()),
                       ("hipProfilerStart", ()), ("hipProfilerStop", ())):
        result = getattr(hip, call)(*args)
        assert result[0] == E.hipErrorNotSupported and all(v is None for v in result[1:]), call


def test_a_primary_context_reset_destroys_the_devices_objects():
    err, d = hip.hipMalloc(64)
    err, s = hip.hipStreamCreate()
    assert hip.hipDeviceSetLimit(L.hipLimitStackSize, 2048) == (OK,)
    assert hip.hipDevicePrimaryCtxReset(0) == (OK,)
    assert hip.hipFree(d) == (E.hipErrorInvalidValue,)
    assert hip.hipStreamSynchronize(s) == (E.hipErrorInvalidHandle,)
    assert hip.hipDeviceGetLimit(L.hipLimitStackSize) == (OK, 1024)
    assert hip.hipCtxGetCurrent()[0] == OK


def test_versions_priorities_streams_and_error_texts():
    assert hip.hipDriverGetVersion() == hip.hipRuntimeGetVersion() == (OK, device_calls.HIP_VERSION)
    assert hip.hipDeviceGetStreamPriorityRange() == (OK, 1, -1)
    err, s = hip.hipStreamCreate()
    assert hip.hipGetStreamDeviceId(s) == (OK, 0) and hip.hipGetStreamDeviceId(None) == (OK, 0)
    hip.hipStreamDestroy(s)
    assert hip.hipGetStreamDeviceId(s) == (OK, -1)
    assert hip.hipDrvGetErrorName(E.hipErrorOutOfMemory) == (OK, ht.CStr("hipErrorOutOfMemory"))
    assert hip.hipDrvGetErrorString(E.hipErrorOutOfMemory) == (OK, ht.CStr(b"out of memory"))
    assert hip.hipDrvGetErrorName(12345) == (E.hipErrorInvalidValue, None)   # unlike hipGetErrorName
    assert hip.hipChooseDevice(hip.hipDeviceProp_t()) == (OK, 0)
    assert hip.hipChooseDevice(None) == (E.hipErrorInvalidValue, None)
