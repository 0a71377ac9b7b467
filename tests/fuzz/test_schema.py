"""The event-record schema: property tests over the decoder and the validator, and the
wrong-type records found by hand (issue 8, item 7), through the reader, info and replay."""
from __future__ import annotations

import json
import math
import os

import msgpack
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hrr.api.catalogue import CATALOGUE
from hrr.archive import open_archive, open_process_writer
from hrr.archive.format import unpack_untrusted
from hrr.archive.reader import BadRecord, Record
from hrr.hiptypes import simcode
from hrr.cli.main import cli
from hrr.errors import FormatError
from hrr.events import event_from_wire, event_to_wire
from hrr.events.codec import MAX_WIRE_DEPTH, schema_error

GOOD = [3, 140001, "hipMalloc", [64], 0, [0x7F0000001000], {}]
LAUNCH = [7, 1, "hipModuleLaunchKernel", [1, 1, 1, 1, 64, 1, 1, 0, 0, None, None], 0, [],
          {"launch": {"kernel": "fill_u32", "grid": [1, 1, 1], "block": [64, 1, 1],
                      "kernargs": b"\x00" * 16, "ptrs": [[0, 4096, 0]]},
           "records": {"pinned_snapshot": [{"v": 1}]}}]
D2H = [9, 1, "@d2h", [4], 0, [], {"blob": "0" * 32, "n": 16}]

scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1),
                    st.floats(allow_nan=True), st.text(max_size=12), st.binary(max_size=12))
msgpack_values = st.recursive(
    scalars, lambda inner: st.one_of(st.lists(inner, max_size=6),
                                     st.dictionaries(st.text(max_size=8), inner, max_size=6)),
    max_leaves=30)
wire_values = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1),
                                     st.floats(allow_nan=False, allow_infinity=False),
                                     st.text(max_size=8), st.binary(max_size=8)),
                           lambda inner: st.lists(inner, max_size=4), max_leaves=12)
u64 = st.integers(0, 2**64 - 1)
ROLE_VALUES = {  # what capture writes for each parameter role
    "value": st.one_of(st.none(), st.booleans(), u64, st.floats(allow_nan=False, allow_infinity=False)),
    "enum": st.none() | st.integers(0, 64), "ptr": u64, "handle": u64, "host_fn": u64, "user_data": u64,
    "name": st.text(max_size=12), "dim3": st.lists(st.integers(0, 2**32 - 1), min_size=3, max_size=3),
    "launch": st.none(), "ignored": st.none(),
}
api_names = st.sampled_from(["hipMalloc", "hipMemcpy", "hipModuleLaunchKernel", "hipDeviceSynchronize", "@d2h"])


def _depth(v):
    return 1 + max((_depth(x) for x in v), default=0) if isinstance(v, list) else 0


@st.composite
def good_records(draw):
    api = draw(api_names)
    row = CATALOGUE.get(api)
    any_wire = wire_values.filter(lambda v: _depth(v) <= MAX_WIRE_DEPTH)
    if row is None:
        args = draw(st.lists(any_wire, max_size=6))
    else:
        args = [draw(ROLE_VALUES.get(p.role, any_wire)) for p in row.params]
    outs = draw(st.lists(wire_values.filter(lambda v: _depth(v) <= MAX_WIRE_DEPTH), max_size=3))
    extra = draw(st.fixed_dictionaries({}, optional={
        "records": st.dictionaries(st.text(max_size=8), st.lists(msgpack_values, max_size=3), max_size=3),
        "blob": st.none() | st.text(max_size=32), "n": st.integers(0, 2**32),
        "layout": st.lists(st.tuples(st.integers(0, 64), st.integers(0, 16), st.text(max_size=4),
                                     st.text(max_size=4)).map(list), max_size=3)}))
    return [draw(st.integers(0, 2**63 - 1)), draw(st.integers(-(2**63), 2**64 - 1)), api,
            args, draw(st.integers(-(2**31), 2**31)), outs, extra]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(msgpack_values)
