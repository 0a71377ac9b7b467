"""The sim's bodies of the graph and stream-capture calls (catalogue family ``graph``),
over ``graphs.py``.

Each body is registered with ``@body`` (``hrr.backends.bodies``); ``api.py`` builds
``hip`` from them.
"""
from __future__ import annotations

import ctypes
from typing import Any, Callable

import attrs

from hrr import hiptypes as ht
from hrr.api.roles import memset_extent, node_launch_args  # the node readings capture uses
from hrr.backends.bodies import Bodies
from hrr.hiptypes import CStr, as_address, hipError_t, hipStreamCaptureMode, hipStreamCaptureStatus
from hrr.hiptypes.kernargs import LaunchArgsError, kernarg_array, pack_kernel_args
from hrr.backends.sim.device import current as _dev
from hrr.backends.sim.device import keep
from hrr.backends.sim.graphs import (
    CHILD,
    EMPTY,
    EVENT_RECORD,
    HOST,
    KERNEL,
    MEMCPY,
    MEMSET,
    WAIT_EVENT,
    Graph,
    GraphExec,
    GraphNode,
)
from hrr.backends.sim.kernels import Function, LaunchContext
from hrr.backends.sim.memory import MemoryError_
from hrr.backends.sim.streams import Event, Op, Stream
from hrr.backends.surface import HipError, dims

SUCCESS = hipError_t.hipSuccess


body = Bodies("graph")


# -- capture and graphs -------------------------------------------------------------------
@body
def hipStreamBeginCapture(s: Stream, mode: hipStreamCaptureMode) -> None:
    _dev().begin_capture(s, int(mode))


@body
def hipStreamEndCapture(s: Stream) -> tuple:
    dev = _dev()
    session = s.capture
    nodes = dev.end_capture(s)
    if session.into is not None:   # hipStreamBeginCaptureToGraph: the nodes joined that graph
        return (SUCCESS, captured_into(session.into, nodes, session.after))
    return (SUCCESS, keep("graph", lambda h: captured(h, nodes)))


@body
def hipStreamGetCaptureInfo(s: Stream) -> tuple:
    if s.capture is None:
        return (SUCCESS, hipStreamCaptureStatus(0), 0)
    return (SUCCESS, hipStreamCaptureStatus(s.capture.status), s.capture.id)


@body
def hipThreadExchangeStreamCaptureMode(mode: hipStreamCaptureMode | None) -> tuple:
    """hip-python takes no mode (the in/out argument is output only); passing one is an
    extension that sets this thread's mode."""
    dev = _dev()
    previous = dev.thread_capture_mode
    if mode is not None:
        dev.thread_capture_mode = int(mode)
    return (SUCCESS, hipStreamCaptureMode(previous))


@body
def hipGraphLaunch(exe: GraphExec, s: Stream) -> None:
    launch(exe, s)


def node_handle() -> int:
    """A fresh graph-node handle value (the node is put in the device's table by ``_add``)."""
    return _dev().new_handle("graph_node")


def _register(graph: Graph) -> Graph:
    for node in graph.nodes:
        _dev().graph_nodes[node.handle] = (node, graph)
    return graph


def captured(handle: int, factories: tuple) -> Graph:
    """The graph a stream capture made (hipStreamEndCapture), its nodes' handles live."""
    return _register(Graph.from_capture(handle, factories, node_handle))


def captured_into(graph: Graph, factories: tuple, after: list) -> ht.ihipGraph:
    """hipStreamEndCapture of a capture begun with hipStreamBeginCaptureToGraph: the work
    joins ``graph`` after the nodes ``after`` (those still in it); its handle."""
    dev = _dev()
    if dev.graphs.get(graph.handle) is not graph:
        raise HipError("hipErrorInvalidValue", "the graph captured into was destroyed")
    for node in graph.add_chain(factories, [n for n in after if n in graph.nodes], node_handle):
        dev.graph_nodes[node.handle] = (node, graph)
    return ht.ihipGraph(graph.handle)


