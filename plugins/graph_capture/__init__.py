"""graph_capture: each stream's graph-capture state, and pinned snapshots at graph launches.

It follows ``hipStreamBeginCapture`` / ``hipStreamEndCapture`` (mode, the streams that
join a capture through ``hipEventRecord`` + ``hipStreamWaitEvent``, invalidation) by the
capture's stream handle values, at capture and at replay, and publishes that state as
``ctx.shared["graph_capture"]`` (``is_capturing(stream_value, stream_handle)``).

Beyond the reference: it remembers which pinned allocations the kernels captured into
each graph point into (graph → exec through ``hipGraphInstantiate*``); at each
``hipGraphLaunch`` it snapshots them with pinned_snapshot's routine (data kind
``graph_launch_snapshot``) and attaches the record to the launch event; replay restores
them with a host function queued on the launch stream ahead of the graph.
"""
from __future__ import annotations

import threading
from typing import Any

from hrr.api.catalogue import CATALOGUE, DEVICE_RESET_APIS, LAUNCH_APIS
from hrr.backends.hiptypes import PointerConversionError, as_handle_value
from hrr.capture.allocations import DEVICE
from hrr.pipeline import hookimpl
from hrr.pipeline.context import backend_stream_capturing

from hrr import __version__  # built-ins ship with hrr and carry its version
NAME = "graph_capture"
KIND = "graph_launch_snapshot"
_INVALIDATING_ERRORS = (900, 901)  # hipErrorStreamCaptureUnsupported / Invalidated


def _hval(v: Any) -> int:
    if isinstance(v, int):
        return v
    try:
        return as_handle_value(v)
    except PointerConversionError:
        return 0


class _Capture:
    __slots__ = ("invalidated", "mode", "origin", "pinned_addrs", "streams")

    def __init__(self, origin: int, mode: int) -> None:
        self.origin, self.mode = origin, mode
        self.streams: set[int] = {origin}
        self.invalidated = False
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
            if graph:
                self.graphs[graph] = frozenset(cap.pinned_addrs)

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

    def invalidate(self, stream: int) -> None:
        with self.lock:
            cap = self.streams.get(stream)
            if cap is not None:
                cap.invalidated = True

    def note_pinned(self, stream: int, addrs: list[int]) -> None:
        with self.lock:
            cap = self.streams.get(stream)
            if cap is not None:
                cap.pinned_addrs.update(addrs)

    def instantiated(self, graph: int, exec_: int) -> None:
        with self.lock:
            self.execs[exec_] = self.graphs.get(graph, frozenset())

    def exec_addrs(self, exec_: int) -> frozenset[int]:
        with self.lock:
            return self.execs.get(exec_, frozenset())


def _arg(event: Any, name: str) -> int:
    row = CATALOGUE.get(event.api)
    if row is None or len(event.args) != len(row.params):
        return 0
    v = event.args[row.param_index(name)]
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


