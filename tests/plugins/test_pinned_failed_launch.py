"""A launch that fails at capture must not become an allocation's last snapshot record.

Replay skips the restores of a launch that failed when recorded (its kernel never read
the bytes), so a later launch over the same bytes needs its own record: without one it
runs on whatever replay's pinned memory holds (zeros here, the app's bytes at capture).
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np
from pinned_helpers import Kernels, d2h, events, pinned, pinned_array, records, text, xxh

from hrr.replay.result import PinnedSnapshots

from hrr_plugins.pinned_snapshot import Tracker

N = 1024
INVALID_CONFIGURATION = 9  # hipErrorInvalidConfiguration
CAPTURE_IMPLICIT = 906     # hipErrorStreamCaptureImplicit
CAPTURE_INVALIDATED = 901  # hipErrorStreamCaptureInvalidated


def _bad_launch(hip, k, dst, src, stream=None) -> int:
    """sum_u32 with a block of 2048 threads (over 1024): refused at the call, nothing
    enqueued, and replay reproduces the error."""
    return int(hip.hipModuleLaunchKernel(k.sum_u32, 1, 1, 1, 2048, 1, 1, 0, stream, None,
                                         (dst, src, ctypes.c_uint32(N)))[0])


def failed_then_good_app(hip, be, session):
    k = Kernels(hip, be)
    err, p = hip.hipHostMalloc(N * 4, 0)
    assert err == 0
    pinned_array(p, N)[:] = np.arange(N, dtype=np.uint32) + 3
    err, d = hip.hipMalloc(4)
    assert err == 0
    err = _bad_launch(hip, k, d, p)
    assert err == INVALID_CONFIGURATION or (err != 0 and be.__name__ != "hrr.backends.sim")
    k.sum(d, p, N)              # the same bytes, the same stream: must carry its own record
    hip.hipDeviceSynchronize()
    d2h(hip, d, 4)


def failed_graph_launch_app(hip, be, session):
    """The same for hipGraphLaunch: a graph launch on the null stream while another
    blocking stream captures fails (906, nothing enqueued); the next launch of the graph
    over the same bytes must carry its own record."""
    k = Kernels(hip, be)
    err, p = hip.hipHostMalloc(N * 4, 0)
    assert err == 0
    pinned_array(p, N)[:] = np.arange(N, dtype=np.uint32) * 5
    err, s = hip.hipStreamCreate()
    err, other = hip.hipStreamCreate()
    err, d = hip.hipMalloc(4)
    mode = hip.hipStreamCaptureMode.hipStreamCaptureModeGlobal
    assert hip.hipStreamBeginCapture(s, mode)[0] == 0
    k.sum(d, p, N, stream=s)
    err, graph = hip.hipStreamEndCapture(s)
    assert err == 0
    err, exe = hip.hipGraphInstantiate(graph, 0)[:2]
    assert err == 0
    assert hip.hipStreamBeginCapture(other, mode)[0] == 0
    assert int(hip.hipGraphLaunch(exe, None)[0]) == CAPTURE_IMPLICIT
    assert int(hip.hipStreamEndCapture(other)[0]) == CAPTURE_INVALIDATED
    assert hip.hipGraphLaunch(exe, None)[0] == 0
    assert hip.hipDeviceSynchronize()[0] == 0
    d2h(hip, d, 4)


def test_failed_launch_does_not_poison_next_snapshot(cap, rep, backend_name):
    root = cap(failed_then_good_app)
    launches = [ev for ev in events(root) if ev[2] == "hipModuleLaunchKernel"]
    assert launches[0][4] != 0 and launches[1][4] == 0
    result = rep(root)
    assert result.exit_code == 0, text(result)
    assert pinned(result) == PinnedSnapshots(1, 0, 0)
    # Both launches carry a record: the failed one (made before the call could fail) and
    # the good one, which the failed one must not have deduplicated away.
    assert [api for api, _ in records(root)] == ["hipModuleLaunchKernel"] * 2


def test_failed_graph_launch_does_not_poison_next_snapshot(cap, rep):
    root = cap(failed_graph_launch_app)
    graph_launches = [ev for ev in events(root) if ev[2] == "hipGraphLaunch"]
    assert [ev[4] for ev in graph_launches] == [CAPTURE_IMPLICIT, 0]
    result = rep(root)
    assert result.exit_code == 0, text(result)
    assert result.processes[0].counters["graph_launch_restored"] == 1, text(result)
    assert [api for api, _ in records(root, "graph_capture")] == ["hipGraphLaunch"] * 2


class _Ctx:
    """The part of CaptureContext a Tracker uses: every blob is accepted."""

    def content_allowed(self, kind):
        return True

    def put_blob(self, kind, data):
        return xxh(bytes(data))

    def add_unreplayable(self, api, reason, **detail):
        raise AssertionError(reason)


def _tracker_with(data: bytes):
    buf = ctypes.create_string_buffer(data, len(data))
    t = Tracker(1 << 20)
    t.add(ctypes.addressof(buf), len(data), "pinned")
    return t, ctypes.addressof(buf), buf


def test_only_a_call_that_succeeded_makes_the_last_record():
    ctx = _Ctx()
    t, addr, _keep = _tracker_with(b"x" * 256)
    t.begin_call()
    assert t.snapshot(ctx, [addr], 0, False) is not None
    t.end_call(False)                                      # the launch failed
    t.begin_call()
    assert t.snapshot(ctx, [addr], 0, False) is not None   # so the next one records again
    t.end_call(True)
    t.begin_call()
    assert t.snapshot(ctx, [addr], 0, False) is None       # and after a success, dedup
    t.end_call(True)


def test_a_call_that_never_returned_leaves_nothing_pending():
    ctx = _Ctx()
    t, addr, _keep = _tracker_with(b"y" * 256)
    t.begin_call()
    assert t.snapshot(ctx, [addr], 0, False) is not None
    # ... the launch raised: no end_call. The next call on this thread snapshots nothing
    # (e.g. a launch whose arguments could not be read) and succeeds.
    t.begin_call()
    t.end_call(True)
    t.begin_call()
    assert t.snapshot(ctx, [addr], 0, False) is not None


def test_pending_records_belong_to_their_thread():
    ctx = _Ctx()
    t, addr, _keep = _tracker_with(b"z" * 256)
    t.begin_call()
    assert t.snapshot(ctx, [addr], 0, False) is not None   # in flight on this thread

    def other():
        t.begin_call()
        t.end_call(True)                                   # another thread's launch returns
    th = threading.Thread(target=other)
    th.start()
    th.join()
    t.end_call(True)                                       # this thread's launch succeeded
    t.begin_call()
    assert t.snapshot(ctx, [addr], 0, False) is None       # its record is the last one
