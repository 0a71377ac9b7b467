"""``hrr info``: what an archive holds, read under the same limits as replay.

One streaming pass over each process's records fills counters (never a list of records),
so memory does not grow with the archive: per-key tables (threads, streams, kernels) keep
at most ``MAX_TRACKED`` keys and show the ``MAX_SHOWN`` largest, with a line for the rest.
Every value printed comes from the reader, which hands on only schema-checked events and
validated manifests; on top of that, everything printed is made printable here (nesting
bounded, non-finite floats and bytes spelled out), so no archive can make info raise.
"""
from __future__ import annotations

import collections
import io
import math
import textwrap
from collections.abc import Callable, Iterator
from typing import Any

from hrr.api.catalogue import CATALOGUE
from hrr.api.roles import param_role
from hrr.archive import BadRecord, Limits, open_archive
from hrr.archive.manifest import RECORDERS, clip_words, describe_ended
from hrr.events.launch import launch_map

MAX_PRINT_DEPTH = 8        # deeper values print as a placeholder
MAX_PRINT_ITEMS = 64       # longer lists/maps are cut, with a count of what was left out
MAX_TRACKED = 4096         # distinct keys a per-key table counts; later keys go to "other"
MAX_SHOWN = 50             # rows a per-key table prints (the largest), then "and N more"
MAX_SHAPES = 8             # distinct grid/block shapes kept per kernel
MAX_BAD_KEPT = 1000        # refused records described in the data (all are counted)
MAX_BAD_SHOWN = 20         # of those, listed in the text form
MAX_NAME = 80              # characters of a kernel name or handle shown
# The manifest field that says how the captured process ended (hrr.capture.exits.ended;
# hrr.archive.manifest.describe_ended reads it).
ENDED_FIELDS = ("ended",)