def test_any_value_is_an_event_or_a_format_error(value):
    """Whatever msgpack decodes to, the decoder returns an Event or raises FormatError."""
    try:
        ev = event_from_wire(value)
    except FormatError as exc:
        assert exc.what and schema_error(value) == exc.what
    else:
        assert schema_error(value) is None and isinstance(ev.api, str)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=64))
def test_any_bytes_decode_to_a_value_or_a_value_error(data):
    """The untrusted msgpack decoder raises nothing but ValueError, whatever the bytes."""
    try:
        value = unpack_untrusted(data)
    except ValueError:
        return
    try:
        event_from_wire(value)
    except FormatError:
        pass


@settings(max_examples=100, deadline=None)
@given(good_records())
def test_valid_records_round_trip(record):
    """A well-typed record survives msgpack and the decoder unchanged (NaN compared as NaN)."""
    wire = unpack_untrusted(msgpack.packb(record, use_bin_type=True))
    ev = event_from_wire(wire)
    again = unpack_untrusted(msgpack.packb(event_to_wire(ev), use_bin_type=True))
    assert _nan_safe(again) == _nan_safe(record)


def _nan_safe(v):
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, (list, tuple)):
        return [_nan_safe(x) for x in v]
    if isinstance(v, dict):
        return {k: _nan_safe(x) for k, x in v.items()}
    return v


# The records found by hand, and their neighbours: each is refused with the field named.
WRONG = [
    ("extra.records an int", lambda r: r[6].update(records=1), "extra.records"),
    ("records of a plugin not a list", lambda r: r[6].update(records={"pinned_snapshot": 5}), "extra.records"),
    ("api a list", lambda r: r.__setitem__(2, ["hipMalloc"]), "api"),
    ("api None", lambda r: r.__setitem__(2, None), "api"),
    ("api unknown", lambda r: r.__setitem__(2, "hipNotAThing"), "catalogue"),
    ("api an unknown pseudo-event", lambda r: r.__setitem__(2, "@nope"), "pseudo-event"),
    ("tid a map", lambda r: r.__setitem__(1, {"a": 1}), "tid"),
    ("seq negative", lambda r: r.__setitem__(0, -1), "seq"),
    ("seq a bool", lambda r: r.__setitem__(0, True), "seq"),
    ("err a float", lambda r: r.__setitem__(4, 0.0), "err"),
    ("args a map", lambda r: r.__setitem__(3, {}), "args"),
    ("an arg a map", lambda r: r[3].__setitem__(0, {"x": 1}), "args[0]"),
    ("an arg nested too deep", lambda r: r[3].__setitem__(0, [[[[[1]]]]]), "args[0]"),
    ("outs None", lambda r: r.__setitem__(5, None), "outs"),
    ("extra a list", lambda r: r.__setitem__(6, []), "extra"),
    ("extra an unknown key", lambda r: r[6].update(surprise=1), "unknown key"),
    ("launch kernargs a string", lambda r: r[6]["launch"].update(kernargs="00"), "extra.launch"),
    ("launch ptrs of pairs", lambda r: r[6]["launch"].update(ptrs=[[0, 1]]), "extra.launch"),
    ("launch grid of 2", lambda r: r[6]["launch"].update(grid=[1, 1]), "extra.launch"),
    ("launch an unknown key", lambda r: r[6]["launch"].update(code=1), "extra.launch"),
    ("d2h n negative", lambda r: r[6].update(n=-1), "extra.n"),
    ("d2h blob an int", lambda r: r[6].update(blob=5), "extra.blob"),
    ("seven items short", lambda r: r.pop(), "7-item"),
    ("args one too many", lambda r: r[3].append(0), "takes 1"),
    ("args a million", lambda r: r.__setitem__(3, [None] * 1_000_000), "takes 1"),
    ("a size of inf", lambda r: r[3].__setitem__(0, math.inf), "args[0] (size)"),
    ("a size of NaN", lambda r: r[3].__setitem__(0, math.nan), "args[0] (size)"),
    ("launch grid of -inf", lambda r: r[3].__setitem__(1, -math.inf), "args[1] (gridDimX)"),
    ("launch stream handle a string", lambda r: r[3].__setitem__(8, "s"), "args[8]"),
    ("a d2h arg of inf", lambda r: r[3].__setitem__(0, math.inf), "args[0]"),
    ("d2h args a million", lambda r: r.__setitem__(3, [0] * 1_000_000), "more than 16"),
    ("outs a million", lambda r: r.__setitem__(5, [0] * 1_000_000), "more than 16"),
    ("an arg a long list", lambda r: r[3].__setitem__(0, [0] * 17), "args[0]"),
    ("launch more ptrs than kernarg words", lambda r: r[6]["launch"].update(ptrs=[[0, 1, 0]] * 3), "extra.launch"),
    ("launch ptrs without kernargs", lambda r: r[6]["launch"].pop("kernargs"), "extra.launch"),
]


