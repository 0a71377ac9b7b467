"""Snapshot records: their wire form, and replay's validation and restore of them.

A record is what a launch event (or a graph-launch event) carries under the
plugin's name in ``extra["records"]``::

    {"v": 1,                     # record version
     "stream": <int>,            # the launch stream's handle value at capture (0: null)
     "during_capture": <bool>,   # made while the launch stream was capturing a graph
     "snaps": [                  # one per run of chunks recorded (several per allocation)
        {"base": <int>,          # capture-time base of the host allocation
         "offset": <int>,        # first byte of the run, from base
         "length": <int>,        # bytes recorded
         "chunks": [[<blob name>, <n>], ...]},   # consecutive chunks; sum(n) == length
        ...]}

Capture lists the runs of chunks changed since the allocation's last record (the whole
allocation when it has none on the launch stream); replay writes every run in order.

Replay treats every field as untrusted: see :func:`validate` and DESIGN ("Threat model").
This module is shared by the pinned_snapshot and graph_capture plugins.
"""
from __future__ import annotations

import ctypes
import re
from typing import Any, NoReturn

from hrr.pipeline import BlobError, Event, EventRefused, ReplayContext

RECORD_VERSION = 1
CHUNK_BYTES = 64 * 1024
HOST_KINDS = ("pinned", "registered")
MAX_SNAPS_PER_RECORD = 4096
MAX_CHUNKS_PER_SNAP = 1 << 20
_U64 = 1 << 64
_NAME_RE = re.compile(r"[0-9a-f]{32}\Z")


class RecordError(ValueError):
    """A snapshot record that replay must not act on."""


def make_record(stream: int, during_capture: bool, snaps: list[dict]) -> dict:
    """A version-1 record of ``snaps`` made for a launch on ``stream``."""
    return {"v": RECORD_VERSION, "stream": int(stream), "during_capture": bool(during_capture),
            "snaps": snaps}


def _u64(v: Any, what: str) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < _U64:
        raise RecordError(f"{what} is not an unsigned 64-bit integer")
    return v


def validate(ctx: ReplayContext, rec: Any) -> tuple[bool, list[tuple[Any, int, list[tuple[str, int]]]]]:
    """Check one record against replay's own allocations and the blob store, before
    anything is done. Returns (during_capture, [(replay allocation, byte offset inside it,
    [(blob, n), ...]), ...]); raises RecordError naming what is wrong."""
    if not isinstance(rec, dict) or rec.get("v") != RECORD_VERSION:
        raise RecordError("is not a version-1 snapshot record")
    during = rec.get("during_capture", False)
    if not isinstance(during, bool):
        raise RecordError("has a malformed during_capture flag")
    snaps = rec.get("snaps")
    if not isinstance(snaps, list) or len(snaps) > MAX_SNAPS_PER_RECORD:
        raise RecordError("has a malformed or oversized snapshot list")
    plan = []
    for j, snap in enumerate(snaps):
        where = f"snapshot {j}"
        if not isinstance(snap, dict):
            raise RecordError(f"{where} is malformed")
        base = _u64(snap.get("base"), f"{where}: base")
        offset = _u64(snap.get("offset"), f"{where}: offset")
        length = _u64(snap.get("length"), f"{where}: length")
        chunks = snap.get("chunks")
        if not isinstance(chunks, list) or len(chunks) > MAX_CHUNKS_PER_SNAP:
            raise RecordError(f"{where}: the chunk list is malformed")
        alloc = ctx.allocation(base)
        if alloc is None:
            raise RecordError(f"{where}: 0x{base:x} names no live allocation replay made")
        if alloc.kind not in HOST_KINDS:
            raise RecordError(f"{where}: 0x{base:x} does not name pinned host memory "
                              f"(a {alloc.kind} allocation)")
        # Overflow-safe bounds: every term is < 2**64 and checked on its own first.
        if base + offset >= _U64 or base + offset + length > _U64:
            raise RecordError(f"{where}: offset {offset} + length {length} overflows")
        start = base - alloc.capture_base + offset
        if start > alloc.size or length > alloc.size - start:
            raise RecordError(f"{where}: {length} bytes at +{offset} are out of bounds of "
                              f"its {alloc.size}-byte allocation")
        parts: list[tuple[str, int]] = []
        total = 0
        for k, c in enumerate(chunks):
            if not (isinstance(c, (list, tuple)) and len(c) == 2 and isinstance(c[0], str)
                    and _NAME_RE.match(c[0])):
                raise RecordError(f"{where}: chunk {k} is malformed")
            n = _u64(c[1], f"{where}: chunk {k} size")
            if n == 0:
                raise RecordError(f"{where}: chunk {k} is empty")
            total += n
            parts.append((c[0], n))
        if total != length:
            raise RecordError(f"{where}: chunk sizes add up to {total}, not its length {length}")
        for k, (name, n) in enumerate(parts):
            try:
                size = ctx.blob_size(name)
            except (BlobError, OSError) as exc:
                raise RecordError(f"{where}: chunk {k}: blob {name} is unreadable: {exc}") from None
            if size != n:
                raise RecordError(f"{where}: chunk {k}: {n} bytes do not match the size of its "
                                  f"blob {name} ({size} bytes)")
        plan.append((alloc, start, parts))
    return during, plan


def _refuse(ctx: ReplayContext, event: Event, label: str, i: int, why: str) -> NoReturn:
    ctx.counters["pinned_refused"] += 1
    raise EventRefused(f"{label} record {i} of record {event.seq} ({event.api}) {why}",
                       category="pinned_snapshot")


def restore(ctx: ReplayContext, event: Event, stream: Any, records: list, *, label: str,
            skip_capture: bool) -> int:
    """Validate every record, then queue one host function on ``stream`` that writes the
    bytes into replay's buffers ahead of the event's work. Nothing waits for the stream.

    ``skip_capture``: the event replays into a stream that is capturing, so nothing is
    restored (counted as skipped). A bad record, a blob refused by a cap or a failed
    enqueue raises EventRefused, which ends the event before it runs. Returns the number
    of allocations restored."""
    plans = []
    for i, rec in enumerate(records):
        try:
            plans.append(validate(ctx, rec))
        except RecordError as exc:
            _refuse(ctx, event, label, i, str(exc))
    writes: list[tuple[int, bytes]] = []
    restored = 0
    for i, (during, plan) in enumerate(plans):
        # Counted per allocation: a record lists each run of changed chunks as its own snap.
        allocations = len({alloc.capture_base for alloc, _start, _parts in plan})
        if during or skip_capture:
            ctx.counters["pinned_skipped_graph_capture"] += allocations
            continue
        restored += allocations
        for alloc, start, parts in plan:
            addr = alloc.replay_base + start
            for name, n in parts:
                try:
                    data = ctx.read_blob(name)
                except BlobError as exc:
                    _refuse(ctx, event, label, i, f"has a blob replay refused: {exc}")
                if len(data) != n:
                    _refuse(ctx, event, label, i, f"names blob {name} of {len(data)} bytes, not {n}")
                writes.append((addr, data))
                addr += n
    if not writes:
        return 0

    def copy_in() -> None:
        for addr, data in writes:
            ctypes.memmove(addr, data, len(data))

    err = ctx.enqueue_host_fn(stream, copy_in)
    if err != 0:
        ctx.counters["pinned_refused"] += 1
        raise EventRefused(f"{label}: could not queue the restore of record {event.seq} "
                           f"({event.api}) on its stream (error {err})", category="enqueue")
    ctx.counters["pinned_restored"] += restored
    return restored
