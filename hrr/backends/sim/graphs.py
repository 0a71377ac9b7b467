"""Stream capture and graphs.

While a stream captures, the ops enqueued on it are not run: each is kept as a *node*,
a factory that makes a fresh ``Op``. Kernel arguments are bound by value when the node
is made (at enqueue), while the memory a node reads is read when the op runs, i.e. at
each graph launch. A captured graph is a chain of ``GraphNode``s (the order of the
capturing stream); graphs built node by node (``graph_calls``) are any DAG of the same
nodes. Launching an executable graph enqueues a fresh op per node on the launch stream,
in an order that respects every dependency, so it can be launched any number of times.

Capture modes decide which *unsafe* calls (ones that would synchronise with or allocate
behind the capture's back) are refused with 900 and invalidate the capture:
Global - from any thread whose own capture-interaction mode is not relaxed;
ThreadLocal - only from the thread that began the capture; Relaxed - never.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

import attrs

from hrr.backends.sim.streams import Op, Stream
from hrr.backends.surface import HipError

GLOBAL, THREAD_LOCAL, RELAXED = 0, 1, 2   # hipStreamCaptureMode values
STATUS_NONE, STATUS_ACTIVE, STATUS_INVALIDATED = 0, 1, 2

NodeFactory = Callable[[], Op]


@attrs.define(eq=False)
class CaptureSession:
    id: int
    stream: Stream
    mode: int
    thread: int = attrs.Factory(threading.get_ident)
    nodes: list = attrs.Factory(list)
    invalidated_by: str | None = None
    into: "Graph | None" = None   # hipStreamBeginCaptureToGraph: the graph the nodes join
    after: list = attrs.Factory(list)   # ... and the nodes of it the first captured one follows

    @property
    def status(self) -> int:
        return STATUS_INVALIDATED if self.invalidated_by else STATUS_ACTIVE

    def invalidate(self, reason: str) -> None:
        if self.invalidated_by is None:
            self.invalidated_by = reason


# hipGraphNodeType values
KERNEL, MEMCPY, MEMSET, HOST, CHILD, EMPTY, WAIT_EVENT, EVENT_RECORD = 0, 1, 2, 3, 4, 5, 6, 7
_LABEL_TYPES = (("memcpy", MEMCPY), ("memset", MEMSET), ("host_fn", HOST), ("record(", EVENT_RECORD),
                ("wait(", WAIT_EVENT))


@attrs.define(eq=False)
class GraphNode:
    """One node of a graph: its work (``make``, a node factory; None for an empty node or
    a child graph), the nodes it runs after (``deps``) and what its type's queries read
    (``params``: a kernel node's ``KernelParams``, a child node's ``Graph``)."""

    handle: int
    type: int | None      # None: a captured node, typed from its work when asked
    make: NodeFactory | None
    deps: list = attrs.Factory(list)
    params: Any = None

    def node_type(self) -> int:
        """The hipGraphNodeType; a captured node's is read from the label of its work."""
        if self.type is None:
            label = self.make().label if self.make is not None else ""
            self.type = next((t for prefix, t in _LABEL_TYPES if label.startswith(prefix)),
                             KERNEL if "<<<" in label else EMPTY)
        return self.type


@attrs.define(eq=False)
class Graph:
    """A graph: its nodes in creation order. Captured graphs are a chain (each node after
    the one captured before it); explicitly built ones any DAG."""

    handle: int
    nodes: list = attrs.Factory(list)
    flags: int = 0

    @classmethod
    def from_capture(cls, handle: int, factories: tuple, node_handle: Callable[[], int]) -> "Graph":
        """The chain of nodes that a stream capture recorded."""
        graph = cls(handle)
        graph.add_chain(factories, [], node_handle)
        return graph

    def add_chain(self, factories: tuple, after: list, node_handle: Callable[[], int]) -> list["GraphNode"]:
        """Captured work as a chain of new nodes, the first after the nodes ``after``."""
        made: list[GraphNode] = []
        for make in factories:
            node = GraphNode(node_handle(), None, make, made[-1:] if made else list(after))
            made.append(node)
        self.nodes += made
        return made

    def dependents(self, node: GraphNode) -> list[GraphNode]:
        return [n for n in self.nodes if any(d is node for d in n.deps)]

    def order(self) -> list[GraphNode]:
        """The nodes so that each comes after its dependencies (creation order among the
        ready ones); HipError when the dependencies form a cycle."""
        done: set[int] = set()
        out: list[GraphNode] = []
        pending = list(self.nodes)
        while pending:
            ready = [n for n in pending if all(id(d) in done for d in n.deps)]
            if not ready:
                raise HipError("hipErrorInvalidValue", "the graph's dependencies form a cycle")
            for n in ready:
                done.add(id(n))
                out.append(n)
            pending = [n for n in pending if id(n) not in done]
        return out

    def factories(self) -> list[NodeFactory]:
        """The work of a launch, in an order that respects every dependency (a child
        graph's work in place of its node)."""
        out: list[NodeFactory] = []
        for node in self.order():
            if node.type == CHILD:
                out += node.params.factories()
            elif node.make is not None:
                out.append(node.make)
        return out

    def copy(self, handle: int, node_handle: Callable[[], int]) -> "Graph":
        """A copy with new nodes (``node_handle()`` gives each its handle) and the same edges."""
        clone = Graph(handle, flags=self.flags)
        mapped: dict[int, GraphNode] = {}
        for n in self.nodes:
            twin = GraphNode(node_handle(), n.type, n.make, [mapped[id(d)] for d in n.deps], n.params)
            mapped[id(n)] = twin
            clone.nodes.append(twin)
        return clone

    def instantiate(self, handle: int, flags: int = 0) -> "GraphExec":
        """An executable graph: the work as it is now (later edits of the graph do not reach it)."""
        work: list[NodeFactory] = []
        slots: dict[int, int] = {}
        for node in self.order():
            if node.type == CHILD:
                work += node.params.factories()
            elif node.make is not None:
                slots[node.handle] = len(work)
                work.append(node.make)
        return GraphExec(handle, work, flags, slots, self)


@attrs.define(eq=False)
class GraphExec:
    """An executable graph: the node factories a launch enqueues, in order; ``slots``
    maps a node of ``source`` to its place (hipGraphExecKernelNodeSetParams)."""

    handle: int
    nodes: list
    flags: int = 0
    slots: dict = attrs.Factory(dict)
    source: Graph | None = None


def sessions_prohibiting(sessions: list[CaptureSession], thread_mode: int) -> list[CaptureSession]:
    """The active captures that make an unsafe call from this thread illegal.

    ``thread_mode`` is the calling thread's capture-interaction mode
    (hipThreadExchangeStreamCaptureMode), Global by default."""
    if thread_mode == RELAXED:
        return []
    me = threading.get_ident()
    hit = []
    for s in sessions:
        if s.mode == RELAXED:
            continue
        if s.thread == me or (s.mode == GLOBAL and thread_mode == GLOBAL):
            hit.append(s)
    return hit
