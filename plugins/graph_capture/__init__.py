"""graph_capture: each stream's graph-capture state, and pinned snapshots at graph launches.

It follows stream capture (the catalogue's ``with_effect("begin_capture")`` and
``with_effect("end_capture")`` calls; the streams that join a capture through an event
recorded on a capturing stream and waited on by another; invalidation by a launch
error) by the capture's stream handle values, at capture and at replay, and publishes
that state as ``ctx.shared["graph_capture"]`` (``is_capturing(stream_value, stream_handle)``).

Beyond the reference: it remembers which pinned allocations the kernels captured into
each graph point into (graph → exec through the ``creating("graph_exec")`` calls); at
each graph launch (``with_effect("launch_graph")``) it snapshots them with
pinned_snapshot's routine (data kind ``graph_launch_snapshot``) and attaches the record
to the launch event; replay restores them with a host function queued on the launch
stream ahead of the graph.

Like any plugin, it imports the plugin API (``hrr.pipeline``) and nothing else of hrr.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from hrr.pipeline import (
    DEVICE,
    adding_kernel_nodes,
    AfterWatcher,
    Api,
    CallInfo,
    CaptureContext,
    Event,
    LaunchInfo,
    ReplayContext,
    Roles,
    api_row,
    backend_stream_capturing,
    creating,
    destroying,
    handle_or_zero,
    hookimpl,
    param_at,
    param_positions,
    result_at,
    with_effect,
    hrr_version,
)
from hrr_plugins.pinned_snapshot.records import restore

NAME = "graph_capture"
KIND = "graph_launch_snapshot"


class _Capture:
    __slots__ = ("mode", "origin", "pinned_addrs", "streams")

    def __init__(self, origin: int, mode: int) -> None:
        self.origin, self.mode = origin, mode
        self.streams: set[int] = {origin}
        self.pinned_addrs: set[int] = set()   # capture side: addresses the graph's kernels read


class CaptureState:
    """Stream → open capture, by the recording's handle values. Thread-safe."""

    def __init__(self, raw_hip: Any) -> None:
        self._hip = raw_hip
        self.lock = threading.Lock()
        self.streams: dict[int, _Capture] = {}
        self.events: dict[int, _Capture] = {}
        self.graphs: dict[int, frozenset[int]] = {}
        self.execs: dict[int, frozenset[int]] = {}
        self.nodes: dict[int, int] = {}   # graph node → its graph (nodes made node by node)

    # -- queries --------------------------------------------------------------------------
    def capture_of(self, stream_value: int) -> _Capture | None:
        with self.lock:
            return self.streams.get(stream_value)

    def clear(self) -> None:
        """The device was reset: no stream, graph or exec of before survives."""
        with self.lock:
            self.streams.clear()
            self.events.clear()
            self.graphs.clear()
            self.execs.clear()
            self.nodes.clear()

    def any_open(self) -> bool:
        with self.lock:
            return bool(self.streams)

    def is_capturing(self, stream_value: int, stream_handle: Any = None) -> bool:
        """The launch stream's OWN state: tracked begin/end, and for a stream this state
        does not know, the backend's ``hipStreamIsCapturing`` (never queues work)."""
        if not stream_value:
            return False  # the null stream never captures
        with self.lock:
            if stream_value in self.streams:
                return True
        return backend_stream_capturing(self._hip, stream_handle)

    # -- transitions ----------------------------------------------------------------------
    def begin(self, stream: int, mode: int) -> None:
        with self.lock:
            self.streams[stream] = _Capture(stream, mode)

    def end(self, stream: int, graph: int | None) -> None:
        with self.lock:
            cap = self.streams.get(stream)
            if cap is None:
                return
            for s in [s for s, c in self.streams.items() if c is cap]:
                del self.streams[s]
            for e in [e for e, c in self.events.items() if c is cap]:
                del self.events[e]
            if graph:   # a capture into an existing graph adds to what it had
                self.graphs[graph] = self.graphs.get(graph, frozenset()) | frozenset(cap.pinned_addrs)

    def event_recorded(self, event: int, stream: int) -> None:
        with self.lock:
            cap = self.streams.get(stream)
            if cap is None:
                self.events.pop(event, None)
            else:
                self.events[event] = cap

    def stream_waited(self, stream: int, event: int) -> None:
        with self.lock:
            cap = self.events.get(event)
            if cap is not None and stream and stream not in self.streams:
                cap.streams.add(stream)
                self.streams[stream] = cap

    def note_pinned(self, stream: int, addrs: list[int]) -> None:
        with self.lock:
            cap = self.streams.get(stream)
            if cap is not None:
                cap.pinned_addrs.update(addrs)

    def instantiated(self, graph: int, exec_: int) -> None:
        with self.lock:
            self.execs[exec_] = self.graphs.get(graph, frozenset())

    # -- graphs built node by node -------------------------------------------
    def node_added(self, node: int, graph: int) -> None:
        with self.lock:
            self.nodes[node] = graph

    def add_pinned(self, kind: str, handle: int, addrs: list[int]) -> None:
        """A kernel node of the graph (or node's graph, or executable graph) ``handle``
        points into pinned ``addrs``: every launch of it snapshots them."""
        if not addrs:
            return
        with self.lock:
            if kind == "graph_node":
                kind, handle = "graph", self.nodes.get(handle, 0)
            table = self.execs if kind == "graph_exec" else self.graphs
            if handle:
                table[handle] = table.get(handle, frozenset()) | frozenset(addrs)

    def graph_copied(self, src: int, dst: int, into_exec: bool = False) -> None:
        """``dst`` (a graph, or an executable graph when ``into_exec``) now holds ``src``'s
        kernels too: a clone, a child-graph node, an executable-graph update."""
        with self.lock:
            addrs = self.graphs.get(src, frozenset())
            if into_exec:
                self.execs[dst] = addrs
            elif addrs:
                self.graphs[dst] = self.graphs.get(dst, frozenset()) | addrs

    def exec_addrs(self, exec_: int) -> frozenset[int]:
        with self.lock:
            return self.execs.get(exec_, frozenset())


