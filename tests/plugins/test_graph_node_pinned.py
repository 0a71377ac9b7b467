"""A kernel node built with hipGraphAddKernelNode that reads pinned host memory: its
pinned pointers join the graph's, so each graph launch snapshots them (issue 10)."""
from __future__ import annotations

import ctypes

import numpy as np
from pinned_helpers import Kernels, d2h, manifest, pinned_array, records, text

N = 256


def node_params(hip, fn, keep, *args):
    p = hip.hipKernelNodeParams()
    p.func = fn
    p.gridDim.x, p.gridDim.y, p.gridDim.z = 1, 1, 1
    p.blockDim.x, p.blockDim.y, p.blockDim.z = 64, 1, 1
    arr = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
    keep += [arr, *args]
    p.kernelParams = arr
    return p


def node_graph_app(hip, be, session, *, via: str = "add"):
    """sum_u32 of a pinned buffer as a kernel node (added, set on the node, set on the
    executable graph, or in a child graph), launched three times over new contents."""
    k, keep = Kernels(hip, be), []
    _err, p = hip.hipHostMalloc(N * 4, 0)
    view = pinned_array(p, N)
    _err, d = hip.hipMalloc(4)
    _err, s = hip.hipStreamCreate()
    _err, g = hip.hipGraphCreate(0)
    on_pinned = node_params(hip, k.sum_u32, keep, ctypes.c_void_p(int(d)), ctypes.c_void_p(int(p)),
                            ctypes.c_uint32(N))
    _err, dev_src = hip.hipMalloc(N * 4)
    on_device = node_params(hip, k.sum_u32, keep, ctypes.c_void_p(int(d)), ctypes.c_void_p(int(dev_src)),
                            ctypes.c_uint32(N))
    if via == "child":
        _err, child = hip.hipGraphCreate(0)
        assert hip.hipGraphAddKernelNode(child, None, 0, on_pinned)[0] == 0
        assert hip.hipGraphAddChildGraphNode(g, None, 0, child)[0] == 0
    else:
        err, node = hip.hipGraphAddKernelNode(g, None, 0, on_pinned if via == "add" else on_device)
        assert err == 0
        if via == "node":
            assert hip.hipGraphKernelNodeSetParams(node, on_pinned)[0] == 0
    _err, exe = hip.hipGraphInstantiateWithFlags(g, 0)
    if via == "exec":
        assert hip.hipGraphExecKernelNodeSetParams(exe, node, on_pinned)[0] == 0
    sums = []
    for step in range(3):
        view[:] = np.arange(N, dtype=np.uint32) * (step + 2)
        assert hip.hipGraphLaunch(exe, s)[0] == 0
        assert hip.hipStreamSynchronize(s)[0] == 0
        sums.append(int(d2h(hip, d, 4).view(np.uint32)[0]))
    assert len(set(sums)) == 3
    return sums


def test_kernel_node_on_pinned_memory_replays_byte_for_byte(cap, rep, backend_name):
    root = cap(node_graph_app)
    assert [api for api, _ in records(root, "graph_capture")] == ["hipGraphLaunch"] * 3
    result = rep(root)
    assert result.exit_code == 0, text(result)
    assert result.processes[0].counters["graph_launch_restored"] == 3


def test_node_params_set_later_and_child_graphs_are_snapshotted_too(cap, rep):
    for via in ("node", "exec", "child"):
        root = cap(lambda hip, be, session, via=via: node_graph_app(hip, be, session, via=via))
        assert [api for api, _ in records(root, "graph_capture")] == ["hipGraphLaunch"] * 3, via
        result = rep(root)
        assert result.exit_code == 0, (via, text(result))


def test_without_graph_capture_a_pinned_kernel_node_is_unreplayable_and_differs(cap, rep):
    root = cap(node_graph_app, plugins=["pinned_snapshot"])
    assert any("kernel node" in u["reason"] for u in manifest(root)["unreplayable_apis"])
    assert records(root, "pinned_snapshot") == []   # nothing is read when the node is made
    result = rep(root, strict=False)
    assert result.exit_code == 1 and any("bytes differ" in f for f in result.processes[0].failures)
