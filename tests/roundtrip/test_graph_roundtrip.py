"""Round trip of the stream, event and graph rows of issue 10: graphs built node by node
replay byte-exact, a memcpy node's host destination is checked, host code is unreplayable."""
from __future__ import annotations

import ctypes

import numpy as np

from graph_api_app import exercise, module, ok
from hrrtest import archive_calls, capture, only, replay, text

D2H = 2


def test_graph_rows_round_trip_byte_exact(tmp_path, backend_name):
    results = capture(tmp_path, exercise, backend=backend_name)
    assert list(results["graph_add"][:3]) == [10, 15, 20] and list(results["graph_exec_set"][:3]) == [41] * 3
    assert list(results["graph_updated"]) == list(results["graph_add"])
    result = replay(tmp_path, backend=backend_name)
    assert result.exit_code == 0, text(result)
    proc = only(result)
    assert proc.checks_failed == 0 and proc.refusals == () and proc.checks_passed == 2, text(result)
    calls = archive_calls(tmp_path)
    node_copy = next(r[0] for r in calls if r[2] == "hipGraphAddMemcpyNode1D" and r[3][3][0] == "h"
                     and r[3][4][0] == "a")   # the device-to-host node
    assert any(r[2] == "@d2h" and r[3] == [node_copy] for r in calls)


def _overwritten_node_result(hip, hiprtc, be):
    """The app overwrites a memcpy node's destination after the graph ran and before the
    device sync that delivers it: the recording holds the app's bytes, so replay differs."""
    mod = module(hip, hiprtc)
    fill = ok(hip.hipModuleGetFunction(mod, b"fill_u32"))
    d = ok(hip.hipMalloc(64))
    s = ok(hip.hipStreamCreate())
    g = ok(hip.hipGraphCreate(0))
    p = hip.hipKernelNodeParams()
    p.func = fill
    p.gridDim.x, p.gridDim.y, p.gridDim.z = 1, 1, 1
    p.blockDim.x, p.blockDim.y, p.blockDim.z = 16, 1, 1
    args = (ctypes.c_void_p(int(d)), ctypes.c_uint32(3), ctypes.c_uint32(16))
    arr = (ctypes.c_void_p * 3)(*[ctypes.addressof(a) for a in args])
    p.kernelParams = arr
    k = ok(hip.hipGraphAddKernelNode(g, None, 0, p))
    res = np.zeros(16, np.uint32)
    ok(hip.hipGraphAddMemcpyNode1D(g, [k], 1, res, d, 64, hip.hipMemcpyKind(D2H)))
    exe = ok(hip.hipGraphInstantiateWithFlags(g, 0))
    ok(hip.hipGraphLaunch(exe, s) + (None,))
    ok(hip.hipStreamSynchronize(s) + (None,))
    assert list(res) == [3] * 16
    res[:] = 0xDEAD
    ok(hip.hipDeviceSynchronize() + (None,))


def test_a_memcpy_node_destination_is_compared(tmp_path):
    capture(tmp_path, _overwritten_node_result)
    result = replay(tmp_path, strict=False)
    assert result.exit_code == 1 and any("differ" in f for f in only(result).failures), text(result)


def _host_code(hip, hiprtc, be):
    cb = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)(lambda *a: None)
    host = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda data: None)
    s = ok(hip.hipStreamCreate())
    assert hip.hipStreamAddCallback(s, ctypes.cast(cb, ctypes.c_void_p).value, None, 0)[0] == 0
    g = ok(hip.hipGraphCreate(0))
    hp = hip.hipHostNodeParams()
    hp.fn = ctypes.cast(host, ctypes.c_void_p).value
    ok(hip.hipGraphAddHostNode(g, None, 0, hp))
    ok(hip.hipGraphLaunch(ok(hip.hipGraphInstantiateWithFlags(g, 0)), s) + (None,))
    ok(hip.hipDeviceSynchronize() + (None,))


def test_host_callbacks_and_host_nodes_are_unreplayable(tmp_path):
    capture(tmp_path, _host_code)
    result = replay(tmp_path)
    proc = only(result)
    assert {a for a, _ in proc.unreplayable_apis} >= {"hipStreamAddCallback", "hipGraphAddHostNode"}
    assert all("host code" in r for a, r in proc.unreplayable_apis if a.startswith("hip")), proc.unreplayable_apis
    assert result.exit_code != 0, text(result)