@body
def hipStreamBeginCaptureToGraph(stream: Stream, graph: Graph, dependencies: Any, dependencyData: Any,
                                 numDependencies: int, mode: Any) -> None:
    """hipStreamBeginCapture whose nodes join ``graph`` after ``dependencies`` (edge data,
    which only CUDA's programmatic dependencies use, must be absent)."""
    if dependencyData is not None and as_address(dependencyData):
        raise HipError("hipErrorNotSupported", "hipStreamBeginCaptureToGraph: edge data is not supported")
    after = _deps(graph, dependencies, numDependencies)
    dev = _dev()
    dev.begin_capture(stream, int(mode))
    stream.capture.into, stream.capture.after = graph, after


def _node(obj: Any) -> tuple[GraphNode, Graph]:
    """A node and its graph, from a node handle (or a handle parameter already looked up)."""
    if isinstance(obj, tuple):
        return obj
    dev = _dev()
    return dev.lookup(dev.graph_nodes, obj, "graph node", "hipErrorInvalidValue")


def _handle(node: GraphNode) -> ht.hipGraphNode:
    return ht.hipGraphNode(node.handle)


@body
def hipStreamGetCaptureInfo_v2(s: Stream, dependencies_out: Any) -> tuple:
    """Status, capture id, graph (None: the sim makes the graph when the capture ends) and
    the number of nodes the next captured work depends on (the capture is a chain)."""
    if s.capture is None:
        return (SUCCESS, ht.hipStreamCaptureStatus(0), 0, None, 0)
    c = s.capture
    return (SUCCESS, ht.hipStreamCaptureStatus(c.status), c.id, None, min(len(c.nodes), 1))


# -- graphs: construction -----------------------------------------------------------------
@body
def hipGraphCreate(flags: int) -> tuple:
    if int(flags) != 0:
        raise HipError("hipErrorInvalidValue", "hipGraphCreate: flags must be 0")
    return (SUCCESS, _dev().keep("graph", lambda h: Graph(h)))


def _deps(graph: Graph, deps: Any, n: Any) -> list[GraphNode]:
    """The first ``n`` nodes of ``deps``, each a node of ``graph``, none twice."""
    n = int(n)
    items = list(deps) if isinstance(deps, (list, tuple)) else [] if deps is None else [deps]
    if n < 0 or n > len(items):
        raise HipError("hipErrorInvalidValue", f"numDependencies is {n} but {len(items)} nodes were given")
    out = []
    for obj in items[:n]:
        node, owner = _node(obj)
        if owner is not graph or node in out:
            raise HipError("hipErrorInvalidValue", "a dependency is not a node of this graph, or is named twice")
        out.append(node)
    return out


def _add(graph: Graph, deps: Any, n: Any, kind: int, make: Any, params: Any = None) -> tuple:
    node = GraphNode(node_handle(), kind, make, _deps(graph, deps, n), params)
    graph.nodes.append(node)
    _dev().graph_nodes[node.handle] = (node, graph)
    return (SUCCESS, _handle(node))


@attrs.frozen
class KernelParams:
    """A kernel node's launch, bound by value when it was set."""

    function: Function
    grid: tuple
    block: tuple
    shared: int
    kernargs: bytes


def _kernel_params(p: Any) -> KernelParams:
    if p is None:
        raise HipError("hipErrorInvalidValue", "pNodeParams is NULL")
    dev = _dev()
    fn = dev.lookup(dev.functions, getattr(p, "func", None), "kernel function", "hipErrorInvalidDeviceFunction")
    grid, block = dims(p.gridDim), dims(p.blockDim)
    if min(grid + block) < 1 or block[0] * block[1] * block[2] > 1024:
        raise HipError("hipErrorInvalidConfiguration", f"kernel node shape {grid} x {block}")
    try:
        kernargs = pack_kernel_args(fn.kernel.layout, *node_launch_args(p))
    except (LaunchArgsError, ht.PointerConversionError) as exc:
        raise HipError("hipErrorInvalidValue", f"kernel node arguments: {exc}") from None
    return KernelParams(fn, grid, block, int(getattr(p, "sharedMemBytes", 0) or 0), kernargs)


