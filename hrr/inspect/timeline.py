"""``hrr export --chrome-trace``: an archive as a Trace Event Format timeline.

Perfetto and chrome://tracing open the file. Each archive process is a trace process; each
recorded thread and each stream is a track (trace ``tid``), named by ``M`` metadata events.
Every call is a slice on its thread's track; kernels, copies and memsets are slices on their
stream's track (graph launches one slice holding the graph's nodes), linked to the host call
by a flow; syncs, event records/waits, captures and pinned snapshots are instants.

Clock: records carry no wall-clock time, so the timeline is virtual: record ``seq`` starts
at ``seq * TICK_US`` µs and lasts ``SLICE_US``; a stream's work is drawn at the record that
enqueued it (never before the stream's previous work ended). The file says so in
``otherData``. Events are written as they are read: memory does not grow with the archive.
"""
from __future__ import annotations

import collections
import gzip
import json
import os
from typing import IO, Any, Callable

from hrr import __version__
from hrr.api.catalogue import CATALOGUE, Api
from hrr.archive import Limits, open_archive
from hrr.errors import UsageError
from hrr.events.ranges import CallRange
from hrr.events.launch import launch_map
from hrr.inspect.records import Call, Skipped, calls

TICK_US = 1000        # virtual µs between consecutive records
SLICE_US = 800        # a slice's length: a gap before the next record keeps slices apart
CLOCK_NOTE = (f"virtual clock: records carry no wall-clock time; record seq N is drawn at "
              f"N*{TICK_US} us and every call or device operation lasts {SLICE_US} us")
_PENDING_D2H_MAX = 4096   # async D2H copies remembered until their @d2h result (oldest dropped)
_DIRECTIONS = {0: "HtoH", 1: "HtoD", 2: "DtoH", 3: "DtoD", 4: "default"}
_EXPLICIT = {"HtoD": "HtoD", "DtoH": "DtoH", "DtoD": "DtoD"}
_THREAD_SORT, _STREAM_SORT = 0, 1000   # thread tracks above stream tracks


_ENCODE = json.JSONEncoder(separators=(",", ":")).encode   # one encoder: json.dumps makes one per call


class _Out:
    """Writes the JSON object incrementally: one event at a time, ``otherData`` last.
    ``muted``: events other than track metadata (``ph`` "M") are dropped (records outside
    ``--calls`` still build the tracks, handles and graphs that later records need)."""

    def __init__(self, f: IO[str]) -> None:
        self.f, self.n, self.muted = f, 0, False
        f.write('{"displayTimeUnit":"ms","traceEvents":[\n')

    def event(self, ev: dict[str, Any]) -> None:
        if self.muted and ev["ph"] != "M":
            return
        self.f.write((",\n" if self.n else "") + _ENCODE(ev))
        self.n += 1

    def finish(self, other: dict[str, Any]) -> None:
        self.f.write('\n],"otherData":' + _ENCODE(other) + "}\n")


