"""Streams are asynchronous queues: ordering, events, host functions, blocking, deadlock."""
from __future__ import annotations

import ctypes
import threading
import time

import numpy as np

from hrr.backends import sim
from hrr.backends.sim import hip

E = hip.hipError_t
OK = E.hipSuccess
D2H = hip.hipMemcpyKind.hipMemcpyDeviceToHost


def test_host_write_after_launch_before_sync_is_seen(kernels, helpers):
    ptr, host = helpers.pinned_u32(8)
    dst = helpers.device_u32(np.zeros(1))
    host[:] = 1
    kernels.launch("sum_u32", int(dst), int(ptr), ctypes.c_uint32(8))
    host[:] = 5  # after the launch, before any sync: the kernel must see this
    assert hip.hipDeviceSynchronize() == (OK,)
    assert helpers.read_u32(dst, 1)[0] == 40


def test_work_does_not_run_at_enqueue(kernels, helpers):
    ptr, host = helpers.pinned_u32(4)
    kernels.launch("fill_u32", int(ptr), ctypes.c_uint32(9), ctypes.c_uint32(4))
    assert list(host) == [0, 0, 0, 0]
    assert hip.hipStreamSynchronize(None) == (OK,)
    assert list(host) == [9, 9, 9, 9]


def test_stream_query_runs_ready_work(kernels, helpers):
    ptr, host = helpers.pinned_u32(1)
    err, s = hip.hipStreamCreate()
    kernels.launch("set_flag", int(ptr), ctypes.c_uint32(3), stream=s)
    assert hip.hipStreamQuery(s) == (OK,)
    assert host[0] == 3


def test_flag_released_by_another_stream(kernels, helpers):
    flag, fhost = helpers.pinned_u32(1)
    out, ohost = helpers.pinned_u32(1)
    _, s1 = hip.hipStreamCreate()
    _, s2 = hip.hipStreamCreate()
    kernels.launch("wait_flag", int(flag), ctypes.c_uint32(1), stream=s1)
    kernels.launch("set_flag", int(out), ctypes.c_uint32(42), stream=s1)  # after the wait
    kernels.launch("fill_u32", int(out), ctypes.c_uint32(7), ctypes.c_uint32(1), stream=s2)
    kernels.launch("set_flag", int(flag), ctypes.c_uint32(1), stream=s2)  # releases s1
    assert hip.hipStreamSynchronize(s1) == (OK,)
    # s1's set_flag ran only after s2's fill (which ran before the release): 42 wins.
    assert ohost[0] == 42 and fhost[0] == 1


def test_wait_value_released_by_write_value(helpers):
    word, host = helpers.pinned_u32(2)
    _, s1 = hip.hipStreamCreate()
    _, s2 = hip.hipStreamCreate()
    assert hip.hipStreamWaitValue32(s1, int(word), 5, hip.hipStreamWaitValueGte, 0xFFFFFFFF) == (OK,)
    assert hip.hipStreamWriteValue32(s1, int(word) + 4, 77, 0) == (OK,)
    assert hip.hipStreamQuery(s1) == (E.hipErrorNotReady,)
    assert host[1] == 0  # blocked behind the wait
    assert hip.hipStreamWriteValue32(s2, int(word), 6, 0) == (OK,)
    assert hip.hipStreamSynchronize(s1) == (OK,)
    assert list(host) == [6, 77]


def test_deadlock_is_reported_not_hung(kernels, helpers):
    flag, _ = helpers.pinned_u32(1)
    _, s = hip.hipStreamCreate()
    kernels.launch("wait_flag", int(flag), ctypes.c_uint32(1), stream=s)
    # "Not hung" is a liveness bound, not a speed claim: the sync must return at all (it
    # returns in milliseconds; 60 s only tells a detected deadlock from a hang under load).
    # The last error is per thread, as in HIP: the waiting thread reads its own.
    answer: list = []

    def wait() -> None:
        answer.extend([hip.hipStreamSynchronize(s), sim.last_error_detail(), hip.hipGetLastError(),
                       hip.hipGetLastError()])
    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    waiter.join(60)
    assert answer, "hipStreamSynchronize hung on a deadlocked stream"
    synced, detail, *last_errors = answer
    assert synced == (E.hipErrorLaunchTimeOut,)
    assert last_errors == [(E.hipErrorLaunchTimeOut,), (OK,)]
    assert "wait_flag" in detail and "deadlock" in detail