def _copy(v):
    return msgpack.unpackb(msgpack.packb(v, use_bin_type=True), raw=False)


@pytest.mark.parametrize("label,edit,field", WRONG, ids=[w[0] for w in WRONG])
def test_wrong_types_are_refused_naming_the_field(label, edit, field):
    base = D2H if "d2h" in label else LAUNCH if "launch" in label else GOOD
    record = _copy(base)
    assert schema_error(record) is None
    edit(record)
    with pytest.raises(FormatError) as exc:
        event_from_wire(record)
    assert field in exc.value.what


def _archive(root, records, pid=4242):
    w = open_process_writer(str(root), pid, {"backend": "sim"}, manifest={})
    for r in records:
        w.append(r)
    w.close()
    return os.path.join(str(root), f"pid-{pid}", "events.bin")


HOSTILE = [_copy(GOOD)] + [_copy(LAUNCH if "launch" in w[0] else D2H if "d2h" in w[0] else GOOD)
                           for w in WRONG]
for _rec, (_l, _edit, _f) in zip(HOSTILE[1:], WRONG, strict=False):
    _edit(_rec)


def test_reader_refuses_bad_records_by_file_index_and_offset(tmp_path):
    events_path = _archive(tmp_path, HOSTILE)
    with open_archive(str(tmp_path)) as a:
        items = list(a.processes[0].checked_events())
    assert isinstance(items[0], Record) and items[0].event.api == "hipMalloc"
    bad = items[1:]
    assert len(bad) == len(WRONG) and all(isinstance(b, BadRecord) for b in bad)
    offsets = [b.offset for b in bad]
    assert offsets == sorted(offsets) and offsets[0] > items[0].offset
    assert bad[0].where == f"{events_path} record 1 at offset {bad[0].offset}"
    assert "extra.records" in bad[0].reason


def test_info_describes_hostile_records_without_a_traceback(tmp_path):
    _archive(tmp_path, HOSTILE)
    runner = CliRunner()
    for argv in (["info", str(tmp_path)], ["info", "--events", "--json", str(tmp_path)]):
        result = runner.invoke(cli, argv, catch_exceptions=False)
        assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    proc = data["processes"][0]
    assert proc["calls"] == {"hipMalloc": 1}
    assert len(proc["bad_records"]) == len(WRONG)
    assert "tid" in proc["bad_records"][[w[0] for w in WRONG].index("tid a map")]["reason"]


