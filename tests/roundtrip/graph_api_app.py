"""An app that calls every stream, event and graph row of issue 10 (hipStreamAddCallback
and hipGraphAddHostNode aside: application host code, which no archive can replay).
every_api_app calls it; the graph round-trip tests call it alone."""
from __future__ import annotations

import ctypes
import os
import tempfile

import numpy as np

# Real bodies: the cuda backend compiles them with NVRTC, the sim for the CPU.
KERNELS = b"""
extern "C" __global__ void fill_u32(unsigned int* dst, unsigned int value, unsigned int n) {
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) dst[i] = value;
}
extern "C" __global__ void add_u32(unsigned int* dst, const unsigned int* a, const unsigned int* b, unsigned int n) {
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) dst[i] = a[i] + b[i];
}
"""


def ok(result):
    assert int(result[0]) == 0, result
    return result[1] if len(result) == 2 else result[1:]


def module(hip, hiprtc):
    """The fill_u32/add_u32 module, compiled with hiprtc as an app would."""
    err, prog = hiprtc.hiprtcCreateProgram(KERNELS, b"g.cu", 0, [], [])
    assert int(err) == 0
    assert int(hiprtc.hiprtcCompileProgram(prog, 0, [])[0]) == 0
    code = bytearray(hiprtc.hiprtcGetCodeSize(prog)[1])
    hiprtc.hiprtcGetCode(prog, code)
    hiprtc.hiprtcDestroyProgram(prog)
    return ok(hip.hipModuleLoadData(bytes(code)))


def kernel_node_params(hip, fn, n, keep, *args):
    """A hipKernelNodeParams for ``fn`` over ``n`` threads with kernelParams ``args``."""
    p = hip.hipKernelNodeParams()
    p.func = fn
    p.gridDim.x, p.gridDim.y, p.gridDim.z = 1, 1, 1
    p.blockDim.x, p.blockDim.y, p.blockDim.z = n, 1, 1
    p.sharedMemBytes = 0
    arr = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
    keep += [arr, *args]
    p.kernelParams = arr
    return p


def exercise_streams(hip) -> dict:
    out = {}
    D2H = hip.hipMemcpyKind.hipMemcpyDeviceToHost
    s = ok(hip.hipStreamCreateWithPriority(hip.hipStreamNonBlocking, -1))
    assert ok(hip.hipStreamGetFlags(s)) == 1
    ok(hip.hipStreamGetPriority(s))
    assert ok(hip.hipStreamGetDevice(s)) == 0
    ok(hip.hipStreamGetId(s))
    d = ok(hip.hipMalloc(16))
    ok(hip.hipMemset(d, 0, 16) + (None,))
    assert hip.hipStreamWriteValue64(s, int(d), (7 << 40) | 5, 0)[0] == 0
    assert hip.hipStreamWaitValue64(s, int(d), (7 << 40) | 5, hip.hipStreamWaitValueEq, (1 << 64) - 1)[0] == 0
    ev = ok(hip.hipEventCreate())
    assert hip.hipEventRecordWithFlags(ev, s, 0)[0] == 0
    assert hip.hipEventSynchronize(ev)[0] == 0
    assert hip.hipStreamBeginCapture(s, hip.hipStreamCaptureMode.hipStreamCaptureModeGlobal)[0] == 0
    status = hip.hipStreamGetCaptureInfo_v2(s, None)
    assert int(status[0]) == 0 and int(status[1]) == 1, status
    graph = ok(hip.hipStreamEndCapture(s))
    # more work captured into that graph, after its (empty) capture: a second capture, its nodes
    root = ok(hip.hipGraphAddEmptyNode(graph, None, 0))
    ok(hip.hipStreamBeginCaptureToGraph(s, graph, [root], None, 1,
                                        hip.hipStreamCaptureMode.hipStreamCaptureModeGlobal) + (None,))
    assert hip.hipStreamWriteValue64(s, int(d) + 8, 11, 0)[0] == 0
    assert ok(hip.hipStreamEndCapture(s)) == graph
    exe = ok(hip.hipGraphInstantiateWithFlags(graph, 0))
    ok(hip.hipGraphLaunch(exe, s) + (None,))
    ok(hip.hipStreamSynchronize(s) + (None,))
    ok(hip.hipGraphExecDestroy(exe) + (None,))
    word = np.zeros(2, np.uint64)
    ok(hip.hipMemcpy(word, d, 16, D2H) + (None,))
    out["value64"] = word.copy()
    for call in (hip.hipGraphDestroy(graph), hip.hipEventDestroy(ev), hip.hipFree(d), hip.hipStreamDestroy(s)):
        assert int(call[0]) == 0, call
    return out


