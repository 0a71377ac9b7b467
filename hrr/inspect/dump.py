"""``hrr dump``: an archive's records as readable lines or JSON lines, streamed.

Each record is read, named and written before the next is read, so the first line comes
out at once and memory does not grow with the number of records: the only state kept is
what names things (handle numbers of live handles, kernel names of loaded functions,
thread numbers), which grows with live handles and threads, never with events.
Records are untrusted: a field of the wrong shape prints as it is (bytes as a length),
a record that is not an event prints as a BAD line, and nothing in a record can crash it.
"""
from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import IO, Any

import attrs

from hrr.hiptypes.mathlibs import TYPES as LIBRARY_TYPES
from hrr.api.catalogue import CATALOGUE, Api
from hrr.api.roles import out_role, param_role
from hrr.archive import Limits, open_archive
from hrr.errors import UsageError
from hrr.events.launch import launch_map
from hrr.events.model import EXTRA, WIRE_LEN
from hrr.events.ranges import CallRange
from hrr.inspect.kernelparams import KernelParams, param_names, show_args

#: enum name -> {value: member name} (hip-python's enums or hrr's mirrors); see _enum_names.
_ENUM_NAMES: dict[str, dict[int, str]] = {}


def _enum_names() -> dict[str, dict[int, str]]:
    """enum name -> {value: member name}, built on first use: importing hiptypes (numpy,
    hip-python) is most of dump's start-up, so the process header line does not wait for it."""
    if not _ENUM_NAMES:
        from hrr.hiptypes import ENUM_TYPES

        _ENUM_NAMES.update({name: {int(m): m.name for m in cls} for name, cls in ENUM_TYPES.items()})
    return _ENUM_NAMES


_ERROR_ENUM = {"hip": "hipError_t", "hiprtc": "hiprtcResult",
               **{name: types.status.__name__ for name, types in LIBRARY_TYPES.items()}}
#: A copy's direction by the API's own name, where it has no ``kind`` parameter.
_DIRECTION_BY_API = {"HtoD": "H2D", "DtoH": "D2H", "DtoD": "D2D", "Peer": "D2D"}
_DIRECTION_BY_KIND = {0: "H2H", 1: "H2D", 2: "D2H", 3: "D2D", 4: "default", 1024: "D2D"}
_ENDPOINT_TAGS = {"a": "allocation", "h": "host"}
#: Parameter names of pseudo-events (not catalogue rows).
_PSEUDO_PARAMS = {"@d2h": ("copy_seq",), "@uncatalogued": ("function",)}
_FLUSH_EVERY_S = 0.2      # a sparse filter on a pipe still shows its matches promptly
_MAX_DEPTH = 16           # nesting shown of an untrusted value before it is elided


@attrs.frozen
class ThreadSelector:
    """A thread as dump numbers it (``t3``/``3``) or as a raw thread id (decimal or 0x hex)."""

    number: int | None = None
    tid: int | None = None


def parse_thread(text: str) -> ThreadSelector:
    """Parse ``--thread``: ``tN``/``N`` below 65536 is dump's thread number, else a thread id."""
    raw = text.strip().lower()
    try:
        if raw.startswith("t"):
            return ThreadSelector(number=int(raw[1:], 10))
        value = int(raw, 16) if raw.startswith("0x") else int(raw, 10)
    except ValueError:
        raise UsageError(f"--thread {text!r} is not a thread",
                         hint="give dump's thread number (t1, t2, ...) or a thread id (decimal or 0x hex)") from None
    return ThreadSelector(number=value) if value < 65536 else ThreadSelector(tid=value)


def parse_apis(names: tuple[str, ...] | list[str]) -> frozenset[str] | None:
    """The --api names (each may be a comma list); UsageError naming close matches for a typo."""
    import difflib

    wanted = {n.strip() for item in names for n in item.split(",") if n.strip()}
    for name in sorted(wanted):
        if name not in CATALOGUE and not name.startswith("@"):
            close = difflib.get_close_matches(name, list(CATALOGUE), n=3)
            raise UsageError(f"--api {name!r} is not a catalogued HIP call",
                             hint=f"did you mean {', '.join(close)}?" if close
                             else "`docs/api-coverage.md` lists them; pseudo-events start with @")
    return frozenset(wanted) or None


