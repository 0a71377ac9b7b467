"""Serialisation of events to and from their msgpack wire form, and the record schema.

Wire form: ``[seq, tid, api, args, err, outs, extra]`` with msgpack-native items only.
Archives are untrusted input, so :func:`event_from_wire` checks a decoded record against
the schema below before anything acts on it; a record that fails raises FormatError
naming the field (the reader turns that into a refused record, never an exception).

Schema (DESIGN.md, "Event records"):

    seq    int >= 0                 tid   int             api  catalogue name or pseudo-event
    args   list of wire values      err   int             outs list of wire values
    extra  map whose keys are among EXTRA_KEYS, each of the type listed there; extra.launch
           is format 3's list of fields by position or formats 1-2's map (events/launch.py)

A wire value is None, bool, int, a finite float, str, bytes or a list of at most MAX_WIRE_LIST wire
values nested at most MAX_WIRE_DEPTH deep (a copy endpoint ``[tag, addr, nbytes, blob]``
is depth 2). A catalogue call has exactly one arg per catalogue parameter, each of the
type capture writes for its role (``Role.wire``), and at most MAX_OUTS outs. Every list the
checks walk is bounded, so checking one record costs a bounded amount of work whatever the
record's size. The common record is accepted by a check specialised once per API
(``_well_formed``); anything it doubts goes through the full check, which names the field.
Values inside plugin records (``extra.records[plugin]``) are the plugin's to validate;
here they only have to be a list per plugin name.
"""
from __future__ import annotations

import math
from typing import Any, Callable

from hrr.api.catalogue import CATALOGUE
from hrr.api.roles import PARAM_ROLES, WireType
from hrr.errors import FormatError
from hrr.codegen import compile_function, function_source
from hrr.api.fields import all_of, fast_expr, naming_source, ok_function, positional_source
from hrr.api.wire import MAX_API_NAME, RECORD_RULES
from hrr.events.launch import LAUNCH_FORMS, LAUNCH_RULES, MAX_LAUNCH_PARAMS
from hrr.events.model import API, PSEUDO_EVENTS, WIRE_LEN, Event

MAX_WIRE_DEPTH = 4          # args/outs nesting: endpoints are 2 deep; 4 leaves room
MAX_WIRE_LIST = 16          # items in a list inside args/outs (an endpoint has 4, a dim3 3)
MAX_OUTS = 16               # the catalogue's most is 3
MAX_PSEUDO_ARGS = 16
MAX_LAYOUT_ROWS = MAX_LAUNCH_PARAMS   # kernel parameters
MAX_RECORDS_PER_PLUGIN = 1 << 16

_HINT = "the archive is damaged or not written by hrr"


def event_to_wire(ev: Event) -> list:
    """The wire list for ``ev``."""
    return [ev.seq, ev.tid, ev.api, list(ev.args), ev.err, list(ev.outs), ev.extra]


def _is_int(v: object) -> bool:
    return type(v) is int          # bool is not a record integer


def _wire_value(v: object, depth: int = 0) -> bool:
    """True when ``v`` is a wire value (scalars, or lists of them no deeper than MAX_WIRE_DEPTH)."""
    if v is None or type(v) in (bool, int, str, bytes):
        return True
    if type(v) is float:
        return math.isfinite(v)    # hrr never records NaN or infinity; a size of inf is hostile
    if type(v) is list and depth < MAX_WIRE_DEPTH and len(v) <= MAX_WIRE_LIST:
        return all(_wire_value(x, depth + 1) for x in v)
    return False


def _arg_type(role: str) -> WireType | None:
    """What capture writes for a parameter of ``role`` (``Role.wire``); None: any wire value
    (copy endpoints, code objects: replay checks those in depth)."""
    found = PARAM_ROLES.get(role)
    return None if found is None else found.wire


def _layout(v: object) -> bool:
    return type(v) is list and len(v) <= MAX_LAYOUT_ROWS and all(
        type(r) is list and len(r) == 4 and _is_int(r[0]) and _is_int(r[1])
        and type(r[2]) is str and type(r[3]) is str for r in v)


# launch fields: name -> (check, description), each generated from its rule (LAUNCH_RULES).
# "kernargs"/"ptrs" are absent when "error" says why.
LAUNCH_KEYS: dict[str, tuple[Callable[[object], bool], str]] = {
    name: (ok_function(rule), rule.description) for name, rule in LAUNCH_RULES.items()}

