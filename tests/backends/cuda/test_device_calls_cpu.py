"""The cuda backend's device section (issue 10) without a GPU: a fake runtime and driver
record the CUDA call each hip call makes (name, arguments, order) and feed its results."""
from __future__ import annotations

import sys

import pytest
from fakecuda import FakeCuda

from hrr import hiptypes as ht
from hrr.backends.cuda import _runtime, device_calls
from hrr.backends.cuda import hip_api as cuda_api

E = ht.hipError_t
A = ht.hipDeviceAttribute_t
OK = E.hipSuccess
CTX = 0x5150


@pytest.fixture
def cuda(monkeypatch):
    log: list = []
    results: dict = {"cuDeviceGet": (0, 0)}
    monkeypatch.setattr(_runtime.STATE, "ready", True)
    monkeypatch.setattr(_runtime.STATE, "rt", FakeCuda("rt", log, results))
    monkeypatch.setattr(_runtime.STATE, "drv", FakeCuda("drv", log, results))
    monkeypatch.setattr(_runtime._tls, "ctx", _runtime.STATE.generation, raising=False)
    return cuda_api.build_module(), log, results


# The members with no CUDA meaning: HIP's own NVIDIA path answers hipErrorInvalidValue too.
NO_CUDA_EQUIVALENT = {
    "Luid", "LuidDeviceNodeMask", "MaxSurface1DLayered", "MaxSurface2D", "MaxSurface2DLayered", "MaxSurface3D",
    "MaxSurfaceCubemapLayered", "MaxTexture1DLayered", "MaxTexture2DGather", "MaxTexture2DLayered",
    "MaxTexture2DLinear", "MaxTexture2DMipmap", "MaxTexture3DAlt", "MaxTextureCubemapLayered", "MaxThreadsDim",
    "Unused1", "Unused2", "DmaBufSupported", "HandleTypeFabricSupported", "CudaCompatibleEnd", "AmdSpecificBegin",
    "Unused3", "Unused4", "Unused5", "HdpMemFlushCntl", "HdpRegFlushCntl", "IsLargeBar", "AsicRevision",
    "ImageSupport", "FineGrainSupport", "WallClockRate", "NumberOfXccs", "MaxAvailableVgprsPerThread",
    "ExpertSchedMode", "MaxDynDataPrefetchRegions", "AmdSpecificEnd", "VendorSpecificBegin"}


def test_every_attribute_is_a_cuda_attribute_or_invalid_value(cuda):
    hip, log, _ = cuda
    for member in A:
        log.clear()
        short = member.name[len("hipDeviceAttribute"):]
        err, value = hip.hipDeviceGetAttribute(member, 0)
        if short in NO_CUDA_EQUIVALENT:
            assert (err, value, log) == (E.hipErrorInvalidValue, None, []), short
        else:
            assert err == OK and type(value) is int and log, short


def test_attribute_numbers_are_cudas():
    """Each is a CUdevice_attribute, and a cudaDeviceAttr where the runtime is asked."""
    from cuda.bindings import driver, runtime
    for number in device_calls.ATTRIBUTES.values():
        driver.CUdevice_attribute(number)
        if number != device_calls.VMM_SUPPORTED:
            runtime.cudaDeviceAttr(number)
    names = {"WarpSize": "cudaDevAttrWarpSize", "PciDomainId": "cudaDevAttrPciDomainId",
             "SharedMemPerBlockOptin": "cudaDevAttrMaxSharedMemoryPerBlockOptin",
             "DeviceOverlap": "cudaDevAttrGpuOverlap", "PciChipId": "cudaDevAttrGpuPciDeviceId",
             "HostNumaId": "cudaDevAttrHostNumaId",
             "MaxBlocksPerMultiProcessor": "cudaDevAttrMaxBlocksPerMultiprocessor"}
    for short, cuda_name in names.items():
        assert runtime.cudaDeviceAttr(device_calls.ATTRIBUTES[short]).name == cuda_name


@pytest.mark.parametrize("member,call,value", [
    (A.hipDeviceAttributeWarpSize, ("rt", "cudaDeviceGetAttribute", (10, 0)), 0x77),
    (A.hipDeviceAttributeMaxSharedMemoryPerMultiprocessor, ("rt", "cudaDeviceGetAttribute", (81, 0)), 0x77),
    (A.hipDeviceAttributeClockRate, ("rt", "cudaDeviceGetAttribute", (13, 0)), 0x77),
    (A.hipDeviceAttributeCanUseStreamWaitValue, ("rt", "cudaDeviceGetAttribute", (16, 0)), 1),
    (A.hipDeviceAttributeCooperativeMultiDeviceLaunch, ("rt", "cudaDeviceGetAttribute", (16, 0)), 0),
])
def test_attributes_make_the_cuda_query(cuda, member, call, value):
    hip, log, _ = cuda
    assert hip.hipDeviceGetAttribute(member, 0) == (OK, value)
    assert log == [call]