class _Process:
    """The timeline of one process archive: its tracks and the graph state needed to draw it."""

    def __init__(self, out: _Out, pid: int, backend: str) -> None:
        self.out, self.pid = out, pid
        self.next_track = 1
        self.cursor: dict[int, int] = {}                 # track → earliest ts allowed next
        self.threads: dict[int, int] = {}                # recorded tid → track
        self.streams: dict[int, int] = {}                # live stream handle → track
        self.stream_count = 0
        self.functions: dict[int, str] = {}              # function handle → kernel name
        self.capturing: dict[int, list] = {}             # stream handle → its capture's node list
        self.captured_events: dict[int, list] = {}       # event recorded while capturing → nodes
        self.graphs: dict[int, tuple[int, list]] = {}    # graph handle → (ordinal, nodes)
        self.execs: dict[int, tuple[int, int, list]] = {}  # exec → (ordinal, graph ordinal, nodes)
        self.graph_count = self.exec_count = 0
        self.pending_d2h: collections.OrderedDict[int, int] = collections.OrderedDict()
        self.flow = 0
        out.event({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "ts": 0,
                   "args": {"name": f"pid {pid} ({backend})"}})

    # -- tracks ---------------------------------------------------------------------------
    def _new_track(self, name: str, sort: int) -> int:
        track, self.next_track = self.next_track, self.next_track + 1
        self.cursor[track] = 0
        self.out.event({"ph": "M", "name": "thread_name", "pid": self.pid, "tid": track, "ts": 0,
                        "args": {"name": name}})
        self.out.event({"ph": "M", "name": "thread_sort_index", "pid": self.pid, "tid": track,
                        "ts": 0, "args": {"sort_index": sort + track}})
        return track

    def thread_track(self, tid: int) -> int:
        if tid not in self.threads:
            self.threads[tid] = self._new_track(f"thread {len(self.threads) + 1} (tid {tid:#x})",
                                                _THREAD_SORT)
        return self.threads[tid]

    def stream_track(self, handle: Any) -> int:
        key = handle if type(handle) is int else 0
        if key not in self.streams:
            self.stream_count += 1
            name = "null stream" if key == 0 else f"stream {self.stream_count} (handle {key:#x})"
            self.streams[key] = self._new_track(name, _STREAM_SORT)
        return self.streams[key]

    def _at(self, track: int, ts: int, dur: int = 0) -> int:
        start = max(ts, self.cursor[track])   # per-track timestamps never go backwards
        self.cursor[track] = start + dur
        return start

    # -- events ---------------------------------------------------------------------------
    def slice(self, track: int, ts: int, name: str, cat: str, args: dict[str, Any],
              dur: int = SLICE_US) -> int:
        start = self._at(track, ts, dur)
        self.out.event({"ph": "X", "name": name, "cat": cat, "pid": self.pid, "tid": track,
                        "ts": start, "dur": dur, "args": args})
        return start

    def instant(self, track: int, ts: int, name: str, cat: str, args: dict[str, Any],
                scope: str = "t") -> None:
        self.out.event({"ph": "i", "s": scope, "name": name, "cat": cat, "pid": self.pid,
                        "tid": track, "ts": self._at(track, ts), "args": args})

    def _flow(self, src_track: int, src_ts: int, dst_track: int, dst_ts: int) -> None:
        # The host call that enqueued device work → that work (Perfetto draws an arrow).
        self.flow += 1
        fid = self.pid * 1_000_000_000 + self.flow   # ids are global in the trace
        self.out.event({"ph": "s", "id": fid, "name": "enqueue", "cat": "flow", "pid": self.pid,
                        "tid": src_track, "ts": src_ts})
        self.out.event({"ph": "f", "bp": "e", "id": fid, "name": "enqueue", "cat": "flow",
                        "pid": self.pid, "tid": dst_track, "ts": dst_ts})

    # -- one record -----------------------------------------------------------------------
    def record(self, c: Call) -> None:
        row = CATALOGUE.get(c.api)
        ts = c.seq * TICK_US
        thread = self.thread_track(c.tid)
        if row is None:
            self._pseudo(c, thread, ts)
            return
        device = self._device_work(c, row) if c.err == 0 else None
        stream = _arg(c, row, row.stream) if row.stream else None
        for name, rec in _snapshots(c.extra):   # what the launch will read, taken before it
            track = self.stream_track(rec.get("stream", stream))
            self.instant(track, ts, f"{name} snapshot", "snapshot", _snapshot_args(rec, c.seq))
        label = c.api + (f" {device[0]}" if device and row.family == "launch" else "")
        args: dict[str, Any] = {"seq": c.seq}
        if c.err:
            args["err"] = c.err
            label += f" (error {c.err})"
        if device and stream is not None and _key(stream) in self.capturing:
            args["captured"] = True
        host_ts = self.slice(thread, ts, label, "api", args)
        if device is not None:
            self._enqueue(c, row, stream, device, thread, host_ts)
        if c.err == 0:
            self._effects(c, row, stream, thread, host_ts + SLICE_US)

    def _device_work(self, c: Call, row: Api) -> tuple[str, str, dict[str, Any]] | None:
        """(name, category, args) of the device operation this call enqueues, if any."""
        if row.launch is not None:
            launch = launch_map(c.extra.get("launch"))
            launch = launch if isinstance(launch, dict) else {}
            kernel = launch.get("kernel")
            if not isinstance(kernel, str):
                kernel = self.functions.get(_key(c.args[0] if c.args else None), "kernel")
            info = {"kernel": kernel, "api": c.api, "seq": c.seq}
            for field in ("grid", "block"):
                if _dim3(launch.get(field)):
                    info[field] = launch[field]
            shared = _arg(c, row, "sharedMemBytes")
            if type(shared) is int:
                info["shared_mem_bytes"] = shared
            return kernel, "kernel", info
        if row.family == "copy":
            size = _arg(c, row, "sizeBytes")
            direction = _direction(c, row)
            info = {"bytes": size if type(size) is int else None, "direction": direction,
                    "api": c.api, "seq": c.seq}
            for which, pname in (("dst", row.params[0].name), ("src", row.params[1].name)):
                end = _arg(c, row, pname)
                if isinstance(end, (list, tuple)) and end and end[0] in ("a", "h"):
                    info[which] = "tracked allocation" if end[0] == "a" else "host memory"
            return f"memcpy {direction}", "copy", info
        if c.api in ("hipMemset", "hipMemsetAsync"):
            size = _arg(c, row, "sizeBytes")
            return "memset", "memset", {"bytes": size if type(size) is int else None,
                                        "api": c.api, "seq": c.seq}
        if c.api == "hipGraphLaunch":
            return "graph", "graph", {"api": c.api, "seq": c.seq}
        return None

    def _enqueue(self, c: Call, row: Api, stream: Any, device: tuple[str, str, dict[str, Any]],
                 thread: int, host_ts: int) -> None:
        name, cat, info = device
        nodes = self.capturing.get(_key(stream)) if stream is not None else None
        if nodes is not None and cat != "graph":
            nodes.append((name, cat, info))     # recorded into the graph, not run now
            return
        track = self.stream_track(stream)
        if cat != "graph":
            start = self.slice(track, host_ts, name, cat, info)
            self._flow(thread, host_ts, track, start)
            if c.api in ("hipMemcpyAsync", "hipMemcpyDtoHAsync") and info.get("direction") == "DtoH":
                self.pending_d2h[c.seq] = track
                if len(self.pending_d2h) > _PENDING_D2H_MAX:
                    self.pending_d2h.popitem(last=False)
            return
        ordinal, graph_ordinal, gnodes = self.execs.get(_key(c.args[0] if c.args else None),
                                                        (0, 0, []))
        info = dict(info, graph_exec=ordinal, graph=graph_ordinal, nodes=len(gnodes),
                    graph_exec_handle=c.args[0] if c.args else None)
        start = self.slice(track, host_ts, f"graph exec #{ordinal}", "graph", info)
        self._flow(thread, host_ts, track, start)
        # The graph's nodes, in capture order, share the launch's slice (nested inside it).
        n = len(gnodes)
        for i, (nname, ncat, ninfo) in enumerate(gnodes):
            lo, hi = start + i * SLICE_US // n, start + (i + 1) * SLICE_US // n
            self.out.event({"ph": "X", "name": nname, "cat": ncat, "pid": self.pid, "tid": track,
                            "ts": lo, "dur": hi - lo,
                            "args": {**{k: v for k, v in ninfo.items() if k != "seq"},
                                     "captured_seq": ninfo.get("seq"), "graph_exec": ordinal,
                                     "seq": c.seq}})

    def _effects(self, c: Call, row: Api, stream: Any, thread: int, ts: int) -> None:
        """State changes and instants of a successful call (streams, captures, graphs, syncs)."""
        api, out0 = c.api, (c.outs[0] if c.outs else None)
        if api in ("hipStreamCreate", "hipStreamCreateWithFlags") and type(out0) is int:
            self.streams.pop(out0, None)        # a reused handle is a new stream: a new track
            self.stream_track(out0)
        elif api == "hipStreamDestroy":
            self.streams.pop(_key(stream), None)
            self.capturing.pop(_key(stream), None)
        elif api == "hipModuleGetFunction" and type(out0) is int and len(c.args) > 1:
            name = c.args[1]
            self.functions[out0] = name if isinstance(name, str) else repr(name)
        elif api == "hipStreamSynchronize":
            self.instant(self.stream_track(stream), ts, "synchronize", "sync", {"seq": c.seq})
        elif api in ("hipStreamQuery",):
            self.instant(self.stream_track(stream), ts, "query: complete", "sync", {"seq": c.seq})
        elif api == "hipDeviceSynchronize":
            self.instant(thread, ts, "device synchronize", "sync", {"seq": c.seq}, scope="p")
        elif api in ("hipEventSynchronize", "hipEventQuery"):
            self.instant(thread, ts, "event " + ("synchronize" if api == "hipEventSynchronize"
                                                 else "query: complete"), "sync",
                         {"seq": c.seq, "event": c.args[0] if c.args else None})
        elif api == "hipEventRecord":
            event = _key(c.args[0] if c.args else None)
            nodes = self.capturing.get(_key(stream))
            if nodes is not None:
                self.captured_events[event] = nodes
            else:
                self.captured_events.pop(event, None)
            self.instant(self.stream_track(stream), ts, "record event", "event",
                         {"seq": c.seq, "event": event})
        elif api == "hipStreamWaitEvent":
            event = _key(_arg(c, row, "event"))
            nodes = self.captured_events.get(event)
            if nodes is not None:               # waiting on a capturing stream joins its capture
                self.capturing[_key(stream)] = nodes
            self.instant(self.stream_track(stream), ts, "wait event", "event",
                         {"seq": c.seq, "event": event})
        elif api == "hipStreamBeginCapture":
            self.capturing[_key(stream)] = []
            self.instant(self.stream_track(stream), ts, "begin capture", "graph", {"seq": c.seq})
        elif api == "hipStreamEndCapture":
            nodes = self.capturing.pop(_key(stream), [])
            for s in [s for s, n in self.capturing.items() if n is nodes]:
                del self.capturing[s]
            self.graph_count += 1
            if type(out0) is int:
                self.graphs[out0] = (self.graph_count, nodes)
            self.instant(self.stream_track(stream), ts, f"end capture: graph #{self.graph_count}",
                         "graph", {"seq": c.seq, "nodes": len(nodes)})
        elif api in ("hipGraphInstantiate", "hipGraphInstantiateWithFlags") and type(out0) is int:
            graph_ordinal, nodes = self.graphs.get(_key(c.args[0] if c.args else None), (0, []))
            self.exec_count += 1
            self.execs[out0] = (self.exec_count, graph_ordinal, nodes)
        elif api == "hipGraphExecDestroy":
            self.execs.pop(_key(c.args[0] if c.args else None), None)
        elif api == "hipGraphDestroy":
            self.graphs.pop(_key(c.args[0] if c.args else None), None)

    def _pseudo(self, c: Call, thread: int, ts: int) -> None:
        if c.api == "@d2h" and c.args and type(c.args[0]) is int:
            track = self.pending_d2h.pop(c.args[0], thread)
            n = c.extra.get("n")
            self.instant(track, ts, "DtoH result", "copy",
                         {"seq": c.seq, "copy_seq": c.args[0],
                          "bytes": n if type(n) is int else None,
                          "blob": c.extra.get("blob") if isinstance(c.extra.get("blob"), str) else None})
        else:
            self.instant(thread, ts, c.api, "pseudo", {"seq": c.seq})


