"""Adding an API is adding a row: two fake calls, declared only here (a test-only
catalogue extension) with a body on the sim, are captured, replayed byte for byte,
validated by their roles and listed by ``hrr info``, with no other file touched. A new
kind of value is a new role class, registered as every role is: a fake role and a fake
family of rows using it (its bodies declared as a backend's family module declares its
own) are captured, replayed, listed, dumped and compared the same way, touching only the
role's class, the catalogue's rows and the family's bodies."""
from __future__ import annotations

import inspect
import json
from typing import Any, Callable

import numpy as np
import pytest
from click.testing import CliRunner
from hrrtest import archive_calls, capture, replay, text

from hrr.api.catalogue import CATALOGUE, STREAM, Api, O, P, Param, extended, get, rows
from hrr.api.roles.base import PARAM_ROLES, Check, Encoder, Role, View, WireType, bad, register, unregister
from hrr.archive import Limits, open_archive, open_process_writer
from hrr.backends import sim
from hrr.backends.bodies import Bodies
from hrr.cli.main import cli
from hrr.pipeline.manager import make_plugin_manager
from hrr.hiptypes import hipError_t
from hrr.backends.sim.memory import DEVICE_BASE
from hrr.backends.surface import irregular
from hrr.events.ranges import parse_range
from hrr.replay.engine import ProcessReplayer, ReplayOptions

# fill(dst, value, sizeBytes, stream): an asynchronous fill of value + 1 (not a memset by another name).
TOUCH = Api("hipHrrTestTouch", "test", (P("dst", "ptr", size="sizeBytes"), P("value"), P("sizeBytes"), STREAM),
            stream="stream")
# peek(dst, src, sizeBytes): a synchronous device-to-host copy, checked at replay.
PEEK = Api("hipHrrTestPeek", "test", (P("dst", "copy_dst", size="sizeBytes"), P("src", "ptr", size="sizeBytes"),
                                      P("sizeBytes")), sync=True, waits="null_stream")
# answer(): a pure query (``--calls`` set-up leaves it out).
ANSWER = Api("hipHrrTestAnswer", "test", (), (O("value"),), pure=True)


def sim_bodies(shift: int = 1) -> dict[str, Callable[..., Any]]:
    """What the sim does for the fake calls (``shift``: the fill's offset from value)."""
    @irregular(raw=True)  # another hip call: it takes the arguments as the app passed them
    def touch(dst: Any, value: int, sizeBytes: int, stream: Any) -> tuple:
        return sim.hip.hipMemsetAsync(dst, (int(value) + shift) & 0xFF, sizeBytes, stream)

    @irregular(raw=True)
    def peek(dst: Any, src: Any, sizeBytes: int) -> tuple:
        return sim.hip.hipMemcpyDtoH(dst, src, sizeBytes)
    def answer() -> tuple:
        return hipError_t.hipSuccess, 42
    return {TOUCH.name: touch, PEEK.name: peek, ANSWER.name: answer}


def install_bodies(monkeypatch: pytest.MonkeyPatch, bodies: dict[str, Callable[..., Any]]) -> None:
    """The one place a fake row's backend body is hooked up: the sim builds its function
    from the row (monkeypatch takes it away again when the test ends)."""
    for name, body in bodies.items():
        monkeypatch.setattr(sim.hip, name, None, raising=False)  # what the test's end restores
        sim.add_body(name, body)


@pytest.fixture
def fake_api(monkeypatch):
    with extended(TOUCH, PEEK, ANSWER):
        install_bodies(monkeypatch, sim_bodies())
        yield


def app(hip, hiprtc, be):
    assert hip.hipHrrTestAnswer() == (0, 42)
    s = hip.hipStreamCreate()[1]
    d = hip.hipMalloc(256)[1]
    assert hip.hipHrrTestTouch(d, 6, 256, s)[0] == 0
    assert hip.hipStreamSynchronize(s)[0] == 0
    out = np.zeros(256, np.uint8)
    assert hip.hipHrrTestPeek(out, d, 256)[0] == 0
    assert (out == 7).all()
    assert hip.hipFree(d)[0] == 0
    assert hip.hipStreamDestroy(s)[0] == 0


def replay_stats(root, calls: str | None = None) -> Any:
    """The structured result of replaying the first process archive under ``root``."""
    sim.reset_device()
    proc = open_archive(str(root), Limits()).processes[0]
    pm, _ = make_plugin_manager([])
    options = ReplayOptions(strict=True, calls=parse_range(calls) if calls else None)
    return ProcessReplayer(proc, sim, pm, Limits(), options).run()


def test_the_extension_adds_rows_and_takes_them_away():
    before = len(CATALOGUE)
    with extended(TOUCH) as added:
        assert added == (TOUCH,) and get(TOUCH.name) is TOUCH and list(rows())[-1] is TOUCH
        with pytest.raises(ValueError, match="hipHrrTestTouch"):
            extended(TOUCH)
    assert TOUCH.name not in CATALOGUE and len(CATALOGUE) == before
    assert all(r.name != TOUCH.name for r in rows())