def _kernel_work(k: KernelParams) -> Callable[[], Op]:
    memory, kernel = _dev().memory, k.function.kernel

    def make() -> Op:
        def run() -> "bool | None":
            return kernel.impl(LaunchContext(kernel.name, k.kernargs, k.grid, k.block, memory.resolve_for_kernel,
                                             k.shared))
        return Op(f"{kernel.name}<<<{k.grid}, {k.block}>>>", run, 10.0)
    return make


@body
def hipGraphAddKernelNode(graph: Graph, pDependencies: Any, numDependencies: int, pNodeParams: Any) -> tuple:
    k = _kernel_params(pNodeParams)
    return _add(graph, pDependencies, numDependencies, KERNEL, _kernel_work(k), k)


@body
def hipGraphAddMemcpyNode1D(graph: Graph, pDependencies: Any, numDependencies: int, dst: int, src: int,
                            count: int, kind: Any) -> tuple:
    make = _dev().memory.copy_op(dst, src, count, kind)
    return _add(graph, pDependencies, numDependencies, MEMCPY, make)


@body
def hipGraphAddMemsetNode(graph: Graph, pDependencies: Any, numDependencies: int, pMemsetParams: Any) -> tuple:
    p = pMemsetParams
    if p is None:
        raise HipError("hipErrorInvalidValue", "pMemsetParams is NULL")
    dst, esize = as_address(p.dst), int(p.elementSize)
    width, height, pitch, value = int(p.width), int(p.height), int(p.pitch), int(p.value)
    if esize not in (1, 2, 4) or width < 0 or height < 1 or (height > 1 and pitch < width * esize):
        raise HipError("hipErrorInvalidValue", f"memset node: elementSize {esize}, width {width}, "
                                               f"height {height}, pitch {pitch}")
    n = memset_extent(esize, width, height, pitch)
    memory = _dev().memory
    try:
        memory.copy_endpoint(dst, n, True)
    except MemoryError_ as exc:
        raise HipError("hipErrorInvalidValue", f"memset node: {exc}") from None
    dtype = {1: "<u1", 2: "<u2", 4: "<u4"}[esize]
    word = value & ((1 << (8 * esize)) - 1)

    def make() -> Op:
        def run() -> None:
            view = memory.resolve_for_kernel(dst, n)
            for r in range(height):
                view[r * pitch:r * pitch + width * esize].view(dtype)[:] = word
        return Op(f"memset(0x{dst:x}, {word}, {width}x{height}x{esize})", run, 1.0 + n / 20_000)
    return _add(graph, pDependencies, numDependencies, MEMSET, make)


@body
def hipGraphAddEmptyNode(graph: Graph, pDependencies: Any, numDependencies: int) -> tuple:
    return _add(graph, pDependencies, numDependencies, EMPTY, None)


def _record_work(ev: Event) -> Callable[[], Op]:
    sched = _dev().scheduler

    def make() -> Op:
        ev.generation += 1
        generation = ev.generation

        def stamp() -> None:
            if ev.generation == generation:
                ev.timestamp_us = sched.clock_us
        return Op(f"record(event 0x{ev.handle:x})", stamp, 0.0)
    make.on_enqueue = lambda s: _recorded(ev, s)  # type: ignore[attr-defined]
    return make


def _recorded(ev: Event, s: Stream) -> None:
    ev.capture, ev.stream, ev.seq, ev.timestamp_us = None, s, s.enqueued, None


def _wait_work(ev: Event) -> Callable[[], Op]:
    def make() -> Op:
        deps = [] if ev.stream is None else [(ev.stream, ev.seq)]   # the event's last record, at launch
        return Op(f"wait(event 0x{ev.handle:x})", lambda: None, 0.0, deps)
    return make


@body
def hipGraphAddEventRecordNode(graph: Graph, pDependencies: Any, numDependencies: int, event: Event) -> tuple:
    return _add(graph, pDependencies, numDependencies, EVENT_RECORD, _record_work(event), event)