def _key(handle: Any) -> int:
    return handle if type(handle) is int else 0


def _arg(c: Call, row: Api, name: str | None) -> Any:
    if name is None:
        return None
    try:
        i = row.param_index(name)
    except KeyError:
        return None
    return c.args[i] if i < len(c.args) else None


def _dim3(v: Any) -> bool:
    return isinstance(v, (list, tuple)) and len(v) == 3 and all(type(x) is int for x in v)


def _direction(c: Call, row: Api) -> str:
    for suffix, name in _EXPLICIT.items():
        if c.api.startswith("hipMemcpy" + suffix):
            return name
    kind = _arg(c, row, "kind")
    return _DIRECTIONS.get(kind, f"kind {kind}") if type(kind) is int else "unknown"


def _snapshots(extra: dict) -> list[tuple[str, dict]]:
    """Plugin records that describe pinned host memory snapshotted before the call."""
    records = extra.get("records")
    out: list[tuple[str, dict]] = []
    if isinstance(records, dict):
        for plugin, recs in records.items():
            for rec in recs if isinstance(recs, list) else ():
                if isinstance(rec, dict) and isinstance(rec.get("snaps"), list):
                    out.append((str(plugin), rec))
    return out


def _snapshot_args(rec: dict, seq: int) -> dict[str, Any]:
    snaps = [s for s in rec["snaps"] if isinstance(s, dict)]
    total = sum(s["length"] for s in snaps if type(s.get("length")) is int)
    return {"seq": seq, "ranges": len(snaps), "bytes": total,
            "during_capture": rec.get("during_capture") is True}


