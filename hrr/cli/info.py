"""``hrr info``: what an archive holds, read under the same limits as replay.

Every value printed comes from the reader, which hands on only schema-checked events and
validated manifests; on top of that, everything printed is made printable here (nesting
bounded, non-finite floats and bytes spelled out), so no archive can make info raise.
"""
from __future__ import annotations

import collections
import math
from typing import Any

from hrr.api.catalogue import CATALOGUE
from hrr.archive import Limits, open_archive

MAX_PRINT_DEPTH = 8        # deeper values print as a placeholder
MAX_PRINT_ITEMS = 64       # longer lists/maps are cut, with a count of what was left out


def archive_info(path: str, *, with_events: bool = False, limits: Limits | None = None) -> dict[str, Any]:
    """A JSON-able description of every process archive under ``path``."""
    archive = open_archive(path, limits or Limits())
    out: dict[str, Any] = {"archive": path, "processes": []}
    try:
        for proc in archive.processes:
            out["processes"].append(_process_info(proc, with_events))
    finally:
        archive.close()
    return out


def _process_info(proc: Any, with_events: bool) -> dict[str, Any]:
    calls: collections.Counter = collections.Counter()
    errors: collections.Counter = collections.Counter()
    threads: set[int] = set()
    bad: list[dict] = []
    events: list[dict] = []
    for item in proc.checked_events():
        ev = getattr(item, "event", None)
        if ev is None:  # a refused record (the reader says why)
            bad.append({"index": item.index, "offset": item.offset, "where": item.where,
                        "reason": printable(item.reason)})
            continue
        calls[ev.api] += 1
        threads.add(ev.tid)
        if ev.err:
            errors[ev.api] += 1
        if with_events:
            row = CATALOGUE.get(ev.api)
            events.append({"seq": ev.seq, "tid": ev.tid, "api": ev.api, "err": ev.err,
                           "replay": row.replay if row else "pseudo",
                           "args": _brief(ev.args), "outs": _brief(ev.outs),
                           "records": sorted(ev.extra.get("records", {}))})
    entry = {
        "pid": proc.pid,
        "manifest": printable(proc.manifest),
        "clean": proc.clean,
        "torn": proc.torn,
        "threads": len(threads),
        "calls": dict(sorted(calls.items())),
        "failed_calls": dict(sorted(errors.items())),
        "bad_records": bad,
    }
    if with_events:
        entry["events"] = events
    return entry


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


def render_info(data: dict[str, Any]) -> str:
    """The text form of ``archive_info``."""
    lines = [f"Archive {data['archive']}: {len(data['processes'])} process(es)"]
    for p in data["processes"]:
        m = p["manifest"] if isinstance(p["manifest"], dict) else {}
        lines.append(f"pid-{p['pid']}: backend {_field(m, 'backend', str)}, "
                     f"format {_field(m, 'format_version', int)}, "
                     f"{_field(m, 'content_mode', str)}, host_snapshots {_field(m, 'host_snapshots', bool)}, "
                     f"{'clean' if p['clean'] else 'NOT closed (run hrr repair)'}"
                     f"{', torn' if p['torn'] else ''}")
        plugins = m.get("plugins")
        plugins = plugins if isinstance(plugins, dict) else {}
        lines.append("  plugins: " + (", ".join(f"{k} {v}" for k, v in plugins.items()) or "none"))
        lines.append(f"  threads: {p['threads']}; records: {sum(p['calls'].values())}")
        for api, n in p["calls"].items():
            failed = p["failed_calls"].get(api)
            lines.append(f"    {api:36} {n:8}" + (f"  ({failed} failed)" if failed else ""))
        unreplayable = m.get("unreplayable_apis")
        for entry in unreplayable if isinstance(unreplayable, list) else ():
            if isinstance(entry, dict):
                lines.append(f"  unreplayable: {entry.get('api')}: {entry.get('reason')}")
        for b in p["bad_records"]:
            lines.append(f"  BAD record {b['index']} at offset {b['offset']}: {b['reason']}")
        for ev in p.get("events", ()):
            lines.append(f"  #{ev['seq']:<6} tid {ev['tid']:#x} {ev['api']} err={ev['err']} "
                         f"args={ev['args']} outs={ev['outs']}"
                         + (f" records={ev['records']}" if ev["records"] else ""))
    return "\n".join(lines)
