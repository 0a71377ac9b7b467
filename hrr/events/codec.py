"""Serialisation of events to and from their msgpack wire form.

Wire form: ``[seq, tid, api, args, err, outs, extra]`` with msgpack-native items only.
Decoding validates shape and types, because archives are untrusted input.
"""
from __future__ import annotations

from typing import Any

from hrr.errors import FormatError
from hrr.events.model import Event

WIRE_FIELDS = ("seq", "tid", "api", "args", "err", "outs", "extra")


def event_to_wire(ev: Event) -> list:
    """The wire list for ``ev``."""
    return [ev.seq, ev.tid, ev.api, list(ev.args), ev.err, list(ev.outs), ev.extra]


def event_from_wire(value: Any, where: str = "") -> Event:
    """Build an Event from a decoded record, refusing anything of the wrong shape."""
    if not isinstance(value, (list, tuple)) or len(value) != len(WIRE_FIELDS):
        raise FormatError("event record is not a 7-item array", where=where,
                          hint="the archive is damaged or not written by hrr")
    seq, tid, api, args, err, outs, extra = value
    if not (isinstance(seq, int) and isinstance(tid, int) and isinstance(api, str)
            and isinstance(args, (list, tuple)) and isinstance(err, int)
            and isinstance(outs, (list, tuple)) and isinstance(extra, dict)):
        raise FormatError("event record has a field of the wrong type", where=where,
                          hint="the archive is damaged or not written by hrr")
    return Event(seq, tid, api, tuple(args), err, tuple(outs), extra)
