"""The hip-python surface that hrr.backends.surface builds from the catalogue: every row
on every backend, hip-python's signatures, the error tuple's shape, enum checking."""
from __future__ import annotations

import inspect

import pytest

from hrr.api.catalogue import CATALOGUE, rows
from hrr.backends import sim, surface
from hrr.backends.cuda import _runtime
from hrr.backends.cuda import hip_api as cuda_api
from hrr.hiptypes import ENUM_TYPES, hipError_t
from hrr.backends.sim import api as sim_api

E = hipError_t
ROWS = [row for row in rows() if row.module == "hip"]   # hiprtc's rows: test_hiprtc_rows.py
HIP = {row.name for row in ROWS}


@pytest.fixture(autouse=True)
def fresh_sim():
    sim.reset_device()
    yield
    sim.reset_device()


@pytest.fixture(scope="module")
def cuda_hip():
    return cuda_api.build_module()  # no driver is loaded to build it


def _surfaces(cuda_hip):
    return {"sim": sim.hip, "cuda": cuda_hip}


@pytest.mark.parametrize("backend", ["sim", "cuda"])
def test_every_row_is_on_the_surface(backend, cuda_hip):
    hip = _surfaces(cuda_hip)[backend]
    assert sorted(n for n in HIP if not callable(getattr(hip, n, None))) == []
    assert HIP <= set(hip.SUPPORTED_APIS)


@pytest.mark.parametrize("backend", ["sim", "cuda"])
def test_signatures_are_the_rows(backend, cuda_hip):
    hip = _surfaces(cuda_hip)[backend]
    for row in ROWS:
        params = list(inspect.signature(getattr(hip, row.name)).parameters.values())
        assert [p.name for p in params] == [p.name for p in row.params], row.name
        for ours, theirs in zip(params, row.params, strict=True):
            want = theirs.default if theirs.optional else inspect.Parameter.empty
            assert ours.default == want, (row.name, ours.name)
            assert ours.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD


def _failing(code: str):
    def body(*args, **kwargs):
        raise surface.HipError(code, "refused by the test")
    return body


@pytest.mark.parametrize("frame", ["sim", "cuda"])
def test_a_failing_call_returns_one_none_per_output(frame, monkeypatch):
    """Every row, through each backend's frame: a body that fails gives the error and
    exactly len(row.outs) Nones, and becomes the thread's last error."""
    if frame == "cuda":
        monkeypatch.setattr(_runtime.STATE, "ready", True)  # the frame's driver check passes
        monkeypatch.setattr(cuda_api._tls, "last", E.hipSuccess, raising=False)
    frm = {"sim": sim_api.FRAME, "cuda": cuda_api.FRAME}[frame]
    # Handles pass as they are (the real lookups are the backend tests' business).
    mod = surface.build("t", "t", {row.name: _failing("hipErrorNotReady") for row in ROWS}, frm,
                        lambda kind: (lambda obj: obj))
    for row in ROWS:
        # 0, or an enum's first member (hipMemPoolAttr has no 0)
        args = [next(iter(ENUM_TYPES[p.kind])) if p.role == "enum" else 0 for p in row.params]
        result = getattr(mod, row.name)(*args)
        assert result == (E.hipErrorNotReady,) + (None,) * len(row.outs), row.name
    if frame == "sim":
        assert sim.hip.hipGetLastError() == (E.hipErrorNotReady,)
        assert sim.last_error_detail() == "refused by the test"
    else:
        assert cuda_api._tls.last == E.hipErrorNotReady


def test_sim_failures_keep_the_result_shape():
    hip = sim.hip
    assert hip.hipMalloc(1 << 60) == (E.hipErrorOutOfMemory, None)
    assert hip.hipStreamEndCapture(None) == (E.hipErrorIllegalState, None)
    assert hip.hipGraphInstantiate(0xBAD, 0) == (E.hipErrorInvalidHandle, None, None, None)
    assert hip.hipStreamGetCaptureInfo(0xBAD) == (E.hipErrorInvalidHandle, None, None)
    assert hip.hipEventElapsedTime(0xBAD, 0xBAD) == (E.hipErrorInvalidHandle, None)
    assert hip.hipGetLastError() == (E.hipErrorInvalidHandle,)
    assert hip.hipGetLastError() == (E.hipSuccess,)