@attrs.frozen
class DumpFilter:
    """Which records to show. Names and numbers are assigned over every record regardless."""

    calls: CallRange | None = None
    apis: frozenset[str] | None = None
    thread: ThreadSelector | None = None
    pid: int | None = None


class _Names:
    """Per-process naming state: handle numbers, kernel names, thread numbers."""

    def __init__(self, read_code: Callable[[str], bytes] | None = None) -> None:
        self.params = KernelParams(read_code)           # function handle -> its parameters
        self._next: dict[str, int] = {}
        self._live: dict[tuple[str, int], int] = {}
        self.kernels: dict[int, str] = {}              # function handle -> kernel name
        self.layouts: dict[int, list] = {}             # function handle -> kernarg layout
        self._module_functions: dict[int, set[int]] = {}   # a set: a repeated lookup adds nothing
        self._threads: dict[int, int] = {}

    def thread(self, tid: int) -> int:
        """The thread's number in this process: 1, 2, ... in order of first appearance."""
        n = self._threads.get(tid)
        if n is None:
            n = self._threads[tid] = len(self._threads) + 1
        return n

    def number(self, kind: str, value: Any) -> int | None:
        """The handle's number (0 for the null handle), assigning the next one on first sight."""
        if type(value) is not int:
            return None
        if value == 0:
            return 0
        key = (kind, value)
        n = self._live.get(key)
        if n is None:
            n = self._live[key] = self._next.get(kind, 1)
            self._next[kind] = n + 1
        return n

    def handle(self, kind: str, value: Any) -> Any:
        """``kind#N`` for a handle value (a value that is not an int is shown as it is)."""
        n = self.number(kind, value)
        return value if n is None else f"{kind}#{n}"

    def observe(self, row: Api, args: list, err: Any, outs: list, extra: dict) -> None:
        """Number the handles this call names, in order, so numbering ignores filters."""
        for p, v in zip(row.params, args, strict=False):
            role = param_role(p.role)
            if role.names_handle:
                self.number(p.kind or role.name, v)
        if err != 0:
            return
        for o, v in zip(row.outs, outs, strict=False):
            out = out_role(o.role)
            if out.names_handle:
                self.number(o.kind or out.name, v)
        kernel = None
        if row.name == "hipModuleGetFunction" and len(args) >= 2 and outs and type(outs[0]) is int:
            name = args[1].decode(errors="replace") if isinstance(args[1], bytes) else args[1]
            kernel = name if isinstance(name, str) else None
            if isinstance(name, str):
                self.kernels[outs[0]] = name
                if isinstance(extra.get("layout"), list):
                    self.layouts[outs[0]] = extra["layout"]
                if type(args[0]) is int:
                    self._module_functions.setdefault(args[0], set()).add(outs[0])
        self.params.observe(row, args, err, outs, kernel)

    def release(self, row: Api, args: list, err: Any) -> None:
        """Forget a handle the call destroyed: a new one with the same value gets a new number."""
        if err != 0 or row.destroys is None or row.destroys == "alloc" or not args:
            return
        value = args[0]
        if type(value) is not int:
            return
        self._live.pop((row.destroys, value), None)
        if row.destroys == "module":
            self.params.forget_module(value, self._module_functions.get(value, ()))
            for fn in self._module_functions.pop(value, ()):
                self.kernels.pop(fn, None)
                self.layouts.pop(fn, None)
                self._live.pop(("function", fn), None)