class GraphCapturePlugin:
    """Stream-capture state at capture and replay; pinned snapshots at graph launches."""

    __version__ = __version__

    def __init__(self) -> None:
        self.state: CaptureState | None = None

    # ------------------------------------------------------------------ capture
    @hookimpl
    def hrr_capture_start(self, ctx: Any) -> None:
        from hrr.archive.forking import register_fork_lock

        self.state = CaptureState(ctx.hip)
        # A fork while another thread holds it would leave the child's copy held forever.
        # It is held only briefly and never while another lock is taken, so plugin rank.
        register_fork_lock(self.state.lock)
        ctx.shared[NAME] = self
        w = ctx.watch
        w(NAME, tuple(DEVICE_RESET_APIS), after=self._cap_device_reset)
        w(NAME, ("hipStreamBeginCapture",), after=self._cap_begin)
        w(NAME, ("hipStreamEndCapture",), after=self._cap_end)
        w(NAME, ("hipEventRecord",), after=self._cap_event_record)
        w(NAME, ("hipStreamWaitEvent",), after=self._cap_wait_event)
        w(NAME, ("hipGraphInstantiate", "hipGraphInstantiateWithFlags"), after=self._cap_instantiate)
        w(NAME, ("hipGraphExecDestroy",), after=self._cap_exec_destroy)
        w(NAME, ("hipGraphDestroy",), after=self._cap_graph_destroy)
        w(NAME, tuple(LAUNCH_APIS), after=self._cap_launch_result)
        w(NAME, ("hipGraphLaunch",), before=lambda call: self._cap_graph_launch(ctx, call),
          after=lambda call, result: self._cap_graph_launched(ctx, result))

    def is_capturing(self, stream_value: int, stream_handle: Any = None) -> bool:
        return self.state is not None and self.state.is_capturing(stream_value, stream_handle)

    def _cap_begin(self, call: Any, result: tuple) -> None:
        if int(result[0]) == 0:
            mode = call.args[1]
            self.state.begin(_hval(call.args[0]), int(mode) if mode is not None else 0)

    def _cap_end(self, call: Any, result: tuple) -> None:
        graph = _hval(result[1]) if int(result[0]) == 0 and result[1] is not None else None
        self.state.end(_hval(call.args[0]), graph)

    def _cap_event_record(self, call: Any, result: tuple) -> None:
        if int(result[0]) == 0:
            self.state.event_recorded(_hval(call.args[0]), _hval(call.args[1]))

    def _cap_wait_event(self, call: Any, result: tuple) -> None:
        if int(result[0]) == 0:
            self.state.stream_waited(_hval(call.args[0]), _hval(call.args[1]))

    def _cap_instantiate(self, call: Any, result: tuple) -> None:
        if int(result[0]) == 0 and result[1] is not None:
            self.state.instantiated(_hval(call.args[0]), _hval(result[1]))

    def _cap_exec_destroy(self, call: Any, result: tuple) -> None:
        if int(result[0]) == 0:
            with self.state.lock:
                self.state.execs.pop(_hval(call.args[0]), None)

    def _cap_graph_destroy(self, call: Any, result: tuple) -> None:
        if int(result[0]) == 0:
            with self.state.lock:
                self.state.graphs.pop(_hval(call.args[0]), None)

    def _cap_launch_result(self, call: Any, result: tuple) -> None:
        if int(result[0]) in _INVALIDATING_ERRORS:
            stream = call.args[call.api.param_index(call.api.stream)]
            self.state.invalidate(_hval(stream))

    @hookimpl
    def hrr_capture_launch(self, ctx: Any, launch: Any) -> None:
        if self.state is None or not launch.stream:
            return
        if self.state.capture_of(launch.stream) is not None:
            self.state.note_pinned(launch.stream, [p.base + p.delta for p in launch.pointers
                                                   if p.kind != DEVICE])
        return

    def _cap_device_reset(self, call: Any, result: tuple) -> None:
        if int(result[0]) == 0:
            self.state.clear()

    def _cap_graph_launch(self, ctx: Any, call: Any) -> dict | None:
        pinned = ctx.shared.get("pinned_snapshot")
        if pinned is None:
            return None
        pinned.begin_call()
        addrs = self.state.exec_addrs(_hval(call.args[0]))
        if not addrs:
            return None
        stream = call.args[1]
        return pinned.snapshot(ctx, sorted(addrs), _hval(stream), stream, kind=KIND)

    def _cap_graph_launched(self, ctx: Any, result: tuple) -> None:
        # The graph-launch records become their allocations' last only if the graph was
        # enqueued (a failed hipGraphLaunch is skipped at replay).
        pinned = ctx.shared.get("pinned_snapshot")
        if pinned is not None:
            pinned.end_call(int(result[0]) == 0)

    @hookimpl
    def hrr_capture_fork_child(self, ctx: Any) -> None:
        pass  # capture state is the process's own and stays valid in the child

    # ------------------------------------------------------------------ replay
    @hookimpl
    def hrr_replay_start(self, ctx: Any) -> None:
        self.state = CaptureState(ctx.hip)
        ctx.shared[NAME] = self

    @hookimpl
    def hrr_replay_before_event(self, ctx: Any, event: Any, stream: Any) -> None:
        if event.api != "hipGraphLaunch":
            return
        records = event.records(NAME)
        if not records or event.err:
            return
        from plugins.pinned_snapshot.records import restore

        skip = self.state.is_capturing(_arg(event, "stream"), stream)
        n = restore(ctx, event, stream, records, label="graph-launch snapshot", skip_capture=skip)
        ctx.counters["graph_launch_restored"] += n

    @hookimpl
    def hrr_replay_after_event(self, ctx: Any, event: Any, result: Any) -> None:
        if result is None:
            return
        err = int(result[0])
        api = event.api
        if api == "hipStreamBeginCapture" and err == 0:
            mode = event.args[1] if len(event.args) > 1 and isinstance(event.args[1], int) else 0
            self.state.begin(_arg(event, "stream"), mode)
        elif api == "hipStreamEndCapture":
            self.state.end(_arg(event, "stream"), None)
        elif api == "hipEventRecord" and err == 0:
            self.state.event_recorded(_arg(event, "event"), _arg(event, "stream"))
        elif api == "hipStreamWaitEvent" and err == 0:
            self.state.stream_waited(_arg(event, "stream"), _arg(event, "event"))
        elif api in LAUNCH_APIS and err in _INVALIDATING_ERRORS:
            self.state.invalidate(_arg(event, "stream"))

    @hookimpl
    def hrr_replay_summary(self, ctx: Any) -> list[str] | None:
        n = ctx.counters.get("graph_launch_restored", 0)
        return [f"Graph-launch snapshots: {n} restored ahead of their graphs"] if n else None


plugin = GraphCapturePlugin

__all__ = ["CaptureState", "GraphCapturePlugin", "__version__", "plugin"]
