"""Well-formed event records of one process archive, streamed; anything else is skipped and counted.

The inspection commands read archives only through the public reader API and its
schema-checked walk (``ProcessArchive.checked_events``): a record the reader refuses is
counted in :class:`Skipped` and never acted on.
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


def calls(proc: Any, skipped: Skipped) -> Iterator[Call]:
    """Yield the well-formed records of ``proc`` (a reader ``ProcessArchive``) in file order:
    the reader's schema-checked walk, whose refusals are counted here."""
    where = proc.events_path
    for item in proc.checked_events():
        event = getattr(item, "event", None)
        if event is None:
            skipped.add(f"{where} record {item.index} at offset {item.offset}: {item.reason}")
            continue
        yield Call(item.index, item.offset, event.seq, event.tid, event.api, list(event.args),
                   event.err, list(event.outs), event.extra)