def test_a_fake_rows_function_is_built_from_the_row(monkeypatch):
    """add_body: the body gets its arguments converted by role (a stream handle as the live
    sim stream), a failure is the error tuple, and the function goes with the body."""
    row = Api("hipHrrTestStreamFlags", "test", (STREAM,), (O("flags"),), pure=True)
    with extended(row), monkeypatch.context() as m:
        install_bodies(m, {row.name: lambda stream: (hipError_t.hipSuccess, stream.flags)})
        assert list(inspect.signature(sim.hip.hipHrrTestStreamFlags).parameters) == ["stream"]
        s = sim.hip.hipStreamCreateWithFlags(1)[1]
        assert sim.hip.hipHrrTestStreamFlags(s) == (hipError_t.hipSuccess, 1)
        assert sim.hip.hipHrrTestStreamFlags(0x7777) == (hipError_t.hipErrorInvalidHandle, None)
        assert sim.hip.hipGetLastError() == (hipError_t.hipErrorInvalidHandle,)
        assert sim.hip.hipStreamDestroy(s) == (hipError_t.hipSuccess,)
    assert not hasattr(sim.hip, row.name)


def test_a_fake_call_is_captured_replayed_and_listed(tmp_path, fake_api):
    capture(tmp_path, app)
    calls = {rec[2]: rec for rec in archive_calls(tmp_path)}
    touch, peek = calls[TOUCH.name], calls[PEEK.name]
    assert touch[3][1:3] == [6, 256] and touch[3][0] == calls["hipMalloc"][5][0]
    tag, _addr, n, blob = peek[3][0]
    assert (tag, n) == ("h", 256) and blob is not None  # the bytes the program saw

    result = replay(tmp_path, backend="sim", strict=True)
    assert result.exit_code == 0, text(result)
    stats = replay_stats(tmp_path)
    assert (stats.checks_passed, stats.checks_failed, stats.refusals) == (1, 0, [])

    result = CliRunner().invoke(cli, ["info", "--json", str(tmp_path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)["processes"][0]["calls"]
    assert listed[TOUCH.name] == 1 and listed[PEEK.name] == 1 and listed[ANSWER.name] == 1


def test_a_fake_pure_query_is_left_out_of_set_up(tmp_path, fake_api):
    capture(tmp_path, app)
    stats = replay_stats(tmp_path, calls="5:")   # records 0-4 are set-up; the query is record 0
    assert (stats.range.setup_skipped, stats.range.setup_replayed) == (1, 4)
    assert (stats.checks_passed, stats.refusals) == (1, [])


def test_replay_of_a_fake_call_is_checked_byte_for_byte(tmp_path, fake_api, monkeypatch):
    """The same archive on a sim whose fill differs: the fake copy's check fails."""
    capture(tmp_path, app)
    install_bodies(monkeypatch, sim_bodies(shift=2))
    result = replay(tmp_path, backend="sim", strict=True)
    assert result.exit_code == 1, text(result)
    stats = replay_stats(tmp_path)
    assert (stats.checks_passed, stats.checks_failed) == (0, 1)


def test_a_fake_calls_arguments_are_validated_by_their_roles(tmp_path, fake_api):
    """Its pointer is bounds-checked against the size parameter, its copy endpoint
    against the call's byte count, its handle looked up: nothing written for the row."""
    dev, s = DEVICE_BASE, 0x5010                               # the sim's first device address
    records = [["hipMalloc", [64], [dev]], ["hipStreamCreate", [], [s]],
               [TOUCH.name, [dev, 1, 128, s], []],                # past the 64-byte allocation
               [TOUCH.name, [dev, 1, 64, s + 1], []],             # an unknown stream
               [PEEK.name, [["h", 0x1000, 16, None], dev, 64], []],  # endpoint 16 bytes, sizeBytes 64
               [TOUCH.name, [dev, 1, -1, s], []]]                 # not a byte count
    w = open_process_writer(str(tmp_path), 4242, {"backend": "sim"}, manifest={"content_mode": "content"})
    for seq, (api, args, outs) in enumerate(records):
        w.append([seq, 1, api, args, 0, outs, {}])
    w.close()
    stats = replay_stats(tmp_path)
    assert [(r.api, r.category) for r in stats.refusals] == [
        (TOUCH.name, "bounds"), (TOUCH.name, "untranslated"), (PEEK.name, "bounds"), (TOUCH.name, "bad_record")]


def test_without_the_extension_the_fake_calls_are_unknown(tmp_path, monkeypatch):
    with extended(TOUCH, PEEK, ANSWER):
        install_bodies(monkeypatch, sim_bodies())
        capture(tmp_path, app)
    stats = replay_stats(tmp_path)
    assert [r.api for r in stats.refusals] == ["?", "?", "?"]
    assert {r.category for r in stats.refusals} == {"bad_record"}


# ------------------------------------------------------------------ a fake role and family
class Tag(Role):
    """A fake kind of value: an 8-bit tag, recorded as an int, refused at replay outside
    0..255, handed to the backend as it is, shown by readers as ``tag:N``."""

    name = "hrr_test_tag"
    wire = WireType(lambda v: type(v) is int, "a tag (int)")
    inline = "int({v})"

    def encoder(self, row: Api, i: int, cap: Any) -> Encoder:
        return lambda a: int(a[i])

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name

        def check(v: Any) -> int:
            if type(v) is not int or not 0 <= v < 256:
                raise bad(f"{what} is {v!r}, not an 8-bit tag")
            return v
        return check

    def show(self, view: View, p: Param, v: Any) -> Any:
        return view.plain(f"tag:{v}")


# stamp(dst, tag, sizeBytes): a synchronous fill of dst with the tag, a family of its own.
STAMP = Api("hipHrrTestStamp", "hrr_test_tags", (P("dst", "ptr", size="sizeBytes"), P("tag", Tag.name),
                                                 P("sizeBytes")), sync=True)


def stamp_family() -> Bodies:
    """The fake family's sim bodies, written as a backend's family module writes its own."""
    body = Bodies(STAMP.family)

    @body
    @irregular(raw=True)
    def hipHrrTestStamp(dst: Any, tag: int, sizeBytes: int) -> tuple:
        return sim.hip.hipMemset(dst, int(tag), sizeBytes)
    return body


@pytest.fixture
def fake_role(monkeypatch):
    register(Tag)
    try:
        with extended(STAMP):
            install_bodies(monkeypatch, stamp_family().bodies)
            yield
    finally:
        unregister(Tag)
    assert Tag.name not in PARAM_ROLES


def test_a_fake_familys_bodies_are_only_its_own_rows():
    with extended(STAMP):
        family = stamp_family()
        assert list(family.bodies) == [STAMP.name]
        with pytest.raises(ValueError, match="not a catalogue row of hrr_test_tags"):
            family(sim.hip.hipMalloc)
    with pytest.raises(ValueError, match="hipHrrTestStamp is not a catalogue row"):
        stamp_family()   # without the row: no family to hold it


def stamp_app(hip, hiprtc, be, tag=9):
    d = hip.hipMalloc(64)[1]
    assert hip.hipHrrTestStamp(d, tag, 64)[0] == 0
    out = np.zeros(64, np.uint8)
    assert hip.hipMemcpyDtoH(out, d, 64)[0] == 0
    assert (out == tag).all()
    assert hip.hipFree(d)[0] == 0


def test_a_fake_role_and_family_are_captured_replayed_and_listed(tmp_path, fake_role):
    assert isinstance(PARAM_ROLES[Tag.name], Tag)
    with pytest.raises(ValueError, match=Tag.name):
        register(Tag)
    capture(tmp_path, stamp_app)
    calls = {rec[2]: rec for rec in archive_calls(tmp_path)}
    assert calls[STAMP.name][3][1:] == [9, 64]

    stats = replay_stats(tmp_path)
    assert (stats.checks_passed, stats.checks_failed, stats.refusals) == (1, 0, [])
    result = replay(tmp_path, backend="sim", strict=True)
    assert result.exit_code == 0, text(result)

    result = CliRunner().invoke(cli, ["info", "--json", str(tmp_path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["processes"][0]["calls"][STAMP.name] == 1
    result = CliRunner().invoke(cli, ["dump", "--jsonl", str(tmp_path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert '"tag:9"' in result.stdout


def test_a_fake_role_is_compared_by_diff_as_it_renders(tmp_path, fake_role):
    """hrr diff shows the fake role's values the way the role renders them, and finds two
    captures equal or different by them."""
    roots = {name: tmp_path / name for name in ("a", "b", "c")}
    for name, root in roots.items():
        capture(root, lambda hip, hiprtc, be, tag=10 if name == "c" else 9: stamp_app(hip, hiprtc, be, tag))
    same = CliRunner().invoke(cli, ["diff", str(roots["a"]), str(roots["b"])], catch_exceptions=False)
    assert same.exit_code == 0, same.output
    other = CliRunner().invoke(cli, ["diff", str(roots["a"]), str(roots["c"])], catch_exceptions=False)
    assert other.exit_code == 1, other.output
    assert "tag:9" in other.output and "tag:10" in other.output


def test_a_fake_roles_check_refuses_a_bad_value(tmp_path, fake_role):
    dev = DEVICE_BASE
    w = open_process_writer(str(tmp_path), 4242, {"backend": "sim"}, manifest={"content_mode": "content"})
    for seq, (api, args, outs) in enumerate([["hipMalloc", [64], [dev]], [STAMP.name, [dev, 300, 64], []],
                                             [STAMP.name, [dev, "9", 64], []]]):
        w.append([seq, 1, api, args, 0, outs, {}])
    w.close()
    stats = replay_stats(tmp_path)
    assert [(r.api, r.category) for r in stats.refusals] == [(STAMP.name, "bad_record"), (STAMP.name, "bad_record")]
