"""``hrr info``: what an archive holds, read under the same limits as replay."""
from __future__ import annotations

import collections
from typing import Any

from hrr.api.catalogue import CATALOGUE
from hrr.archive import Limits, open_archive


def archive_info(path: str, *, with_events: bool = False, limits: Limits | None = None) -> dict[str, Any]:
    """A JSON-able description of every process archive under ``path``."""
    archive = open_archive(path, limits or Limits())
    out: dict[str, Any] = {"archive": path, "processes": []}
    for proc in archive.processes:
        calls: collections.Counter = collections.Counter()
        errors: collections.Counter = collections.Counter()
        threads: set[int] = set()
        bad: list[dict] = []
        events: list[dict] = []
        for item in proc.events():
            if getattr(item, "reason", None) is not None:
                bad.append({"index": item.index, "offset": item.offset, "reason": item.reason})
                continue
            value = item.value
            if not (isinstance(value, (list, tuple)) and len(value) == 7):
                bad.append({"index": item.index, "offset": item.offset, "reason": "not an event"})
                continue
            seq, tid, api, args, err, outs, extra = value
            calls[api] += 1
            threads.add(tid)
            if err:
                errors[api] += 1
            if with_events:
                row = CATALOGUE.get(api)
                events.append({"seq": seq, "tid": tid, "api": api, "err": err,
                               "replay": row.replay if row else "pseudo",
                               "args": _brief(args), "outs": _brief(outs),
                               "records": sorted((extra or {}).get("records", {}) or {})})
        entry = {
            "pid": proc.pid,
            "manifest": proc.manifest,
            "clean": proc.clean,
            "torn": proc.torn,
            "threads": len(threads),
            "calls": dict(sorted(calls.items())),
            "failed_calls": dict(sorted(errors.items())),
            "bad_records": bad,
        }
        if with_events:
            entry["events"] = events
        out["processes"].append(entry)
    return out


def _brief(values: Any) -> list:
    def one(v: Any) -> Any:
        if isinstance(v, bytes):
            return f"<{len(v)} bytes>"
        if isinstance(v, int) and v > 0xFFFF:
            return hex(v)
        if isinstance(v, (list, tuple)):
            return [one(x) for x in v]
        return v
    return [one(v) for v in values or ()]


def render_info(data: dict[str, Any]) -> str:
    """The text form of ``archive_info``."""
    lines = [f"Archive {data['archive']}: {len(data['processes'])} process(es)"]
    for p in data["processes"]:
        m = p["manifest"]
        lines.append(f"pid-{p['pid']}: backend {m.get('backend')}, format {m.get('format_version')}, "
                     f"{m.get('content_mode')}, host_snapshots {m.get('host_snapshots')}, "
                     f"{'clean' if p['clean'] else 'NOT closed (run hrr repair)'}"
                     f"{', torn' if p['torn'] else ''}")
        plugins = m.get("plugins") or {}
        lines.append("  plugins: " + (", ".join(f"{k} {v}" for k, v in plugins.items()) or "none"))
        lines.append(f"  threads: {p['threads']}; records: {sum(p['calls'].values())}")
        for api, n in p["calls"].items():
            failed = p["failed_calls"].get(api)
            lines.append(f"    {api:36} {n:8}" + (f"  ({failed} failed)" if failed else ""))
        for entry in m.get("unreplayable_apis") or ():
            lines.append(f"  unreplayable: {entry.get('api')}: {entry.get('reason')}")
        for b in p["bad_records"]:
            lines.append(f"  BAD record {b['index']} at offset {b['offset']}: {b['reason']}")
        for ev in p.get("events", ()):
            lines.append(f"  #{ev['seq']:<6} tid {ev['tid']:#x} {ev['api']} err={ev['err']} "
                         f"args={ev['args']} outs={ev['outs']}"
                         + (f" records={ev['records']}" if ev["records"] else ""))
    return "\n".join(lines)