def test_total_memory_and_virtual_memory_are_driver_queries(cuda):
    hip, log, results = cuda
    results["cuDeviceTotalMem"] = (0, 141 << 30)
    assert hip.hipDeviceGetAttribute(A.hipDeviceAttributeTotalGlobalMem, 0) == (OK, 2**31 - 1)  # HIP's clamp
    assert hip.hipDeviceTotalMem(0) == (OK, 141 << 30)
    assert hip.hipDeviceGetAttribute(A.hipDeviceAttributeVirtualMemoryManagementSupported, 0) == (OK, 0x77)
    assert [entry[1] for entry in log] == ["cuDeviceGet", "cuDeviceTotalMem", "cuDeviceGet", "cuDeviceTotalMem",
                                           "CUdevice_attribute", "cuDeviceGet", "cuDeviceGetAttribute"]


def test_a_device_that_does_not_exist(cuda):
    hip, log, results = cuda
    results.update(cuDeviceGet=(101, None), cudaDeviceGetAttribute=(101, None))
    assert hip.hipDeviceGetAttribute(A.hipDeviceAttributeWarpSize, 3) == (E.hipErrorInvalidDevice, None)
    assert hip.hipDeviceGetName(64, 3) == (E.hipErrorInvalidDevice, None)
    assert hip.hipDeviceGetUuid(3) == (E.hipErrorInvalidDevice, None)
    assert hip.hipDevicePrimaryCtxRetain(3) == (E.hipErrorInvalidDevice, None)
    assert hip.hipDeviceComputeCapability(3) == (E.hipErrorInvalidDevice, None, None)


def test_names_ids_and_versions(cuda):
    hip, log, results = cuda
    results.update(cuDeviceGetName=(0, b"NVIDIA H200\0\0"), cudaDeviceGetPCIBusId=(0, b"0000:1B:00.0\0"),
                   cudaDeviceGetByPCIBusId=(0, 0), cudaDriverGetVersion=(0, 13000), cudaRuntimeGetVersion=(0, 13050))
    assert hip.hipDeviceGetName(64, 0) == (OK, ht.CStr(b"NVIDIA H200"))
    assert hip.hipDeviceGetPCIBusId(64, 0) == (OK, ht.CStr(b"0000:1B:00.0"))
    assert hip.hipDeviceGetByPCIBusId("0000:1B:00.0") == (OK, 0)
    assert hip.hipDriverGetVersion() == (OK, 13000) and hip.hipRuntimeGetVersion() == (OK, 13050)
    assert [e for e in log if e[1] != "cuDeviceGet"] == [
        ("drv", "cuDeviceGetName", (64, 0)), ("rt", "cudaDeviceGetPCIBusId", (64, 0)),
        ("rt", "cudaDeviceGetByPCIBusId", (b"0000:1B:00.0",)), ("rt", "cudaDriverGetVersion", ()),
        ("rt", "cudaRuntimeGetVersion", ())]


def test_uuid_is_hip_pythons_struct(cuda):
    hip, _, results = cuda

    class UUID:
        bytes = bytes(range(16))
    results["cuDeviceGetUuid"] = (0, UUID())
    err, uuid = hip.hipDeviceGetUuid(0)
    assert err == OK and uuid.bytes == bytes(range(16))


@pytest.mark.parametrize("limit,cuda_limit", [("hipLimitStackSize", 0), ("hipLimitPrintfFifoSize", 1),
                                              ("hipLimitMallocHeapSize", 2)])
def test_limits(cuda, limit, cuda_limit):
    hip, log, _ = cuda
    assert hip.hipDeviceGetLimit(getattr(ht.hipLimit_t, limit)) == (OK, 0x77)
    assert hip.hipDeviceSetLimit(getattr(ht.hipLimit_t, limit), 4096) == (OK,)
    assert log == [("rt", "cudaDeviceGetLimit", (cuda_limit,)), ("rt", "cudaDeviceSetLimit", (cuda_limit, 4096))]


def test_hip_only_limits_make_no_call(cuda):
    hip, log, _ = cuda
    assert hip.hipDeviceGetLimit(ht.hipLimit_t.hipExtLimitScratchMax) == (E.hipErrorUnsupportedLimit, None)
    assert hip.hipDeviceSetLimit(ht.hipLimit_t.hipExtLimitScratchCurrent, 1) == (E.hipErrorUnsupportedLimit,)
    assert hip.hipDeviceGetLimit(ht.hipLimit_t.hipLimitRange) == (E.hipErrorInvalidValue, None)
    assert log == []