class Top:
    """Counts per key for at most ``cap`` distinct keys; what does not fit is counted in
    ``other`` (records) so totals stay right while memory stays bounded."""

    def __init__(self, cap: int = MAX_TRACKED) -> None:
        self.counts: dict[Any, int] = {}
        self.cap = cap
        self.other = 0

    def add(self, key: Any, n: int = 1) -> bool:
        """Count ``n`` for ``key``; False when the key did not fit (counted in ``other``)."""
        if key in self.counts:
            self.counts[key] += n
            return True
        if len(self.counts) < self.cap:
            self.counts[key] = n
            return True
        self.other += n
        return False

    def table(self, shown: int = MAX_SHOWN) -> tuple[list[tuple[Any, int]], int, int]:
        """(the ``shown`` largest (key, count), keys left out, records left out)."""
        rows = sorted(self.counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
        left = rows[shown:]
        return rows[:shown], len(left), sum(n for _, n in left) + self.other


def _name(v: Any) -> str:
    text = v if isinstance(v, str) else repr(printable(v))
    return text if len(text) <= MAX_NAME else text[:MAX_NAME - 3] + "..."


class _RowFacts:
    """What ``add`` needs to know about one catalogue row, worked out once per API."""

    def __init__(self, row: Any) -> None:
        names = [p.name for p in row.params]
        self.row = row
        self.stream = names.index(row.stream) if row.stream in names else None
        # Copy endpoints [tag, addr, nbytes, blob] sit in the copy_src/copy_dst/strided parameters.
        self.endpoints = tuple(i for i, p in enumerate(row.params) if param_role(p.role).copy_endpoint)
        self.launch = row.family == "launch"
        self.dims = {key: tuple(names.index(prefix + a) if prefix + a in names else None for a in "XYZ")
                     for key, prefix in (("grid", "gridDim"), ("block", "blockDim"))}


_FACTS: dict[str, _RowFacts] = {}   # bounded by the catalogue: only its names get here


def _facts(api: str) -> _RowFacts | None:
    facts = _FACTS.get(api)
    if facts is None:
        row = CATALOGUE.get(api)
        if row is None:
            return None
        facts = _FACTS[api] = _RowFacts(row)
    return facts


def _dims(launch: Any, facts: _RowFacts, args: tuple) -> tuple[Any, Any]:
    """(grid, block) of a launch as 3-tuples, from the launch extra or the named parameters."""
    out = []
    for key in ("grid", "block"):
        v = launch.get(key) if isinstance(launch, dict) else None
        if not (isinstance(v, (list, tuple)) and len(v) == 3 and all(type(x) is int for x in v)):
            v = tuple(args[i] if i is not None and i < len(args) else None for i in facts.dims[key])
            if not all(type(x) is int for x in v):
                v = None
        out.append(tuple(v) if v is not None else None)
    return out[0], out[1]


class ProcessCounts:
    """What one pass over a process's records counts."""

    def __init__(self) -> None:
        self.records = 0
        self.calls: collections.Counter = collections.Counter()   # keys: catalogue names only
        self.errors: collections.Counter = collections.Counter()
        self.threads = Top()
        self.streams = Top()             # stream handle -> calls that named it
        self.stream_handles = 0          # streams created (successful create calls)
        self.kernels: dict[str, list] = {}   # name -> [launches, {(grid, block): n}, shapes left out]
        self.kernels_other = 0           # launches of kernels past MAX_TRACKED names
        self.functions: dict[int, str] = {}  # function handle -> kernel name (live handles, bounded)
        self.blob_refs = 0
        self.blob_ref_bytes = 0
        self.snap_records = self.snap_allocs = self.snap_bytes = self.snap_chunks = 0
        self.graph_captures = self.graph_instantiations = self.graph_launches = 0
        self.bad: list[dict] = []
        self.bad_count = 0

    def add(self, ev: Any) -> None:
        """Count one schema-checked event."""
        self.records += 1
        api, args = ev.api, ev.args
        self.calls[api] += 1
        if ev.err:
            self.errors[api] += 1
        self.threads.add(ev.tid)
        extra = ev.extra if isinstance(ev.extra, dict) else {}
        if api.startswith("@"):
            if isinstance(extra.get("blob"), str):
                self._blob(extra.get("n"))
            return
        facts = _facts(api)
        if facts is None:
            return
        for i in facts.endpoints:  # copy endpoints [tag, addr, nbytes, blob]: a blob reference
            v = args[i] if i < len(args) else None
            if type(v) is list and len(v) == 4 and v[0] in ("h", "a") and isinstance(v[3], str):
                self._blob(v[2])
        if facts.stream is not None and facts.stream < len(args):
            handle = args[facts.stream]
            self.streams.add(handle if type(handle) is int else _name(handle))
        out0 = ev.outs[0] if ev.outs else None
        ok = ev.err == 0
        if ok and api in ("hipStreamCreate", "hipStreamCreateWithFlags", "hipStreamCreateWithPriority"):
            self.stream_handles += 1
        elif ok and api == "hipModuleGetFunction" and type(out0) is int and len(args) > 1:
            if len(self.functions) >= MAX_TRACKED:
                self.functions.pop(next(iter(self.functions)))
            self.functions[out0] = _name(args[1])
        elif ok and api == "hipStreamEndCapture":
            self.graph_captures += 1
        elif ok and api.startswith("hipGraphInstantiate"):
            self.graph_instantiations += 1
        elif ok and api == "hipGraphLaunch":
            self.graph_launches += 1
        if facts.launch:
            self._launch(ev, facts, extra)
        records = extra.get("records")
        for recs in records.values() if isinstance(records, dict) else ():
            for rec in recs if isinstance(recs, list) else ():
                if isinstance(rec, dict) and isinstance(rec.get("snaps"), list):
                    self._snapshot(rec["snaps"])

    def _blob(self, n: Any) -> None:
        self.blob_refs += 1
        if type(n) is int and n > 0:
            self.blob_ref_bytes += n

    def _snapshot(self, snaps: list) -> None:
        self.snap_records += 1
        for snap in snaps:
            if not isinstance(snap, dict):
                continue
            self.snap_allocs += 1
            if type(snap.get("length")) is int and snap["length"] > 0:
                self.snap_bytes += snap["length"]
            chunks = snap.get("chunks")
            for chunk in chunks if isinstance(chunks, list) else ():
                self.snap_chunks += 1
                if isinstance(chunk, (list, tuple)) and len(chunk) == 2 and isinstance(chunk[0], str):
                    self._blob(chunk[1])

    def _launch(self, ev: Any, facts: _RowFacts, extra: dict) -> None:
        launch = launch_map(extra.get("launch"))
        kernel = launch.get("kernel") if isinstance(launch, dict) else None
        if not isinstance(kernel, str):
            fn = ev.args[0] if ev.args else None
            kernel = self.functions.get(fn, "?") if type(fn) is int else "?"
        kernel = _name(kernel)
        entry = self.kernels.get(kernel)
        if entry is None:
            if len(self.kernels) >= MAX_TRACKED:
                self.kernels_other += 1
                return
            entry = self.kernels[kernel] = [0, {}, 0]
        entry[0] += 1
        shape = _dims(launch, facts, ev.args)
        shapes = entry[1]
        if shape in shapes:
            shapes[shape] += 1
        elif len(shapes) < MAX_SHAPES:
            shapes[shape] = 1
        else:
            entry[2] += 1

    def refuse(self, item: Any) -> None:
        """Count one refused record; keep the first few for the listing."""
        self.bad_count += 1
        if len(self.bad) < MAX_BAD_KEPT:
            self.bad.append({"index": item.index, "offset": item.offset, "where": item.where,
                             "reason": printable(item.reason)})


def archive_info(path: str, *, with_events: bool = False, limits: Limits | None = None,
                 progress: Any = None) -> dict[str, Any]:
    """A JSON-able description of every process archive under ``path``. ``progress``: a
    :class:`hrr.cli.progress.Bar` (or None) told of each process and record."""
    archive = open_archive(path, limits or Limits())
    out: dict[str, Any] = {"archive": path, "processes": []}
    try:
        for proc in archive.processes:
            entry = _process_info(proc, with_events, progress)
            out["processes"].append(entry)
            if entry.get("interrupted"):  # Ctrl-C: what was counted so far, said to be partial
                out["interrupted"] = {"pid": proc.pid, "after_records": entry["records"]}
                break
    finally:
        archive.close()
    return out


def _process_info(proc: Any, with_events: bool, progress: Any = None) -> dict[str, Any]:
    counts = ProcessCounts()
    events: list[dict] = []
    tick: Callable[[int], None] | None = None
    if progress is not None:
        progress.task(f"info pid-{proc.pid}", manifest=proc.manifest)
        tick = progress
    done = 0
    interrupted = False
    try:
        for item in proc.checked_events():
            done += 1
            if tick is not None:
                tick(done)
            ev = getattr(item, "event", None)
            if ev is None:  # a refused record (the reader says why)
                counts.refuse(item)
                continue
            counts.add(ev)
            if with_events:  # --events --json only: this list grows with the archive
                events.append(_event_entry(ev))
    except KeyboardInterrupt:
        interrupted = True
    m = proc.manifest if isinstance(proc.manifest, dict) else {}
    unreplayable = m.get("unreplayable_apis")
    entry = {
        "pid": proc.pid,
        "manifest": printable(proc.manifest),
        "clean": proc.clean,
        "torn": proc.torn,
        "ended": next((printable(m[k]) for k in ENDED_FIELDS if k in m), None),
        "records": done,
        "threads": len(counts.threads.counts) + (1 if counts.threads.other else 0),
        "calls": dict(sorted(counts.calls.items())),
        "failed_calls": dict(sorted(counts.errors.items())),
        "per_thread": _top_json(counts.threads, "tid"),
        "streams": {"created": counts.stream_handles, **_top_json(counts.streams, "stream")},
        "kernels": _kernels_json(counts),
        "blobs": _blobs_json(counts, m),
        "snapshots": {"records": counts.snap_records, "allocations": counts.snap_allocs,
                      "bytes": counts.snap_bytes, "chunks": counts.snap_chunks},
        "graphs": {"captures": counts.graph_captures, "instantiations": counts.graph_instantiations,
                   "launches": counts.graph_launches},
        "unreplayable": [{"api": printable(e.get("api")), "reason": printable(e.get("reason"))}
                         for e in (unreplayable if isinstance(unreplayable, list) else [])[:MAX_SHOWN]
                         if isinstance(e, dict)],
        "bad_count": counts.bad_count,
        "bad_records": counts.bad,
    }
    if with_events:
        entry["events"] = events
    if interrupted:
        entry["interrupted"] = True
    return entry


def _event_entry(ev: Any) -> dict[str, Any]:
    row = CATALOGUE.get(ev.api)
    return {"seq": ev.seq, "tid": ev.tid, "api": ev.api, "err": ev.err,
            "replay": row.replay if row else "pseudo",
            "args": _brief(ev.args), "outs": _brief(ev.outs),
            "records": sorted(ev.extra.get("records", {}))}


def _top_json(top: Top, key: str) -> dict[str, Any]:
    rows, more_keys, more_records = top.table()
    return {"rows": [{key: printable(k), "calls": n} for k, n in rows],
            "more_keys": more_keys, "more_calls": more_records,
            "untracked": top.other > 0}


def _kernels_json(c: ProcessCounts) -> dict[str, Any]:
    rows = sorted(c.kernels.items(), key=lambda kv: (-kv[1][0], kv[0]))
    shown = [{"name": name, "launches": n,
              "shapes": [{"grid": list(g) if g else None, "block": list(b) if b else None, "launches": k}
                         for (g, b), k in sorted(shapes.items(), key=lambda s: -s[1])],
              "more_shapes": more}
             for name, (n, shapes, more) in rows[:MAX_SHOWN]]
    left = rows[MAX_SHOWN:]
    return {"rows": shown, "more_kernels": len(left),
            "more_launches": sum(v[0] for _, v in left) + c.kernels_other}


def _blobs_json(c: ProcessCounts, m: dict) -> dict[str, Any]:
    raw_counts = m.get("counts")
    counts = raw_counts if isinstance(raw_counts, dict) else {}
    # Untrusted manifest values: checked by ``known`` below.
    unique: Any = counts.get("blobs")
    unique_bytes: Any = counts.get("blob_bytes")
    known = type(unique) is int and type(unique_bytes) is int
    # References to a store that holds no blob: they are missing, not deduplicated.
    saved = max(0, c.blob_ref_bytes - unique_bytes) if known and (unique or not c.blob_refs) else None
    return {"references": c.blob_refs, "referenced_bytes": c.blob_ref_bytes,
            "unique": unique if known else None, "unique_bytes": unique_bytes if known else None,
            "saved_bytes": saved}


def printable(v: Any, depth: int = 0) -> Any:
    """``v`` made safe to print and to dump as strict JSON: nesting and length bounded,
    bytes as a size, non-finite floats as strings, map keys as strings."""
    if v is None or type(v) in (bool, int, str):
        return v
    if type(v) is float:
        return v if math.isfinite(v) else str(v)
    if type(v) in (bytes, bytearray):
        return f"<{len(v)} bytes>"
    if depth >= MAX_PRINT_DEPTH:
        return "<nested too deep>"
    if isinstance(v, (list, tuple)):
        items = [printable(x, depth + 1) for x in v[:MAX_PRINT_ITEMS]]
        if len(v) > MAX_PRINT_ITEMS:
            items.append(f"<{len(v) - MAX_PRINT_ITEMS} more>")
        return items
    if isinstance(v, dict):
        out = {str(k): printable(x, depth + 1) for k, x in list(v.items())[:MAX_PRINT_ITEMS]}
        if len(v) > MAX_PRINT_ITEMS:
            out["..."] = f"<{len(v) - MAX_PRINT_ITEMS} more>"
        return out
    return f"<{type(v).__name__}>"


def _brief(values: Any) -> list:
    def one(v: Any) -> Any:
        if type(v) is int and v > 0xFFFF:
            return hex(v)
        if isinstance(v, list):
            return [one(x) for x in v]
        return v
    return [one(v) for v in printable(list(values))]


def _field(m: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    """A manifest field if it has the expected type, else a placeholder (never raises)."""
    v = m.get(key)
    return v if isinstance(v, kind) and not (kind is int and type(v) is bool) else f"<bad {key}>"


def _recorder(m: dict[str, Any]) -> str:
    """Which record path wrote the process (``native record path, ``); empty for archives
    written before the manifest named it."""
    v = m.get("recorder")
    return f"{v} record path, " if v in RECORDERS else ""


def _device(m: dict[str, Any]) -> str:
    """The recorded device (the sim's model) as ``, device mi300x (AMD Instinct MI300X,
    gfx942:sramecc+:xnack-)``; empty when the manifest names none (older archives, other
    backends). The texts are the archive's: shown with their control characters escaped."""
    d = m.get("device")
    if not isinstance(d, dict) or type(d.get("model")) is not str:
        return ""

    def text(v: Any) -> str:
        return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(v))[:256]
    rest = ", ".join(text(d[k]) for k in ("name", "arch") if type(d.get(k)) is str)
    return f", device {text(d['model'])}" + (f" ({rest})" if rest else "")


def render_info(data: dict[str, Any], width: int = 110) -> str:
    """The text form of ``archive_info``: a header line per process and rich tables."""
    from rich.console import Console

    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None,
                      emoji=False, highlight=False, markup=False)
    console.print(f"Archive {data['archive']}: {len(data['processes'])} process(es)")
    for p in data["processes"]:
        for part in _process_renderables(p):
            console.print(part)
    return buf.getvalue().rstrip("\n")


