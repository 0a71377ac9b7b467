"""Replay's own check of the launch stream: a launch that replays into a stream that is
capturing gets no restore (counted as skipped), even when its record is NOT marked
``during_capture`` (an archive whose capture missed the capture, or a hand-made one).

The archives are made by a capture whose pinned_snapshot stage is told that no stream
captures, so the launch captured into the graph carries an ordinary record."""
from __future__ import annotations

import numpy as np
from pinned_helpers import Kernels, d2h, pinned, pinned_array, records, text

from hrr.replay.result import PinnedSnapshots

N = 1024


def _blind(session) -> None:
    session.ctx.shared["pinned_snapshot"].stream_capturing = lambda *_a: False


def graph_app(hip, be, session):
    """av=5 when the kernel is captured into a graph; av=7 when the graph is launched."""
    _blind(session)
    k = Kernels(hip, be)
    _err, a = hip.hipHostMalloc(N * 4, 0)
    av = pinned_array(a, N)
    _err, s = hip.hipStreamCreate()
    _err, d = hip.hipMalloc(4)
    av[:] = 5
    assert hip.hipStreamBeginCapture(s, hip.hipStreamCaptureMode.hipStreamCaptureModeGlobal)[0] == 0
    k.sum(d, a, N, stream=s)
    err, graph = hip.hipStreamEndCapture(s)
    assert err == 0
    err, exe = hip.hipGraphInstantiate(graph, 0)[:2]
    assert err == 0
    av[:] = np.arange(N, dtype=np.uint32) + 7
    assert hip.hipGraphLaunch(exe, s)[0] == 0
    assert hip.hipStreamSynchronize(s)[0] == 0
    d2h(hip, d, 4)


def _unmarked(root) -> list[dict]:
    recs = [r for _api, rs in records(root) for r in rs]
    assert recs and not any(r["during_capture"] for r in recs)
    return recs


def test_skip_asks_graph_capture_state(cap, rep):
    """With graph_capture at replay: its state says the stream captures. A restore queued
    there would become a node of the graph and overwrite the graph launch's bytes."""
    root = cap(graph_app)
    assert len(_unmarked(root)) == 1
    result = rep(root)
    assert result.exit_code == 0, text(result)
    assert pinned(result) == PinnedSnapshots(1, 0, 1)  # restored: the graph launch
    assert result.processes[0].counters["graph_launch_restored"] == 1, text(result)


def capture_only_app(hip, be, session):
    _blind(session)
    k = Kernels(hip, be)
    _err, a = hip.hipHostMalloc(N * 4, 0)
    pinned_array(a, N)[:] = 9
    _err, s = hip.hipStreamCreate()
    _err, d = hip.hipMalloc(4)
    assert hip.hipStreamBeginCapture(s, hip.hipStreamCaptureMode.hipStreamCaptureModeGlobal)[0] == 0
    k.sum(d, a, N, stream=s)
    err, graph = hip.hipStreamEndCapture(s)
    assert err == 0
    assert hip.hipGraphDestroy(graph)[0] == 0


def test_skip_asks_backend_without_graph_capture(cap, rep):
    """pinned_snapshot alone at replay asks the backend (hipStreamIsCapturing)."""
    root = cap(capture_only_app, plugins=["pinned_snapshot"])
    assert len(_unmarked(root)) == 1
    result = rep(root, plugins=["pinned_snapshot"])
    assert result.exit_code == 0, text(result)
    assert pinned(result) == PinnedSnapshots(0, 0, 1)