def _event_reader(row: Api, at: int) -> Callable[[Event], int]:
    """Reads the int argument at ``at`` of one of ``row``'s recorded events (0 when the
    event does not have the row's shape: an archive is untrusted)."""
    n = len(row.params)

    def read(event: Event) -> int:
        if len(event.args) != n:
            return 0
        v = event.args[at]
        return v if isinstance(v, int) and not isinstance(v, bool) else 0
    return read


def _stream_at(row: Api) -> int:
    return row.param_index(row.stream or "")


class GraphCapturePlugin:
    """Stream-capture state at capture and replay; pinned snapshots at graph launches."""

    __version__ = hrr_version()  # built-ins ship with hrr and carry its version

    def __init__(self) -> None:
        self.state: CaptureState | None = None
        # replay: call name → what its event does to the capture state (built at start)
        self._replay_after: dict[str, Transition] = {}
        self._graph_launch_stream: dict[str, Callable[[Event], int]] = {}
        self._node_rows: frozenset[str] = frozenset()  # calls that put a kernel into a graph
        self._tls = threading.local()

    # ------------------------------------------------------------------ capture
    @hookimpl
    def hrr_capture_start(self, ctx: CaptureContext) -> None:
        state = self.state = CaptureState(ctx.hip)
        # A fork while another thread holds it would leave the child's copy held forever.
        # It is held only briefly and never while another lock is taken.
        ctx.register_fork_lock(state.lock)
        ctx.shared[NAME] = self
        # One watcher per row, its argument and output positions looked up here.
        for names, make in _capture_watchers():
            for name in sorted(names):
                ctx.watch(NAME, (name,), after=make(state, api_row(name)))
        # Its launch hook acts only on pinned pointers of a launch into a capturing stream or
        # of a kernel node.
        ctx.launches_into_host_memory_only(NAME)
        for name in sorted(with_effect("launch_graph")):
            self._watch_graph_launch(ctx, api_row(name))
        self._node_rows = adding_kernel_nodes()
        for name in sorted(self._node_rows):
            self._watch_kernel_node(ctx, api_row(name))

    def is_capturing(self, stream_value: int, stream_handle: Any = None) -> bool:
        """Whether the stream is capturing a graph (see CaptureState.is_capturing)."""
        return self.state is not None and self.state.is_capturing(stream_value, stream_handle)

    @hookimpl
    def hrr_capture_launch(self, ctx: CaptureContext, launch: LaunchInfo) -> None:
        if self.state is None or not launch.stream:
            if self.state is not None and launch.api in self._node_rows:   # a kernel node (no stream)
                self._tls.pinned = [p.base + p.delta for p in launch.pointers if p.kind != DEVICE]
            return
        if self.state.capture_of(launch.stream) is not None:
            self.state.note_pinned(launch.stream, [p.base + p.delta for p in launch.pointers
                                                   if p.kind != DEVICE])
        return

    def _watch_graph_launch(self, ctx: CaptureContext, row: Api) -> None:
        """Snapshot, at each launch of a graph, the pinned memory its kernels point into."""
        exec_at, stream_at = param_at(row, Roles.Handle, "graph_exec"), _stream_at(row)
        state = self.state
        assert state is not None

        def before(call: CallInfo) -> dict | None:
            pinned = ctx.shared.get("pinned_snapshot")
            if pinned is None:
                return None
            pinned.begin_call()
            addrs = state.exec_addrs(handle_or_zero(call.args[exec_at]))
            if not addrs:
                return None
            stream = call.args[stream_at]
            record: dict | None = pinned.snapshot(ctx, sorted(addrs), handle_or_zero(stream), stream, kind=KIND)
            return record

        def after(call: CallInfo, result: tuple) -> None:
            # The graph-launch records become their allocations' last only if the graph
            # was enqueued (a failed graph launch is skipped at replay).
            pinned = ctx.shared.get("pinned_snapshot")
            if pinned is not None:
                pinned.end_call(int(result[0]) == 0)

        ctx.watch(NAME, (row.name,), before=before, after=after)

    def _watch_kernel_node(self, ctx: CaptureContext, row: Api) -> None:
        """A kernel node's pinned pointers (seen as its LaunchInfo while the call records)
        join its graph's, or its executable graph's, once the call succeeded."""
        owner_at = param_at(row, Roles.Handle)
        kind, state, tls = row.params[owner_at].kind or "", self.state, self._tls
        assert state is not None

        def before(call: CallInfo) -> None:
            tls.pinned = []

        def after(call: CallInfo, result: tuple) -> None:
            pinned, tls.pinned = getattr(tls, "pinned", []), []
            if int(result[0]) == 0:
                state.add_pinned(kind, handle_or_zero(call.args[owner_at]), pinned)

        ctx.watch(NAME, (row.name,), before=before, after=after)

    @hookimpl
    def hrr_capture_fork_child(self, ctx: CaptureContext) -> None:
        pass  # capture state is the process's own and stays valid in the child

    # ------------------------------------------------------------------ replay
    @hookimpl
    def hrr_replay_start(self, ctx: ReplayContext) -> None:
        state = self.state = CaptureState(ctx.hip)
        ctx.shared[NAME] = self
        self._replay_after = _replay_transitions(state)
        self._graph_launch_stream = {name: _event_reader(api_row(name), _stream_at(api_row(name)))
                                     for name in with_effect("launch_graph")}
        # Its per-event hooks act on graph launches carrying its records and on capture-state
        # transitions: a kernel launch makes no call into it.
        ctx.watch(NAME, list(self._replay_after))
        ctx.watch(NAME, self._graph_launch_stream, only="records")

    @hookimpl
    def hrr_replay_before_event(self, ctx: ReplayContext, event: Event, stream: Any) -> None:
        stream_of = self._graph_launch_stream.get(event.api)
        if stream_of is None or self.state is None:
            return
        records = event.records(NAME)
        if not records or event.err:
            return
        skip = self.state.is_capturing(stream_of(event), stream)
        n = restore(ctx, event, stream, records, label="graph-launch snapshot", skip_capture=skip)
        ctx.counters["graph_launch_restored"] += n

    @hookimpl
    def hrr_replay_after_event(self, ctx: ReplayContext, event: Event, result: tuple | None) -> None:
        if result is None:
            return
        transition = self._replay_after.get(event.api)
        if transition is not None:
            transition(event, int(result[0]))

    @hookimpl
    def hrr_replay_summary(self, ctx: ReplayContext) -> list[str] | None:
        n = ctx.counters.get("graph_launch_restored", 0)
        return [f"Graph-launch snapshots: {n} restored ahead of their graphs"] if n else None