def _plain(v: Any, depth: int = 0) -> Any:
    """An untrusted decoded value made JSON-safe: bytes become their length, never raw."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else repr(v)    # strict JSON has no NaN or Infinity
    if isinstance(v, (bytes, bytearray)):
        return {"bytes": len(v)}
    if depth >= _MAX_DEPTH:
        return "..."
    if isinstance(v, (list, tuple)):
        return [_plain(x, depth + 1) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x, depth + 1) for k, x in v.items()}
    return repr(v)


def _hex(v: Any) -> Any:
    return f"0x{v:x}" if type(v) is int and v >= 0 else _plain(v)


def _enum(kind: str | None, v: Any) -> Any:
    if type(v) is not int:
        return _plain(v)
    return (_ENUM_NAMES or _enum_names()).get(kind or "", {}).get(v, v)


def enum_name(kind: str | None, v: Any) -> Any:
    """An enum value by its member's name (``hipMemcpyHostToDevice``), as dump shows it; a
    value its enum lacks stays the number."""
    return _enum(kind, v)


def _endpoint(v: Any) -> Any:
    """A copy endpoint ``[tag, addr, nbytes, blob]`` as named fields (the blob by its name)."""
    if isinstance(v, list) and len(v) == 4 and v[0] in _ENDPOINT_TAGS:
        tag, addr, n, blob = v
        out: dict[str, Any] = {"addr": _hex(addr), "in": _ENDPOINT_TAGS[tag], "bytes": _plain(n)}
        if blob is not None:
            out["blob"] = _plain(blob)
        return out
    return _hex(v)


class _Shown:
    """How dump shows a recorded value, as its role picks (``hrr.api.roles.View``, ``OutView``)."""

    def __init__(self, names: _Names) -> None:
        self.names = names

    def plain(self, v: Any) -> Any:
        return _plain(v)

    nothing = out_plain = plain

    def address(self, v: Any) -> Any:
        return _hex(v)

    app_address = address

    def handle(self, v: Any, kind: str) -> Any:
        return self.names.handle(kind, v)

    new_handle = handle

    def endpoint(self, v: Any) -> Any:
        return _endpoint(v)

    def enum(self, v: Any, kind: str | None) -> Any:
        return _enum(kind, v)

    def text(self, v: Any) -> Any:
        return v.decode(errors="replace") if isinstance(v, bytes) else _plain(v)

    def new_allocation(self, v: Any, size: Any) -> Any:
        return _hex(v)

    def new_alias(self, v: Any, host: Any) -> Any:
        return _hex(v)


def _snapshots(records: Any) -> Any:
    """Per plugin: how many records, and for snapshot records how many regions and bytes."""
    out: dict[str, Any] = {}
    if not isinstance(records, dict):
        return _plain(records)
    for plugin, recs in records.items():
        recs = recs if isinstance(recs, list) else [recs]
        snaps = total = 0
        for rec in recs:
            for snap in (rec.get("snaps") if isinstance(rec, dict) else None) or ():
                if isinstance(snap, dict):
                    snaps += 1
                    length = snap.get("length")
                    total += length if type(length) is int and length > 0 else 0
        entry = {"records": len(recs)}
        if snaps:
            entry.update(snapshots=snaps, bytes=total)
        out[str(plugin)] = entry
    return out


def _launch(names: _Names, launch: Any, fn: Any) -> dict[str, Any]:
    launch = launch_map(launch)   # either wire form: the same entry
    if not isinstance(launch, dict):
        return {"kernel": names.kernels.get(fn), "malformed": _plain(launch)}
    out: dict[str, Any] = {"kernel": _plain(launch.get("kernel", names.kernels.get(fn)))}
    for key in ("grid", "block"):
        if key in launch:
            out[key] = _plain(launch[key])
    if "kernargs" in launch:
        k = launch["kernargs"]
        out["kernargs_bytes"] = len(k) if isinstance(k, (bytes, bytearray)) else _plain(k)
        layout = names.layouts.get(fn) if type(fn) is int else None
        if layout is not None and isinstance(k, (bytes, bytearray)):
            out["args"] = show_args(layout, bytes(k), names.params.functions.get(fn) if type(fn) is int else None)
    if "ptrs" in launch:
        out["pointers"] = len(launch["ptrs"]) if isinstance(launch["ptrs"], list) else _plain(launch["ptrs"])
    if "error" in launch:
        out["error"] = _plain(launch["error"])
    return out


def _event(names: _Names, thread: int, value: list) -> dict[str, Any]:
    """The named form of one well-typed wire record."""
    seq, tid, api, args, err, outs, extra = value
    row = CATALOGUE.get(api)
    entry: dict[str, Any] = {"seq": seq, "thread": thread, "tid": tid, "api": api}
    if row is None:
        pnames = _PSEUDO_PARAMS.get(api, ())
        entry["args"] = {(pnames[i] if i < len(pnames) else f"arg{i}"): _plain(a) for i, a in enumerate(args)}
        entry["err"] = _enum("hipError_t", err)
    else:
        shown = _Shown(names)
        named = {p.name: param_role(p.role).show(shown, p, a) for p, a in zip(row.params, args, strict=False)}
        named.update((f"arg{i}", _plain(a)) for i, a in enumerate(args[len(row.params):], len(row.params)))
        entry["args"] = named
        entry["err"] = _enum(_ERROR_ENUM.get(row.module, "hipError_t"), err)
        if outs and err == 0:
            named_outs = {o.name: out_role(o.role).show(shown, row, j, v, args)
                          for j, (o, v) in enumerate(zip(row.outs, outs, strict=False))}
            named_outs.update((f"out{i}", _plain(v)) for i, v in enumerate(outs[len(row.outs):], len(row.outs)))
            entry["outs"] = {k: v for k, v in named_outs.items() if v is not None}
        if row.family == "copy":
            entry["copy"] = _copy(row, args)
    extra = dict(extra)
    if "launch" in extra:
        entry["launch"] = _launch(names, extra.pop("launch"), args[0] if args else None)
    if "records" in extra:
        entry["records"] = _snapshots(extra.pop("records"))
    if api == "hipModuleGetFunction" and isinstance(extra.get("layout"), list):
        layout = extra.pop("layout")
        sig = names.params.functions.get(outs[0]) if outs and type(outs[0]) is int and err == 0 else None
        entry["layout"] = [_plain(n) if isinstance(p, list) and len(p) == 4 else _plain(p)
                           for n, p in zip(param_names(layout, sig), layout, strict=False)]
        if sig is not None:
            entry["signature"] = [f"{p.ctype} {p.name}".strip() for p in sig]
    if api.startswith("@") and "blob" in extra:
        entry["blob"], entry["bytes"] = _plain(extra.pop("blob")), _plain(extra.pop("n", None))
    if extra:
        entry["extra"] = _plain(extra)
    return entry


def _copy(row: Api, args: list) -> dict[str, Any]:
    """Direction and size of a copy, from its kind parameter or the API's name."""
    named = dict(zip((p.name for p in row.params), args, strict=False))
    kind = named.get("kind")
    direction = _DIRECTION_BY_KIND.get(kind) if type(kind) is int else None
    if direction is None:
        direction = next((d for key, d in _DIRECTION_BY_API.items() if key in row.name), "?")
    n = named.get("sizeBytes")
    if n is None and type(named.get("width")) is int and type(named.get("height")) is int:
        n = named["width"] * named["height"]     # a 2D copy: the bytes of its rows
    return {"direction": direction, "bytes": _plain(n)}