# The list form (format 3): its fast check and the check naming its first bad item,
# generated from the rules of each form's items (LAUNCH_FORMS).
LAUNCH_LIST_SOURCES = positional_source(
    "launch_list", LAUNCH_FORMS, "event field extra.launch",
    "event field extra.launch has {n} items, it must be [kernel, grid, block, kernargs, ptrs], "
    "the same with offsets, or [kernel, grid, block, error]")
_launch_list = compile_function("launch_list", LAUNCH_LIST_SOURCES[0], {}, "schema check of extra.launch")
_launch_list_problem = compile_function("launch_list_problem", LAUNCH_LIST_SOURCES[1], {},
                                        "schema check of extra.launch, naming the field")
_PER = [(name, rule.per) for name, rule in LAUNCH_RULES.items() if rule.per is not None]


def _launch(v: object) -> bool:
    if type(v) is list:   # format 3: the fields by position (LAUNCH_FIELDS), no map built
        return _launch_list(v)
    if type(v) is not dict or not all(k in LAUNCH_KEYS for k in v):
        return False
    # One pointer word per aligned 8 bytes of kernargs at most: checked before the walk.
    for name, (other, per) in _PER:
        most = len(v[other]) // per if type(v.get(other)) is bytes else 0
        if type(v.get(name)) is list and len(v[name]) > most:
            return False
    return all(LAUNCH_KEYS[k][0](x) for k, x in v.items())


def _records(v: object) -> bool:
    return type(v) is dict and all(type(k) is str and type(x) is list and len(x) <= MAX_RECORDS_PER_PLUGIN
                                   for k, x in v.items())


# extra: key -> (check, description). Unknown keys are refused: hrr's core writes them all
# (plugins write only under "records").
EXTRA_KEYS: dict[str, tuple[Callable[[object], bool], str]] = {
    "launch": (_launch, "a map of " + ", ".join(f"{k}: {d}" for k, (_, d) in LAUNCH_KEYS.items())),
    "layout": (_layout, "a list of [offset, size, kind, name]"),
    "records": (_records, f"a map of plugin name to a list of at most {MAX_RECORDS_PER_PLUGIN} records"),
    "blob": (lambda v: v is None or type(v) is str, "a blob name or null"),
    "n": (lambda v: type(v) is int and v >= 0, "a non-negative int"),
}


_SCALARS = (type(None), bool, int, str, bytes)


def _row_checks(row: Any) -> tuple[Callable[[object], bool] | None, ...]:
    """The role check of each of ``row``'s parameters (None: any wire value), built once per row."""
    return tuple(None if wire is None else wire.ok for wire in (_arg_type(p.role) for p in row.params))


def _extra_ok(extra: dict) -> bool:
    for key, v in extra.items():
        entry = EXTRA_KEYS.get(key)
        if entry is None or not entry[0](v):
            return False
    return True


# The per-API fast check's body: the record's own fields checked by the expression
# generated from their rules (RECORD_RULES), then its arguments, outputs and extras.
_RECORD_CHECK_BODY = """\
def ok(value):
    seq, tid, _, args, err, outs, extra = value
    if not ({fields}):
        return False
    n = len(args)
    if (n != most_args if exact else n > most_args) or len(outs) > max_outs:
        return False
    if n:
        for i, check in active:
            if not check(args[i]):
                return False
        for x in args:
            if type(x) not in scalars and not wire_value(x):
                return False
    for x in outs:
        if type(x) not in scalars and not wire_value(x):
            return False
    return not extra or extra_ok(extra)

return ok
"""
RECORD_CHECK_SOURCE = function_source(
    "make", ["most_args", "exact", "active", "scalars", "wire_value", "max_outs", "extra_ok"],
    _RECORD_CHECK_BODY.format(fields=all_of(
        fast_expr(RECORD_RULES[name], name) for name in ("seq", "tid", "err", "args", "outs", "extra"))).splitlines())
_make_record_check = compile_function("make", RECORD_CHECK_SOURCE, {}, "schema check of a record")


def _record_check(checks: tuple[Callable[[object], bool] | None, ...] | None) -> Callable[[list], bool]:
    """``ok(record)`` for a 7-item list naming one API, specialised once: its argument count
    and role checks unrolled into locals (``checks`` None: a pseudo-event, any args up to
    the cap). True exactly when the full check finds nothing."""
    most_args = MAX_PSEUDO_ARGS if checks is None else len(checks)
    active = tuple((i, c) for i, c in enumerate(checks or ()) if c is not None)
    return _make_record_check(most_args, checks is not None, active, _SCALARS, _wire_value, MAX_OUTS, _extra_ok)


