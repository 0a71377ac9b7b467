"""The HIP API catalogue: one declarative row per supported call.

Capture serialisation, replay dispatch, ``hrr info``, the coverage table in the docs
and the round-trip tests all derive from these rows. Adding an API is adding a row.

Parameter roles (``Param.role``):
  value      a scalar recorded as is
  enum       a hip-python enum member (``kind`` names the enum); recorded as its int
  ptr        an address, recorded raw and translated at replay through the allocation map
  handle     a stream/event/module/function/graph/graph_exec handle (``kind``)
  copy_dst   a copy destination: a tracked allocation (translated) or host memory
             (checked byte for byte at replay); ``size`` names the byte-count parameter
  copy_src   a copy source: a tracked allocation or host memory (its bytes are a blob)
  host_range app memory that hipHostRegister pins; ``size`` names the byte count
  code       a code object image (stored once by hash)
  name       a kernel name (bytes or str)
  dim3       a hip.dim3
  host_fn    a host function address (application code: never replayable)
  user_data  an opaque pointer handed back to a host function
  launch     kernelParams / extra / args: normalised to kernarg bytes by capture
  ignored    not recorded (e.g. a log buffer size)
  handles    a list of handles of ``kind`` (a graph node's dependencies), each looked up
  kernel_node  a hipKernelNodeParams: its kernel, shape and arguments, recorded as a
             launch's are (kernarg bytes and pointer words, in the event's ``extra.launch``)
  memset_node  a hipMemsetParams: a 2D memset whose ``dst`` is translated and bounds-checked
  host_node  a hipHostNodeParams: application host code (never replayable, like host_fn)
  instantiate_params  a hipGraphInstantiateParams: its flags and upload stream
Output roles (``Out.role``): ``alloc`` (a new allocation; ``kind`` device/pinned, its size
from the ``size`` parameter), ``alias`` (a device address for a host allocation),
``handle`` (``kind``), ``handles`` (a list of handles of ``kind``, each bound at replay),
``value`` (an informational result, recorded when it is a number).

Semantics that capture bookkeeping, replay and the plugins need are row fields too, so
that every list of "calls that do X" is a query on this table (the functions at the end
of this module), never a list of API names elsewhere:
  waits    what a successful return proves complete: ``device`` (all work), ``stream``
           (the row's stream parameter), ``event`` (its first event parameter) or
           ``null_stream`` (a synchronous call ordered on the legacy null stream)
  effect   one irregular device effect: ``record_event``, ``wait_event``,
           ``begin_capture``, ``end_capture``, ``launch_graph``, ``update_exec`` (an
           executable graph takes a graph's nodes)
  pure     a query with no device effect (``--calls`` set-up may leave it out)
  launch   for a kernel launch, where its shape lives (a ``LaunchShape``)
  replays_as  the catalogued call replay issues instead (one launch entry point)
``Param.span``: the bytes a ``ptr`` parameter reaches when no parameter holds its size.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

import attrs

REAL, NOOP, UNREPLAYABLE = "real", "noop", "unreplayable"
HANDLE_KINDS = ("stream", "event", "module", "function", "graph", "graph_exec", "graph_node")


@attrs.frozen
class Param:
    """One parameter of a call, in hip-python's positional order."""

    name: str
    role: str
    kind: str | None = None  # handle kind or enum name
    size: str | None = None  # the parameter that holds this buffer's byte count
    optional: bool = False   # may be omitted by the caller: ``default`` is passed instead
    default: Any = None
    span: int | None = None  # bytes a ``ptr`` reaches when no parameter holds its size


@attrs.frozen
class Out:
    """One output of a call, in the order hip-python returns them after the error."""

    name: str
    role: str
    kind: str | None = None
    size: str | None = None


@attrs.frozen
class LaunchShape:
    """Where a launch row keeps its shape: ``grid``/``block`` name three scalar parameters
    or one ``dim3`` parameter; ``kernel_params``/``extra`` the argument parameters."""

    grid: tuple[str, ...]
    block: tuple[str, ...]
    shared: str
    kernel_params: str
    extra: str | None = None


