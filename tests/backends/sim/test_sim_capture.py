"""Stream capture (three modes, 900/901 invalidation) and graphs."""
from __future__ import annotations

import ctypes
import threading

import numpy as np

from hrr.backends.sim import hip

E = hip.hipError_t
OK = E.hipSuccess
MODE = hip.hipStreamCaptureMode
STATUS = hip.hipStreamCaptureStatus


def _in_thread(fn):
    out = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


def test_capture_status_and_id():
    _, s = hip.hipStreamCreate()
    assert hip.hipStreamIsCapturing(s) == (OK, STATUS.hipStreamCaptureStatusNone)
    assert hip.hipStreamGetCaptureInfo(s) == (OK, STATUS.hipStreamCaptureStatusNone, 0)
    assert hip.hipStreamBeginCapture(s, MODE.hipStreamCaptureModeGlobal) == (OK,)
    err, status, cid = hip.hipStreamGetCaptureInfo(s)
    assert (err, status) == (OK, STATUS.hipStreamCaptureStatusActive) and cid > 0
    assert hip.hipStreamIsCapturing(s) == (OK, STATUS.hipStreamCaptureStatusActive)
    err, graph = hip.hipStreamEndCapture(s)
    assert err == OK and graph is not None
    assert hip.hipStreamEndCapture(s) == (E.hipErrorIllegalState, None)


def test_captured_work_does_not_run(kernels, helpers):
    ptr, host = helpers.pinned_u32(2)
    _, s = hip.hipStreamCreate()
    hip.hipStreamBeginCapture(s, MODE.hipStreamCaptureModeGlobal)
    kernels.launch("fill_u32", int(ptr), ctypes.c_uint32(3), ctypes.c_uint32(2), stream=s)
    _, graph = hip.hipStreamEndCapture(s)
    assert hip.hipDeviceSynchronize() == (OK,)
    assert list(host) == [0, 0]
    err, exe, err_node, log = hip.hipGraphInstantiate(graph, 0)
    assert err == OK and err_node is None and str(log) == ""
    assert hip.hipGraphLaunch(exe, s) == (OK,)
    assert list(host) == [0, 0]
    assert hip.hipStreamSynchronize(s) == (OK,)
    assert list(host) == [3, 3]


def test_global_mode_unsafe_call_from_other_thread_invalidates(helpers):
    _, s = hip.hipStreamCreate()
    assert hip.hipStreamBeginCapture(s, MODE.hipStreamCaptureModeGlobal) == (OK,)
    assert _in_thread(lambda: hip.hipMalloc(64)) == (E.hipErrorStreamCaptureUnsupported, None)
    assert hip.hipStreamIsCapturing(s) == (OK, STATUS.hipStreamCaptureStatusInvalidated)
    assert hip.hipStreamEndCapture(s) == (E.hipErrorStreamCaptureInvalidated, None)
    assert hip.hipGetLastError() == (E.hipErrorStreamCaptureInvalidated,)
    assert hip.hipStreamIsCapturing(s) == (OK, STATUS.hipStreamCaptureStatusNone)
    assert hip.hipMalloc(64)[0] == OK  # allowed again once the capture has ended


def test_global_mode_each_unsafe_call_is_refused(helpers):
    _, other = hip.hipStreamCreate()
    _, ev = hip.hipEventCreate()
    buf = np.zeros(4, np.uint8)
    err, d = hip.hipMalloc(4)
    calls = {
        "hipMalloc": lambda: hip.hipMalloc(4),
        "hipDeviceSynchronize": hip.hipDeviceSynchronize,
        "hipStreamSynchronize": lambda: hip.hipStreamSynchronize(other),
        "hipEventSynchronize": lambda: hip.hipEventSynchronize(ev),
        "hipMemcpy": lambda: hip.hipMemcpy(d, buf, 4, hip.hipMemcpyKind.hipMemcpyHostToDevice),
        "hipMemset": lambda: hip.hipMemset(d, 0, 4),
        "hipHostMalloc": lambda: hip.hipHostMalloc(4, 0),
    }
    for name, call in calls.items():
        _, s = hip.hipStreamCreate()
        hip.hipStreamBeginCapture(s, MODE.hipStreamCaptureModeGlobal)
        assert call()[0] == E.hipErrorStreamCaptureUnsupported, name
        assert hip.hipStreamEndCapture(s) == (E.hipErrorStreamCaptureInvalidated, None), name


def test_thread_local_mode_only_the_capturing_thread_is_refused():
    _, s = hip.hipStreamCreate()
    hip.hipStreamBeginCapture(s, MODE.hipStreamCaptureModeThreadLocal)
    err, p = _in_thread(lambda: hip.hipMalloc(64))
    assert err == OK and p is not None
    assert hip.hipStreamIsCapturing(s) == (OK, STATUS.hipStreamCaptureStatusActive)
    assert hip.hipMalloc(64) == (E.hipErrorStreamCaptureUnsupported, None)
    assert hip.hipStreamEndCapture(s) == (E.hipErrorStreamCaptureInvalidated, None)


def test_relaxed_mode_allows_malloc():
    _, s = hip.hipStreamCreate()
    hip.hipStreamBeginCapture(s, MODE.hipStreamCaptureModeRelaxed)
    err, p = hip.hipMalloc(64)
    assert err == OK and p is not None
    assert hip.hipDeviceSynchronize() == (OK,)
    err, graph = hip.hipStreamEndCapture(s)
    assert err == OK and graph is not None


