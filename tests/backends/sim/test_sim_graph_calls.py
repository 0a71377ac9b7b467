"""The sim's stream, event and graph calls of issue 10: their semantics and the errors a
GPU gives."""
from __future__ import annotations

import ctypes

import numpy as np

from hrr.api.catalogue import running_host_code
from hrr.backends.sim import hip

E = hip.hipError_t
OK = E.hipSuccess
H2D, D2H = hip.hipMemcpyKind.hipMemcpyHostToDevice, hip.hipMemcpyKind.hipMemcpyDeviceToHost
T = hip.hipGraphNodeType


def ok(result):
    assert result[0] == OK, result
    return result[1] if len(result) == 2 else result[1:]


def read(d, n, dtype=np.uint32):
    out = np.zeros(n, dtype)
    ok(hip.hipMemcpy(out, d, out.nbytes, D2H) + (None,))
    return out


def memset_node(g, deps, d, value, n=4, esize=4, height=1, pitch=0):
    p = hip.hipMemsetParams(dst=d, elementSize=esize, width=n, height=height, pitch=pitch, value=value)
    return hip.hipGraphAddMemsetNode(g, deps, len(deps or ()), p)


# ------------------------------------------------------------------ streams and events
def test_stream_priority_is_clamped_and_reported_with_flags_device_and_id():
    s = ok(hip.hipStreamCreateWithPriority(hip.hipStreamNonBlocking, -7))
    assert ok(hip.hipStreamGetPriority(s)) == -1            # the greatest the sim has
    assert ok(hip.hipStreamGetPriority(ok(hip.hipStreamCreateWithPriority(0, 5)))) == 0
    assert ok(hip.hipStreamGetFlags(s)) == 1 and ok(hip.hipStreamGetDevice(s)) == 0
    assert ok(hip.hipStreamGetId(None)) == 0
    ids = {ok(hip.hipStreamGetId(s)), ok(hip.hipStreamGetId(ok(hip.hipStreamCreate())))}
    assert len(ids) == 2 and 0 not in ids
    assert hip.hipStreamGetPriority(hip.ihipStream_t(0x1234))[0] == E.hipErrorInvalidHandle


def test_stream_callback_runs_after_earlier_work_with_stream_status_and_user_data():
    seen = []
    cb = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)(
        lambda stream, status, data: seen.append((stream, status, data)))
    s = ok(hip.hipStreamCreate())
    d = ok(hip.hipMalloc(16))
    ok(hip.hipMemsetAsync(d, 1, 16, s) + (None,))
    fn = ctypes.cast(cb, ctypes.c_void_p).value
    assert hip.hipStreamAddCallback(s, fn, 0x99, 0) == (OK,)
    assert seen == []                                      # queued, not run
    ok(hip.hipStreamSynchronize(s) + (None,))
    assert seen == [(int(s), 0, 0x99)]
    assert hip.hipStreamAddCallback(s, fn, None, 1) == (E.hipErrorInvalidValue,)
    assert hip.hipStreamAddCallback(s, 0, None, 0) == (E.hipErrorInvalidValue,)
    assert {"hipStreamAddCallback", "hipGraphAddHostNode", "hipLaunchHostFunc"} <= running_host_code()


def test_64_bit_stream_wait_blocks_until_all_64_bits_match():
    d = ok(hip.hipMalloc(8))
    ok(hip.hipMemset(d, 0, 8) + (None,))
    waiter, writer = ok(hip.hipStreamCreate()), ok(hip.hipStreamCreate())
    big = (3 << 40) | 7
    ok(hip.hipStreamWaitValue64(waiter, int(d), big, hip.hipStreamWaitValueEq, (1 << 64) - 1) + (None,))
    ok(hip.hipMemsetAsync(d, 0xFF, 8, waiter) + (None,))   # runs only once the wait is released
    ok(hip.hipStreamWriteValue64(writer, int(d), 7, 0) + (None,))   # low word alone does not release
    ok(hip.hipStreamSynchronize(writer) + (None,))
    assert hip.hipStreamQuery(waiter)[0] == E.hipErrorNotReady
    ok(hip.hipStreamWriteValue64(writer, int(d), big, 0) + (None,))
    ok(hip.hipStreamSynchronize(waiter) + (None,))
    assert read(d, 1, np.uint64)[0] == (1 << 64) - 1
    assert hip.hipStreamWriteValue64(writer, 0x10, 1, 0) == (E.hipErrorInvalidValue,)
    assert hip.hipStreamWaitValue64(writer, int(d), 1, 9, 0) == (E.hipErrorInvalidValue,)