@attrs.frozen
class Api:
    """A catalogue row: a HIP call, how it is recorded and how it replays."""

    name: str
    family: str
    params: tuple[Param, ...] = ()
    outs: tuple[Out, ...] = ()
    replay: str = REAL
    reason: str = ""            # why it is a no-op or unreplayable
    destroys: str | None = None  # handle kind or "alloc" the first parameter releases;
                                 # "device": everything (hipDeviceReset)
    stream: str | None = None    # the parameter naming the stream the work goes to
    sync: bool = False           # the call waits for device work (a capture sync point)
    volatile: bool = False       # its error may differ between runs (e.g. NotReady)
    module: str = "hip"          # "hip" or "hiprtc"
    waits: str | None = None     # what a successful return proves complete (see above)
    effect: str | None = None    # an irregular device effect (see above)
    pure: bool = False           # a query with no device effect
    launch: LaunchShape | None = None
    replays_as: str | None = None

    def param_index(self, name: str) -> int:
        for i, p in enumerate(self.params):
            if p.name == name:
                return i
        raise KeyError(f"{self.name} has no parameter {name!r}")


def P(name: str, role: str = "value", kind: str | None = None, size: str | None = None,
      optional: bool = False, default: Any = None, span: int | None = None) -> Param:
    return Param(name, role, kind, size, optional, default, span)


def H(name: str, kind: str) -> Param:
    return Param(name, "handle", kind)


def O(name: str,  # noqa: E743 - the catalogue reads P(...), H(...), O(...)
       role: str = "value", kind: str | None = None, size: str | None = None) -> Out:
    return Out(name, role, kind, size)


STREAM = H("stream", "stream")
_HOSTFN_REASON = ("runs the application's own host code, which an archive never carries; "
                  "replay skips it, so work that depends on its side effects may differ")

# A graph-node creation's leading parameters and its output (issue 10).
_GRAPH_DEPS = (H("graph", "graph"), P("pDependencies", "handles", "graph_node"), P("numDependencies"))
_NODE_OUT = (O("pGraphNode", "handle", "graph_node"),)