def _table(title: str, columns: list[str], rows: list[list[Any]], more: str | None = None) -> Any:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title), title_justify="left", show_edge=False, pad_edge=False,
                  min_width=len(title))
    for i, col in enumerate(columns):
        table.add_column(Text(col), justify="left" if i == 0 else "right", overflow="fold")
    for row in rows:  # Text, never markup: names come from the archive
        table.add_row(*(Text(str(x)) for x in row))
    if more:
        table.add_row(Text(more), *([Text("")] * (len(columns) - 1)))
    return table


def _more(keys: int, records: int, what: str) -> str | None:
    if records <= 0:
        return None
    return f"and {keys} more {what} ({records} calls)" if keys else f"and more {what} ({records} calls)"


def _handle(v: Any) -> str:
    if v == 0:
        return "null stream"
    return hex(v) if type(v) is int else str(v)


def _shape(s: dict) -> str:
    def d(v: Any) -> str:
        return "x".join(str(x) for x in v) if isinstance(v, list) else "?"
    return f"{d(s.get('grid'))}/{d(s.get('block'))}"


def _process_renderables(p: dict[str, Any]) -> Iterator[Any]:
    m = p["manifest"] if isinstance(p["manifest"], dict) else {}
    plugins = m.get("plugins")
    plugins = plugins if isinstance(plugins, dict) else {}
    yield ""
    state = "clean" if p["clean"] else "NOT closed (run hrr repair)"
    yield (f"pid-{p['pid']}: backend {_field(m, 'backend', str)}{_device(m)}, "
           f"format {_field(m, 'format_version', int)}, "
           f"{_field(m, 'content_mode', str)}, host_snapshots {_field(m, 'host_snapshots', bool)}, "
           f"{_recorder(m)}{state}{', torn' if p['torn'] else ''}")
    yield _table("Process", ["pid", "parent", "backend", "content", "plugins", "closed", "records", "ended"],
                 [[p["pid"], _parent(m), _field(m, "backend", str), _field(m, "content_mode", str),
                   ", ".join(f"{k} {v}" for k, v in plugins.items()) or "none",
                   "yes" if p["clean"] else "NO" + (", torn" if p["torn"] else ""),
                   p["records"], _ended(p.get("ended"))]])
    yield from _ended_in_full(p.get("ended"))
    t = p["per_thread"]
    yield _table(f"Threads ({p['threads']})", ["thread id", "records"],
                 [[hex(r["tid"]) if type(r["tid"]) is int else r["tid"], r["calls"]] for r in t["rows"]],
                 _more(t["more_keys"], t["more_calls"], "threads"))
    s = p["streams"]
    yield _table(f"Streams ({s['created']} created)", ["stream", "calls naming it"],
                 [[_handle(r["stream"]), r["calls"]] for r in s["rows"]],
                 _more(s["more_keys"], s["more_calls"], "streams"))
    calls = sorted(p["calls"].items(), key=lambda kv: (-kv[1], kv[0]))
    left = calls[MAX_SHOWN:]
    yield _table(f"Calls ({sum(p['calls'].values())} records)", ["API", "calls", "errors"],
                 [[api, n, p["failed_calls"].get(api, 0)] for api, n in calls[:MAX_SHOWN]],
                 _more(len(left), sum(n for _, n in left), "APIs"))
    k = p["kernels"]
    yield _table("Kernels", ["kernel", "launches", "shapes (grid/block)"],
                 [[r["name"], r["launches"], ", ".join(f"{_shape(s)} x{s['launches']}" for s in r["shapes"])
                   + (f", +{r['more_shapes']} launches in more shapes" if r["more_shapes"] else "")]
                  for r in k["rows"]],
                 _more(k["more_kernels"], k["more_launches"], "kernels"))
    b = p["blobs"]
    unknown = "?"
    yield _table("Blobs", ["references", "referenced bytes", "unique blobs", "unique bytes", "saved by dedup"],
                 [[b["references"], b["referenced_bytes"], _or(b["unique"], unknown),
                   _or(b["unique_bytes"], unknown), _or(b["saved_bytes"], unknown)]])
    sn = p["snapshots"]
    yield _table("Pinned snapshots", ["records", "allocations", "bytes", "chunks"],
                 [[sn["records"], sn["allocations"], sn["bytes"], sn["chunks"]]])
    g = p["graphs"]
    yield _table("Graphs", ["captures", "instantiations", "launches"],
                 [[g["captures"], g["instantiations"], g["launches"]]])
    if p["unreplayable"]:
        yield _table("Unreplayable calls", ["API", "reason"],
                     [[e["api"], e["reason"]] for e in p["unreplayable"]])
    for bad in p["bad_records"][:MAX_BAD_SHOWN]:
        yield f"  BAD record {bad['index']} at offset {bad['offset']}: {bad['reason']}"
    if p["bad_count"] > MAX_BAD_SHOWN:
        yield f"  and {p['bad_count'] - MAX_BAD_SHOWN} more BAD records"
    for ev in p.get("events", ()):
        yield event_line(ev)


