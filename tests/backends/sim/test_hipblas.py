"""hipBLAS on the sim: every call against numpy (tests/blascases.py), a call's
work as an op on its handle's stream, the pointer modes, and the statuses of bad arguments."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from hrr.backends import sim
from hrr.backends.sim import hip
from blascases import Session, cases, check, ok

blas = sim.library("hipblas")
S = blas.hipblasStatus_t
MODE = blas.hipblasPointerMode_t


@pytest.fixture
def session():
    s = Session(hip, blas)
    yield s
    s.close()


@pytest.mark.parametrize("case", cases(lambda name: hasattr(blas, name)), ids=str)
def test_each_call_matches_numpy(case, session):
    check(case, session, rtol=1e-6 if case.precision in "SC" else 1e-13)


def _blocked_stream(flags: int = 0):
    """A stream whose work waits until the returned pinned flag is set to 1."""
    stream = ok(hip.hipStreamCreateWithFlags(flags))
    flag = ok(hip.hipHostMalloc(4, 0))
    ctypes.c_uint32.from_address(int(flag)).value = 0
    ok(hip.hipStreamWaitValue32(stream, flag, 1, 1, 0xFFFFFFFF))   # 1: hipStreamWaitValueEq
    return stream, flag


def test_the_work_is_an_op_on_the_handles_stream(session):
    x, y = np.arange(4, dtype=np.float32), np.ones(4, np.float32)
    dx, dy = session.upload(x), session.upload(y)
    stream, flag = _blocked_stream()
    ok(blas.hipblasSetStream(session.handle, stream))
    ok(blas.hipblasSaxpy(session.handle, 4, session.host_scalar("S", 2.0), dx, 1, dy, 1))
    assert hip.hipStreamQuery(stream)[0] == hip.hipError_t.hipErrorNotReady   # queued behind the wait
    ctypes.c_uint32.from_address(int(flag)).value = 1
    ok(hip.hipStreamSynchronize(stream))
    np.testing.assert_array_equal(session.download(dy, y), 2 * x + 1)


def test_device_pointer_mode_reads_alpha_when_the_op_runs(session):
    """In device mode alpha is device memory read when the op runs: a value written after
    the call but before its stream gets there is the one used (host mode: read at the call)."""
    x, y = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    dx, dy = session.upload(x), session.upload(y)
    dalpha = session.upload(np.array([2.0], np.float32))
    stream, flag = _blocked_stream(1)   # non-blocking: the null stream's copy below does not wait
    ok(blas.hipblasSetStream(session.handle, stream))
    ok(blas.hipblasSetPointerMode(session.handle, MODE.HIPBLAS_POINTER_MODE_DEVICE))
    ok(blas.hipblasSaxpy(session.handle, 4, dalpha, dx, 1, dy, 1))
    ok(hip.hipMemcpy(dalpha, np.array([3.0], np.float32), 4, hip.hipMemcpyKind.hipMemcpyHostToDevice))
    ctypes.c_uint32.from_address(int(flag)).value = 1
    ok(hip.hipStreamSynchronize(stream))
    np.testing.assert_array_equal(session.download(dy, y), 3 * x)


def test_the_handles_settings_read_back(session):
    stream = ok(hip.hipStreamCreate())
    ok(blas.hipblasSetStream(session.handle, stream))
    got = ctypes.c_uint64(0)
    ok(blas.hipblasGetStream(session.handle, ctypes.addressof(got)))
    assert got.value == int(stream)
    mode = ctypes.c_int32(-1)
    ok(blas.hipblasGetPointerMode(session.handle, ctypes.addressof(mode)))
    assert mode.value == MODE.HIPBLAS_POINTER_MODE_HOST
    ok(blas.hipblasSetPointerMode(session.handle, MODE.HIPBLAS_POINTER_MODE_DEVICE))
    ok(blas.hipblasGetPointerMode(session.handle, ctypes.addressof(mode)))
    assert mode.value == MODE.HIPBLAS_POINTER_MODE_DEVICE


def test_bad_arguments_return_hipblas_statuses(session):
    dx = session.upload(np.zeros(4, np.float32))
    alpha = session.host_scalar("S", 1.0)
    assert blas.hipblasSaxpy(0x1234, 4, alpha, dx, 1, dx, 1) == (S.HIPBLAS_STATUS_NOT_INITIALIZED,)
    assert blas.hipblasSaxpy(session.handle, -1, alpha, dx, 1, dx, 1) == (S.HIPBLAS_STATUS_INVALID_VALUE,)
    assert blas.hipblasSaxpy(session.handle, 4, None, dx, 1, dx, 1) == (S.HIPBLAS_STATUS_INVALID_VALUE,)
    assert blas.hipblasSetPointerMode(session.handle, 7) == (S.HIPBLAS_STATUS_INVALID_VALUE,)
    assert blas.hipblasGetStream(session.handle, None) == (S.HIPBLAS_STATUS_INVALID_VALUE,)
    err, h = blas.hipblasCreate()
    ok(blas.hipblasDestroy(h))
    assert blas.hipblasDestroy(h) == (S.HIPBLAS_STATUS_NOT_INITIALIZED,)
    assert hip.hipGetLastError()[0] == hip.hipError_t.hipSuccess   # a library keeps no HIP error


def test_a_bad_device_array_is_an_asynchronous_fault(session):
    """An array past its allocation faults when the op runs, as a kernel's access does."""
    dx = session.upload(np.zeros(4, np.float32))
    ok(blas.hipblasSaxpy(session.handle, 8, session.host_scalar("S", 1.0), dx, 1, dx, 1))
    assert hip.hipDeviceSynchronize()[0] == hip.hipError_t.hipErrorIllegalAddress


def test_a_call_on_a_capturing_stream_becomes_a_graph_node(session):
    """Stream capture takes a hipBLAS call like a kernel: nothing runs until the graph is
    launched, and each launch runs it again."""
    x, y = np.arange(4, dtype=np.float32), np.ones(4, np.float32)
    dx, dy = session.upload(x), session.upload(y)
    stream = ok(hip.hipStreamCreate())
    ok(blas.hipblasSetStream(session.handle, stream))
    ok(hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureMode.hipStreamCaptureModeGlobal))
    ok(blas.hipblasSaxpy(session.handle, 4, session.host_scalar("S", 2.0), dx, 1, dy, 1))
    graph = ok(hip.hipStreamEndCapture(stream))
    np.testing.assert_array_equal(session.download(dy, y), y)   # captured, not run
    exe = ok(hip.hipGraphInstantiate(graph, 0)[:2])
    for _ in range(2):
        ok(hip.hipGraphLaunch(exe, stream))
    ok(hip.hipStreamSynchronize(stream))
    np.testing.assert_array_equal(session.download(dy, y), 4 * x + 1)
    result = np.zeros(1, np.float32)
    ok(hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureMode.hipStreamCaptureModeGlobal))
    assert blas.hipblasSdot(session.handle, 4, dx, 1, dx, 1, result.ctypes.data) == \
        (S.HIPBLAS_STATUS_NOT_SUPPORTED,)   # a host result cannot come from a graph
    ok(hip.hipStreamEndCapture(stream))