_ROWS: tuple[Api, ...] = (
    # device and errors
    Api("hipInit", "device", (P("flags"),)),
    Api("hipGetDeviceCount", "device", (), (O("count"),), pure=True),
    Api("hipGetDevice", "device", (), (O("deviceId"),), pure=True),
    Api("hipSetDevice", "device", (P("deviceId"),)),
    Api("hipGetDeviceProperties", "device", (P("deviceId"),), (O("prop"),), pure=True),
    Api("hipDeviceSynchronize", "device", sync=True, waits="device"),
    Api("hipDeviceReset", "device", destroys="device", sync=True),
    Api("hipGetLastError", "error"),
    Api("hipPeekAtLastError", "error", pure=True),
    Api("hipGetErrorName", "error", (P("hip_error", "enum", "hipError_t"),), (O("name"),),
        replay=NOOP, reason="a pure lookup with no device effect", pure=True),
    Api("hipGetErrorString", "error", (P("hipError", "enum", "hipError_t"),), (O("string"),),
        replay=NOOP, reason="a pure lookup with no device effect", pure=True),
    Api("hipMemGetInfo", "device", (), (O("free"), O("total")), volatile=True, pure=True),
    Api("hipPointerGetAttributes", "memory", (P("ptr", "ptr"),), (O("attributes"),), pure=True),
    # device memory
    Api("hipMalloc", "memory", (P("size"),), (O("ptr", "alloc", "device", "size"),)),
    Api("hipFree", "memory", (P("ptr", "ptr"),), destroys="alloc", sync=True),
    Api("hipMallocAsync", "memory", (P("size"), STREAM), (O("ptr", "alloc", "device", "size"),),
        stream="stream"),
    Api("hipFreeAsync", "memory", (P("dev_ptr", "ptr"), STREAM), destroys="alloc", stream="stream"),
    Api("hipMemset", "memory", (P("dst", "ptr", size="sizeBytes"), P("value"), P("sizeBytes")), sync=True,
        waits="null_stream"),
    Api("hipMemsetAsync", "memory", (P("dst", "ptr", size="sizeBytes"), P("value"), P("sizeBytes"), STREAM),
        stream="stream"),
    Api("hipMemcpy", "copy", (P("dst", "copy_dst", size="sizeBytes"),
                              P("src", "copy_src", size="sizeBytes"), P("sizeBytes"),
                              P("kind", "enum", "hipMemcpyKind")), sync=True, waits="null_stream"),
    Api("hipMemcpyAsync", "copy", (P("dst", "copy_dst", size="sizeBytes"),
                                   P("src", "copy_src", size="sizeBytes"), P("sizeBytes"),
                                   P("kind", "enum", "hipMemcpyKind"), STREAM), stream="stream"),
    Api("hipMemcpyHtoD", "copy", (P("dst", "ptr", size="sizeBytes"), P("src", "copy_src", size="sizeBytes"),
                                  P("sizeBytes")), sync=True, waits="null_stream"),
    Api("hipMemcpyDtoH", "copy", (P("dst", "copy_dst", size="sizeBytes"), P("src", "ptr", size="sizeBytes"),
                                  P("sizeBytes")), sync=True, waits="null_stream"),
    Api("hipMemcpyDtoD", "copy", (P("dst", "ptr", size="sizeBytes"), P("src", "ptr", size="sizeBytes"),
                                  P("sizeBytes")), sync=True, waits="null_stream"),
    Api("hipMemcpyHtoDAsync", "copy", (P("dst", "ptr", size="sizeBytes"), P("src", "copy_src", size="sizeBytes"),
                                       P("sizeBytes"), STREAM), stream="stream"),
    Api("hipMemcpyDtoHAsync", "copy", (P("dst", "copy_dst", size="sizeBytes"), P("src", "ptr", size="sizeBytes"),
                                       P("sizeBytes"), STREAM), stream="stream"),
    Api("hipMemcpyDtoDAsync", "copy", (P("dst", "ptr", size="sizeBytes"), P("src", "ptr", size="sizeBytes"),
                                       P("sizeBytes"), STREAM),
        stream="stream"),
    # pinned host memory
    Api("hipHostMalloc", "pinned", (P("size"), P("flags")), (O("ptr", "alloc", "pinned", "size"),)),
    Api("hipMallocHost", "pinned", (P("size"),), (O("ptr", "alloc", "pinned", "size"),)),
    Api("hipHostAlloc", "pinned", (P("size"), P("flags")), (O("ptr", "alloc", "pinned", "size"),)),
    Api("hipHostFree", "pinned", (P("ptr", "ptr"),), destroys="alloc", sync=True),
    Api("hipFreeHost", "pinned", (P("ptr", "ptr"),), destroys="alloc", sync=True),
    Api("hipHostRegister", "pinned", (P("hostPtr", "host_range", size="sizeBytes"),
                                      P("sizeBytes"), P("flags"))),
    Api("hipHostUnregister", "pinned", (P("hostPtr", "ptr"),), destroys="alloc", sync=True),
    Api("hipHostGetDevicePointer", "pinned", (P("hstPtr", "ptr"), P("flags")),
        (O("devPtr", "alias"),)),
    # streams and events
    Api("hipStreamCreate", "stream", (), (O("stream", "handle", "stream"),)),
    Api("hipStreamCreateWithFlags", "stream", (P("flags"),), (O("stream", "handle", "stream"),)),
    Api("hipStreamDestroy", "stream", (STREAM,), destroys="stream"),
    Api("hipStreamSynchronize", "stream", (STREAM,), sync=True, stream="stream", waits="stream"),
    Api("hipStreamQuery", "stream", (STREAM,), stream="stream", volatile=True, waits="stream"),
    Api("hipStreamWaitEvent", "stream", (STREAM, H("event", "event"), P("flags")), stream="stream",
        effect="wait_event"),
    Api("hipEventCreate", "event", (), (O("event", "handle", "event"),)),
    Api("hipEventCreateWithFlags", "event", (P("flags"),), (O("event", "handle", "event"),)),
    Api("hipEventRecord", "event", (H("event", "event"), STREAM), stream="stream",
        effect="record_event"),
    Api("hipEventSynchronize", "event", (H("event", "event"),), sync=True, waits="event"),
    Api("hipEventQuery", "event", (H("event", "event"),), volatile=True, waits="event"),
    Api("hipEventElapsedTime", "event", (H("start", "event"), H("stop", "event")), (O("ms"),),
        volatile=True, pure=True),
    Api("hipEventDestroy", "event", (H("event", "event"),), destroys="event"),
    Api("hipLaunchHostFunc", "stream", (STREAM, P("fn", "host_fn"), P("userData", "user_data")),
        replay=UNREPLAYABLE, reason=_HOSTFN_REASON, stream="stream"),
    Api("hipStreamWaitValue32", "stream", (STREAM, P("ptr", "ptr", span=4), P("value"), P("flags"),
                                           P("mask", optional=True, default=0xFFFFFFFF)), stream="stream"),
    Api("hipStreamWriteValue32", "stream", (STREAM, P("ptr", "ptr", span=4), P("value"), P("flags")),
        stream="stream"),
    # streams and events: priorities, flags, callbacks (issue 10)
    Api("hipStreamCreateWithPriority", "stream", (P("flags"), P("priority")), (O("stream", "handle", "stream"),)),
    Api("hipStreamGetPriority", "stream", (STREAM,), (O("priority"),), pure=True),
    Api("hipStreamGetFlags", "stream", (STREAM,), (O("flags"),), pure=True),
    Api("hipStreamGetDevice", "stream", (STREAM,), (O("device"),), pure=True),
    Api("hipStreamGetId", "stream", (STREAM,), (O("streamId"),), pure=True),
    Api("hipStreamAddCallback", "stream", (STREAM, P("callback", "host_fn"), P("userData", "user_data"),
                                           P("flags")), replay=UNREPLAYABLE, reason=_HOSTFN_REASON, stream="stream"),
    Api("hipStreamWaitValue64", "stream", (STREAM, P("ptr", "ptr", span=8), P("value"), P("flags"), P("mask")),
        stream="stream"),
    Api("hipStreamWriteValue64", "stream", (STREAM, P("ptr", "ptr", span=8), P("value"), P("flags")),
        stream="stream"),
    Api("hipEventRecordWithFlags", "event", (H("event", "event"), STREAM, P("flags")), stream="stream",
        effect="record_event"),
    Api("hipStreamGetCaptureInfo_v2", "graph", (STREAM, P("dependencies_out")),
        (O("captureStatus_out"), O("id_out"), O("graph_out"), O("numDependencies_out")), pure=True),
    # stream capture and graphs
    Api("hipStreamBeginCapture", "graph", (STREAM, P("mode", "enum", "hipStreamCaptureMode")),
        stream="stream", effect="begin_capture"),
    Api("hipStreamEndCapture", "graph", (STREAM,), (O("graph", "handle", "graph"),), stream="stream",
        effect="end_capture"),
    Api("hipStreamIsCapturing", "graph", (STREAM,), (O("status"),), stream="stream", pure=True),
    Api("hipStreamGetCaptureInfo", "graph", (STREAM,), (O("status"), O("id")), stream="stream",
        pure=True),
    Api("hipThreadExchangeStreamCaptureMode", "graph", (P("mode", "enum", "hipStreamCaptureMode",
                                                          optional=True),), (O("mode"),)),
    Api("hipGraphInstantiate", "graph", (H("graph", "graph"), P("bufferSize")),
        (O("graphExec", "handle", "graph_exec"), O("errorNode"), O("log"))),
    Api("hipGraphInstantiateWithFlags", "graph", (H("graph", "graph"), P("flags")),
        (O("graphExec", "handle", "graph_exec"),)),
    Api("hipGraphLaunch", "graph", (H("graphExec", "graph_exec"), STREAM), stream="stream",
        effect="launch_graph"),
    Api("hipGraphExecDestroy", "graph", (H("graphExec", "graph_exec"),), destroys="graph_exec"),
    Api("hipGraphDestroy", "graph", (H("graph", "graph"),), destroys="graph"),
    # graphs: explicit construction, nodes, updates (issue 10)
    Api("hipStreamBeginCaptureToGraph", "graph", (STREAM, H("graph", "graph"),
                                                  P("dependencies", "handles", "graph_node"),
                                                  P("dependencyData", "ignored"), P("numDependencies"),
                                                  P("mode", "enum", "hipStreamCaptureMode")),
        stream="stream", effect="begin_capture"),
    Api("hipGraphCreate", "graph", (P("flags"),), (O("pGraph", "handle", "graph"),)),
    Api("hipGraphAddKernelNode", "graph", (*_GRAPH_DEPS, P("pNodeParams", "kernel_node")), _NODE_OUT),
    Api("hipGraphAddMemcpyNode1D", "graph", (*_GRAPH_DEPS, P("dst", "copy_dst", size="count"),
                                             P("src", "copy_src", size="count"), P("count"),
                                             P("kind", "enum", "hipMemcpyKind")), _NODE_OUT),
    Api("hipGraphAddMemsetNode", "graph", (*_GRAPH_DEPS, P("pMemsetParams", "memset_node")), _NODE_OUT),
    Api("hipGraphAddEmptyNode", "graph", _GRAPH_DEPS, _NODE_OUT),
    Api("hipGraphAddEventRecordNode", "graph", (*_GRAPH_DEPS, H("event", "event")), _NODE_OUT),
    Api("hipGraphAddEventWaitNode", "graph", (*_GRAPH_DEPS, H("event", "event")), _NODE_OUT),
    Api("hipGraphAddChildGraphNode", "graph", (*_GRAPH_DEPS, H("childGraph", "graph")), _NODE_OUT),
    Api("hipGraphAddHostNode", "graph", (*_GRAPH_DEPS, P("pNodeParams", "host_node")), _NODE_OUT,
        replay=UNREPLAYABLE, reason=_HOSTFN_REASON),
    Api("hipGraphAddDependencies", "graph", (H("graph", "graph"), P("from_", "handles", "graph_node"),
                                             P("to", "handles", "graph_node"), P("numDependencies"))),
    Api("hipGraphRemoveDependencies", "graph", (H("graph", "graph"), P("from_", "handles", "graph_node"),
                                                P("to", "handles", "graph_node"), P("numDependencies"))),
    # Node lists are not pure: replay binds the handles they return (a --calls set-up needs them).
    Api("hipGraphGetNodes", "graph", (H("graph", "graph"),), (O("nodes", "handles", "graph_node"), O("numNodes"))),
    Api("hipGraphGetRootNodes", "graph", (H("graph", "graph"),),
        (O("pRootNodes", "handles", "graph_node"), O("pNumRootNodes"))),
    Api("hipGraphGetEdges", "graph", (H("graph", "graph"),),
        (O("from_", "handles", "graph_node"), O("to", "handles", "graph_node"), O("numEdges"))),
    Api("hipGraphNodeGetType", "graph", (H("node", "graph_node"),), (O("pType"),), pure=True),
    Api("hipGraphNodeGetDependencies", "graph", (H("node", "graph_node"),),
        (O("pDependencies", "handles", "graph_node"), O("pNumDependencies"))),
    Api("hipGraphNodeGetDependentNodes", "graph", (H("node", "graph_node"),),
        (O("pDependentNodes", "handles", "graph_node"), O("pNumDependentNodes"))),
    Api("hipGraphKernelNodeGetParams", "graph", (H("node", "graph_node"),), (O("pNodeParams"),), pure=True),
    Api("hipGraphKernelNodeSetParams", "graph", (H("node", "graph_node"), P("pNodeParams", "kernel_node"))),
    Api("hipGraphInstantiateWithParams", "graph", (H("graph", "graph"), P("instantiateParams", "instantiate_params")),
        (O("pGraphExec", "handle", "graph_exec"),)),
    Api("hipGraphExecKernelNodeSetParams", "graph", (H("hGraphExec", "graph_exec"), H("node", "graph_node"),
                                                     P("pNodeParams", "kernel_node"))),
    Api("hipGraphDestroyNode", "graph", (H("node", "graph_node"),), destroys="graph_node"),
    Api("hipGraphClone", "graph", (H("originalGraph", "graph"),), (O("pGraphClone", "handle", "graph"),)),
    Api("hipGraphExecUpdate", "graph", (H("hGraphExec", "graph_exec"), H("hGraph", "graph"),
                                        P("hErrorNode_out", "ignored")), (O("updateResult_out"),),
        effect="update_exec"),
    Api("hipGraphUpload", "graph", (H("graphExec", "graph_exec"), STREAM), stream="stream"),
    Api("hipGraphExecGetFlags", "graph", (H("graphExec", "graph_exec"),), (O("flags"),), pure=True),
    Api("hipGraphDebugDotPrint", "graph", (H("graph", "graph"), P("path", "name"), P("flags")), replay=NOOP,
        reason="writes a description of the graph to a file of the application's; replay writes no file"),
    # modules and launches
    Api("hipModuleLoadData", "module", (P("image", "code"),), (O("module", "handle", "module"),)),
    Api("hipModuleGetFunction", "module", (H("module", "module"), P("kname", "name")),
        (O("function", "handle", "function"),)),
    Api("hipModuleUnload", "module", (H("module", "module"),), destroys="module"),
    Api("hipModuleLaunchKernel", "launch", (
        H("f", "function"), P("gridDimX"), P("gridDimY"), P("gridDimZ"), P("blockDimX"),
        P("blockDimY"), P("blockDimZ"), P("sharedMemBytes"), STREAM,
        P("kernelParams", "launch"), P("extra", "launch")), stream="stream",
        launch=LaunchShape(("gridDimX", "gridDimY", "gridDimZ"), ("blockDimX", "blockDimY", "blockDimZ"),
                           "sharedMemBytes", "kernelParams", "extra")),
    Api("hipLaunchKernel", "launch", (
        H("function_address", "function"), P("numBlocks", "dim3"), P("dimBlocks", "dim3"),
        P("args", "launch"), P("sharedMemBytes"), STREAM), stream="stream",
        launch=LaunchShape(("numBlocks",), ("dimBlocks",), "sharedMemBytes", "args"),
        replays_as="hipModuleLaunchKernel"),
)