def _wire_problem(value: Any) -> str | None:
    """Why a decoded record cannot be read as an event, or None when it can."""
    if not isinstance(value, list) or len(value) != WIRE_LEN:
        return "not a 7-item event record"
    seq, tid, api, args, err, outs, extra = value
    types = ((seq, int, "seq"), (tid, int, "tid"), (api, str, "api"), (args, list, "args"),
             (err, int, "err"), (outs, list, "outs"), (extra, dict, "extra"))
    for field, want, name in types:
        if not isinstance(field, want) or isinstance(field, bool):
            return f"event field {name} is a {type(field).__name__}, not a {want.__name__}"
    return None


def iter_dump(path: str | os.PathLike[str], filt: DumpFilter = DumpFilter(),
              limits: Limits | None = None, progress: Any = None) -> Iterator[dict[str, Any]]:
    """Yield one dict per process header, shown record and bad record, reading lazily.
    ``progress``: a :class:`hrr.cli.progress.Bar` (or None), told of each process and record."""
    archive = open_archive(path, limits or Limits())
    try:
        for proc in archive.processes:
            if filt.pid is not None and proc.pid != filt.pid:
                continue
            m = proc.manifest
            yield {"process": proc.pid, "backend": m.get("backend"), "content_mode": m.get("content_mode"),
                   "plugins": sorted(m.get("plugins") or {}), "manifest_error": proc.manifest_error}
            if progress is not None:
                progress.task(f"dump pid-{proc.pid}", manifest=m)
            yield from _process_entries(proc, filt, progress)
    finally:
        archive.close()