CALLS = [  # hip call, args, CUDA call, its arguments, what CUDA returns, the hip result
    ("hipDeviceGetCacheConfig", (), "cudaDeviceGetCacheConfig", (), (0, 2), (OK, ht.hipFuncCache_t(2))),
    ("hipDeviceSetCacheConfig", (ht.hipFuncCache_t.hipFuncCachePreferL1,), "cudaDeviceSetCacheConfig", (2,), (0,),
     (OK,)),
    ("hipDeviceGetSharedMemConfig", (), "cudaDeviceGetSharedMemConfig", (), (0, 1), (OK, ht.hipSharedMemConfig(1))),
    ("hipDeviceSetSharedMemConfig", (2,), "cudaDeviceSetSharedMemConfig", (2,), (0,), (OK,)),
    ("hipGetDeviceFlags", (), "cudaGetDeviceFlags", (), (0, 9), (OK, 9)),
    ("hipSetDeviceFlags", (4,), "cudaSetDeviceFlags", (4,), (0,), (OK,)),
    ("hipDeviceGetStreamPriorityRange", (), "cudaDeviceGetStreamPriorityRange", (), (0, 0, -5), (OK, 0, -5)),
    ("hipDeviceCanAccessPeer", (0, 1), "cudaDeviceCanAccessPeer", (0, 1), (101, None), (E.hipErrorInvalidDevice, None)),
    ("hipDeviceEnablePeerAccess", (1, 0), "cudaDeviceEnablePeerAccess", (1, 0), (101,), (E.hipErrorInvalidDevice,)),
    ("hipDeviceDisablePeerAccess", (1,), "cudaDeviceDisablePeerAccess", (1,), (705,),
     (E.hipErrorPeerAccessNotEnabled,)),
    ("hipDeviceGetP2PAttribute", (ht.hipDeviceP2PAttr.hipDevP2PAttrPerformanceRank, 0, 1),
     "cudaDeviceGetP2PAttribute", (1, 0, 1), (101, None), (E.hipErrorInvalidDevice, None)),
    ("hipDeviceGetP2PAttribute", (ht.hipDeviceP2PAttr.hipDevP2PAttrHipArrayAccessSupported, 0, 1),
     "cudaDeviceGetP2PAttribute", (4, 0, 1), (0, 1), (OK, 1)),
    ("hipProfilerStart", (), "cudaProfilerStart", (), (0,), (OK,)),
    ("hipProfilerStop", (), "cudaProfilerStop", (), (0,), (OK,)),
    ("hipGetStreamDeviceId", (ht.ihipStream_t(0x51),), "cudaStreamGetDevice", (0x51,), (0, 0), (OK, 0)),
    ("hipGetStreamDeviceId", (ht.ihipStream_t(0x51),), "cudaStreamGetDevice", (0x51,), (400, None), (OK, -1)),
    ("hipCtxGetCurrent", (), "cuCtxGetCurrent", (), (0, CTX), (OK, ht.ihipCtx_t(CTX))),
    ("hipCtxGetCurrent", (), "cuCtxGetCurrent", (0, 0), (0, 0), (OK, None)),
    ("hipCtxSetCurrent", (ht.ihipCtx_t(CTX),), "cuCtxSetCurrent", (CTX,), (201,), (E.hipErrorInvalidContext,)),
    ("hipCtxGetDevice", (), "cuCtxGetDevice", (), (0, 0), (OK, 0)),
    ("hipCtxSynchronize", (), "cuCtxSynchronize", (), (0,), (OK,)),
    ("hipCtxGetApiVersion", (ht.ihipCtx_t(CTX),), "cuCtxGetApiVersion", (CTX,), (0, 3020), (OK, 3020)),
    ("hipCtxGetFlags", (), "cuCtxGetFlags", (), (0, 8), (OK, 8)),
    ("hipDevicePrimaryCtxRetain", (0,), "cuDevicePrimaryCtxRetain", (0,), (0, CTX), (OK, ht.ihipCtx_t(CTX))),
    ("hipDevicePrimaryCtxRelease", (0,), "cuDevicePrimaryCtxRelease", (0,), (0,), (OK,)),
    ("hipDevicePrimaryCtxGetState", (0,), "cuDevicePrimaryCtxGetState", (0,), (0, 0, 1), (OK, 0, 1)),
    ("hipDevicePrimaryCtxSetFlags", (0, 4), "cuDevicePrimaryCtxSetFlags", (0, 4), (0,), (OK,)),
]