def exercise_graphs(hip, hiprtc) -> dict:
    """Builds a graph node by node, edits it, runs it; returns what it computed."""
    out = {}
    H2D = hip.hipMemcpyKind.hipMemcpyHostToDevice
    D2H = hip.hipMemcpyKind.hipMemcpyDeviceToHost
    n, nbytes = 32, 128
    mod = module(hip, hiprtc)
    fill = ok(hip.hipModuleGetFunction(mod, b"fill_u32"))
    add = ok(hip.hipModuleGetFunction(mod, b"add_u32"))
    a, b, c = (ok(hip.hipMalloc(nbytes)) for _ in range(3))
    keep: list = []
    s = ok(hip.hipStreamCreate())
    ev = ok(hip.hipEventCreate())
    g = ok(hip.hipGraphCreate(0))
    src = np.arange(n, dtype=np.uint32) * 5 + 1
    h2d = ok(hip.hipGraphAddMemcpyNode1D(g, None, 0, a, src, nbytes, H2D))
    mp = hip.hipMemsetParams(dst=b, elementSize=4, width=n, height=1, pitch=0, value=3)
    mset = ok(hip.hipGraphAddMemsetNode(g, None, 0, mp))
    # a child graph that fills b after the memset (its event wait names ev's last record)
    child = ok(hip.hipGraphCreate(0))
    fp = kernel_node_params(hip, fill, n, keep, ctypes.c_void_p(int(b)), ctypes.c_uint32(9), ctypes.c_uint32(n))
    kfill = ok(hip.hipGraphAddKernelNode(child, None, 0, fp))
    assert ok(hip.hipGraphAddEventWaitNode(child, [kfill], 1, ev))
    sub = ok(hip.hipGraphAddChildGraphNode(g, [mset], 1, child))
    join = ok(hip.hipGraphAddEmptyNode(g, [h2d, sub], 2))
    kp = kernel_node_params(hip, add, n, keep, ctypes.c_void_p(int(c)), ctypes.c_void_p(int(a)),
                            ctypes.c_void_p(int(b)), ctypes.c_uint32(n))
    kadd = ok(hip.hipGraphAddKernelNode(g, [join], 1, kp))
    rec = ok(hip.hipGraphAddEventRecordNode(g, [kadd], 1, ev))
    res = np.zeros(n, np.uint32)
    d2h = ok(hip.hipGraphAddMemcpyNode1D(g, [kadd], 1, res, c, nbytes, D2H))
    ok(hip.hipGraphAddDependencies(g, [rec], [d2h], 1) + (None,))
    ok(hip.hipGraphRemoveDependencies(g, [rec], [d2h], 1) + (None,))
    spare = ok(hip.hipGraphAddEmptyNode(g, [d2h], 1))
    ok(hip.hipGraphDestroyNode(spare) + (None,))
    nodes, count = ok(hip.hipGraphGetNodes(g))
    assert count == 7, count
    roots, nroots = ok(hip.hipGraphGetRootNodes(g))
    assert nroots == 2, nroots
    frm, to, nedges = ok(hip.hipGraphGetEdges(g))
    assert nedges == 6, nedges
    assert int(ok(hip.hipGraphNodeGetType(kadd))) == int(hip.hipGraphNodeType.hipGraphNodeTypeKernel)
    for node in nodes:
        ok(hip.hipGraphNodeGetType(node))
    assert ok(hip.hipGraphNodeGetDependencies(join))[1] == 2
    assert ok(hip.hipGraphNodeGetDependentNodes(kadd))[1] == 2
    got = ok(hip.hipGraphKernelNodeGetParams(kadd))
    assert got.gridDim.x == 1 and got.blockDim.x == n
    ok(hip.hipGraphKernelNodeSetParams(kadd, kp) + (None,))
    clone = ok(hip.hipGraphClone(g))
    exe = ok(hip.hipGraphInstantiateWithFlags(g, 0))
    assert ok(hip.hipGraphExecGetFlags(exe)) == 0
    ip = hip.hipGraphInstantiateParams()
    ip.flags, ip.uploadStream = hip.hipGraphInstantiateFlagUpload, s
    exe2 = ok(hip.hipGraphInstantiateWithParams(clone, ip))
    # HIP reports the flags it was instantiated with; CUDA documents that it never reports
    # the upload flag (it does not change the executable graph)
    assert ok(hip.hipGraphExecGetFlags(exe2)) in (int(hip.hipGraphInstantiateFlagUpload), 0)
    ok(hip.hipGraphExecDestroy(exe2) + (None,))
    ok(hip.hipGraphUpload(exe, s) + (None,))
    ok(hip.hipGraphLaunch(exe, s) + (None,))
    ok(hip.hipStreamSynchronize(s) + (None,))
    ok(hip.hipDeviceSynchronize() + (None,))
    out["graph_add"] = res.copy()
    # the executable graph's add becomes a fill of c, its copy delivers it at the next launch
    fc = kernel_node_params(hip, fill, n, keep, ctypes.c_void_p(int(c)), ctypes.c_uint32(41), ctypes.c_uint32(n))
    ok(hip.hipGraphExecKernelNodeSetParams(exe, kadd, fc) + (None,))
    ok(hip.hipGraphLaunch(exe, s) + (None,))
    ok(hip.hipDeviceSynchronize() + (None,))
    out["graph_exec_set"] = res.copy()
    # an update from the (unchanged) clone puts the add back
    result = hip.hipGraphExecUpdate(exe, clone, None)
    assert int(result[0]) == 0, result
    ok(hip.hipGraphLaunch(exe, s) + (None,))
    ok(hip.hipDeviceSynchronize() + (None,))
    out["graph_updated"] = res.copy()
    path = os.path.join(tempfile.mkdtemp(), "g.dot")
    ok(hip.hipGraphDebugDotPrint(g, path.encode(), 1) + (None,))
    for call in (hip.hipGraphExecDestroy(exe), hip.hipGraphDestroy(clone), hip.hipGraphDestroy(child),
                 hip.hipGraphDestroy(g), hip.hipEventDestroy(ev), hip.hipStreamDestroy(s), hip.hipFree(a),
                 hip.hipFree(b), hip.hipFree(c), hip.hipModuleUnload(mod)):
        assert int(call[0]) == 0, call
    return out


def exercise(hip, hiprtc, backend=None) -> dict:
    return {**exercise_streams(hip), **exercise_graphs(hip, hiprtc)}
