"""Per-field declarations of what a record holds, and the checks generated from them.

A ``Rule`` says what one field must be: its kind (``int``, ``str``, ``str?`` for a string
or null, ``bytes``, ``list``, ``map``, ``ints`` for a list of ints, ``words`` for a list of
``[int, int, int]``), its bounds and what a bad value is called. From the rules of a
record, written once, hrr generates (through :mod:`hrr.codegen`) the fast check (a
boolean expression, no exception raised, no call made), the check that names the first
bad field (:func:`naming_source`, :func:`positional_source`), and the launch runner's
checks (the kind and the bounds replay needs).

Ground floor: imports nothing above ``hrr.api``.
"""
from __future__ import annotations

from typing import Callable, Iterable, Mapping, Sequence

import attrs

from hrr.codegen import compile_function, function_source

KINDS = ("int", "str", "str?", "bytes", "list", "map", "ints", "words")
#: The ints msgpack carries (int64 and uint64): a bound at or past these holds for every
#: int an archive's record can hold, so a check of a decoded record leaves it out.
WIRE_INT_LOW, WIRE_INT_HIGH = -(1 << 63), 1 << 64


@attrs.frozen
class Rule:
    """What one field must be.

    ``length``: an ``ints`` list's exact length; ``most``: the most items of an ``ints``
    list, or characters of a ``str``. ``low``/``high``: an int's bounds (``high`` exclusive), or each item's of an
    ``ints`` list; ``bounded`` says whether the schema holds them (else only replay's
    runner does: a value out of them is the general path's to refuse). ``per``: a list
    holds at most one item per ``n`` bytes of the named ``bytes`` field (``("kernargs", 8)``),
    checked before its items are walked."""

    name: str
    kind: str
    description: str
    length: int | None = None
    most: int | None = None
    low: int | None = None
    high: int | None = None
    bounded: bool = True
    per: tuple[str, int] | None = None

    def __attrs_post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"field {self.name}: unknown kind {self.kind!r}")


def _range(x: str, low: int | None, high: int | None, decoded: bool = False) -> str | None:
    if decoded:
        low = None if low is not None and low <= WIRE_INT_LOW else low
        high = None if high is not None and high >= WIRE_INT_HIGH else high
    if low is not None and high is not None:
        return f"{low} <= {x} < {high}"
    if low is not None:
        return f"{x} >= {low}"
    if high is not None:
        return f"{x} < {high}"
    return None


def shallow_expr(rule: Rule, x: str, at: dict[str, str] | None = None) -> str:
    """The field's type and length, not its items (``at``: the names of the other fields,
    for ``per``; that field must be checked earlier in the same conjunction)."""
    k = rule.kind
    if k == "str" and rule.most is not None:
        return f"type({x}) is str and len({x}) <= {rule.most}"
    if k in ("int", "str", "bytes", "list"):
        return f"type({x}) is {k}"
    if k == "str?":
        return f"({x} is None or type({x}) is str)"
    if k == "map":
        return f"type({x}) is dict"
    out = f"type({x}) is list"
    if rule.length is not None:
        out += f" and len({x}) == {rule.length}"
    if rule.most is not None:
        out += f" and len({x}) <= {rule.most}"
    if rule.per is not None and at is not None:
        other, n = rule.per
        out += f" and len({x}) <= len({at[other]}) // {n}"
    return out


def items_expr(rule: Rule, x: str, names: tuple[str, ...] | None = None, *, replay: bool = False,
               decoded: bool = False) -> str | None:
    """The items of a list field already shallow-checked (``names``: an ``ints`` list of
    fixed length unpacked into these names), with their bounds where the schema holds
    them or ``replay``; for an ``int``, its bounds (``decoded``: not those msgpack's range
    implies). None: nothing more to check."""
    bounds = rule.bounded or replay
    if rule.kind == "int":
        return _range(x, rule.low, rule.high, decoded) if bounds else None
    if rule.kind == "words":
        return (f"all(type(w) is list and len(w) == 3 and type(w[0]) is int and type(w[1]) is int "
                f"and type(w[2]) is int for w in {x})")
    if rule.kind != "ints":
        return None
    if rule.length is None:
        return f"all(type(i) is int for i in {x})"
    items = names or tuple(f"{x}[{i}]" for i in range(rule.length))
    terms = [f"type({i}) is int" for i in items]
    if bounds:
        terms += [r for r in (_range(i, rule.low, rule.high, decoded) for i in items) if r]
    return " and ".join(terms)


def fast_expr(rule: Rule, x: str, at: dict[str, str] | None = None, *, replay: bool = False,
              decoded: bool = False) -> str:
    """The fast check of one field: a boolean expression of the name ``x``, its kind,
    length and items and, where the schema holds them (or ``replay``: the launch
    runner's), its bounds; ``decoded``: of a value msgpack decoded, so without the bounds
    its int range implies. Raises nothing, calls nothing."""
    more = items_expr(rule, x, replay=replay, decoded=decoded)
    shallow = shallow_expr(rule, x, at)
    return f"({shallow})" if more is None else f"({shallow} and {more})"


