"""Fields declared once (hrr.api.fields): the checks generated from a rule agree with it,
and every generated function keeps its source (hrr.codegen)."""
from __future__ import annotations

import pytest

from hrr.codegen import compile_function, function_source, source_of
from hrr.api.fields import Rule, fast_expr, naming_source, refusing_source
from hrr.api.roles.launch import DECODER_CHECK_SOURCE, LAUNCH_RULES
from hrr.api.wire import RECORD_RULES, WIRE_FIELDS, Field
from hrr.errors import EventRefused
from hrr.events import codec
from hrr.replay.launches import runner_source


def _ok(rule: Rule, *, replay: bool = False):
    source = function_source("ok", ["x"], [f"return {fast_expr(rule, 'x', replay=replay)}"])
    return compile_function("ok", source, {})


def test_a_generated_function_keeps_its_source() -> None:
    source = function_source("twice", ["x"], ["return 2 * x"])
    fn = compile_function("twice", source, {})
    assert fn(4) == 8 and source_of(fn) == source
    assert source_of(len) is None


@pytest.mark.parametrize(("rule", "good", "bad"), [
    (RECORD_RULES["seq"], [0, (1 << 64) - 1], [-1, 1 << 64, True, "1", None]),
    (RECORD_RULES["tid"], [-(1 << 63), 0, (1 << 64) - 1], [-(1 << 63) - 1, 1 << 64, 1.0]),
    (LAUNCH_RULES["kernel"], [None, "k"], [b"k", 1]),
    (LAUNCH_RULES["grid"], [[1, 2, 3], [1 << 40, 0, 0]], [[1, 2], (1, 2, 3), [1, 2, True], [1, 2, "3"]]),
    (LAUNCH_RULES["ptrs"], [[], [[0, 1, 2]]], [[[0, 1]], [(0, 1, 2)], 5]),
    (LAUNCH_RULES["offsets"], [[], [0, 8]], [list(range(5000)), ["a"]]),
])
def test_the_fast_check_follows_the_rule(rule: Rule, good: list, bad: list) -> None:
    ok = _ok(rule)
    assert all(ok(v) for v in good) and not any(ok(v) for v in bad)


def test_bounds_only_replay_holds_are_the_runners() -> None:
    grid = LAUNCH_RULES["grid"]
    assert _ok(grid)([1 << 40, 1, 1]) and not _ok(grid, replay=True)([1 << 40, 1, 1])
    assert "4294967296" in runner_source() and "4294967296" not in codec.LAUNCH_LIST_SOURCES[0]


def test_the_named_checks_name_the_field() -> None:
    assert codec._launch_list_problem(["k", [1, 1], [1, 1, 1], "why"]) == \
        "event field extra.launch[1] (grid) must be a list of 3 ints"
    assert codec._launch_list_problem(["k", [1, 1, 1], [1, 1, 1], b"x" * 8, [[0, 0, 0], [8, 0, 0]]]).startswith(
        "event field extra.launch[4] (ptrs) has 2 words, more than kernargs' 1")
    assert codec._launch_list_problem([1, 2]).startswith("event field extra.launch has 2 items")
    check = compile_function("check_fields", DECODER_CHECK_SOURCE,
                             {"_bad": lambda m: EventRefused(m, category="bad_record")})
    check({"grid": [1, 1, 1], "block": [1, 1, 1]})
    with pytest.raises(EventRefused, match=r"extra.launch.block must be a list of 3 ints, each from 0 to 4294967295"):
        check({"grid": [1, 1, 1], "block": [1, 1, 1 << 32], "ptrs": []})
    refuse = compile_function("f", refusing_source("f", [RECORD_RULES["err"]], "event"), {"_bad": ValueError})
    with pytest.raises(ValueError, match="event.err must be an int"):
        refuse({"err": "0"})


def test_the_check_naming_the_field_is_generated_from_the_record_rules() -> None:
    """Each of the record's fields is refused by its rule, named with its description; a
    changed rule changes the check (nothing about the fields is written by hand)."""
    assert source_of(codec._schema_problem) == codec.SCHEMA_PROBLEM_SOURCE
    good = [0, 7, "hipGetDevice", [], 0, [0], {}]
    assert codec._schema_problem(good) is None
    for i, (name, rule) in enumerate(RECORD_RULES.items()):
        bad = list(good)
        bad[i] = 1.5
        assert codec._schema_problem(bad) == f"event field {name} must be {rule.description}"
        assert f"return 'event field {name} must be {rule.description}'" in codec.SCHEMA_PROBLEM_SOURCE
    rules = [Rule("n", "int", "a small int", low=0, high=4), Rule("s", "str", "a short string", most=2)]
    problem = compile_function("p", naming_source("p", rules, "item", "not a pair"), {})
    assert [problem(v) for v in ([3, "ab"], [4, "ab"], [0, "abc"], [0], None)] == [
        None, "item n must be a small int", "item s must be a short string", "not a pair", "not a pair"]


def test_a_check_of_a_decoded_record_leaves_out_only_the_bounds_msgpack_implies() -> None:
    """The launch runner takes records msgpack decoded: seq keeps its lower bound (msgpack
    carries negative ints), the bounds at msgpack's own range are not checked per record."""
    seq, tid = RECORD_RULES["seq"], RECORD_RULES["tid"]
    assert fast_expr(seq, "x", replay=True, decoded=True) == "(type(x) is int and x >= 0)"
    assert fast_expr(tid, "x", replay=True, decoded=True) == "(type(x) is int)"
    assert "tid <" in fast_expr(tid, "tid", replay=True)
    record = next(line for line in runner_source().splitlines() if "type(seq)" in line)
    assert "seq >= 0" in record and "tid <" not in record and "seq <" not in record


def test_the_record_positions_are_named() -> None:
    assert WIRE_FIELDS == ("seq", "tid", "api", "args", "err", "outs", "extra")
    assert [int(f) for f in Field] == list(range(7)) and tuple(RECORD_RULES) == WIRE_FIELDS
