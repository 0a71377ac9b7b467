"""Graph relaunch: one graph launched three times over different pinned contents."""
from __future__ import annotations

import numpy as np
from pinned_helpers import Kernels, d2h, manifest, pinned, pinned_array, records, text

N = 2048


def graph_app(hip, be, session):
    k = Kernels(hip, be)
    err, p = hip.hipHostMalloc(N * 4, 0)
    view = pinned_array(p, N)
    view[:] = 1
    err, s = hip.hipStreamCreate()
    err, d = hip.hipMalloc(4)
    assert hip.hipStreamBeginCapture(s, hip.hipStreamCaptureMode.hipStreamCaptureModeThreadLocal)[0] == 0
    assert session.ctx.shared["graph_capture"].is_capturing(int(s), s)
    k.sum(d, p, N, stream=s)
    err, graph = hip.hipStreamEndCapture(s)
    assert err == 0
    assert not session.ctx.shared["graph_capture"].is_capturing(int(s), s)
    err, exe = hip.hipGraphInstantiate(graph, 0)[:2]
    assert err == 0
    for step in range(3):
        view[:] = np.arange(N, dtype=np.uint32) * (step + 2)
        assert hip.hipGraphLaunch(exe, s)[0] == 0
        assert hip.hipStreamSynchronize(s)[0] == 0
        d2h(hip, d, 4)


def test_graph_relaunch_replays_byte_for_byte(cap, rep, backend_name):
    root = cap(graph_app)
    launches = records(root, "graph_capture")
    assert [api for api, _ in launches] == ["hipGraphLaunch"] * 3
    result = rep(root)
    assert result.exit_code == 0, text(result)
    assert pinned(result).restored == 3 and pinned(result).skipped_graph_capture == 1
    assert result.processes[0].counters["graph_launch_restored"] == 3


def test_graph_relaunch_without_graph_capture_does_not_match(cap, rep, backend_name):
    root = cap(graph_app)
    result = rep(root, plugins=["pinned_snapshot"], strict=False)
    assert result.exit_code == 1 and any("bytes differ" in f for f in result.processes[0].failures)


def plain_graph_app(hip, be, session):
    k = Kernels(hip, be)
    _err, p = hip.hipHostMalloc(N * 4, 0)
    view = pinned_array(p, N)
    _err, s = hip.hipStreamCreate()
    _err, d = hip.hipMalloc(4)
    hip.hipStreamBeginCapture(s, hip.hipStreamCaptureMode.hipStreamCaptureModeGlobal)
    k.sum(d, p, N, stream=s)
    _err, graph = hip.hipStreamEndCapture(s)
    _err, exe = hip.hipGraphInstantiate(graph, 0)[:2]
    for step in range(3):
        view[:] = step + 1
        hip.hipGraphLaunch(exe, s)
        hip.hipStreamSynchronize(s)
        d2h(hip, d, 4)


def test_pinned_alone_lists_graph_kernels_unreplayable(cap, rep):
    root = cap(plain_graph_app, plugins=["pinned_snapshot"])
    assert any("graph" in u["reason"] for u in manifest(root)["unreplayable_apis"])
    assert records(root, "graph_capture") == []
    result = rep(root, strict=False)
    assert result.exit_code == 1 and pinned(result).skipped_graph_capture == 1