def test_event_record_with_flags_and_capture_info_v2():
    s = ok(hip.hipStreamCreate())
    ev = ok(hip.hipEventCreate())
    assert hip.hipEventRecordWithFlags(ev, s, 0) == (OK,)
    assert hip.hipEventSynchronize(ev) == (OK,)
    assert hip.hipEventRecordWithFlags(ev, s, 8) == (E.hipErrorInvalidValue,)
    assert hip.hipStreamGetCaptureInfo_v2(s, None) == (OK, hip.hipStreamCaptureStatus(0), 0, None, 0)
    d = ok(hip.hipMalloc(4))
    ok(hip.hipStreamBeginCapture(s, hip.hipStreamCaptureMode.hipStreamCaptureModeGlobal) + (None,))
    err, status, cid, _graph, ndeps = hip.hipStreamGetCaptureInfo_v2(s, None)
    assert (err, int(status), ndeps) == (OK, 1, 0) and cid > 0
    ok(hip.hipMemsetAsync(d, 0, 4, s) + (None,))
    assert hip.hipStreamGetCaptureInfo_v2(s, None)[4] == 1   # the captured memset
    ok(hip.hipStreamEndCapture(s))


# ------------------------------------------------------------------ graphs
def test_a_node_runs_after_its_dependencies_whatever_the_creation_order():
    d = ok(hip.hipMalloc(16))
    g = ok(hip.hipGraphCreate(0))
    one = ok(memset_node(g, None, d, 1))
    two = ok(memset_node(g, None, d, 2))
    exe = ok(hip.hipGraphInstantiate(g, 0)[:2])
    ok(hip.hipGraphLaunch(exe, None) + (None,))
    assert list(read(d, 4)) == [2] * 4                     # no edge: creation order
    ok(hip.hipGraphAddDependencies(g, [two], [one], 1) + (None,))
    exe2 = ok(hip.hipGraphInstantiateWithFlags(g, 0))
    ok(hip.hipGraphLaunch(exe2, None) + (None,))
    assert list(read(d, 4)) == [1] * 4                     # one now runs after two
    ok(hip.hipGraphLaunch(exe, None) + (None,))            # the first exec kept its order
    assert list(read(d, 4)) == [2] * 4
    ok(hip.hipGraphAddDependencies(g, [one], [two], 1) + (None,))
    assert hip.hipGraphInstantiateWithFlags(g, 0) == (E.hipErrorInvalidValue, None)   # a cycle


def test_dependency_errors():
    g, other = ok(hip.hipGraphCreate(0)), ok(hip.hipGraphCreate(0))
    a = ok(hip.hipGraphAddEmptyNode(g, None, 0))
    b = ok(hip.hipGraphAddEmptyNode(g, [a], 1))
    foreign = ok(hip.hipGraphAddEmptyNode(other, None, 0))
    assert hip.hipGraphAddEmptyNode(g, [foreign], 1) == (E.hipErrorInvalidValue, None)
    assert hip.hipGraphAddEmptyNode(g, [a], 2) == (E.hipErrorInvalidValue, None)
    assert hip.hipGraphAddEmptyNode(g, [a, a], 2) == (E.hipErrorInvalidValue, None)
    assert hip.hipGraphAddDependencies(g, [a], [b], 1) == (E.hipErrorInvalidValue,)   # already there
    assert hip.hipGraphAddDependencies(g, [a], [a], 1) == (E.hipErrorInvalidValue,)
    assert hip.hipGraphRemoveDependencies(g, [b], [a], 1) == (E.hipErrorInvalidValue,)
    assert hip.hipGraphCreate(1) == (E.hipErrorInvalidValue, None)
    ok(hip.hipGraphRemoveDependencies(g, [a], [b], 1) + (None,))
    assert ok(hip.hipGraphGetEdges(g))[2] == 0 and ok(hip.hipGraphGetRootNodes(g))[1] == 2
    ok(hip.hipGraphDestroyNode(a) + (None,))
    assert hip.hipGraphNodeGetType(a)[0] != OK
    ok(hip.hipGraphDestroy(other) + (None,))
    assert hip.hipGraphNodeGetType(foreign)[0] != OK       # a destroyed graph's nodes are gone


def test_queries_name_nodes_edges_and_types():
    d = ok(hip.hipMalloc(16))
    g = ok(hip.hipGraphCreate(0))
    m = ok(memset_node(g, None, d, 1))
    c = ok(hip.hipGraphAddMemcpyNode1D(g, [m], 1, np.zeros(4, np.uint32), d, 16, D2H))
    e = ok(hip.hipGraphAddEmptyNode(g, [m, c], 2))
    assert ok(hip.hipGraphGetNodes(g)) == ([m, c, e], 3)
    assert ok(hip.hipGraphGetRootNodes(g)) == ([m], 1)
    assert ok(hip.hipGraphGetEdges(g)) == ([m, m, c], [c, e, e], 3)
    assert ok(hip.hipGraphNodeGetDependencies(e)) == ([m, c], 2)
    assert ok(hip.hipGraphNodeGetDependentNodes(m)) == ([c, e], 2)
    assert [ok(hip.hipGraphNodeGetType(n)) for n in (m, c, e)] == [
        T.hipGraphNodeTypeMemset, T.hipGraphNodeTypeMemcpy, T.hipGraphNodeTypeEmpty]


