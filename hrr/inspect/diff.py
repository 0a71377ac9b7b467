"""``hrr diff A B``: the first place where two archives differ, after normalisation.

Two runs of one program never record the same addresses or handle values, so each record
is normalised before it is compared: an address becomes ``alloc#K+OFFSET`` (the K-th
allocation the process made, the offset inside it), an address in no allocation becomes
``addr?``, a handle becomes ``KIND#N`` (the N-th of its kind), host memory endpoints keep
only their size and content, thread ids become ordinals. Compared: the API name, every
argument by its catalogue role, the error, the outputs, launch details (kernel, grid,
block, kernarg bytes with pointer words masked, pointer words as allocations) and content
digests (blob names: H2D sources, D2H results, pinned snapshots). A blob one side did
not record (metadata-only) matches anything. Not compared: the sequence numbers
themselves, errors and value outputs of calls whose result may vary between runs
(catalogue ``volatile``: ``hipStreamQuery``, ``hipEventElapsedTime``...).

Both archives are streamed side by side; only a few records of context are kept.
"""
from __future__ import annotations

import bisect
import collections
from typing import Any, Callable, Iterator

import attrs

from hrr.api.catalogue import CATALOGUE, Api
from hrr.api.roles import out_role, param_role
from hrr.archive import Limits, open_archive
from hrr import exitcodes
from hrr.events.launch import launch_map
from hrr.inspect.dump import enum_name
from hrr.inspect.kernelparams import KernelParams, show_args
from hrr.inspect.records import Call, Skipped, calls

# As diff(1) and cmp(1) (0 equal, 1 differ), trouble as every hrr command reports an unreadable archive.
EXIT_EQUAL, EXIT_DIFFERENT, EXIT_TROUBLE = exitcodes.OK, exitcodes.FAILED, exitcodes.ARCHIVE_UNREADABLE
_WIDTH = 100   # longest value shown in full on a record line


@attrs.frozen
class Blob:
    """A content digest (a blob name); ``None`` when that side did not record the bytes."""
    name: str | None

    def __repr__(self) -> str:
        return f"blob:{self.name[:12]}" if self.name else "blob:(not recorded)"


@attrs.frozen
class Norm:
    """One record after normalisation: what is compared, and where it came from.

    ``fields``: api, thread, args (parameter name → value), err, outs, then launch and
    details (the record's other extras) when present."""
    index: int
    seq: int
    fields: dict[str, Any]