CATALOGUE: dict[str, Api] = {row.name: row for row in _ROWS}


# ------------------------------------------------------------------ queries on the rows
# Every "calls that do X" list in capture, replay and the plugins is one of these, so a
# new row is seen everywhere it belongs without editing a list of names.
def names(where: Callable[[Api], bool]) -> frozenset[str]:
    """The names of every row for which ``where(row)`` is true."""
    return frozenset(row.name for row in _ROWS if where(row))


def allocating(kind: str | None = None) -> frozenset[str]:
    """Calls that return a new allocation (of ``kind``, "device" or "pinned", if given)."""
    return names(lambda r: any(o.role == "alloc" and kind in (None, o.kind) for o in r.outs))


def releasing() -> frozenset[str]:
    """Calls whose first parameter is an allocation they release (frees, unregister)."""
    return names(lambda r: r.destroys == "alloc")


def registering() -> frozenset[str]:
    """Calls that pin application memory in place (a ``host_range`` parameter)."""
    return names(lambda r: any(p.role == "host_range" for p in r.params))


def aliasing() -> frozenset[str]:
    """Calls that return a device address for a host allocation (an ``alias`` output)."""
    return names(lambda r: any(o.role == "alias" for o in r.outs))


def launching() -> frozenset[str]:
    """Kernel launches."""
    return names(lambda r: r.launch is not None)


