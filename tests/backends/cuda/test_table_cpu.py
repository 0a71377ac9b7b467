"""The cuda backend's one-call table entries, checked without a GPU: each hip call makes
exactly the CUDA call (name, arguments, order) the hand-written functions made."""
from __future__ import annotations

import pytest

from hrr.backends import hiptypes as ht
from hrr.backends.cuda import _runtime
from hrr.backends.cuda import hip_api as cuda_api

E = ht.hipError_t
S, EV, G, X, P = ht.ihipStream_t(0x51), ht.ihipEvent_t(0x52), ht.ihipGraph(0x53), ht.hipGraphExec(0x54), 0x1000


class FakeCuda:
    """Stands in for cuda.bindings' runtime or driver: records every call."""

    def __init__(self, name: str, log: list, results: dict) -> None:
        self._name, self._log, self._results = name, log, results

    def __getattr__(self, fn: str):
        def call(*args):
            if not fn.startswith(("cuCtx", "cuDevice")):  # making the context current
                self._log.append((self._name, fn, args))
            return self._results.get(fn, (0, 0x77))
        return call


@pytest.fixture
def cuda(monkeypatch):
    log: list = []
    results: dict = {}
    monkeypatch.setattr(_runtime.STATE, "ready", True)
    monkeypatch.setattr(_runtime.STATE, "rt", FakeCuda("rt", log, results))
    monkeypatch.setattr(_runtime.STATE, "drv", FakeCuda("drv", log, results))
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
]


@pytest.mark.parametrize("name,args,fn,returned,expected", QUERIES, ids=[q[0] for q in QUERIES])
def test_one_call_rows_convert_their_outputs(cuda, name, args, fn, returned, expected):
    hip, log, results = cuda
    results[fn] = returned
    result = getattr(hip, name)(*args)
    assert result == expected and [type(v) for v in result] == [type(v) for v in expected]
    assert [entry[1] for entry in log] == [fn]


def test_every_table_entry_is_checked_here():
    checked = {c[0] for c in CASES} | {q[0] for q in QUERIES} | {
        "hipStreamCreate", "hipStreamCreateWithFlags", "hipEventCreate", "hipEventCreateWithFlags",
        "hipGraphInstantiateWithFlags"}
    assert set(cuda_api.CALLS) <= checked