@pytest.mark.parametrize("name,args,fn,fn_args,returned,expected", CALLS, ids=[c[0] for c in CALLS])
def test_calls_convert_arguments_and_results(cuda, name, args, fn, fn_args, returned, expected):
    hip, log, results = cuda
    if fn == "cuCtxGetCurrent" and fn_args:   # a NULL context: no context is current
        fn_args = ()
    results[fn] = returned
    result = getattr(hip, name)(*args)
    assert result == expected and [type(v) for v in result] == [type(v) for v in expected]
    assert [e for e in log if e[1] not in ("cuDeviceGet", "cuCtxGetCurrent") or e[1] == fn][-1] == \
        ("rt" if fn.startswith("cuda") else "drv", fn, fn_args)


def test_choose_device_fills_a_cuda_device_prop(cuda):
    hip, log, results = cuda
    from cuda.bindings import runtime
    results.update(cudaChooseDevice=(0, 0), cudaDeviceProp=runtime.cudaDeviceProp())
    want = ht.hipDeviceProp_t(major=9, warpSize=32)
    assert hip.hipChooseDevice(want) == (OK, 0)
    (side, fn, (prop,)), = log[1:]
    assert (fn, prop.major, prop.warpSize, prop.minor) == ("cudaChooseDevice", 9, 32, 0)


def test_a_primary_context_reset_forgets_what_it_destroyed(cuda, monkeypatch):
    hip, log, _ = cuda
    forgot = []
    monkeypatch.setattr(device_calls.memory, "forget_all", lambda: forgot.append("memory"))
    monkeypatch.setattr(device_calls.modules, "forget_all", lambda: forgot.append("modules"))
    generation = _runtime.STATE.generation
    monkeypatch.setattr(_runtime.STATE, "generation", generation)
    assert hip.hipDevicePrimaryCtxReset(0) == (OK,)
    assert log[-1] == ("drv", "cuDevicePrimaryCtxReset", (0,)) and forgot == ["memory", "modules"]
    assert _runtime.STATE.generation == generation + 1


def test_driver_error_texts(cuda):
    hip, log, _ = cuda
    assert hip.hipDrvGetErrorName(E.hipErrorInvalidDevice) == (OK, ht.CStr("hipErrorInvalidDevice"))
    assert hip.hipDrvGetErrorString(E.hipErrorOutOfMemory) == (OK, ht.CStr("out of memory"))
    assert hip.hipDrvGetErrorName(4242) == (E.hipErrorInvalidValue, None)
    assert log == []


def test_the_luid_cuda_leaves_undefined_off_windows_is_zero():
    """CUDA's LUID is undefined off Windows: garbage there ran hip-python 7.x's C-string
    ``uuid.bytes`` past the UUID's 16 bytes (kernel_tuner's uuid.UUID(bytes=...) failed)."""
    from cuda.bindings import runtime
    p = runtime.cudaDeviceProp()
    p.major, p.minor, p.luid = 9, 0, b"\x01" * 8
    props = device_calls._props(p)
    if sys.platform != "win32":
        assert bytes(props.luid)[:8] == bytes(8)


def test_properties_from_a_real_cuda_device_prop():
    """Every hipDeviceProp_t field CUDA has is copied (ints, lists, the UUID); those with no
    CUDA meaning keep hip-python's default."""
    from cuda.bindings import runtime
    p = runtime.cudaDeviceProp()
    p.major, p.minor, p.asyncEngineCount, p.sharedMemPerMultiprocessor = 9, 0, 3, 233472
    props = device_calls._props(p)
    assert props.gcnArchName == ht.as_text(b"sm_90") and props.deviceOverlap == 1
    assert props.maxSharedMemoryPerMultiProcessor == 233472 and props.arch.hasDoubles == 1
    assert type(props.uuid) is type(ht.hipDeviceProp_t().uuid) and type(props.maxTexture2D) is list
    unset = {f for f in ht.hipDeviceProp_t.PROPERTIES() if f not in vars(props)}
    assert unset == {"clockRate", "memoryClockRate", "computeMode", "kernelExecTimeoutEnabled", "maxTexture1DLinear",
                     "singleToDoublePrecisionPerfRatio", "cooperativeMultiDeviceLaunch", "sparseHipArraySupported",
                     "deferredMappingHipArraySupported", "reserved", "hipReserved", "clockInstructionRate",
                     "hdpMemFlushCntl", "hdpRegFlushCntl", "cooperativeMultiDeviceUnmatchedFunc",
                     "cooperativeMultiDeviceUnmatchedGridDim", "cooperativeMultiDeviceUnmatchedBlockDim",
                     "cooperativeMultiDeviceUnmatchedSharedMem", "isLargeBar", "asicRevision"}, unset