# --------------------------------------------------------------- capture-side watchers
# Each makes the after-watcher of one catalogue row, its positions looked up once.
def _on_begin(state: CaptureState, row: Api) -> AfterWatcher:
    stream_at, mode_at = _stream_at(row), row.param_index("mode")

    def after(call: CallInfo, result: tuple) -> None:
        if int(result[0]) == 0:
            mode = call.args[mode_at]
            state.begin(handle_or_zero(call.args[stream_at]), int(mode) if mode is not None else 0)
    return after


def _on_end(state: CaptureState, row: Api) -> AfterWatcher:
    stream_at, graph_at = _stream_at(row), result_at(row, Roles.HandleOut, "graph")

    def after(call: CallInfo, result: tuple) -> None:
        ok = int(result[0]) == 0 and result[graph_at] is not None
        state.end(handle_or_zero(call.args[stream_at]), handle_or_zero(result[graph_at]) if ok else None)
    return after


def _on_record(state: CaptureState, row: Api) -> AfterWatcher:
    event_at, stream_at = param_at(row, Roles.Handle, "event"), _stream_at(row)

    def after(call: CallInfo, result: tuple) -> None:
        if int(result[0]) == 0:
            state.event_recorded(handle_or_zero(call.args[event_at]), handle_or_zero(call.args[stream_at]))
    return after


