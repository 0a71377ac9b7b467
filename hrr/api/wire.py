"""The positions of a wire record ``[seq, tid, api, args, err, outs, extra]``.

Declared at the ground floor so that the roles (which read a record's outputs and extras)
and every layer above index a record by name; ``hrr.events.model`` offers them too.
``Field`` is the same as an ``IntEnum``; the plain constants are what hot paths index with.
"""
from __future__ import annotations

from enum import IntEnum

from hrr.api.fields import Rule


class Field(IntEnum):
    """A wire record's items by position."""

    SEQ = 0
    TID = 1
    API = 2
    ARGS = 3
    ERR = 4
    OUTS = 5
    EXTRA = 6


SEQ, TID, API, ARGS, ERR, OUTS, EXTRA = (int(f) for f in Field)
#: The record's field names in order (``WIRE_FIELDS[API] == "api"``).
WIRE_FIELDS = tuple(f.name.lower() for f in Field)
#: Items in a record.
WIRE_LEN = len(WIRE_FIELDS)

#: The longest API name a record may hold.
MAX_API_NAME = 128

#: The record's own fields, each declared once (the schema's and the launch runner's
#: checks are generated from these; the schema's names its bad field with them).
RECORD_RULES: dict[str, Rule] = {r.name: r for r in (
    Rule("seq", "int", "a non-negative int within the 64-bit range", low=0, high=1 << 64),
    Rule("tid", "int", "an int within the 64-bit range", low=-(1 << 63), high=1 << 64),
    Rule("api", "str", f"a string of at most {MAX_API_NAME} characters", most=MAX_API_NAME),
    Rule("args", "list", "a list"),
    Rule("err", "int", "an int"),
    Rule("outs", "list", "a list"),
    Rule("extra", "map", "a map"),
)}

__all__ = ["API", "ARGS", "ERR", "EXTRA", "MAX_API_NAME", "OUTS", "RECORD_RULES", "SEQ", "TID", "WIRE_FIELDS",
           "WIRE_LEN", "Field"]