# Per API, built once: the check of a record naming it; pseudo-events take any args.
_RECORD_CHECKS: dict[str, Callable[[list], bool]] = {
    **{name: _record_check(_row_checks(row)) for name, row in CATALOGUE.items()},
    **{name: _record_check(None) for name in PSEUDO_EVENTS if len(name) <= MAX_API_NAME},
}


def record_check(api: str) -> Callable[[list], bool] | None:
    """The schema's fast check of a 7-item list whose third item is ``api`` (None: ``api``
    has none, e.g. a row added after import; :func:`schema_error` still settles those)."""
    return _RECORD_CHECKS.get(api)


def _well_formed(value: Any) -> bool:
    """True exactly when :func:`_schema_problem` finds nothing, specialised per API and
    cheap for the common record; any doubt is settled by the full check, which names the field."""
    if type(value) is not list or len(value) != WIRE_LEN or type(value[API]) is not str:
        return False
    ok = _RECORD_CHECKS.get(value[API])
    return ok is not None and ok(value)


def schema_error(value: Any) -> str | None:
    """What is wrong with a decoded record, or None when it matches the event schema."""
    if _well_formed(value):
        return None
    return _schema_problem(value)


def _api_problem(api: str) -> str | None:
    if api not in CATALOGUE and api not in PSEUDO_EVENTS:
        return f"event field api names {api[:64]!r}, which is neither in this hrr's catalogue nor a pseudo-event"
    return None


def _items_problem(name: str, v: list, api: str | None) -> str | None:
    """What is wrong with the items of args (``api``: the call they are for) or outs."""
    row = CATALOGUE.get(api) if api is not None else None
    if row is not None and len(v) != len(row.params):
        return f"event field args has {len(v)} items, {api} takes {len(row.params)}"
    most = MAX_OUTS if name == "outs" else MAX_PSEUDO_ARGS
    if len(v) > most:
        return f"event field {name} has {len(v)} items, more than {most}"
    for i, x in enumerate(v):
        wire = _arg_type(row.params[i].role) if row is not None else None
        if wire is not None and row is not None and not wire.ok(x):
            return f"event field args[{i}] ({row.params[i].name}) must be {wire.description}"
        if not _wire_value(x):
            return (f"event field {name}[{i}] must be a number, string, bytes, null "
                    f"or a list of them at most {MAX_WIRE_DEPTH} deep")
    return None


def _extra_problem(extra: dict) -> str | None:
    for key, v in extra.items():
        if key not in EXTRA_KEYS:
            return f"event field extra has an unknown key {str(key)[:64]!r}"
        check, description = EXTRA_KEYS[key]
        if not check(v):
            if key == "launch" and type(v) is list:
                return _launch_list_problem(v)
            return f"event field extra.{key} must be {description}"
    return None


# The full check, naming the first bad field: each of the record's own fields checked by
# its rule (RECORD_RULES) in order, then what it holds (the functions above).
SCHEMA_PROBLEM_SOURCE = naming_source(
    "schema_problem", tuple(RECORD_RULES.values()), "event field", "event record is not a 7-item array",
    {"api": ("api_problem", ("api",)), "args": ("args_problem", ("api", "args")),
     "outs": ("outs_problem", ("outs",)), "extra": ("extra_problem", ("extra",))})
_schema_problem: Callable[[Any], str | None] = compile_function(
    "schema_problem", SCHEMA_PROBLEM_SOURCE,
    {"api_problem": _api_problem, "args_problem": lambda api, args: _items_problem("args", args, api),
     "outs_problem": lambda outs: _items_problem("outs", outs, None), "extra_problem": _extra_problem},
    "schema check of a record, naming the field")


def event_from_wire(value: Any, where: str = "") -> Event:
    """Build an Event from a decoded record, refusing anything that does not match the schema."""
    if type(value) is tuple:       # in-process callers may hand a tuple; the wire has lists
        value = list(value)
    problem = schema_error(value)
    if problem is not None:
        raise FormatError(problem, where=where or None, hint=_HINT)
    seq, tid, api, args, err, outs, extra = value
    return Event(seq, tid, api, tuple(args), err, tuple(outs), extra)