class _Normaliser:
    """Per-process state that turns capture-time values into run-independent ones."""

    def __init__(self, read_code: Callable[[str], bytes] | None = None) -> None:
        self.params = KernelParams(read_code)      # function handle → its parameters
        self.layouts: dict[int, list] = {}         # function handle → kernarg layout
        self.bases: list[int] = []                 # sorted live allocation bases
        self.allocs: dict[int, tuple[int, int]] = {}   # base → (ordinal, size)
        self.alloc_count = 0
        self.handles: dict[int, str] = {}          # live handle value → "kind#n"
        self.counts: collections.Counter = collections.Counter()
        self.threads: dict[int, int] = {}
        self._volatile = False                     # the row of the outputs being shown varies

    # -- values ---------------------------------------------------------------------------
    def addr(self, v: Any) -> Any:
        if type(v) is not int or v == 0:
            return v
        i = bisect.bisect_right(self.bases, v) - 1
        while i >= 0:   # aliases may overlap; the nearest base that contains v wins
            base = self.bases[i]
            ordinal, size = self.allocs[base]
            if v < base + max(size, 1):
                return f"alloc#{ordinal}+{v - base}"
            if v - base > 1 << 40:
                break
            i -= 1
        return "addr?"

    def handle(self, v: Any, kind: str) -> Any:
        if type(v) is not int:
            return v
        if v == 0:
            return f"{kind}:null"
        if v not in self.handles:   # created before or outside the recording: named on first sight
            self.counts[kind] += 1
            self.handles[v] = f"{kind}#{self.counts[kind]}?"
        return self.handles[v]

    def endpoint(self, v: Any) -> Any:
        if isinstance(v, (list, tuple)) and len(v) == 4 and v[0] in ("a", "h"):
            tag, addr, n, blob = v
            where = self.addr(addr) if tag == "a" else "host"
            return {"at": where, "bytes": n, "content": Blob(blob if isinstance(blob, str) else None)}
        return self.addr(v)

    def generic(self, v: Any, key: str | None = None) -> Any:
        """Plugin records and unknown calls: addresses and handles found by value or key."""
        if isinstance(v, dict):
            return {k: self.generic(x, k if isinstance(k, str) else None) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            items = [self.generic(x) for x in v]
            if items and all(isinstance(x, dict) and "base" in x for x in v):
                # Address ranges (pinned snapshots) listed in capture-address order, which
                # differs between runs: compared as a set.
                items.sort(key=_fmt)
            return items
        if key == "stream":
            return self.handle(v, "stream")
        if key == "blob" and (v is None or isinstance(v, str)):
            return Blob(v)
        if isinstance(v, str) and len(v) == 32 and _hexname(v):   # a content name in a list
            return Blob(v)
        if type(v) is int and v >= 1 << 16:
            if v in self.handles:
                return self.handles[v]
            a = self.addr(v)
            return a if a != "addr?" else v
        if isinstance(v, bytes):
            return f"<{len(v)} bytes {hash(v) & 0xFFFFFFFF:08x}>"
        return v

    # -- effects --------------------------------------------------------------------------
    def new_alloc(self, base: Any, size: Any) -> str | None:
        if type(base) is not int or base == 0:
            return None
        self.alloc_count += 1
        if base not in self.allocs:
            bisect.insort(self.bases, base)
        self.allocs[base] = (self.alloc_count, size if type(size) is int and size > 0 else 1)
        return f"alloc#{self.alloc_count}"

    def size_at(self, v: Any) -> int:
        """The size of the live allocation starting at or containing ``v`` (1 if none)."""
        if type(v) is not int or self.addr(v) == "addr?" or not self.bases:
            return 1
        base = self.bases[bisect.bisect_right(self.bases, v) - 1]
        return self.allocs[base][1]

    def free(self, base: Any) -> None:
        if type(base) is int and self.allocs.pop(base, None) is not None:
            self.bases.remove(base)

    def new_handle(self, v: Any, kind: str) -> Any:
        if type(v) is not int or v == 0:
            return v
        self.counts[kind] += 1
        self.handles[v] = f"{kind}#{self.counts[kind]}"
        return self.handles[v]

    # -- records --------------------------------------------------------------------------
    def record(self, c: Call) -> Norm:
        """Normalise one record, then apply what it created or destroyed."""
        thread = self.threads.setdefault(c.tid, len(self.threads) + 1)
        row = CATALOGUE.get(c.api)
        fields: dict[str, Any] = {"api": c.api, "thread": thread}
        if row is None:   # a pseudo-event (@d2h...) or a call this version does not know
            args = {f"arg{i}": self.generic(a) for i, a in enumerate(c.args)}
            if c.api == "@d2h" and c.args and type(c.args[0]) is int:
                args["arg0"] = f"copy at seq-{c.seq - c.args[0]}"   # the copy it checks, relatively
            fields.update(args=args, err=c.err, outs=self.generic(c.outs))
            if c.extra:
                fields["details"] = self.generic(c.extra)
            return Norm(c.index, c.seq, fields)
        args = {p.name: param_role(p.role).show(self, p, c.args[i] if i < len(c.args) else None)
                for i, p in enumerate(row.params)}
        if len(c.args) > len(row.params):
            args["(more)"] = self.generic(c.args[len(row.params):])
        fields.update(args=args, err="(varies)" if row.volatile else c.err, outs=self._outs(c, row))
        extra = dict(c.extra)
        if c.err == 0 and isinstance(extra.get("layout"), list) and c.outs and type(c.outs[0]) is int:
            self.layouts[c.outs[0]] = extra["layout"]   # a function's layout (hipModuleGetFunction)
        kernel = c.args[1] if len(c.args) >= 2 and "layout" in extra else None
        self.params.observe(row, c.args, c.err, c.outs,
                            kernel.decode(errors="replace") if isinstance(kernel, bytes) else kernel)
        launch = extra.pop("launch", None)
        if launch is not None:
            fields["launch"] = self._launch(launch, c.args[0] if c.args else None)
        if extra:
            fields["details"] = self.generic(extra)
        if c.err == 0:
            self._destroy(c, row)
        return Norm(c.index, c.seq, fields)

    # -- values by role (hrr.api.roles.View, OutView) ----------------------------------------
    def plain(self, v: Any) -> Any:
        return v

    text = plain

    def enum(self, v: Any, kind: str | None) -> Any:
        return enum_name(kind, v)   # by name, as dump shows it

    def address(self, v: Any) -> Any:
        return self.addr(v)

    def app_address(self, v: Any) -> Any:
        return "app address" if v else v   # the app's own code and data: never the same

    def nothing(self, v: Any) -> Any:
        return None

    def out_plain(self, v: Any) -> Any:
        return "(varies)" if self._volatile else self.generic(v)

    def new_allocation(self, v: Any, size: Any) -> Any:
        return self.new_alloc(v, size) or v

    def new_alias(self, v: Any, host: Any) -> Any:
        # A device address for host memory: as large as the allocation it aliases.
        return self.new_alloc(v, self.size_at(host)) or v

    def _outs(self, c: Call, row: Api) -> list:
        out: list = []
        if row.name == "hipHostRegister" and c.err == 0 and c.args:
            rng = c.args[0]
            if isinstance(rng, (list, tuple)) and len(rng) == 4:
                self.new_alloc(rng[1], rng[2])
        for i, o in enumerate(row.outs):
            v = c.outs[i] if i < len(c.outs) else None
            if c.err != 0:
                out.append(v if v is None else "(not set: the call failed)")
            else:
                self._volatile = row.volatile
                out.append(out_role(o.role).show(self, row, i, v, c.args))
        return out

    def _launch(self, launch: Any, fn: Any) -> Any:
        launch = launch_map(launch)   # either wire form: the same fields
        if not isinstance(launch, dict):
            return self.generic(launch)
        out = {k: self.generic(v) for k, v in launch.items() if k not in ("kernargs", "ptrs")}
        layout = self.layouts.get(fn) if type(fn) is int else None
        if layout is not None and isinstance(launch.get("kernargs"), bytes):
            # the arguments by name and type (a changed one shows as its two values), pointers
            # as allocations; compared before the raw bytes, so a difference is named by them
            shown = show_args(layout, launch["kernargs"], self.params.functions.get(fn))
            out["args"] = {k: self.addr(int(v, 16)) if isinstance(v, str) and v.startswith("0x") else v
                           for k, v in shown.items()}
        ptrs = launch.get("ptrs")
        masked = bytearray(launch["kernargs"]) if isinstance(launch.get("kernargs"), bytes) else None
        words = []
        for p in ptrs if isinstance(ptrs, list) else ():
            if isinstance(p, (list, tuple)) and len(p) == 3 and all(type(x) is int for x in p):
                word, base, inside = p
                words.append([word, self.addr(base + inside)])
                if masked is not None and 0 <= word <= len(masked) - 8:
                    masked[word:word + 8] = bytes(8)   # the address itself differs between runs
        if masked is not None:
            out["kernargs"] = masked.hex()
        if ptrs is not None:
            out["pointer_words"] = words
        return out

    def _destroy(self, c: Call, row: Api) -> None:
        if not row.destroys or not c.args:
            return
        if row.destroys == "alloc":
            self.free(c.args[0])
        elif type(c.args[0]) is int:
            self.handles.pop(c.args[0], None)


def _hexname(v: str) -> bool:
    return all(ch in "0123456789abcdef" for ch in v)


# -- comparison ---------------------------------------------------------------------------
def first_difference(a: Any, b: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first (path, a value, b value) where two normalised values differ, or None."""
    if isinstance(a, Blob) and isinstance(b, Blob):
        return None if a.name is None or b.name is None or a.name == b.name else (path.lstrip("."), a, b)
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return (f"{path}.{k}".lstrip("."), a.get(k, "(absent)"), b.get(k, "(absent)"))
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        if len(a) != len(b):
            return (f"{path} length".lstrip("."), len(a), len(b))
        return None
    return None if a == b and type(a) is type(b) else (path.lstrip("."), a, b)


def render(n: Norm) -> str:
    """One record on one line: ``#index seq N [tK] api(name=value, ...) -> err, outs``."""
    f = n.fields
    args = ", ".join(f"{k}={_short(v)}" for k, v in f["args"].items() if v is not None)
    line = f"#{n.index} seq {n.seq} [t{f['thread']}] {f['api']}({args}) -> err {f['err']}"
    if f.get("outs"):
        line += f", outs {_short(f['outs'])}"
    launch = f.get("launch")
    if isinstance(launch, dict):
        line += " | " + " ".join(f"{k}={_short(launch[k])}" for k in ("kernel", "args", "grid", "block", "error")
                                 if k in launch)
    if f.get("details"):
        line += f" | {_short(f['details'])}"
    return line


def _fmt(v: Any) -> str:
    if isinstance(v, dict) and set(v) == {"at", "bytes", "content"}:   # a copy endpoint
        content = f" {v['content']!r}" if isinstance(v["content"], Blob) and v["content"].name else ""
        return f"{v['at']}[{v['bytes']} B{content}]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_fmt(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return v if isinstance(v, str) else repr(v)


def _short(v: Any) -> str:
    text = _fmt(v)
    return text if len(text) <= _WIDTH else text[:_WIDTH - 3] + "..."


@attrs.frozen
class DiffResult:
    """What ``diff_archives`` found: equal, or the first divergence and where."""
    equal: bool
    process: int | None = None            # index of the process pair, 0-based
    index_a: int | None = None            # record index in A (None: A had no record there)
    index_b: int | None = None
    field: str | None = None              # first differing field ("api", "args...", "count")
    lines: tuple[str, ...] = ()


def _normalised(proc: Any, skipped: Skipped) -> Iterator[Norm]:
    norm = _Normaliser(getattr(proc, "read_code_object", None))
    for c in calls(proc, skipped):
        yield norm.record(c)


def diff_archives(path_a: str, path_b: str, *, context: int = 3, limits: Limits | None = None,
                  echo: Callable[[str], None] = print) -> DiffResult:
    """Compare two archives process by process, record by record; print and return the first
    divergence (with ``context`` equal records before it). Raises ArchiveError if unreadable."""
    limits = limits or Limits()
    with open_archive(path_a, limits) as arc_a, open_archive(path_b, limits) as arc_b:
        return _diff(arc_a, arc_b, context, echo)


def _diff(arc_a: Any, arc_b: Any, context: int, echo: Callable[[str], None]) -> DiffResult:
    lines: list[str] = []

    def say(text: str) -> None:
        lines.append(text)
        echo(text)

    total = 0
    skipped_a, skipped_b = Skipped(), Skipped()
    for p, (pa, pb) in enumerate(zip(arc_a.processes, arc_b.processes, strict=False)):
        ma, mb = pa.manifest, pb.manifest
        same_mode = ma.get("content_mode") == mb.get("content_mode")
        if not same_mode:
            say(f"note: pid-{pa.pid} is {ma.get('content_mode')}, pid-{pb.pid} is "
                f"{mb.get('content_mode')}: content recorded on one side only (blobs, plugin records) is not compared")
        recent: collections.deque[Norm] = collections.deque(maxlen=max(context, 0))
        it_a, it_b = _normalised(pa, skipped_a), _normalised(pb, skipped_b)
        while True:
            na, nb = next(it_a, None), next(it_b, None)
            if na is None and nb is None:
                break
            if na is not None and nb is not None:
                d = first_difference(_comparable(na, same_mode), _comparable(nb, same_mode))
                if d is None:
                    recent.append(na)
                    total += 1
                    continue
                field = d[0]
                what = f"{field}: {_short(d[1])} != {_short(d[2])}"
            else:
                field = "count"
                ended, more = ("A", "B") if na is None else ("B", "A")
                what = f"{ended} ends here; {more} has more records"
            where = na.index if na is not None else nb.index   # type: ignore[union-attr]
            say(f"pid-{pa.pid} (A) / pid-{pb.pid} (B), process {p + 1}: first divergence "
                f"at record {where}: {what}")
            for r in recent:
                say(f"    {render(r)}")
            say(f"  A {render(na) if na is not None else '(end of archive)'}")
            say(f"  B {render(nb) if nb is not None else '(end of archive)'}")
            _skipped_notes(say, skipped_a, skipped_b)
            return DiffResult(False, p, na.index if na else None, nb.index if nb else None,
                              field, tuple(lines))
    _skipped_notes(say, skipped_a, skipped_b)
    na_, nb_ = len(arc_a.processes), len(arc_b.processes)
    if na_ != nb_:
        extra = (arc_a if na_ > nb_ else arc_b).processes[min(na_, nb_)]
        say(f"first divergence: A has {na_} process(es), B has {nb_}; pid-{extra.pid} "
            f"({'A' if na_ > nb_ else 'B'}) has no counterpart")
        return DiffResult(False, min(na_, nb_), None, None, "processes", tuple(lines))
    say(f"equal: {na_} process(es), {total} record(s) compared")
    return DiffResult(True, lines=tuple(lines))


def _comparable(n: Norm, same_mode: bool) -> dict[str, Any]:
    # Plugin records (pinned snapshots) exist only where content was captured: compared
    # only between archives of the same content mode.
    if same_mode or not isinstance(n.fields.get("details"), dict) or "records" not in n.fields["details"]:
        return n.fields
    details = {k: v for k, v in n.fields["details"].items() if k != "records"}
    fields = {k: v for k, v in n.fields.items() if k != "details"}
    if details:
        fields["details"] = details
    return fields


def _skipped_notes(say: Callable[[str], None], a: Skipped, b: Skipped) -> None:
    for side, s in (("A", a), ("B", b)):
        if s.count:
            say(f"note: {side}: {s.count} unreadable record(s) skipped (first: {s.first})")