def _process_entries(proc: Any, filt: DumpFilter, progress: Any = None) -> Iterator[dict[str, Any]]:
    names = _Names(proc.read_code_object)
    calls, apis, sel = filt.calls, filt.apis, filt.thread
    events = proc.events()
    try:
        for done, item in enumerate(events, 1):
            if progress is not None:
                progress(done)
            reason = getattr(item, "reason", None)
            if reason is not None:
                yield {"pid": proc.pid, "bad": str(reason), "index": item.index, "offset": item.offset}
                continue
            value = item.value
            problem = _wire_problem(value)
            if problem is not None:
                yield {"pid": proc.pid, "bad": problem, "index": item.index, "offset": item.offset}
                continue
            seq, tid, api, args, err, outs = value[:6]
            if calls is not None and calls.past(seq):
                break
            thread = names.thread(tid)
            row = CATALOGUE.get(api)
            if row is not None:
                names.observe(row, args, err, outs, value[EXTRA])
            shown = ((calls is None or seq in calls) and (apis is None or api in apis)
                     and (sel is None or (sel.number == thread if sel.number is not None else sel.tid == tid)))
            if shown:
                try:
                    entry = _event(names, thread, value)
                except Exception as exc:  # noqa: BLE001 - an odd record must never end the dump
                    entry = {"bad": f"cannot be shown: {type(exc).__name__}: {exc}", "index": item.index,
                             "offset": item.offset}
                entry["pid"] = proc.pid
                yield entry
            if row is not None:
                names.release(row, args, err)
    finally:
        events.close()


# -- text form --------------------------------------------------------------------------

def _t(v: Any) -> str:
    """One value as a token with no spaces or line breaks."""
    if type(v) is int:
        return str(v)
    if isinstance(v, str):
        return v if v.isprintable() and " " not in v and v else json.dumps(v)
    if isinstance(v, dict) and "bytes" in v and len(v) == 1:
        return f"<{v['bytes']} bytes>"
    if isinstance(v, dict) and "addr" in v and "in" in v:
        text = f"{v['addr']}" + ("(host)" if v["in"] == "host" else "") + f"[{_t(v['bytes'])}B]"
        return text + (f"+blob:{_t(v['blob'])[:12]}" if "blob" in v else "")
    return json.dumps(v, separators=(",", ":"), default=str)


_DIMS = {"gridDimX": "grid", "blockDimX": "block"}
_DIM3 = {"numBlocks", "dimBlocks", "grid", "block"}


def _dim(v: Any) -> str:
    """A [x, y, z] shape as ``XxYxZ``."""
    return "x".join(map(str, v)) if isinstance(v, list) and len(v) == 3 else _t(v)
_DIM_REST = {"gridDimY", "gridDimZ", "blockDimY", "blockDimZ"}