def test_a_captured_graph_is_a_chain_of_typed_nodes(kernels):
    d = ok(hip.hipMalloc(16))
    s = ok(hip.hipStreamCreate())
    ok(hip.hipStreamBeginCapture(s, hip.hipStreamCaptureMode.hipStreamCaptureModeGlobal) + (None,))
    ok(hip.hipMemsetAsync(d, 0, 16, s) + (None,))
    kernels.launch("fill_u32", int(d), ctypes.c_uint32(5), ctypes.c_uint32(4), stream=s)
    g = ok(hip.hipStreamEndCapture(s))
    nodes, n = ok(hip.hipGraphGetNodes(g))
    assert n == 2 and ok(hip.hipGraphGetEdges(g)) == ([nodes[0]], [nodes[1]], 1)
    assert [ok(hip.hipGraphNodeGetType(x)) for x in nodes] == [T.hipGraphNodeTypeMemset, T.hipGraphNodeTypeKernel]


def test_memset_nodes_fill_2d_rows_of_2_and_4_byte_elements():
    d = ok(hip.hipMalloc(64))
    ok(hip.hipMemset(d, 0, 64) + (None,))
    g = ok(hip.hipGraphCreate(0))
    ok(memset_node(g, None, d, 0xABCD, n=3, esize=2, height=2, pitch=16))
    exe = ok(hip.hipGraphInstantiateWithFlags(g, 0))
    ok(hip.hipGraphLaunch(exe, None) + (None,))
    rows = read(d, 32, np.uint16).reshape(4, 8)
    assert list(rows[0][:4]) == [0xABCD] * 3 + [0] and list(rows[1][:4]) == [0xABCD] * 3 + [0]
    assert not rows[2:].any()
    assert memset_node(g, None, d, 1, esize=3)[0] == E.hipErrorInvalidValue
    assert memset_node(g, None, d, 1, n=17)[0] == E.hipErrorInvalidValue   # past the 64 bytes
    assert memset_node(g, None, d, 1, height=2, pitch=4, n=4)[0] == E.hipErrorInvalidValue


def test_kernel_nodes_bind_arguments_when_set_and_exec_updates(kernels):
    d = ok(hip.hipMalloc(16))
    value = ctypes.c_uint32(5)
    g = ok(hip.hipGraphCreate(0))
    p = hip.hipKernelNodeParams()
    p.func = kernels.fn("fill_u32")
    p.gridDim.x, p.gridDim.y, p.gridDim.z = 1, 1, 1
    p.blockDim.x, p.blockDim.y, p.blockDim.z = 64, 1, 1
    args = (ctypes.c_void_p * 3)(*kernels.params(int(d), value, ctypes.c_uint32(4)))
    p.kernelParams = args
    node = ok(hip.hipGraphAddKernelNode(g, None, 0, p))
    value.value = 6                                        # bound by value at the add: no effect
    exe = ok(hip.hipGraphInstantiateWithFlags(g, 0))
    ok(hip.hipGraphLaunch(exe, None) + (None,))
    assert list(read(d, 4)) == [5] * 4
    got = ok(hip.hipGraphKernelNodeGetParams(node))
    assert (got.gridDim.x, got.blockDim.x, int(got.func)) == (1, 64, int(p.func))
    ok(hip.hipGraphExecKernelNodeSetParams(exe, node, p) + (None,))   # now 6, in the exec only
    ok(hip.hipGraphLaunch(exe, None) + (None,))
    assert list(read(d, 4)) == [6] * 4
    clone = ok(hip.hipGraphClone(g))                       # the graph still fills 5
    assert hip.hipGraphExecUpdate(exe, clone, None) == (OK, hip.hipGraphExecUpdateResult(0))
    ok(hip.hipGraphLaunch(exe, None) + (None,))
    assert list(read(d, 4)) == [5] * 4
    ok(hip.hipGraphAddEmptyNode(clone, None, 0))
    err, result = hip.hipGraphExecUpdate(exe, clone, None)
    assert err == E.hipErrorGraphExecUpdateFailure and int(result) == 2   # topology changed
    p.gridDim.y = 0
    assert hip.hipGraphAddKernelNode(g, None, 0, p)[0] == E.hipErrorInvalidConfiguration
    p.gridDim.y, p.func = 1, hip.ihipModuleSymbol_t(0x77)
    assert hip.hipGraphAddKernelNode(g, None, 0, p)[0] == E.hipErrorInvalidDeviceFunction
    empty = ok(hip.hipGraphAddEmptyNode(g, None, 0))
    assert hip.hipGraphKernelNodeGetParams(empty)[0] == E.hipErrorInvalidValue
    assert ok(hip.hipGraphExecGetFlags(exe)) == 0 and hip.hipGraphUpload(exe, None) == (OK,)


