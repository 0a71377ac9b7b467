"""The cuda backend's bodies of the graph calls (catalogue family ``graph``): stream
capture, graphs built node by node, kernel nodes, edges and queries, instantiation and
launch, over cuda-bindings' runtime and, where hrr's kernels live (driver functions and
kernarg buffers), libcuda's own kernel-node calls through ctypes.

A call that is one CUDA call is a table entry (``onecall.one_call``); each body is
registered with ``@body`` or ``body.table``.
"""
from __future__ import annotations

import ctypes
from typing import Any, Callable

from hrr import hiptypes as ht
from hrr.api.roles import node_launch_args
from hrr.backends.bodies import Bodies
from hrr.backends.cuda import _runtime, modules
from hrr.backends.cuda._errors import SUCCESS
from hrr.backends.cuda._errors import hip_error as _err
from hrr.backends.cuda._runtime import STATE as S
from hrr.backends.cuda.onecall import as_int as _int
from hrr.backends.cuda.onecall import new as _new
from hrr.backends.cuda.onecall import one_call as C
from hrr.hiptypes.kernargs import LaunchArgsError, kernarg_array, pack_kernel_args
from hrr.backends.surface import HipError, dims

E = ht.hipError_t
CU_LAUNCH_PARAM_END = 0   # CUDA's; HIP's is 3

body = Bodies("graph")


def _status(v: Any) -> ht.hipStreamCaptureStatus:
    return ht.hipStreamCaptureStatus(int(v or 0))


def _live(cls: type) -> Callable[[Any], Any]:
    """A handle output where CUDA's NULL handle means none."""
    return lambda v: cls(int(v)) if v is not None and int(v) else None


def _node_out(v: Any) -> Any:
    return ht.hipGraphNode(int(v)) if v is not None and int(v) else None


# ------------------------------------------------------------------ capture
@body
def hipThreadExchangeStreamCaptureMode(mode: ht.hipStreamCaptureMode | None) -> tuple:
    """Exchange this thread's capture mode; without ``mode`` (hip-python's binding cannot
    pass one in) just report the current mode, leaving it unchanged."""
    if mode is None:
        err, prev = S.rt.cudaThreadExchangeStreamCaptureMode(0)
        if int(err) == 0:
            S.rt.cudaThreadExchangeStreamCaptureMode(int(prev))
    else:
        err, prev = S.rt.cudaThreadExchangeStreamCaptureMode(int(mode))
    if int(err):
        return (_err(err), None)
    return (SUCCESS, ht.hipStreamCaptureMode(int(prev)))


@body
def hipStreamGetCaptureInfo_v2(stream: int, dependencies_out: Any) -> tuple:
    """cudaStreamGetCaptureInfo: status, id, graph and the dependency count (its last
    output in CUDA 12 and 13 alike)."""
    res = S.rt.cudaStreamGetCaptureInfo(int(stream))
    if int(res[0]):
        return (_err(res[0]), None, None, None, None)
    graph = res[3]
    return (SUCCESS, ht.hipStreamCaptureStatus(int(res[1])), int(res[2]),
            ht.ihipGraph(int(graph)) if graph is not None and int(graph) else None, int(res[-1] or 0))


# ------------------------------------------------------------------ graph construction
@body
def hipStreamBeginCaptureToGraph(stream: int, graph: int, dependencies: Any, dependencyData: Any,
                                 numDependencies: Any, mode: Any) -> tuple:
    deps = _nodes(dependencies, numDependencies)
    if dependencyData is not None and ht.as_address(dependencyData):
        return (E.hipErrorNotSupported,)
    return (_err(S.rt.cudaStreamBeginCaptureToGraph(stream, graph, deps, None, len(deps), int(mode))[0]),)


def _nodes(deps: Any, n: Any) -> list:
    """The first ``n`` dependency handles as cuda-bindings' node objects."""
    items = list(deps) if isinstance(deps, (list, tuple)) else [] if deps is None else [deps]
    if int(n) > len(items) or int(n) < 0:
        raise HipError(E.hipErrorInvalidValue, f"numDependencies is {n} but {len(items)} nodes were given")
    return [S.rt.cudaGraphNode_t(ht.as_handle_value(x)) for x in items[:int(n)]]


def _added(res: Any) -> tuple:
    return (_err(res[0]), _node_out(res[1]) if int(res[0]) == 0 else None)


@body
def hipGraphAddEmptyNode(graph: int, pDependencies: Any, numDependencies: Any) -> tuple:
    deps = _nodes(pDependencies, numDependencies)
    return _added(S.rt.cudaGraphAddEmptyNode(graph, deps, len(deps)))