@body
def hipGraphAddEventWaitNode(graph: Graph, pDependencies: Any, numDependencies: int, event: Event) -> tuple:
    return _add(graph, pDependencies, numDependencies, WAIT_EVENT, _wait_work(event), event)


@body
def hipGraphAddChildGraphNode(graph: Graph, pDependencies: Any, numDependencies: int, childGraph: Graph) -> tuple:
    if childGraph is graph:
        raise HipError("hipErrorInvalidValue", "a graph cannot be its own child")
    child = childGraph.copy(0, lambda: 0)   # cloned into the node, as HIP does
    child.order()  # a cyclic child fails here, not at launch
    return _add(graph, pDependencies, numDependencies, CHILD, None, child)


_HOST_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@body
def hipGraphAddHostNode(graph: Graph, pDependencies: Any, numDependencies: int, pNodeParams: Any) -> tuple:
    fn_addr = as_address(getattr(pNodeParams, "fn", None))
    if not fn_addr:
        raise HipError("hipErrorInvalidValue", "hipGraphAddHostNode: NULL function")
    fn, data = _HOST_FN(fn_addr), as_address(getattr(pNodeParams, "userData", None))
    make = lambda: Op(f"host_fn(0x{fn_addr:x})", lambda: fn(data or None), 1.0)  # noqa: E731
    return _add(graph, pDependencies, numDependencies, HOST, make)


def _edges(graph: Graph, from_: Any, to: Any, n: Any) -> list[tuple[GraphNode, GraphNode]]:
    a, b = _deps_any(graph, from_, n), _deps_any(graph, to, n)
    return list(zip(a, b, strict=True))


def _deps_any(graph: Graph, nodes: Any, n: Any) -> list[GraphNode]:
    n = int(n)
    items = list(nodes) if isinstance(nodes, (list, tuple)) else [] if nodes is None else [nodes]
    if n < 0 or n > len(items):
        raise HipError("hipErrorInvalidValue", f"numDependencies is {n} but {len(items)} nodes were given")
    out = []
    for obj in items[:n]:
        node, owner = _node(obj)
        if owner is not graph:
            raise HipError("hipErrorInvalidValue", "a node is not in this graph")
        out.append(node)
    return out


@body
def hipGraphAddDependencies(graph: Graph, from_: Any, to: Any, numDependencies: int) -> None:
    edges = _edges(graph, from_, to, numDependencies)
    for a, b in edges:
        if a is b or any(d is a for d in b.deps):
            raise HipError("hipErrorInvalidValue", "a node cannot depend on itself or on the same node twice")
    for a, b in edges:
        b.deps.append(a)


@body
def hipGraphRemoveDependencies(graph: Graph, from_: Any, to: Any, numDependencies: int) -> None:
    edges = _edges(graph, from_, to, numDependencies)
    for a, b in edges:
        if not any(d is a for d in b.deps):
            raise HipError("hipErrorInvalidValue", "no such dependency")
    for a, b in edges:
        b.deps.remove(a)


# -- graphs: queries ----------------------------------------------------------------------
def _listed(nodes: list[GraphNode]) -> tuple:
    return (SUCCESS, [_handle(n) for n in nodes], len(nodes))


@body
def hipGraphGetNodes(graph: Graph) -> tuple:
    return _listed(graph.nodes)


@body
def hipGraphGetRootNodes(graph: Graph) -> tuple:
    return _listed([n for n in graph.nodes if not n.deps])


@body
def hipGraphGetEdges(graph: Graph) -> tuple:
    edges = [(d, n) for n in graph.nodes for d in n.deps]
    return (SUCCESS, [_handle(a) for a, _ in edges], [_handle(b) for _, b in edges], len(edges))


@body
def hipGraphNodeGetType(node: Any) -> tuple:
    return (SUCCESS, ht.hipGraphNodeType(_node(node)[0].node_type()))


@body
def hipGraphNodeGetDependencies(node: Any) -> tuple:
    return _listed(list(_node(node)[0].deps))


@body
def hipGraphNodeGetDependentNodes(node: Any) -> tuple:
    n, graph = _node(node)
    return _listed(graph.dependents(n))