def format_line(entry: dict[str, Any]) -> str:
    """The one-line text form of an entry from :func:`iter_dump`."""
    if "process" in entry:
        return (f"# pid-{entry['process']} backend={_t(entry['backend'])} content={_t(entry['content_mode'])} "
                f"plugins={','.join(map(str, entry['plugins'])) or 'none'}"
                + (f" manifest_error={_t(entry['manifest_error'])}" if entry["manifest_error"] else ""))
    if "bad" in entry:
        return f"BAD record {entry['index']} at offset {entry['offset']}: {entry['bad']}"
    parts = [f"#{entry['seq']}", f"t{entry['thread']}", _t(entry["api"])]
    launch = entry.get("launch")
    if launch is not None:
        kargs = launch.get("args")
        parts.append(f"kernel={_t(launch.get('kernel'))}" + (
            "(" + ",".join(f"{k}={_t(v)}" for k, v in kargs.items()) + ")" if kargs is not None else ""))
        if not {"numBlocks", "gridDimX"} & entry["args"].keys():   # else the parameters show them
            parts.extend(f"{k}={_dim(launch[k])}" for k in ("grid", "block") if k in launch)
    args = entry["args"]
    for name, v in args.items():
        if name in _DIM_REST:
            continue
        if name in _DIMS:
            axis = name[:-1]
            parts.append(f"{_DIMS[name]}={'x'.join(_t(args.get(axis + a)) for a in 'XYZ')}")
        elif name in _DIM3:
            parts.append(f"{name}={_dim(v)}")
        elif not (v is None and name in ("kernelParams", "extra", "args")):
            parts.append(f"{name}={_t(v)}")
    if entry.get("outs"):
        parts.append("->")
        parts.extend(f"{k}={_t(v)}" for k, v in entry["outs"].items())
    if entry["err"] not in ("hipSuccess", "HIPRTC_SUCCESS"):
        parts.append(f"err={_t(entry['err'])}")
    if "copy" in entry:
        parts.append(f"[{entry['copy']['direction']} {_t(entry['copy']['bytes'])} B]")
    if launch is not None:
        if "kernargs_bytes" in launch:
            parts.append(f"kernargs={_t(launch['kernargs_bytes'])}B")
        if "pointers" in launch:
            parts.append(f"ptrs={_t(launch['pointers'])}")
        if "error" in launch:
            parts.append(f"launch_error={_t(launch['error'])}")
        if "malformed" in launch:
            parts.append(f"launch={_t(launch['malformed'])}")
    if "signature" in entry:
        parts.append("params=" + json.dumps(", ".join(entry["signature"])))
    elif "layout" in entry:
        parts.append("layout=" + ",".join(_t(x) for x in entry["layout"]))
    if "blob" in entry:
        parts.append(f"blob={_t(entry['blob'])} bytes={_t(entry['bytes'])}")
    records = entry.get("records")
    if records is not None and not isinstance(records, dict):
        parts.append(f"records={_t(records)}")
    for plugin, rec in (records if isinstance(records, dict) else {}).items():
        if isinstance(rec, dict) and "snapshots" in rec:
            parts.append(f"{plugin}={rec['snapshots']}snap/{rec['bytes']}B")
        else:
            parts.append(f"{plugin}={_t(rec)}")
    if "extra" in entry:
        parts.append(f"extra={_t(entry['extra'])}")
    return " ".join(parts)


def format_json(entry: dict[str, Any]) -> str:
    """The JSON-lines form of an entry (ASCII, one line)."""
    return json.dumps(entry, separators=(",", ":"), default=str)


def dump_archive(path: str | os.PathLike[str], out: IO[str], *, jsonl: bool = False,
                 filt: DumpFilter = DumpFilter(), limits: Limits | None = None, progress: Any = None) -> int:
    """Write the dump of ``path`` to ``out``, flushing the first line at once; returns the lines written."""
    fmt = format_json if jsonl else format_line
    lines, last_flush = 0, 0.0
    for entry in iter_dump(path, filt, limits, progress):
        try:
            line = fmt(entry)
        except Exception:  # noqa: BLE001 - an odd record still gets its line, never a traceback
            line = format_json(entry)
        out.write(line + "\n")
        lines += 1
        now = time.monotonic()
        if lines <= 2 or now - last_flush >= _FLUSH_EVERY_S:  # line 2: the first record
            out.flush()
            last_flush = now
    out.flush()
    return lines


def dump_to_stdout(path: str, *, jsonl: bool, filt: DumpFilter, limits: Limits | None = None,
                   progress: Any = None) -> int:
    """``hrr dump``'s body: dump to stdout; a closed pipe (``| head``) ends it quietly with 0."""
    try:
        dump_archive(path, sys.stdout, jsonl=jsonl, filt=filt, limits=limits, progress=progress)
    except BrokenPipeError:
        # Point stdout at /dev/null so the interpreter's final flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return 0