def test_thread_exchange_capture_mode_relaxes_this_thread():
    assert hip.hipThreadExchangeStreamCaptureMode() == (OK, MODE.hipStreamCaptureModeGlobal)
    _, s = hip.hipStreamCreate()
    hip.hipStreamBeginCapture(s, MODE.hipStreamCaptureModeGlobal)

    def relaxed_malloc():
        hip.hipThreadExchangeStreamCaptureMode(MODE.hipStreamCaptureModeRelaxed)
        return hip.hipMalloc(8)[0]
    assert _in_thread(relaxed_malloc) == OK
    assert hip.hipStreamEndCapture(s)[0] == OK


def test_syncing_or_querying_the_capturing_stream_invalidates():
    for op in (hip.hipStreamSynchronize, hip.hipStreamQuery):
        _, s = hip.hipStreamCreate()
        hip.hipStreamBeginCapture(s, MODE.hipStreamCaptureModeRelaxed)
        assert op(s) == (E.hipErrorStreamCaptureUnsupported,)
        assert hip.hipStreamEndCapture(s) == (E.hipErrorStreamCaptureInvalidated, None)


def test_work_on_invalidated_capture_is_refused(kernels, helpers):
    ptr, _ = helpers.pinned_u32(1)
    _, s = hip.hipStreamCreate()
    hip.hipStreamBeginCapture(s, MODE.hipStreamCaptureModeGlobal)
    hip.hipDeviceSynchronize()
    err, = hip.hipModuleLaunchKernel(kernels.fn("set_flag"), 1, 1, 1, 1, 1, 1, 0, s,
                                     kernels.params(int(ptr), ctypes.c_uint32(1)), None)
    assert err == E.hipErrorStreamCaptureInvalidated


def test_graph_launched_many_times_reads_pinned_at_launch(kernels, helpers):
    src, host = helpers.pinned_u32(16)
    dst, out = helpers.pinned_u32(1)
    _, s = hip.hipStreamCreate()
    hip.hipStreamBeginCapture(s, MODE.hipStreamCaptureModeGlobal)
    kernels.launch("sum_u32", int(dst), int(src), ctypes.c_uint32(16), grid=(3, 1, 1), stream=s)
    err, graph = hip.hipStreamEndCapture(s)
    err, exe = hip.hipGraphInstantiateWithFlags(graph, 0)
    assert err == OK
    results = []
    for i in range(1, 4):
        host[:] = np.arange(16) * i
        assert hip.hipGraphLaunch(exe, s) == (OK,)
        host[0] += 1000  # after the launch, before the sync: still seen
        assert hip.hipStreamSynchronize(s) == (OK,)
        results.append(int(out[0]))
    assert results == [120 + 1000, 240 + 1000, 360 + 1000]
    assert hip.hipGraphExecDestroy(exe) == (OK,)
    assert hip.hipGraphLaunch(exe, s) == (E.hipErrorInvalidHandle,)
    assert hip.hipGraphDestroy(graph) == (OK,)
    assert hip.hipGraphDestroy(graph) == (E.hipErrorInvalidHandle,)


def test_kernel_args_are_captured_by_value(kernels, helpers):
    dst, out = helpers.pinned_u32(1)
    _, s = hip.hipStreamCreate()
    value = ctypes.c_uint32(5)
    hip.hipStreamBeginCapture(s, MODE.hipStreamCaptureModeGlobal)
    ptr = ctypes.c_void_p(int(dst))
    hip.hipModuleLaunchKernel(kernels.fn("set_flag"), 1, 1, 1, 1, 1, 1, 0, s,
                              [ctypes.addressof(ptr), ctypes.addressof(value)], None)
    value.value = 6  # changing the argument after capture must not matter
    _, graph = hip.hipStreamEndCapture(s)
    _, exe, _, _ = hip.hipGraphInstantiate(graph, 0)
    hip.hipGraphLaunch(exe, s)
    hip.hipStreamSynchronize(s)
    assert out[0] == 5


def test_fork_join_through_events_in_capture(kernels, helpers):
    a, ah = helpers.pinned_u32(1)
    b, bh = helpers.pinned_u32(1)
    _, s1 = hip.hipStreamCreate()
    _, s2 = hip.hipStreamCreate()
    _, fork = hip.hipEventCreate()
    _, join = hip.hipEventCreate()
    hip.hipStreamBeginCapture(s1, MODE.hipStreamCaptureModeGlobal)
    hip.hipEventRecord(fork, s1)
    assert hip.hipStreamWaitEvent(s2, fork, 0) == (OK,)
    assert hip.hipStreamIsCapturing(s2) == (OK, STATUS.hipStreamCaptureStatusActive)
    kernels.launch("set_flag", int(b), ctypes.c_uint32(2), stream=s2)
    hip.hipEventRecord(join, s2)
    hip.hipStreamWaitEvent(s1, join, 0)
    kernels.launch("set_flag", int(a), ctypes.c_uint32(1), stream=s1)
    err, graph = hip.hipStreamEndCapture(s1)
    assert err == OK
    assert hip.hipStreamIsCapturing(s2) == (OK, STATUS.hipStreamCaptureStatusNone)
    _, exe = hip.hipGraphInstantiateWithFlags(graph, 0)
    hip.hipGraphLaunch(exe, None)
    hip.hipDeviceSynchronize()
    assert (ah[0], bh[0]) == (1, 2)


def test_null_stream_work_during_capture_is_implicit_sync_error(kernels, helpers):
    ptr, _ = helpers.pinned_u32(1)
    _, s = hip.hipStreamCreate()
    hip.hipStreamBeginCapture(s, MODE.hipStreamCaptureModeRelaxed)
    err, = hip.hipModuleLaunchKernel(kernels.fn("set_flag"), 1, 1, 1, 1, 1, 1, 0, None,
                                     kernels.params(int(ptr), ctypes.c_uint32(1)), None)
    assert err == E.hipErrorStreamCaptureImplicit
    assert hip.hipStreamEndCapture(s) == (E.hipErrorStreamCaptureInvalidated, None)