def _kernel_node(node: Any) -> GraphNode:
    n = _node(node)[0]
    if n.type != KERNEL or not isinstance(n.params, KernelParams):
        raise HipError("hipErrorInvalidValue", "not a kernel node made with hipGraphAddKernelNode")
    return n


@body
def hipGraphKernelNodeGetParams(node: Any) -> tuple:
    """The node's kernel and shape; its arguments come back as a raw ``extra`` (the bytes
    bound when the node was set), since the app's kernelParams were copied, not kept."""
    k: KernelParams = _kernel_node(node).params
    extra, keep = kernarg_array(k.kernargs)
    params = ht.ReplayKernelNodeParams(func=ht.ihipModuleSymbol_t(k.function.handle), gridDim=ht.dim3(*k.grid),
                                       blockDim=ht.dim3(*k.block), sharedMemBytes=k.shared, kernelParams=None,
                                       extra=extra)
    params.__dict__["keepalive"] = keep   # the argument bytes its extra points at
    return (SUCCESS, params)


@body
def hipGraphKernelNodeSetParams(node: Any, pNodeParams: Any) -> None:
    n = _kernel_node(node)
    k = _kernel_params(pNodeParams)
    n.params, n.make = k, _kernel_work(k)


@body
def hipGraphExecKernelNodeSetParams(hGraphExec: GraphExec, node: Any, pNodeParams: Any) -> None:
    n = _kernel_node(node)
    slot = hGraphExec.slots.get(n.handle)
    if slot is None:
        raise HipError("hipErrorInvalidValue", "the node is not a kernel node of the executable graph")
    hGraphExec.nodes[slot] = _kernel_work(_kernel_params(pNodeParams))


# -- graphs: lifetime, executable graphs ---------------------------------------------------
def destroy_graph(graph: Graph) -> None:
    """hipGraphDestroy: the graph and its nodes' handles are gone (executable graphs stay)."""
    dev = _dev()
    dev.forget("graphs", graph)
    for node in graph.nodes:
        dev.graph_nodes.pop(node.handle, None)


@body
def hipGraphDestroyNode(node: Any) -> None:
    n, graph = _node(node)
    graph.nodes.remove(n)
    for other in graph.nodes:
        other.deps = [d for d in other.deps if d is not n]
    del _dev().graph_nodes[n.handle]


@body
def hipGraphClone(originalGraph: Graph) -> tuple:
    dev = _dev()
    handle = dev.keep("graph", lambda h: originalGraph.copy(h, node_handle))
    _register(dev.graphs[int(handle)])
    return (SUCCESS, handle)


@body
def hipGraphExecUpdate(hGraphExec: GraphExec, hGraph: Graph, hErrorNode_out: Any) -> tuple:
    """Take ``hGraph``'s node parameters into the executable graph when it has the same
    topology and node types as the graph it was made from."""
    R = ht.hipGraphExecUpdateResult
    failed = hipError_t.hipErrorGraphExecUpdateFailure
    src = hGraphExec.source
    if src is None or len(src.nodes) != len(hGraph.nodes):
        return (failed, R.hipGraphExecUpdateErrorTopologyChanged)
    index = {id(n): k for k, n in enumerate(hGraph.nodes)}
    old_index = {id(n): k for k, n in enumerate(src.nodes)}
    for old, new in zip(src.nodes, hGraph.nodes, strict=True):
        if sorted(old_index[id(d)] for d in old.deps) != sorted(index[id(d)] for d in new.deps):
            return (failed, R.hipGraphExecUpdateErrorTopologyChanged)
        if old.node_type() != new.node_type():
            return (failed, R.hipGraphExecUpdateErrorNodeTypeChanged)
        if old.node_type() in (CHILD, HOST, EVENT_RECORD, WAIT_EVENT) and old.params is not new.params:
            return (failed, R.hipGraphExecUpdateErrorNotSupported)
    fresh = hGraph.instantiate(hGraphExec.handle, hGraphExec.flags)
    # The executable graph's nodes are still named by the graph it was made from.
    hGraphExec.nodes = fresh.nodes
    hGraphExec.slots = {src.nodes[k].handle: fresh.slots[n.handle] for k, n in enumerate(hGraph.nodes)
                        if n.handle in fresh.slots}
    return (SUCCESS, R.hipGraphExecUpdateSuccess)


