"""Well-formed event records of one process archive, streamed; anything else is skipped and counted.

The inspection commands read archives only through the public reader API. They trust no
record: a frame the reader refused, or a value that is not a 7-field event with the types
the wire format promises, is counted in :class:`Skipped` and never acted on.
"""
from __future__ import annotations

from typing import Any, Iterator

import attrs


@attrs.frozen
class Call:
    """One well-formed event record: its place in the file and its seven wire fields."""
    index: int
    offset: int
    seq: int
    tid: int
    api: str
    args: list
    err: int
    outs: list
    extra: dict


@attrs.define
class Skipped:
    """Records that were not acted on: how many, and where the first one was."""
    count: int = 0
    first: str | None = None

    def add(self, where: str) -> None:
        """Count one skipped record; keep the first one's description."""
        self.count += 1
        if self.first is None:
            self.first = where


def _int(v: Any) -> bool:
    return type(v) is int


def calls(proc: Any, skipped: Skipped) -> Iterator[Call]:
    """Yield the well-formed records of ``proc`` (a reader ``ProcessArchive``) in file order."""
    # The schema-checking walk, where the reader has one; the format-level walk otherwise.
    walk = getattr(proc, "checked_events", None) or proc.events
    where = getattr(proc, "events_path", f"pid-{getattr(proc, 'pid', '?')}")
    for item in walk():
        index, offset = getattr(item, "index", -1), getattr(item, "offset", -1)
        reason = getattr(item, "reason", None)
        if reason is not None:
            skipped.add(f"{where} record {index} at offset {offset}: {reason}")
            continue
        value = getattr(item, "value", None)
        if not (isinstance(value, (list, tuple)) and len(value) == 7):
            skipped.add(f"{where} record {index} at offset {offset}: not a 7-field event")
            continue
        seq, tid, api, args, err, outs, extra = value
        if extra is None:
            extra = {}
        if not (_int(seq) and seq >= 0 and _int(tid) and isinstance(api, str) and _int(err)
                and isinstance(args, (list, tuple)) and isinstance(outs, (list, tuple))
                and isinstance(extra, dict)):
            skipped.add(f"{where} record {index} at offset {offset}: a field has the wrong type")
            continue
        yield Call(index, offset, seq, tid, api, list(args), err, list(outs), extra)