@body
def hipGraphAddMemcpyNode1D(graph: int, pDependencies: Any, numDependencies: Any, dst: int, src: int,
                            count: Any, kind: Any) -> tuple:
    deps = _nodes(pDependencies, numDependencies)
    k = 3 if int(kind) == 1024 else int(kind)   # DeviceToDeviceNoCU is CUDA's DeviceToDevice
    return _added(S.rt.cudaGraphAddMemcpyNode1D(graph, deps, len(deps), dst, src, int(count), k))


@body
def hipGraphAddMemsetNode(graph: int, pDependencies: Any, numDependencies: Any, pMemsetParams: Any) -> tuple:
    deps = _nodes(pDependencies, numDependencies)
    p, q = pMemsetParams, S.rt.cudaMemsetParams()
    q.dst, q.elementSize, q.width = ht.as_address(p.dst), int(p.elementSize), int(p.width)
    q.height, q.pitch, q.value = int(p.height), int(p.pitch), int(p.value)
    return _added(S.rt.cudaGraphAddMemsetNode(graph, deps, len(deps), q))


@body
def hipGraphAddEventRecordNode(graph: int, pDependencies: Any, numDependencies: Any, event: int) -> tuple:
    deps = _nodes(pDependencies, numDependencies)
    return _added(S.rt.cudaGraphAddEventRecordNode(graph, deps, len(deps), event))


@body
def hipGraphAddEventWaitNode(graph: int, pDependencies: Any, numDependencies: Any, event: int) -> tuple:
    deps = _nodes(pDependencies, numDependencies)
    return _added(S.rt.cudaGraphAddEventWaitNode(graph, deps, len(deps), event))


@body
def hipGraphAddChildGraphNode(graph: int, pDependencies: Any, numDependencies: Any, childGraph: int) -> tuple:
    deps = _nodes(pDependencies, numDependencies)
    return _added(S.rt.cudaGraphAddChildGraphNode(graph, deps, len(deps), childGraph))


class _HostNodeParams(ctypes.Structure):
    _fields_ = [("fn", ctypes.c_void_p), ("userData", ctypes.c_void_p)]


@body
def hipGraphAddHostNode(graph: int, pDependencies: Any, numDependencies: Any, pNodeParams: Any) -> tuple:
    """Through libcuda's cuGraphAddHostNode (ctypes), for the reason hipLaunchHostFunc gives."""
    addr = modules.host_fn_address(getattr(pNodeParams, "fn", None))
    if not addr:
        return (E.hipErrorInvalidValue, None)
    params = _HostNodeParams(addr, ht.as_address(getattr(pNodeParams, "userData", None)) or None)
    return _libcuda_add("cuGraphAddHostNode", graph, pDependencies, numDependencies, ctypes.byref(params))


def _libcuda_add(name: str, graph: int, deps: Any, n: Any, params: Any) -> tuple:
    handles = [ht.as_handle_value(x) for x in (list(deps) if isinstance(deps, (list, tuple))
                                                else [] if deps is None else [deps])]
    if int(n) > len(handles) or int(n) < 0:
        return (E.hipErrorInvalidValue, None)
    arr = (ctypes.c_void_p * max(int(n), 1))(*handles[:int(n)])
    node = ctypes.c_void_p()
    _runtime.ensure_context()
    res = getattr(S.libcuda, name)(ctypes.byref(node), ctypes.c_void_p(int(graph)), arr, ctypes.c_size_t(int(n)),
                                   params)
    return (_err(res), _node_out(node.value) if res == 0 else None)


# ------------------------------------------------------------------ kernel nodes
class _KernelNodeParams(ctypes.Structure):
    """CUDA_KERNEL_NODE_PARAMS_v2 (cuda.h)."""

    _fields_ = [("func", ctypes.c_void_p), ("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint),
                ("gridDimZ", ctypes.c_uint), ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint),
                ("blockDimZ", ctypes.c_uint), ("sharedMemBytes", ctypes.c_uint),
                ("kernelParams", ctypes.c_void_p), ("extra", ctypes.c_void_p), ("kern", ctypes.c_void_p),
                ("ctx", ctypes.c_void_p)]