_INSTANTIATE_FLAGS = 0xF   # AutoFreeOnLaunch, Upload, DeviceLaunch, UseNodePriority


@body
def hipGraphInstantiateWithParams(graph: Graph, instantiateParams: Any) -> tuple:
    """hipGraphInstantiateWithFlags with its flags and upload stream from the struct, whose
    ``result_out`` is set to the instantiation's result."""
    p = instantiateParams
    if p is None:
        raise HipError("hipErrorInvalidValue", "instantiateParams is NULL")
    flags = int(getattr(p, "flags", 0) or 0)
    if flags & ~_INSTANTIATE_FLAGS:
        raise HipError("hipErrorInvalidValue", f"unknown instantiate flags 0x{flags:x}")
    upload = getattr(p, "uploadStream", None)
    if upload is not None and not isinstance(upload, Stream):
        dev = _dev()
        dev.lookup(dev.streams, upload, "stream")   # an unknown stream fails the call
    exe = _dev().keep("graph_exec", lambda h: graph.instantiate(h, flags))
    try:   # hipGraphInstantiateSuccess, as the field's own type (hip-python's enum, or an int)
        p.result_out = type(p.result_out)(0)
    except (AttributeError, TypeError, ValueError):
        pass
    return (SUCCESS, exe)


@body
def hipGraphUpload(graphExec: GraphExec, stream: Stream) -> None:
    """Nothing to upload on the sim: a launch reads the nodes as they are."""


@body
def hipGraphExecGetFlags(graphExec: GraphExec) -> tuple:
    return (SUCCESS, graphExec.flags)


def launch(exe: GraphExec, s: Stream) -> None:
    """hipGraphLaunch: each node's work, in order, on ``s`` (an event-record node's event
    then names its place in ``s``)."""
    dev = _dev()
    for make in exe.nodes:
        dev.submit(s, make)
        hook = getattr(make, "on_enqueue", None)
        if hook is not None and s.capture is None:
            hook(s)


_TYPE_NAMES = {KERNEL: "kernel", MEMCPY: "memcpy", MEMSET: "memset", HOST: "host", CHILD: "graph",
               EMPTY: "empty", WAIT_EVENT: "wait_event", EVENT_RECORD: "event_record"}


@body
def hipGraphDebugDotPrint(graph: Graph, path: Any, flags: int) -> None:
    """A DOT file of the graph's nodes and edges at ``path``."""
    name = path.decode() if isinstance(path, (bytes, bytearray)) else str(path)
    lines = [f"digraph hrr_graph_{graph.handle:x} {{"]
    lines += [f'  n{n.handle:x} [label="{_TYPE_NAMES.get(n.node_type(), "node")} 0x{n.handle:x}"];'
              for n in graph.nodes]
    lines += [f"  n{d.handle:x} -> n{n.handle:x};" for n in graph.nodes for d in n.deps]
    try:
        with open(name, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines + ["}"]) + "\n")
    except OSError as exc:
        raise HipError("hipErrorOperatingSystem", f"hipGraphDebugDotPrint: {exc}") from None


body.table({
    "hipStreamIsCapturing": lambda s: hipStreamGetCaptureInfo(s)[:2],
    "hipGraphExecDestroy": lambda exe: _dev().forget("graph_execs", exe),
    "hipGraphDestroy": lambda g: destroy_graph(g),
    "hipGraphInstantiate": lambda g, size: (SUCCESS, keep("graph_exec", lambda h: g.instantiate(h)), None,
                                            CStr(b"")),
    "hipGraphInstantiateWithFlags": lambda g, flags: (SUCCESS, keep("graph_exec",
                                                                     lambda h: g.instantiate(h, int(flags)))),
})