def test_event_nodes_and_child_graphs(tmp_path):
    d = ok(hip.hipMalloc(16))
    ev = ok(hip.hipEventCreate())
    child = ok(hip.hipGraphCreate(0))
    ok(memset_node(child, None, d, 7))
    g = ok(hip.hipGraphCreate(0))
    sub = ok(hip.hipGraphAddChildGraphNode(g, None, 0, child))
    ok(hip.hipGraphAddEventRecordNode(g, [sub], 1, ev))
    ok(memset_node(child, None, d, 9))                     # the node holds a copy of the child
    assert hip.hipGraphAddChildGraphNode(g, None, 0, g)[0] == E.hipErrorInvalidValue
    s = ok(hip.hipStreamCreate())
    exe = ok(hip.hipGraphInstantiateWithFlags(g, 0))
    ok(hip.hipGraphLaunch(exe, s) + (None,))
    assert hip.hipEventQuery(ev) == (OK,)                  # ran when the query polled the device
    other = ok(hip.hipStreamCreate())
    waits = ok(hip.hipGraphCreate(0))
    ok(hip.hipGraphAddEventWaitNode(waits, None, 0, ev))
    ok(hip.hipGraphLaunch(ok(hip.hipGraphInstantiateWithFlags(waits, 0)), other) + (None,))
    ok(hip.hipStreamSynchronize(other) + (None,))
    assert list(read(d, 4)) == [7] * 4
    path = tmp_path / "g.dot"
    ok(hip.hipGraphDebugDotPrint(g, str(path).encode(), 0) + (None,))
    assert path.read_text().startswith("digraph") and "-> " in path.read_text()
    assert hip.hipGraphDebugDotPrint(g, str(tmp_path / "no" / "g.dot"), 0) == (E.hipErrorOperatingSystem,)


def test_instantiate_with_params_takes_flags_and_an_upload_stream():
    g = ok(hip.hipGraphCreate(0))
    ok(hip.hipGraphAddEmptyNode(g, None, 0))
    p = hip.hipGraphInstantiateParams()
    p.flags, p.uploadStream = hip.hipGraphInstantiateFlagUpload, ok(hip.hipStreamCreate())
    p.result_out = type(p.result_out)(1)   # hipGraphInstantiateError, to be overwritten
    exe = ok(hip.hipGraphInstantiateWithParams(g, p))
    assert ok(hip.hipGraphExecGetFlags(exe)) == 2 and int(p.result_out) == 0
    p.flags = 0x100
    assert hip.hipGraphInstantiateWithParams(g, p) == (E.hipErrorInvalidValue, None)
    p.flags, p.uploadStream = 0, hip.ihipStream_t(0x1234)
    assert hip.hipGraphInstantiateWithParams(g, p) == (E.hipErrorInvalidHandle, None)


def test_capture_into_an_existing_graph_after_its_nodes(kernels):
    d = ok(hip.hipMalloc(16))
    g = ok(hip.hipGraphCreate(0))
    first = ok(memset_node(g, None, d, 1))
    s = ok(hip.hipStreamCreate())
    mode = hip.hipStreamCaptureMode.hipStreamCaptureModeGlobal
    ok(hip.hipStreamBeginCaptureToGraph(s, g, [first], None, 1, mode) + (None,))
    kernels.launch("fill_u32", int(d), ctypes.c_uint32(4), ctypes.c_uint32(4), stream=s)
    assert ok(hip.hipStreamEndCapture(s)) == g             # the same graph, one node more
    nodes, n = ok(hip.hipGraphGetNodes(g))
    assert n == 2 and ok(hip.hipGraphNodeGetDependencies(nodes[1])) == ([first], 1)
    ok(hip.hipGraphAddDependencies(g, [nodes[1]], [first], 1) + (None,))   # now: fill, then memset
    ok(hip.hipGraphRemoveDependencies(g, [first], [nodes[1]], 1) + (None,))
    ok(hip.hipGraphLaunch(ok(hip.hipGraphInstantiateWithFlags(g, 0)), s) + (None,))
    ok(hip.hipStreamSynchronize(s) + (None,))
    assert list(read(d, 4)) == [1] * 4                     # the memset ran last
    other = ok(hip.hipGraphCreate(0))
    assert hip.hipStreamBeginCaptureToGraph(s, other, [first], None, 1, mode) == (E.hipErrorInvalidValue,)
    assert hip.hipStreamIsCapturing(s)[1] == hip.hipStreamCaptureStatus(0)