def wants_gzip(out_path: str, gzip_flag: bool) -> bool:
    """Whether the trace is written gzip-compressed: ``--gzip``, or a name ending ``.gz``."""
    return gzip_flag or out_path.endswith(".gz")


def _open_output(out_path: str, compress: bool) -> IO[str]:
    """The trace file, opened for writing as text (gzip level 1: about a tenth of the JSON's
    size for a fraction of its time); a path that cannot be written is a usage error."""
    try:
        if compress:
            return gzip.open(out_path, "wt", encoding="utf-8", compresslevel=1)
        return open(out_path, "w", encoding="utf-8")
    except OSError as exc:
        folder = os.path.dirname(os.path.abspath(out_path))
        hint = (f"the folder {folder} does not exist" if not os.path.isdir(folder)
                else "choose a path you can write")
        raise UsageError(f"cannot write --chrome-trace {out_path}: {exc.strerror or exc}", hint=hint) from None


def export_chrome_trace(archive: str, out_path: str, *, limits: Limits | None = None,
                        progress: Callable[[int], None] | None = None, compress: bool = False,
                        calls_range: CallRange | None = None) -> dict[str, Any]:
    """Write ``archive``'s timeline to ``out_path`` (gzip-compressed with ``compress``); returns
    what was written (counts). ``calls_range``: only records whose sequence number lies in it
    are drawn (those before it are read for the state they set up; reading stops past it).
    ``progress(n)``: n records of the current process done; a :class:`hrr.cli.progress.Bar`
    is also told when each process starts."""
    skipped = Skipped()
    records = drawn = 0
    with open_archive(archive, limits or Limits()) as arc, _open_output(out_path, compress) as f:
        out = _Out(f)
        for proc in arc.processes:
            backend = proc.manifest.get("backend") if isinstance(proc.manifest, dict) else None
            timeline = _Process(out, proc.pid, str(backend or "unknown"))
            if progress is not None and hasattr(progress, "task"):
                progress.task(f"export pid-{proc.pid}", manifest=proc.manifest)
            for done, c in enumerate(calls(proc, skipped), 1):
                if calls_range is not None:
                    if calls_range.past(c.seq):
                        break
                    out.muted = c.seq not in calls_range
                    drawn += not out.muted
                timeline.record(c)
                records += 1
                if progress is not None:
                    progress(done)
            out.muted = False
        summary: dict[str, Any] = {"processes": len(arc.processes),
                   "records": records if calls_range is None else drawn,
                   "skipped_records": skipped.count, "first_skipped": skipped.first,
                   "trace_events": out.n}
        if calls_range is not None:
            summary["calls"] = [calls_range.start, calls_range.stop]
        out.finish({"generator": f"hrr {__version__}", "archive": archive, "clock": CLOCK_NOTE,
                    **summary})
    return summary