def _kernel_params(p: Any) -> tuple[_KernelNodeParams, Any]:
    """A hipKernelNodeParams as CUDA's struct, its arguments packed by the function's layout
    into a raw ``extra`` (kept alive by the second item until the call returned)."""
    if p is None:
        raise HipError(E.hipErrorInvalidValue, "pNodeParams is NULL")
    fh = ht.as_handle_value(getattr(p, "func", None))
    layout = modules._layouts.get(fh)  # noqa: SLF001 - the backend's own function table
    if layout is None:
        raise HipError(E.hipErrorInvalidDeviceFunction, "not a function from hipModuleGetFunction")
    try:
        kernarg = pack_kernel_args(layout, *node_launch_args(p))
    except (LaunchArgsError, ht.PointerConversionError, ValueError):
        raise HipError(E.hipErrorInvalidValue, "kernel node arguments") from None
    grid, block = dims(p.gridDim), dims(p.blockDim)
    arr, keep = kernarg_array(kernarg)
    arr[4] = CU_LAUNCH_PARAM_END
    q = _KernelNodeParams(fh, *grid, *block, int(getattr(p, "sharedMemBytes", 0) or 0), None,
                          ctypes.addressof(arr) if kernarg else None, None, None)
    return q, (arr, keep)


def _cu(name: str) -> Any:
    """libcuda's ``name``_v2 where it has one (CUDA 12's struct), else ``name``."""
    return getattr(S.libcuda, name + "_v2", None) or getattr(S.libcuda, name)


@body
def hipGraphAddKernelNode(graph: int, pDependencies: Any, numDependencies: Any, pNodeParams: Any) -> tuple:
    q, keep = _kernel_params(pNodeParams)
    out = _libcuda_add(_cu_name("cuGraphAddKernelNode"), graph, pDependencies, numDependencies, ctypes.byref(q))
    del keep
    return out


def _cu_name(name: str) -> str:
    return name + "_v2" if hasattr(S.libcuda, name + "_v2") else name


@body
def hipGraphKernelNodeSetParams(node: int, pNodeParams: Any) -> tuple:
    q, keep = _kernel_params(pNodeParams)
    _runtime.ensure_context()
    res = _cu("cuGraphKernelNodeSetParams")(ctypes.c_void_p(int(node)), ctypes.byref(q))
    del keep
    return (_err(res),)


@body
def hipGraphExecKernelNodeSetParams(hGraphExec: int, node: int, pNodeParams: Any) -> tuple:
    q, keep = _kernel_params(pNodeParams)
    _runtime.ensure_context()
    res = _cu("cuGraphExecKernelNodeSetParams")(ctypes.c_void_p(int(hGraphExec)), ctypes.c_void_p(int(node)),
                                                ctypes.byref(q))
    del keep
    return (_err(res),)


@body
def hipGraphKernelNodeGetParams(node: int) -> tuple:
    q = _KernelNodeParams()
    _runtime.ensure_context()
    res = _cu("cuGraphKernelNodeGetParams")(ctypes.c_void_p(int(node)), ctypes.byref(q))
    if res != 0:
        return (_err(res), None)
    return (SUCCESS, ht.ReplayKernelNodeParams(
        func=ht.ihipModuleSymbol_t(q.func or 0), gridDim=ht.dim3(q.gridDimX, q.gridDimY, q.gridDimZ),
        blockDim=ht.dim3(q.blockDimX, q.blockDimY, q.blockDimZ), sharedMemBytes=q.sharedMemBytes,
        kernelParams=ht.Pointer(q.kernelParams or 0), extra=ht.Pointer(q.extra or 0)))


# ------------------------------------------------------------------ edges and queries
def _pairs(from_: Any, to: Any, n: Any) -> tuple[list, list]:
    return _nodes(from_, n), _nodes(to, n)


@body
def hipGraphAddDependencies(graph: int, from_: Any, to: Any, numDependencies: Any) -> tuple:
    a, b = _pairs(from_, to, numDependencies)
    # CUDA 13's form: per-edge data between the node lists (None: default edges)
    return (_err(S.rt.cudaGraphAddDependencies(graph, a, b, None, len(a))[0]),)


@body
def hipGraphRemoveDependencies(graph: int, from_: Any, to: Any, numDependencies: Any) -> tuple:
    a, b = _pairs(from_, to, numDependencies)
    return (_err(S.rt.cudaGraphRemoveDependencies(graph, a, b, None, len(a))[0]),)


def _listed(call: Callable[..., Any], handle: int) -> tuple:
    """A count query (``call(handle, 0)``), then the list (``call(handle, n)``): cuda-bindings
    takes the count in and gives the nodes, the count last."""
    res = call(handle, 0)
    n = int(res[-1] or 0) if not int(res[0]) else 0
    if not int(res[0]) and n:
        res = call(handle, n)
    if int(res[0]):
        return (_err(res[0]), None, None)
    nodes = [ht.hipGraphNode(int(x)) for x in (res[1] or [])][:n] if n else []
    return (SUCCESS, nodes, len(nodes))


