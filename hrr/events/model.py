"""The recorded-call event, as an attrs frozen class.

Capture builds the wire tuple directly on its hot path (see codec.py); readers build
``Event`` objects from it. Field meanings: docs/archive-format.md ("Event records"); a record's items are
indexed by the names of their positions (``SEQ`` .. ``EXTRA``, ``Field``).
"""
from __future__ import annotations

from typing import Any

import attrs

from hrr.api.wire import API, ARGS, ERR, EXTRA, OUTS, SEQ, TID, WIRE_FIELDS, WIRE_LEN, Field

# A pseudo-event: the bytes an asynchronous device-to-host copy delivered, taken when
# capture saw the copy's stream synchronised. ``args`` is ``(copy_seq,)``.
PSEUDO_D2H_CHECK = "@d2h"
# A pseudo-event: a call the backend passed through that hrr's catalogue has no row for
# (the ``hip`` backend only). ``args`` is ``(function name,)``, ``err`` its error.
PSEUDO_UNCATALOGUED = "@uncatalogued"
UNCATALOGUED_REASON = "not in hrr's catalogue (see docs/api-coverage.md)"
# Every pseudo-event this hrr writes; the record schema (codec.py) refuses any other "@" name.
PSEUDO_EVENTS = frozenset({PSEUDO_D2H_CHECK, PSEUDO_UNCATALOGUED})


@attrs.frozen
class Event:
    """One recorded call: global sequence number, thread, API, encoded arguments,
    the error it returned, encoded outputs and extras (launch arguments, plugin records)."""

    seq: int
    tid: int
    api: str
    args: tuple = ()
    err: int = 0
    outs: tuple = ()
    extra: dict = attrs.field(factory=dict)

    @property
    def is_pseudo(self) -> bool:
        return self.api.startswith("@")

    def records(self, plugin: str) -> list[Any]:
        """The records that ``plugin`` attached to this event (empty when none)."""
        records = self.extra.get("records")
        found = records.get(plugin) if isinstance(records, dict) else None
        # The codec's schema guarantees a list; an Event built in-process is not checked.
        return list(found) if isinstance(found, (list, tuple)) else []


def wire_event(wire: list) -> Event:
    """The ``Event`` of a wire record the codec has already checked (no second check)."""
    seq, tid, api, args, err, outs, extra = wire
    return Event(seq, tid, api, tuple(args), err, tuple(outs), extra)


__all__ = ["API", "ARGS", "ERR", "EXTRA", "OUTS", "PSEUDO_D2H_CHECK", "PSEUDO_EVENTS", "PSEUDO_UNCATALOGUED", "SEQ",
           "TID", "UNCATALOGUED_REASON", "WIRE_FIELDS", "WIRE_LEN", "Event", "Field", "wire_event"]