def all_of(terms: Iterable[str]) -> str:
    """The conjunction of boolean expressions (``True`` when there are none)."""
    terms = list(terms)
    return " and ".join(terms) if terms else "True"


def positional_source(name: str, forms: dict[int, tuple[Rule, ...]], shown: str, bad_length: str) -> tuple[str, str]:
    """The sources of ``name(v)`` (the fast check of a list whose length picks its form,
    each item by its rule: True or False) and ``name_problem(v)`` (the first bad item,
    named ``<shown>[i] (field)``, or ``bad_length`` with ``{n}`` for a length no form has;
    None when ``name(v)`` holds). ``v`` must already be a list."""
    ok, problem = ["n = len(v)"], ["n = len(v)"]
    for length, rules in forms.items():
        xs = [f"x{i}" for i in range(length)]
        at = {r.name: x for r, x in zip(rules, xs, strict=True)}
        ok += [f"if n == {length}:", f"    {', '.join(xs)}, = v",
               f"    return {all_of(fast_expr(r, x, at) for r, x in zip(rules, xs, strict=True))}"]
        problem += [f"if n == {length}:", f"    {', '.join(xs)}, = v"]
        for i, (r, x) in enumerate(zip(rules, xs, strict=True)):
            where = f"{shown}[{i}] ({r.name})"
            if r.per is not None:
                other, per = r.per
                y = at[other]
                message = f"{where} has {{len({x})}} words, more than {other}' {{len({y}) // {per}}}"
                problem += [f"    if type({x}) is list and len({x}) > len({y}) // {per}:",
                            f"        return f{message!r}"]
            problem += [f"    if not {fast_expr(r, x)}:", f"        return {where + ' must be ' + r.description!r}"]
        problem.append("    return None")
    ok.append("return False")
    problem.append(f"return {bad_length!r}.format(n=n)")
    return function_source(name, ["v"], ok), function_source(f"{name}_problem", ["v"], problem)


def naming_source(name: str, rules: Sequence[Rule], shown: str, bad_shape: str,
                  after: Mapping[str, tuple[str, tuple[str, ...]]] | None = None) -> str:
    """The source of ``name(v)``: the first thing wrong with the record ``v`` (a list of one
    item per rule, in order), or None when nothing is. Not a list of that length:
    ``bad_shape``. A field its rule refuses: ``<shown> <field> must be <description>``. Once a
    field passed its rule, ``after[field] = (function, fields)`` (what the field holds that no
    rule says, e.g. a name looked up in a table; the namespace gives the function) is called
    with those fields, and an answer other than None is returned."""
    after = after or {}
    fields = [r.name for r in rules]
    lines = [f"if type(v) is not list or len(v) != {len(rules)}:", f"    return {bad_shape!r}",
             f"{', '.join(fields)}, = v"]
    for r in rules:
        lines += [f"if not {fast_expr(r, r.name)}:", f"    return {f'{shown} {r.name} must be {r.description}'!r}"]
        if r.name in after:
            function, args = after[r.name]
            lines += [f"problem = {function}({', '.join(args)})", "if problem is not None:", "    return problem"]
    lines.append("return None")
    return function_source(name, ["v"], lines)


def described(rule: Rule, *, replay: bool = False) -> str:
    """What a bad value of ``rule``'s field is called, with the bounds the check holds."""
    if not (rule.bounded or replay) or (rule.low is None and rule.high is None):
        return rule.description
    each = " each" if rule.kind == "ints" else ""
    if rule.low is not None and rule.high is not None:
        return f"{rule.description},{each} from {rule.low} to {rule.high - 1}"
    return f"{rule.description},{each} " + (f"at least {rule.low}" if rule.low is not None else f"below {rule.high}")


def refusing_source(name: str, rules: Iterable[Rule], shown: str, optional: Iterable[str] = ()) -> str:
    """The source of ``name(m)``: each rule's field of the map ``m`` checked with the bounds
    replay needs; the first bad one raises ``_bad("<shown>.<field> must be ...")`` (the
    namespace gives ``_bad``, e.g. an EventRefused maker). A field in ``optional`` may be absent."""
    lines = []
    skip = set(optional)
    for rule in rules:
        lines.append(f"x = m.get({rule.name!r})")
        test = fast_expr(rule, "x", replay=True)
        if rule.name in skip:
            test = f"(x is None and {rule.name!r} not in m) or {test}"
        lines += [f"if not ({test}):",
                  f"    raise _bad({f'{shown}.{rule.name} must be {described(rule, replay=True)}'!r})"]
    return function_source(name, ["m"], lines)


def ok_function(rule: Rule) -> Callable[[object], bool]:
    """``ok(x) -> bool``: one field's fast check as a function (for a map's values)."""
    return compile_function("ok", function_source("ok", ["x"], [f"return {fast_expr(rule, 'x')}"]), {},
                            f"check of {rule.name}")


__all__ = ["KINDS", "WIRE_INT_HIGH", "WIRE_INT_LOW", "Rule", "all_of", "described", "fast_expr", "items_expr",
           "naming_source", "ok_function", "positional_source", "refusing_source", "shallow_expr"]