def creating(kind: str) -> frozenset[str]:
    """Calls that return a new handle of ``kind``."""
    return names(lambda r: any(o.role == "handle" and o.kind == kind for o in r.outs))


def destroying(kind: str) -> frozenset[str]:
    """Calls that release a ``kind`` ("alloc", a handle kind, or "device": everything)."""
    return names(lambda r: r.destroys == kind)


def waiting(what: str) -> frozenset[str]:
    """Calls whose successful return proves ``what`` complete (see ``Api.waits``)."""
    return names(lambda r: r.waits == what)


def with_effect(effect: str) -> frozenset[str]:
    """Calls with the irregular device effect ``effect`` (see ``Api.effect``)."""
    return names(lambda r: r.effect == effect)


def running_host_code() -> frozenset[str]:
    """Calls that enqueue an application host function, or put one in a graph (never replayable)."""
    return names(lambda r: any(p.role in ("host_fn", "host_node") for p in r.params))


def adding_kernel_nodes() -> frozenset[str]:
    """Calls that put a kernel and its arguments into a graph or an executable graph
    (a ``kernel_node`` parameter): their pointers are read at each launch of the graph."""
    return names(lambda r: any(p.role == "kernel_node" for p in r.params))


def async_device_to_host() -> frozenset[str]:
    """Copies whose host destination is only filled once their stream has run them."""
    return names(lambda r: not r.sync and any(p.role == "copy_dst" for p in r.params))