def _on_wait(state: CaptureState, row: Api) -> AfterWatcher:
    stream_at, event_at = _stream_at(row), param_at(row, Roles.Handle, "event")

    def after(call: CallInfo, result: tuple) -> None:
        if int(result[0]) == 0:
            state.stream_waited(handle_or_zero(call.args[stream_at]), handle_or_zero(call.args[event_at]))
    return after


def _on_instantiate(state: CaptureState, row: Api) -> AfterWatcher:
    graph_at, exec_at = param_at(row, Roles.Handle, "graph"), result_at(row, Roles.HandleOut, "graph_exec")

    def after(call: CallInfo, result: tuple) -> None:
        if int(result[0]) == 0 and result[exec_at] is not None:
            state.instantiated(handle_or_zero(call.args[graph_at]), handle_or_zero(result[exec_at]))
    return after


def _on_destroy(kind: str) -> Callable[[CaptureState, Api], AfterWatcher]:
    def make(state: CaptureState, row: Api) -> AfterWatcher:
        at = param_at(row, Roles.Handle, kind)
        table = state.execs if kind == "graph_exec" else state.graphs

        def after(call: CallInfo, result: tuple) -> None:
            if int(result[0]) == 0:
                with state.lock:
                    table.pop(handle_or_zero(call.args[at]), None)
        return after
    return make


def _on_node(state: CaptureState, row: Api) -> AfterWatcher:
    """A node made in a graph; a child-graph node also takes its child's kernels."""
    graph_at, node_at = param_at(row, Roles.Handle, "graph"), result_at(row, Roles.HandleOut, "graph_node")
    child_at = next((i for i in param_positions(row, Roles.Handle, "graph") if i != graph_at), None)

    def after(call: CallInfo, result: tuple) -> None:
        if int(result[0]) == 0 and result[node_at] is not None:
            graph = handle_or_zero(call.args[graph_at])
            state.node_added(handle_or_zero(result[node_at]), graph)
            if child_at is not None:
                state.graph_copied(handle_or_zero(call.args[child_at]), graph)
    return after