def event_line(ev: dict[str, Any]) -> str:
    """One record as ``info --events`` prints it."""
    return (f"  #{ev['seq']:<6} tid {ev['tid']:#x} {ev['api']} err={ev['err']} "
            f"args={ev['args']} outs={ev['outs']}" + (f" records={ev['records']}" if ev["records"] else ""))


def _or(v: Any, default: str) -> Any:
    return default if v is None else v


def _parent(m: dict) -> str:
    forked = m.get("forked_from")
    if isinstance(forked, dict) and type(forked.get("pid")) is int:
        return f"{forked['pid']} (fork{', no device' if forked.get('device') == 'lost' else ''})"
    parent = m.get("parent_pid", m.get("ppid"))
    return str(parent) if type(parent) is int else "-"


def _ended(v: Any) -> str:
    """The manifest's ``ended`` in words, cut at a word for the table (the whole of it
    follows the table, see ``_ended_in_full``); "-" for an archive written before it was recorded."""
    return "-" if v is None else clip_words(describe_ended(v), MAX_NAME, "(below)")


def _ended_in_full(v: Any) -> list[str]:
    """The lines after the Process table that give a long ``ended`` whole, wrapped."""
    if v is None or len(describe_ended(v)) <= MAX_NAME:
        return []
    return textwrap.wrap(f"ended: {describe_ended(v)}", width=100, initial_indent="  ",
                         subsequent_indent="    ", break_long_words=False, break_on_hyphens=False)


def iter_event_lines(path: str, limits: Limits | None = None) -> Iterator[str]:
    """``info --events`` text: every record, read and printed one at a time (flat memory)."""
    archive = open_archive(path, limits or Limits())
    try:
        for proc in archive.processes:
            yield f"pid-{proc.pid} records:"
            for item in proc.checked_events():
                if isinstance(item, BadRecord):
                    yield f"  BAD record {item.index} at offset {item.offset}: {printable(item.reason)}"
                elif item.event is not None:
                    yield event_line(_event_entry(item.event))
    finally:
        archive.close()