def test_sim_bad_enum_is_invalid_value():
    hip = sim.hip
    err, stream = hip.hipStreamCreate()
    assert hip.hipStreamBeginCapture(stream, 77) == (E.hipErrorInvalidValue,)
    assert hip.hipThreadExchangeStreamCaptureMode(77) == (E.hipErrorInvalidValue, None)
    assert hip.hipPeekAtLastError() == (E.hipErrorInvalidValue,)
    assert hip.hipStreamIsCapturing(stream) == (E.hipSuccess, hip.hipStreamCaptureStatus(0))
    # the sim's hipMemcpy names the direction, as HIP does
    assert hip.hipMemcpy(0, 0, 0, 77) == (E.hipErrorInvalidMemcpyDirection,)
    # an optional enum left out is not converted
    assert hip.hipThreadExchangeStreamCaptureMode()[0] == E.hipSuccess
    # hipGetErrorName takes any int: an unknown one is a name, not a failure
    assert str(hip.hipGetErrorName(123456)[1]) == "hipErrorUnknown"


def test_cuda_bad_enum_is_invalid_value_before_any_driver_call(monkeypatch):
    monkeypatch.setattr(_runtime.STATE, "ready", True)
    monkeypatch.setattr(_runtime.STATE, "rt", None)  # a driver call would raise
    monkeypatch.setattr(_runtime.STATE, "drv", None)
    hip = cuda_api.build_module()
    assert hip.hipMemcpy(0, 0, 0, 77) == (E.hipErrorInvalidValue,)
    assert hip.hipMemcpyAsync(0, 0, 0, 1 << 20, None) == (E.hipErrorInvalidValue,)
    assert hip.hipStreamBeginCapture(None, 77) == (E.hipErrorInvalidValue,)
    assert hip.hipThreadExchangeStreamCaptureMode(77) == (E.hipErrorInvalidValue, None)
    assert cuda_api._tls.last == E.hipErrorInvalidValue
    cuda_api._tls.last = E.hipSuccess


@pytest.mark.skipif(_runtime.gpu_unavailable_reason() is None, reason="a GPU is present here")
def test_cuda_without_a_driver_every_row_returns_its_shape(cuda_hip):
    if _runtime.driver_present():
        pytest.skip("libcuda.so.1 is present (GPU-less driver install)")
    bare = {"hipGetErrorName", "hipGetErrorString", "hipGetLastError", "hipPeekAtLastError"}
    for row in ROWS:
        if row.name in bare:
            continue
        result = getattr(cuda_hip, row.name)(*[0] * len(row.params))
        assert result[0] in (E.hipErrorNoDevice, E.hipErrorInsufficientDriver), row.name
        assert result[1:] == (None,) * len(row.outs), row.name


def test_keyword_calls_and_the_null_stream():
    hip = sim.hip
    err, d = hip.hipMalloc(16)
    assert hip.hipMemsetAsync(dst=d, value=7, sizeBytes=16, stream=None) == (E.hipSuccess,)
    out = bytearray(16)
    assert hip.hipMemcpyDtoH(out, d, sizeBytes=16) == (E.hipSuccess,)
    assert out == bytes([7]) * 16
    with pytest.raises(TypeError):
        hip.hipMemsetAsync(d, 7, 16)  # hip-python's stream has no default


def test_uncatalogued_calls_are_framed_but_not_supported_apis():
    def hipFutureCall(a, b=2):
        if a < 0:
            raise surface.HipError("hipErrorInvalidValue", "negative")
        return (E.hipSuccess, a + b, a * b)

    mod = surface.build("t", "t", {}, sim_api.FRAME, sim_api.handle_lookup,
                        uncatalogued={"hipFutureCall": (hipFutureCall, 2)})
    assert mod.hipFutureCall(3) == (E.hipSuccess, 5, 6)
    assert mod.hipFutureCall(-1, b=1) == (E.hipErrorInvalidValue, None, None)
    assert sim.hip.hipGetLastError() == (E.hipErrorInvalidValue,)
    assert set(sim.UNCATALOGUED_APIS).isdisjoint(sim.SUPPORTED_APIS)
    assert set(sim.SUPPORTED_APIS) == HIP


def test_tables_name_catalogue_rows():
    assert set(cuda_api.CALLS) <= set(CATALOGUE)
    assert set(sim_api.TABLE) <= set(CATALOGUE)


def test_both_backends_take_hips_error_messages_from_one_table(cuda_hip):
    """hipGetErrorString: the sim answers every code of error_strings from it; the cuda
    backend (no driver needed) answers the codes whose CUDA text differs from the same table."""
    from hrr.backends.error_strings import ERROR_STRINGS
    for name, text in ERROR_STRINGS.items():
        assert bytes(sim.hip.hipGetErrorString(E[name])[1]) == text.encode(), name
    for name in ("hipSuccess", "hipErrorInvalidValue", "hipErrorOutOfMemory",
                 "hipErrorStreamCaptureUnsupported", "hipErrorStreamCaptureInvalidated"):
        assert bytes(cuda_hip.hipGetErrorString(E[name])[1]) == ERROR_STRINGS[name].encode(), name