def pure_queries() -> frozenset[str]:
    """Queries with no device effect."""
    return names(lambda r: r.pure)




def rows() -> Iterable[Api]:
    """Every catalogue row, in declaration order."""
    return iter(_ROWS)


def get(name: str) -> Api:
    """The row for ``name``; KeyError names the call when it is not catalogued."""
    try:
        return CATALOGUE[name]
    except KeyError:
        raise KeyError(f"{name} is not in the HIP API catalogue") from None


def coverage_table() -> str:
    """A Markdown table of every catalogued call and how it replays (for the docs)."""
    lines = ["| API | family | replay | notes |", "| --- | --- | --- | --- |"]
    for row in _ROWS:
        lines.append(f"| `{row.name}` | {row.family} | {row.replay} | {row.reason} |")
    return "\n".join(lines)


# ------------------------------------------------------------------ test-only extension
class _Extension:
    """The catalogue with extra rows while the ``with`` block runs (see ``extended``)."""

    def __init__(self, new_rows: tuple[Api, ...]) -> None:
        names = [r.name for r in new_rows]
        taken = sorted({n for n in names if n in CATALOGUE or names.count(n) > 1})
        if taken:
            raise ValueError(f"catalogue rows already named {', '.join(taken)}")
        self.rows = new_rows
        self._saved: tuple[Api, ...] | None = None

    def __enter__(self) -> tuple[Api, ...]:
        global _ROWS
        self._saved = _ROWS
        _ROWS = _ROWS + self.rows
        CATALOGUE.update((r.name, r) for r in self.rows)
        return self.rows

    def __exit__(self, *exc: object) -> None:
        global _ROWS
        for r in self.rows:
            CATALOGUE.pop(r.name, None)
        _ROWS = tuple(r for r in _ROWS if r not in self.rows)


def extended(*new_rows: Api) -> _Extension:
    """Test-only: ``with extended(row, ...):`` the catalogue also holds ``new_rows`` (after
    every built-in row) until the block ends. Everything that reads the catalogue when it
    acts sees them: ``CATALOGUE``, ``get``, ``rows`` and every query above, capture's
    wrappers (built when a session starts), replay's per-row plans, the record schema and
    ``hrr info``. ValueError when a name is already a row."""
    return _Extension(tuple(new_rows))


if __name__ == "__main__":
    print(coverage_table())