def _on_graph_copy(state: CaptureState, row: Api) -> AfterWatcher:
    """A graph made from another (a clone), or an executable graph updated from one."""
    src_at = param_at(row, Roles.Handle, "graph")
    out_at = result_at(row, Roles.HandleOut, "graph") if any(o.kind == "graph" for o in row.outs) else None
    exec_at = None if out_at is not None else param_at(row, Roles.Handle, "graph_exec")

    def after(call: CallInfo, result: tuple) -> None:
        if int(result[0]) != 0:
            return
        if out_at is not None and result[out_at] is not None:
            state.graph_copied(handle_or_zero(call.args[src_at]), handle_or_zero(result[out_at]))
        elif exec_at is not None:
            state.graph_copied(handle_or_zero(call.args[src_at]), handle_or_zero(call.args[exec_at]),
                               into_exec=True)
    return after


def _graph_copies() -> frozenset[str]:
    """Calls that make a graph from a graph (a clone), or update an executable graph from one."""
    made = {name for name in creating("graph")
            if param_positions(api_row(name), Roles.Handle, "graph")}
    return frozenset(made) | with_effect("update_exec")


def _on_device_reset(state: CaptureState, row: Api) -> AfterWatcher:
    def after(call: CallInfo, result: tuple) -> None:
        if int(result[0]) == 0:
            state.clear()
    return after


def _capture_watchers() -> list[tuple[frozenset[str], Callable[[CaptureState, Api], AfterWatcher]]]:
    """(the calls, the maker of each one's watcher); asked when capture starts, so a
    catalogue row added before then is followed."""
    return [(destroying("device"), _on_device_reset), (with_effect("begin_capture"), _on_begin),
            (with_effect("end_capture"), _on_end), (with_effect("record_event"), _on_record),
            (with_effect("wait_event"), _on_wait), (creating("graph_exec"), _on_instantiate),
            (destroying("graph_exec"), _on_destroy("graph_exec")), (destroying("graph"), _on_destroy("graph")),
            (creating("graph_node"), _on_node), (_graph_copies(), _on_graph_copy)]


# --------------------------------------------------------------- replay-side transitions
# Each makes what one row's replayed event (and its error code) does to the state.
Transition = Callable[[Event, int], None]


def _replay_begin(state: CaptureState, row: Api) -> Transition:
    stream_of, mode_at = _event_reader(row, _stream_at(row)), row.param_index("mode")

    def begin(event: Event, err: int) -> None:
        if err == 0:
            args = event.args
            mode = args[mode_at] if len(args) > mode_at and isinstance(args[mode_at], int) else 0
            state.begin(stream_of(event), mode)
    return begin


def _replay_end(state: CaptureState, row: Api) -> Transition:
    stream_of = _event_reader(row, _stream_at(row))

    def end(event: Event, err: int) -> None:
        state.end(stream_of(event), None)
    return end


def _replay_record(state: CaptureState, row: Api) -> Transition:
    event_of, stream_of = _event_reader(row, param_at(row, Roles.Handle, "event")), _event_reader(row, _stream_at(row))

    def record(event: Event, err: int) -> None:
        if err == 0:
            state.event_recorded(event_of(event), stream_of(event))
    return record


def _replay_wait(state: CaptureState, row: Api) -> Transition:
    event_of, stream_of = _event_reader(row, param_at(row, Roles.Handle, "event")), _event_reader(row, _stream_at(row))

    def wait(event: Event, err: int) -> None:
        if err == 0:
            state.stream_waited(stream_of(event), event_of(event))
    return wait


def _replay_transitions(state: CaptureState) -> dict[str, Transition]:
    """Call name → what its replayed event does to ``state``."""
    makers = [(with_effect("begin_capture"), _replay_begin), (with_effect("end_capture"), _replay_end),
              (with_effect("record_event"), _replay_record), (with_effect("wait_event"), _replay_wait)]
    return {name: make(state, api_row(name)) for names, make in makers for name in names}


plugin = GraphCapturePlugin

__all__ = ["CaptureState", "GraphCapturePlugin", "plugin"]