def test_host_write_to_pinned_flag_releases_the_wait(kernels, helpers):
    flag, fhost = helpers.pinned_u32(1)
    out, ohost = helpers.pinned_u32(1)
    kernels.launch("wait_flag", int(flag), ctypes.c_uint32(2))
    kernels.launch("set_flag", int(out), ctypes.c_uint32(1))
    fhost[0] = 2  # the host writes the flag before it synchronises
    assert hip.hipDeviceSynchronize() == (OK,)
    assert ohost[0] == 1


def test_another_thread_may_release_a_waiting_host(kernels, helpers):
    flag, fhost = helpers.pinned_u32(1)
    _, s = hip.hipStreamCreate()
    kernels.launch("wait_flag", int(flag), ctypes.c_uint32(1), stream=s)

    def release():
        time.sleep(0.05)
        fhost[0] = 1
    t = threading.Thread(target=release)
    t.start()
    assert hip.hipStreamSynchronize(s) == (OK,)
    t.join()


def test_host_functions_run_in_stream_order(kernels, helpers):
    ptr, host = helpers.pinned_u32(1)
    seen = []
    cb = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda data: seen.append((data, int(host[0]))))
    fn = ctypes.cast(cb, ctypes.c_void_p).value
    _, s = hip.hipStreamCreate()
    assert hip.hipLaunchHostFunc(s, fn, 11) == (OK,)
    kernels.launch("set_flag", int(ptr), ctypes.c_uint32(5), stream=s)
    assert hip.hipLaunchHostFunc(s, fn, 22) == (OK,)
    assert seen == []  # nothing runs at enqueue
    assert hip.hipStreamSynchronize(s) == (OK,)
    assert seen == [(11, 0), (22, 5)]


def test_null_stream_waits_for_blocking_streams_not_nonblocking(kernels, helpers):
    flag, fhost = helpers.pinned_u32(1)
    out, ohost = helpers.pinned_u32(2)
    _, blocking = hip.hipStreamCreate()
    _, nonblocking = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
    kernels.launch("wait_flag", int(flag), ctypes.c_uint32(1), stream=blocking)
    kernels.launch("set_flag", int(out), ctypes.c_uint32(1))  # null stream: waits for `blocking`
    kernels.launch("set_flag", int(out) + 4, ctypes.c_uint32(1), stream=nonblocking)
    assert hip.hipStreamSynchronize(nonblocking) == (OK,)
    assert list(ohost) == [0, 1]
    assert hip.hipStreamQuery(None) == (E.hipErrorNotReady,)
    fhost[0] = 1
    assert hip.hipStreamSynchronize(None) == (OK,)
    assert list(ohost) == [1, 1]


def test_blocking_stream_waits_for_prior_null_stream_work(kernels, helpers):
    flag, fhost = helpers.pinned_u32(1)
    out, ohost = helpers.pinned_u32(1)
    _, s = hip.hipStreamCreate()
    kernels.launch("wait_flag", int(flag), ctypes.c_uint32(1))  # null stream
    kernels.launch("set_flag", int(out), ctypes.c_uint32(8), stream=s)
    assert hip.hipStreamQuery(s) == (E.hipErrorNotReady,)
    fhost[0] = 1
    assert hip.hipStreamSynchronize(s) == (OK,)
    assert ohost[0] == 8


def test_stream_wait_event_orders_across_streams(kernels, helpers):
    flag, fhost = helpers.pinned_u32(1)
    out, ohost = helpers.pinned_u32(1)
    _, s1 = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
    _, s2 = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
    _, ev = hip.hipEventCreate()
    kernels.launch("wait_flag", int(flag), ctypes.c_uint32(1), stream=s1)
    assert hip.hipEventRecord(ev, s1) == (OK,)
    assert hip.hipStreamWaitEvent(s2, ev, 0) == (OK,)
    kernels.launch("set_flag", int(out), ctypes.c_uint32(4), stream=s2)
    assert hip.hipStreamQuery(s2) == (E.hipErrorNotReady,)
    assert hip.hipEventQuery(ev) == (E.hipErrorNotReady,)
    fhost[0] = 1
    assert hip.hipStreamSynchronize(s2) == (OK,)
    assert ohost[0] == 4 and hip.hipEventQuery(ev) == (OK,)