def test_replay_refuses_hostile_records_without_a_traceback(tmp_path):
    _archive(tmp_path, HOSTILE)
    result = CliRunner().invoke(cli, ["replay", "--max-host-bytes", "1048576", str(tmp_path)],
                                catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    assert "Traceback" not in result.output


def test_info_json_is_strict_with_non_finite_numbers_and_deep_manifest_fields(tmp_path):
    record = _copy(D2H)
    record[3] = [math.nan, math.inf]
    _archive(tmp_path, [record])
    mpath = os.path.join(str(tmp_path), "pid-4242", "manifest.json")
    m = json.load(open(mpath))
    m["extra_field"] = json.loads("[" * 500 + "]" * 500)
    json.dump(m, open(mpath, "w"))
    result = CliRunner().invoke(cli, ["info", "--events", "--json", str(tmp_path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout, parse_constant=lambda c: pytest.fail(f"non-strict JSON {c}"))
    proc = data["processes"][0]
    assert proc["events"] == [] and "args[0]" in proc["bad_records"][0]["reason"]
    assert "<nested too deep>" in json.dumps(proc["manifest"]["extra_field"])


def test_printable_spells_out_what_strict_json_cannot_hold():
    from hrr.cli.info import printable
    assert printable([math.nan, -math.inf, b"abc", {1: 2}]) == ["nan", "-inf", "<3 bytes>", {"1": 2}]
    assert printable(list(range(100)))[-1] == "<36 more>"


def test_event_records_tolerate_a_hand_built_event_with_bad_records():
    from hrr.events import Event
    assert Event(0, 0, "hipInit", extra={"records": 1}).records("x") == []
    assert Event(0, 0, "hipInit", extra={"records": {"x": 3}}).records("x") == []


@pytest.mark.parametrize("depth", [17, 5000, 200000])
def test_sim_code_object_with_deep_json_is_an_invalid_image(depth):
    body = b'{"library": "builtin", "version": "1.0", "kernels": ' + b"[" * depth + b"]" * depth + b"}"
    data = simcode.MAGIC + len(body).to_bytes(4, "little") + body
    with pytest.raises(simcode.CodeObjectError, match="nested deeper"):
        simcode.decode_code_object(data)


def test_sim_code_object_parses_after_the_depth_check():
    data = simcode.encode_code_object("builtin", "1.0", ["fill_u32"])
    assert simcode.decode_code_object(data).kernels == ("fill_u32",)


def test_hard_linked_archive_file_is_refused(tmp_path):
    root = tmp_path / "a"
    _archive(root, [_copy(GOOD)])
    outside = tmp_path / "outside.json"
    mpath = root / "pid-4242" / "manifest.json"
    outside.write_bytes(mpath.read_bytes())
    mpath.unlink()
    os.link(outside, mpath)
    result = CliRunner().invoke(cli, ["info", str(root)], catch_exceptions=False)
    assert result.exit_code == 4 and "hard link" in result.output


def test_info_turns_any_surprise_into_one_line(tmp_path, monkeypatch):
    """The last guard: whatever info did not foresee ends in one line and exit 1."""
    import hrr.cli.info as info_mod
    _archive(tmp_path, [_copy(GOOD)])

    def boom(*a, **k):
        raise RecursionError("maximum recursion depth exceeded")
    monkeypatch.setattr(info_mod, "archive_info", boom)
    result = CliRunner().invoke(cli, ["info", str(tmp_path)])
    assert result.exit_code == 4 and not isinstance(result.exception, RecursionError)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "RecursionError" in lines[0] and "bug in hrr" in lines[0]


def test_the_fast_schema_path_accepts_exactly_what_the_full_check_accepts():
    """codec._well_formed (specialised per API, on every replayed record) must agree with the
    full check on every value: valid records and each one-field mutation of them."""
    import random

    from hrr.events import codec

    rng = random.Random(11)
    good = [
        [0, 7, "hipGetDevice", [], 0, [0], {}],
        [1, 7, "hipMalloc", [64], 0, [0x1000], {}],
        [2, 7, "hipInit", [0], 0, [], {"records": {"p": [1]}}],
        [3, 7, "@d2h", [1], 0, [], {"blob": None}],
        [4, 7, "hipModuleLaunchKernel", [1, 1, 1, 1, 1, 1, 1, 0, 0, None, None], 0, [],
         {"launch": {"kernel": "k", "grid": [1, 1, 1], "block": [1, 1, 1], "kernargs": b"\0" * 8,
                     "ptrs": [[0, 1, 0]]}}],
    ]
    odd = [None, True, -1, 1.5, float("inf"), float("nan"), "s", b"b", [], [1], [[[[[1]]]]], {}, {"k": 1},
           list(range(20)), 1 << 70]
    checked = 0
    for base in good:
        assert codec._well_formed(base) and codec._schema_problem(base) is None, base
        for _ in range(300):
            v = [list(x) if isinstance(x, list) else dict(x) if isinstance(x, dict) else x for x in base]
            field = rng.randrange(7)
            if isinstance(v[field], list) and v[field] and rng.random() < 0.6:
                v[field][rng.randrange(len(v[field]))] = rng.choice(odd)
            elif isinstance(v[field], dict) and rng.random() < 0.6:
                v[field][rng.choice(["launch", "layout", "records", "blob", "n", "other"])] = rng.choice(odd)
            else:
                v[field] = rng.choice(odd)
            assert codec._well_formed(v) == (codec._schema_problem(v) is None), v
            checked += 1
    assert checked == 1500


@pytest.mark.parametrize("field,value", [(0, 1 << 64), (1, 1 << 64), (1, -(1 << 63) - 1)])
def test_seq_and_tid_past_64_bits_are_refused_by_the_schema(field, value):
    """msgpack cannot carry them, an in-process record can: the schema is the one check
    replay relies on (it no longer re-checks the range per event)."""
    record = _copy(GOOD)
    record[field] = value
    with pytest.raises(FormatError) as exc:
        event_from_wire(record)
    assert "64-bit range" in exc.value.what


def test_a_launch_list_is_checked_as_strictly_as_the_map_of_its_fields():
    """Format 3's list form of extra.launch and formats 1-2's map: every one-field mutation of
    a valid launch is accepted or refused alike in both forms (fast and full check agreeing),
    a refused list naming extra.launch."""
    import random

    from hrr.events import codec
    from hrr.events.launch import launch_list, launch_map

    rng = random.Random(13)
    common = {"kernel": "k", "grid": [1, 2, 3], "block": [4, 1, 1], "kernargs": bytes(16), "ptrs": [[8, 4096, 0]]}
    bases = [common, {**common, "offsets": [0, 8]}, {"kernel": None, "grid": [1, 1, 1], "block": [1, 1, 1],
                                                      "error": "the kernel's parameter layout is unknown"}]
    odd = [None, True, -1, 1.5, "s", b"b", [], [1], [1, 2, 3], [1, 2, True], [[0, 1, 2]], [[0, 1]], [[8, 1, 2]] * 3,
           [0] * 4097, bytes(7), bytes(24), {}]
    checked = 0
    for base in bases:
        assert launch_map(launch_list(base)) == base
        for _ in range(300):
            fields = dict(base)
            fields[rng.choice(list(fields))] = rng.choice(odd)
            records = [[4, 7, "hipModuleLaunchKernel", [1, 1, 1, 1, 1, 1, 1, 0, 0, None, None], 0, [],
                        {"launch": launch}] for launch in (fields, launch_list(fields))]
            verdicts = [codec._schema_problem(r) for r in records]
            assert (verdicts[0] is None) == (verdicts[1] is None), (fields, verdicts)
            assert codec._well_formed(records[1]) == (verdicts[1] is None), fields
            assert verdicts[1] is None or "extra.launch" in verdicts[1]
            checked += 1
    assert checked == 900
    for cut in (0, 3, 7):   # no list of another length is a launch
        assert "has" in codec._schema_problem([4, 7, "hipModuleLaunchKernel", [1, 1, 1, 1, 1, 1, 1, 0, 0, None, None],
                                               0, [], {"launch": [*launch_list(common), 0, 0][:cut]}])
