"""The cuda backend's one-call table entries, checked without a GPU: each hip call makes
exactly the CUDA call (name, arguments, order) the hand-written functions made."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from fakecuda import FakeCuda

from hrr import hiptypes as ht
from hrr.backends.cuda import _runtime
from hrr.backends.cuda import hip_api as cuda_api

E = ht.hipError_t
S, EV, G, X, P = ht.ihipStream_t(0x51), ht.ihipEvent_t(0x52), ht.ihipGraph(0x53), ht.hipGraphExec(0x54), 0x1000


# Making the context current (cuCtx*, cuDevice*) is not what these tests pin.
QUIET = ("cuCtx", "cuDevice")


@pytest.fixture
def cuda(monkeypatch):
    log: list = []
    results: dict = {}
    monkeypatch.setattr(_runtime.STATE, "ready", True)
    monkeypatch.setattr(_runtime.STATE, "rt", FakeCuda("rt", log, results, QUIET))
    monkeypatch.setattr(_runtime.STATE, "drv", FakeCuda("drv", log, results, QUIET))
    # This thread's context counts as current, whatever a real GPU test did before (after a
    # device reset ensure_context would otherwise look the device up through the fake).
    monkeypatch.setattr(_runtime._tls, "ctx", _runtime.STATE.generation, raising=False)
    return cuda_api.build_module(), log, results


CASES = [
    ("hipInit", (5,), ("drv", "cuInit", (5,))),
    ("hipDeviceSynchronize", (), ("rt", "cudaDeviceSynchronize", ())),
    ("hipFreeAsync", (ht.Pointer(P), S), ("rt", "cudaFreeAsync", (P, 0x51))),
    ("hipMemset", (P, 7, 64), ("rt", "cudaMemset", (P, 7, 64))),
    ("hipMemsetAsync", (P, 7, 64, None), ("rt", "cudaMemsetAsync", (P, 7, 64, 0))),
    ("hipHostUnregister", (P,), ("drv", "cuMemHostUnregister", (P,))),
    ("hipStreamDestroy", (S,), ("rt", "cudaStreamDestroy", (0x51,))),
    ("hipStreamSynchronize", (S,), ("rt", "cudaStreamSynchronize", (0x51,))),
    ("hipStreamQuery", (S,), ("rt", "cudaStreamQuery", (0x51,))),
    ("hipStreamWaitEvent", (S, EV, 0), ("rt", "cudaStreamWaitEvent", (0x51, 0x52, 0))),
    ("hipEventRecord", (EV, S), ("rt", "cudaEventRecord", (0x52, 0x51))),
    ("hipEventSynchronize", (EV,), ("rt", "cudaEventSynchronize", (0x52,))),
    ("hipEventQuery", (EV,), ("rt", "cudaEventQuery", (0x52,))),
    ("hipEventDestroy", (EV,), ("rt", "cudaEventDestroy", (0x52,))),
    ("hipGraphLaunch", (X, S), ("rt", "cudaGraphLaunch", (0x54, 0x51))),
    ("hipGraphExecDestroy", (X,), ("rt", "cudaGraphExecDestroy", (0x54,))),
    ("hipGraphDestroy", (G,), ("rt", "cudaGraphDestroy", (0x53,))),
    ("hipMemcpyHtoD", (P, P + 8, 16), ("rt", "cudaMemcpy", (P, P + 8, 16, 1))),
    ("hipMemcpyDtoH", (P, P + 8, 16), ("rt", "cudaMemcpy", (P, P + 8, 16, 2))),
    ("hipMemcpyDtoD", (P, P + 8, 16), ("rt", "cudaMemcpy", (P, P + 8, 16, 3))),
    ("hipMemcpyHtoDAsync", (P, P + 8, 16, S), ("rt", "cudaMemcpyAsync", (P, P + 8, 16, 1, 0x51))),
    ("hipMemcpyDtoHAsync", (P, P + 8, 16, S), ("rt", "cudaMemcpyAsync", (P, P + 8, 16, 2, 0x51))),
    ("hipMemcpyDtoDAsync", (P, P + 8, 16, S), ("rt", "cudaMemcpyAsync", (P, P + 8, 16, 3, 0x51))),
    ("hipMemcpy", (P, P + 8, 16, ht.hipMemcpyKind.hipMemcpyDeviceToDeviceNoCU),
     ("rt", "cudaMemcpy", (P, P + 8, 16, 3))),
    ("hipStreamBeginCapture", (S, ht.hipStreamCaptureMode.hipStreamCaptureModeRelaxed),
     ("rt", "cudaStreamBeginCapture", (0x51, 2))),
    ("hipMemcpyAsync", (P, P + 8, 16, ht.hipMemcpyKind.hipMemcpyDeviceToDeviceNoCU, S),
     ("rt", "cudaMemcpyAsync", (P, P + 8, 16, 3, 0x51))),
    ("hipMemcpyAsync", (P, P + 8, 16, ht.hipMemcpyKind.hipMemcpyHostToDevice, None),
     ("rt", "cudaMemcpyAsync", (P, P + 8, 16, 1, 0))),
    ("hipHostRegister", (P, 64, 0), ("drv", "cuMemHostRegister", (P, 64, 3))),
    ("hipHostRegister", (P, 64, 4), ("drv", "cuMemHostRegister", (P, 64, 7))),
    ("hipStreamWaitValue32", (S, P, 0x1_0000_0005, 1), ("drv", "cuStreamWaitValue32", (0x51, P, 5, 1))),
    ("hipStreamWaitValue32", (S, P, 5, 3, 0xFFFFFFFF), ("drv", "cuStreamWaitValue32", (0x51, P, 5, 3))),
    ("hipStreamWriteValue32", (S, P, -1, 0), ("drv", "cuStreamWriteValue32", (0x51, P, 0xFFFFFFFF, 0))),
    # streams, events and graphs (issue 10)
    ("hipStreamWaitValue64", (S, P, -1, 1, (1 << 64) - 1),
     ("drv", "cuStreamWaitValue64", (0x51, P, (1 << 64) - 1, 1))),
    ("hipStreamWriteValue64", (S, P, 1 << 40, 0), ("drv", "cuStreamWriteValue64", (0x51, P, 1 << 40, 0))),
    ("hipEventRecordWithFlags", (EV, S, 1), ("rt", "cudaEventRecordWithFlags", (0x52, 0x51, 1))),
    ("hipGraphDestroyNode", (ht.hipGraphNode(0x55),), ("rt", "cudaGraphDestroyNode", (0x55,))),
    ("hipGraphUpload", (X, S), ("rt", "cudaGraphUpload", (0x54, 0x51))),
]


@pytest.mark.parametrize("name,args,expected", CASES, ids=[c[0] for c in CASES])
def test_one_call_rows_make_the_same_cuda_call(cuda, name, args, expected):
    hip, log, _ = cuda
    assert getattr(hip, name)(*args) == (E.hipSuccess,)
    assert log == [expected]


@pytest.mark.parametrize("name,args,call,cls", [
    ("hipStreamCreate", (), ("rt", "cudaStreamCreate", ()), ht.ihipStream_t),
    ("hipStreamCreateWithFlags", (1,), ("rt", "cudaStreamCreateWithFlags", (1,)), ht.ihipStream_t),
    ("hipEventCreate", (), ("rt", "cudaEventCreate", ()), ht.ihipEvent_t),
    ("hipEventCreateWithFlags", (2,), ("rt", "cudaEventCreateWithFlags", (2,)), ht.ihipEvent_t),
    ("hipGraphInstantiateWithFlags", (G, 0), ("rt", "cudaGraphInstantiateWithFlags", (0x53, 0)), ht.hipGraphExec),
    ("hipStreamCreateWithPriority", (1, -1), ("rt", "cudaStreamCreateWithPriority", (1, -1)), ht.ihipStream_t),
    ("hipGraphCreate", (0,), ("rt", "cudaGraphCreate", (0,)), ht.ihipGraph),
    ("hipGraphClone", (G,), ("rt", "cudaGraphClone", (0x53,)), ht.ihipGraph),
])
def test_one_call_rows_wrap_the_handle_they_create(cuda, name, args, call, cls):
    hip, log, _ = cuda
    err, handle = getattr(hip, name)(*args)
    assert err == E.hipSuccess and type(handle) is cls and int(handle) == 0x77
    assert log == [call]


ACTIVE = ht.hipStreamCaptureStatus.hipStreamCaptureStatusActive
NONE = ht.hipStreamCaptureStatus.hipStreamCaptureStatusNone
QUERIES = [  # name, args, CUDA call, what CUDA returns, the hip result
    ("hipGetDeviceCount", (), "cudaGetDeviceCount", (0, 2), (E.hipSuccess, 2)),
    ("hipGetDeviceCount", (), "cudaGetDeviceCount", (35, None), (E.hipErrorInsufficientDriver, 0)),
    ("hipGetDevice", (), "cudaGetDevice", (0, 1), (E.hipSuccess, 1)),
    ("hipMemGetInfo", (), "cudaMemGetInfo", (0, 10, 20), (E.hipSuccess, 10, 20)),
    ("hipMemGetInfo", (), "cudaMemGetInfo", (700, None, None), (E.hipErrorIllegalAddress, 0, 0)),
    ("hipEventElapsedTime", (EV, EV), "cudaEventElapsedTime", (0, 1.5), (E.hipSuccess, 1.5)),
    ("hipEventElapsedTime", (EV, EV), "cudaEventElapsedTime", (600, None), (E.hipErrorNotReady, 0.0)),
    ("hipStreamIsCapturing", (S,), "cudaStreamIsCapturing", (0, 1), (E.hipSuccess, ACTIVE)),
    ("hipStreamIsCapturing", (S,), "cudaStreamIsCapturing", (400, 1), (E.hipErrorInvalidHandle, NONE)),
    ("hipStreamGetCaptureInfo", (S,), "cudaStreamGetCaptureInfo", (0, 1, 9, None, 0), (E.hipSuccess, ACTIVE, 9)),
    ("hipStreamGetCaptureInfo", (S,), "cudaStreamGetCaptureInfo", (400, 1, 9), (E.hipErrorInvalidHandle, NONE, 0)),
    ("hipStreamCreate", (), "cudaStreamCreate", (2, None), (E.hipErrorOutOfMemory, None)),
    ("hipHostGetDevicePointer", (P, 0), "cuMemHostGetDevicePointer", (0, 0x2000), (E.hipSuccess, ht.Pointer(0x2000))),
    ("hipHostGetDevicePointer", (P, 0), "cuMemHostGetDevicePointer", (1, None), (E.hipErrorInvalidValue, None)),
    ("hipStreamEndCapture", (S,), "cudaStreamEndCapture", (0, 0x60), (E.hipSuccess, ht.ihipGraph(0x60))),
    ("hipStreamEndCapture", (S,), "cudaStreamEndCapture", (0, 0), (E.hipSuccess, None)),
    ("hipStreamEndCapture", (S,), "cudaStreamEndCapture", (0, None), (E.hipSuccess, None)),
    ("hipStreamEndCapture", (S,), "cudaStreamEndCapture", (900, 0x60), (E.hipErrorStreamCaptureUnsupported, None)),
    ("hipPointerGetAttributes", (P,), "cudaPointerGetAttributes", (1, None), (E.hipErrorInvalidValue, None)),
    ("hipGetDeviceProperties", (0,), "cudaGetDeviceProperties", (101, None), (E.hipErrorInvalidDevice, None)),
    ("hipStreamGetPriority", (S,), "cudaStreamGetPriority", (0, -1), (E.hipSuccess, -1)),
    ("hipStreamGetFlags", (S,), "cudaStreamGetFlags", (0, 1), (E.hipSuccess, 1)),
    ("hipStreamGetDevice", (S,), "cudaStreamGetDevice", (0, 0), (E.hipSuccess, 0)),
    ("hipStreamGetId", (S,), "cudaStreamGetId", (0, 12), (E.hipSuccess, 12)),
    ("hipGraphExecGetFlags", (X,), "cudaGraphExecGetFlags", (0, 1), (E.hipSuccess, 1)),
    ("hipGraphNodeGetType", (ht.hipGraphNode(0x55),), "cudaGraphNodeGetType", (0, 5),
     (E.hipSuccess, ht.hipGraphNodeType.hipGraphNodeTypeEmpty)),
]


@pytest.mark.parametrize("name,args,fn,returned,expected", QUERIES, ids=[q[0] for q in QUERIES])
def test_one_call_rows_convert_their_outputs(cuda, name, args, fn, returned, expected):
    hip, log, results = cuda
    results[fn] = returned
    result = getattr(hip, name)(*args)
    assert result == expected and [type(v) for v in result] == [type(v) for v in expected]
    assert [entry[1] for entry in log] == [fn]


def test_the_call_and_arguments_of_queries(cuda):
    hip, log, results = cuda
    results.update(cudaGetDeviceProperties=(101, None), cudaPointerGetAttributes=(1, None))
    hip.hipHostGetDevicePointer(P, 5)
    hip.hipGetDeviceProperties(1)
    hip.hipPointerGetAttributes(ht.Pointer(P))
    assert log == [("drv", "cuMemHostGetDevicePointer", (P, 0)), ("rt", "cudaGetDeviceProperties", (1,)),
                   ("rt", "cudaPointerGetAttributes", (P,))]


def test_a_masked_wait_is_not_supported_and_makes_no_call(cuda):
    hip, log, _ = cuda
    assert hip.hipStreamWaitValue32(S, P, 5, 0, 0xFF) == (E.hipErrorNotSupported,)
    assert log == []


@pytest.mark.parametrize("returned", [(0, 0x77), (400, None)])
def test_graph_instantiate_returns_an_exec_no_error_node_and_an_empty_log(cuda, returned):
    hip, log, results = cuda
    results["cudaGraphInstantiate"] = returned
    err, exe, node, text = hip.hipGraphInstantiate(G, 64)
    assert log == [("rt", "cudaGraphInstantiate", (0x53, 0))]
    assert node is None and type(text) is ht.CStr and bytes(text) == b""
    if returned[0]:
        assert err == E.hipErrorInvalidHandle and exe is None
    else:
        assert err == E.hipSuccess and type(exe) is ht.hipGraphExec and int(exe) == 0x77


def test_device_properties_copy_cuda_fields(cuda):
    hip, _, results = cuda
    ints = {f: i + 1 for i, f in enumerate(PROP_FIELDS)}
    ints.update(major=9, minor=0, totalGlobalMem=1 << 34, warpSize=32, pciBusID=3, clockRate=1500)
    p = SimpleNamespace(**{**{f: 0 for f in PROP_FIELDS}, **ints}, name=b"H200\0junk",
                        maxThreadsDim=(1024, 1024, 64), maxGridSize=(1, 2, 3))
    results["cudaGetDeviceProperties"] = (0, p)
    err, props = hip.hipGetDeviceProperties(0)
    assert err == E.hipSuccess
    assert (props.name, props.gcnArchName, props.maxThreadsDim, props.maxGridSize) == (
        "H200", "sm_90", [1024, 1024, 64], [1, 2, 3])
    assert (props.totalGlobalMem, props.warpSize, props.pciBusID, props.clockRate) == (1 << 34, 32, 3, 1500)
    assert all(getattr(props, f) == getattr(p, f) and type(getattr(props, f)) is int for f in PROP_FIELDS)
    assert props.memoryClockRate == 0 and "memoryClockRate" not in vars(props)  # absent in CUDA 13


PROP_FIELDS = ("totalGlobalMem sharedMemPerBlock regsPerBlock warpSize maxThreadsPerBlock totalConstMem major minor "
               "multiProcessorCount l2CacheSize maxThreadsPerMultiProcessor memoryBusWidth pciBusID pciDeviceID "
               "pciDomainID integrated canMapHostMemory concurrentKernels asyncEngineCount unifiedAddressing "
               "managedMemory isMultiGpuBoard sharedMemPerMultiprocessor pageableMemoryAccess "
               "concurrentManagedAccess").split()


def test_pointer_attributes_convert_cuda_fields(cuda):
    hip, _, results = cuda
    results["cudaPointerGetAttributes"] = (0, SimpleNamespace(type=3, device=0, devicePointer=P, hostPointer=None))
    err, a = hip.hipPointerGetAttributes(P)
    assert err == E.hipSuccess and a.type == ht.hipMemoryType.hipMemoryTypeManaged and a.isManaged == 1
    assert (a.device, int(a.devicePointer), int(a.hostPointer)) == (0, P, 0)


def test_every_table_entry_is_checked_here():
    """Every one-call entry of the families' tables; the memory and module ones are checked
    by test_memory_calls_cpu's cases (the device table's own calls by test_device_calls_cpu)."""
    from test_memory_calls_cpu import CASES as MEMORY_CASES
    from test_memory_calls_cpu import QUERIES as MEMORY_QUERIES
    checked = {c[0] for c in CASES} | {q[0] for q in QUERIES} | {
        "hipStreamCreate", "hipStreamCreateWithFlags", "hipEventCreate", "hipEventCreateWithFlags",
        "hipGraphInstantiateWithFlags", "hipGraphInstantiate", "hipGetDeviceProperties", "hipPointerGetAttributes",
        "hipStreamCreateWithPriority", "hipGraphCreate", "hipGraphClone"}   # wrap_the_handle cases (issue 10)
    checked |= {c[0] for c in MEMORY_CASES + MEMORY_QUERIES}
    one_call = {name for name, fn in cuda_api.CALLS.items() if fn.__qualname__ == "one_call.<locals>.body"}
    assert one_call <= checked


def test_add_body_builds_a_fake_rows_function(cuda, monkeypatch):
    """A body for a test-only row gets its handle as the CUDA handle; a failure is the error tuple."""
    from hrr.api.catalogue import STREAM, Api, O, extended
    from hrr.backends import cuda as backend
    from hrr.backends.surface import HipError

    def body(stream):
        if stream == 0:
            raise HipError("hipErrorInvalidHandle")
        return (E.hipSuccess, stream)
    row = Api("hipHrrTestStreamId", "test", (STREAM,), (O("id"),), pure=True)
    with extended(row), monkeypatch.context() as m:
        m.setattr(backend.hip, row.name, None, raising=False)
        backend.add_body(row.name, body)
        assert backend.hip.hipHrrTestStreamId(S) == (E.hipSuccess, 0x51)
        assert backend.hip.hipHrrTestStreamId(None) == (E.hipErrorInvalidHandle, None)
        assert cuda_api._tls.last == E.hipErrorInvalidHandle
        cuda_api._tls.last = E.hipSuccess
    assert not hasattr(backend.hip, row.name)


@pytest.mark.parametrize("name,args,cu_flags", [("hipHostMalloc", (64, 0), 3), ("hipHostMalloc", (64, 4), 7),
                                                ("hipHostAlloc", (64, 5), 7), ("hipMallocHost", (64,), 3)])
def test_pinned_allocations_are_portable_and_mapped(cuda, name, args, cu_flags):
    hip, log, results = cuda
    results["cuMemFreeHost"] = (0,)
    err, ptr = getattr(hip, name)(*args)
    assert err == E.hipSuccess and int(ptr) == 0x77
    assert hip.hipHostFree(ptr) == (E.hipSuccess,)
    assert log == [("drv", "cuMemHostAlloc", (64, cu_flags)), ("drv", "cuMemFreeHost", (0x77,))]


@pytest.mark.parametrize("name,args,call", [("hipMalloc", (32,), ("rt", "cudaMalloc", (32,))),
                                            ("hipMallocAsync", (32, S), ("rt", "cudaMallocAsync", (32, 0x51))),
                                            ("hipMallocAsync", (32, None), ("rt", "cudaMallocAsync", (32, 0)))])
@pytest.mark.parametrize("returned,expected", [((0, 0x77), (E.hipSuccess, 0x77)), ((0, 0), (E.hipSuccess, None)),
                                               ((2, None), (E.hipErrorOutOfMemory, None))])
def test_device_allocations_carry_their_size(cuda, name, args, call, returned, expected):
    hip, log, results = cuda
    results[call[1]] = returned
    err, arr = getattr(hip, name)(*args)
    assert log == [call] and (err, None if arr is None else int(arr)) == expected
    assert arr is None or (type(arr) is ht.DeviceArray and arr.size == 32)


def test_hipfree_frees_pinned_memory_as_pinned_until_it_is_freed(cuda):
    """hipFree of a live hipHostMalloc allocation is cuMemFreeHost; once freed, the same
    address is no longer pinned, so a later hipFree of it goes to cudaFree."""
    hip, log, results = cuda
    results["cuMemFreeHost"] = (0,)
    results["cudaFree"] = (0,)
    _, ptr = hip.hipHostMalloc(64, 0)
    assert hip.hipFree(int(ptr)) == (E.hipSuccess,)
    assert hip.hipFree(int(ptr)) == (E.hipSuccess,)
    assert log == [("drv", "cuMemHostAlloc", (64, 3)), ("drv", "cuMemFreeHost", (0x77,)),
                   ("rt", "cudaFree", (0x77,))]


def test_a_device_reset_forgets_the_pinned_allocations(cuda):
    """cudaDeviceReset freed them: a later hipFree of such an address is cudaFree."""
    hip, log, results = cuda
    results["cudaDeviceReset"] = (0,)
    results["cudaFree"] = (0,)
    _, ptr = hip.hipHostMalloc(64, 0)
    assert hip.hipDeviceReset() == (E.hipSuccess,)
    assert hip.hipFree(int(ptr)) == (E.hipSuccess,)
    assert log[1:] == [("rt", "cudaDeviceReset", ()), ("rt", "cudaFree", (0x77,))]