def test_event_elapsed_time_is_deterministic(kernels, helpers):
    ptr, _ = helpers.pinned_u32(4)
    _, a = hip.hipEventCreate()
    _, b = hip.hipEventCreate()
    _, untimed = hip.hipEventCreateWithFlags(hip.hipEventDisableTiming)
    hip.hipEventRecord(a, None)
    kernels.launch("fill_u32", int(ptr), ctypes.c_uint32(1), ctypes.c_uint32(4))
    hip.hipEventRecord(b, None)
    hip.hipEventRecord(untimed, None)
    assert hip.hipEventElapsedTime(a, b) == (E.hipErrorNotReady, None)
    assert hip.hipEventSynchronize(b) == (OK,)
    err, ms = hip.hipEventElapsedTime(a, b)
    assert err == OK and ms > 0
    assert hip.hipEventElapsedTime(a, untimed) == (E.hipErrorInvalidHandle, None)
    sim.reset_device()
    k2 = type(kernels)()
    ptr, _ = helpers.pinned_u32(4)
    _, a = hip.hipEventCreate()
    _, b = hip.hipEventCreate()
    hip.hipEventRecord(a, None)
    k2.launch("fill_u32", int(ptr), ctypes.c_uint32(1), ctypes.c_uint32(4))
    hip.hipEventRecord(b, None)
    hip.hipEventSynchronize(b)
    assert hip.hipEventElapsedTime(a, b) == (OK, ms)


def test_bad_stream_and_event_handles():
    bogus = hip.ihipStream_t(0xDEAD0)
    assert hip.hipStreamSynchronize(bogus) == (E.hipErrorInvalidHandle,)
    assert hip.hipGetLastError() == (E.hipErrorInvalidHandle,)
    assert hip.hipStreamDestroy(12345) == (E.hipErrorInvalidHandle,)
    _, ev = hip.hipEventCreate()
    assert hip.hipEventDestroy(ev) == (OK,)
    assert hip.hipEventDestroy(ev) == (E.hipErrorInvalidHandle,)
    assert hip.hipEventRecord(ev, None) == (E.hipErrorInvalidHandle,)
    _, s = hip.hipStreamCreate()
    assert hip.hipStreamDestroy(s) == (OK,)
    assert hip.hipStreamQuery(s) == (E.hipErrorInvalidHandle,)


def test_peek_does_not_clear_last_error():
    hip.hipSetDevice(3)
    assert hip.hipPeekAtLastError() == (E.hipErrorInvalidDevice,)
    assert hip.hipPeekAtLastError() == (E.hipErrorInvalidDevice,)
    assert hip.hipGetLastError() == (E.hipErrorInvalidDevice,)
    assert hip.hipPeekAtLastError() == (OK,)


def test_illegal_address_is_reported_at_sync(kernels, helpers):
    dst = helpers.device_u32(np.zeros(4))
    kernels.launch("fill_u32", int(dst), ctypes.c_uint32(1), ctypes.c_uint32(1000))
    assert hip.hipDeviceSynchronize() == (E.hipErrorIllegalAddress,)
    assert hip.hipGetLastError() == (E.hipErrorIllegalAddress,)
    kernels.launch("fill_u32", 0x1234000, ctypes.c_uint32(1), ctypes.c_uint32(1))  # pageable
    assert hip.hipDeviceSynchronize() == (E.hipErrorIllegalAddress,)


def test_host_function_that_synchronises_gets_an_error_not_a_hang():
    results = []
    cb = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(
        lambda _: results.append(hip.hipDeviceSynchronize()[0]))
    _, s = hip.hipStreamCreate()
    hip.hipLaunchHostFunc(s, ctypes.cast(cb, ctypes.c_void_p).value, None)
    assert hip.hipStreamSynchronize(s) == (OK,)
    assert results == [E.hipErrorNotSupported]