@body
def hipGraphGetNodes(graph: int) -> tuple:
    return _listed(S.rt.cudaGraphGetNodes, graph)


@body
def hipGraphGetRootNodes(graph: int) -> tuple:
    return _listed(S.rt.cudaGraphGetRootNodes, graph)


@body
def hipGraphNodeGetDependencies(node: int) -> tuple:
    return _listed(S.rt.cudaGraphNodeGetDependencies, node)


@body
def hipGraphNodeGetDependentNodes(node: int) -> tuple:
    return _listed(S.rt.cudaGraphNodeGetDependentNodes, node)


@body
def hipGraphGetEdges(graph: int) -> tuple:
    res = S.rt.cudaGraphGetEdges(graph, 0)
    if int(res[0]):
        return (_err(res[0]), None, None, None)
    n = int(res[-1])
    if n:
        res = S.rt.cudaGraphGetEdges(graph, n)
        if int(res[0]):
            return (_err(res[0]), None, None, None)
    a = [ht.hipGraphNode(int(x)) for x in (res[1] or [])][:n] if n else []
    b = [ht.hipGraphNode(int(x)) for x in (res[2] or [])][:n] if n else []
    return (SUCCESS, a, b, n)


@body
def hipGraphExecUpdate(hGraphExec: int, hGraph: int, hErrorNode_out: Any) -> tuple:
    """cudaGraphExecUpdate (CUDA 12: a result-info struct whose ``result`` is HIP's value)."""
    res = S.rt.cudaGraphExecUpdate(hGraphExec, hGraph)
    info = res[1] if len(res) > 1 else None
    result = getattr(info, "result", info)
    return (_err(res[0]), None if result is None else ht.hipGraphExecUpdateResult(int(result)))


@body
def hipGraphInstantiateWithParams(graph: int, instantiateParams: Any) -> tuple:
    p, q = instantiateParams, S.rt.cudaGraphInstantiateParams()
    if p is None:
        return (E.hipErrorInvalidValue, None)
    q.flags = int(getattr(p, "flags", 0) or 0)
    q.uploadStream = ht.as_handle_value(getattr(p, "uploadStream", None))
    res = S.rt.cudaGraphInstantiateWithParams(graph, q)
    return (_err(res[0]), ht.hipGraphExec(int(res[1])) if int(res[0]) == 0 and res[1] is not None else None)


@body
def hipGraphDebugDotPrint(graph: int, path: Any, flags: Any) -> tuple:
    name = path if isinstance(path, (bytes, bytearray)) else str(path).encode()
    return (_err(S.rt.cudaGraphDebugDotPrint(graph, bytes(name), int(flags))[0]),)


# Calls that are one CUDA call (see onecall.one_call): its name, how each output converts and,
# where they differ from the row's, the CUDA call's arguments.
body.table({
    "hipStreamBeginCapture": C("rt.cudaStreamBeginCapture"),
    "hipStreamEndCapture": C("rt.cudaStreamEndCapture", _live(ht.ihipGraph)),
    "hipStreamIsCapturing": C("rt.cudaStreamIsCapturing", _status),
    "hipStreamGetCaptureInfo": C("rt.cudaStreamGetCaptureInfo", _status, _int),
    "hipGraphCreate": C("rt.cudaGraphCreate", _new(ht.ihipGraph)),
    "hipGraphClone": C("rt.cudaGraphClone", _new(ht.ihipGraph)),
    "hipGraphNodeGetType": C("rt.cudaGraphNodeGetType", lambda v: None if v is None
                             else ht.hipGraphNodeType(int(v))),
    "hipGraphDestroyNode": C("rt.cudaGraphDestroyNode"),
    "hipGraphInstantiate": C("rt.cudaGraphInstantiate", _new(ht.hipGraphExec), lambda v: None, lambda v: ht.CStr(b""),
                             args=lambda g, size: (g, 0)),
    "hipGraphInstantiateWithFlags": C("rt.cudaGraphInstantiateWithFlags", _new(ht.hipGraphExec)),
    "hipGraphUpload": C("rt.cudaGraphUpload"),
    "hipGraphLaunch": C("rt.cudaGraphLaunch"),
    "hipGraphExecGetFlags": C("rt.cudaGraphExecGetFlags", _int),
    "hipGraphExecDestroy": C("rt.cudaGraphExecDestroy"),
    "hipGraphDestroy": C("rt.cudaGraphDestroy"),
})
