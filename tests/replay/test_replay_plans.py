"""Per-API replay plans. Per-event replay hooks by subscription: a plugin that names its
calls with ``ctx.watch`` sees only those calls' events; one that does not sees every event;
a call no plugin wants makes no pluggy call at all. pluggy's semantics (wrappers) hold for
the subset. Every path a plan takes (bare call, hooked call, general) still compares the
backend's error with the recording."""
from __future__ import annotations

import pytest

from hrr.archive import Limits, open_archive, open_process_writer
from hrr.backends import sim
from hrr.pipeline import hookimpl
from hrr.pipeline.manager import new_plugin_manager
from hrr.replay.engine import ProcessReplayer, ReplayOptions

RECORDS = [("hipGetDevice", [], [0]), ("hipDeviceSynchronize", [], []), ("hipGetDevice", [], [0]),
           ("hipGetLastError", [], [])]


class Watcher:
    """Wants hipGetDevice only."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    @hookimpl
    def hrr_replay_start(self, ctx):
        ctx.watch("watcher", ["hipGetDevice"])

    @hookimpl
    def hrr_replay_before_event(self, ctx, event, stream):
        self.seen.append(("before", event.api))

    @hookimpl
    def hrr_replay_after_event(self, ctx, event, result):
        self.seen.append(("after", event.api))


class Everything:
    """Watches nothing: a wrapper around every event's before-hook."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl(wrapper=True)
    def hrr_replay_before_event(self, ctx, event, stream):
        self.seen.append(event.api)
        return (yield)


def _replay(root, *plugins, records=None, err=0) -> tuple[object, list[str]]:
    w = open_process_writer(str(root), 4242, {"backend": "sim"}, manifest={"content_mode": "content"})
    for seq, (api, args, outs) in enumerate(records or RECORDS):
        w.append([seq, 1, api, args, err, outs, {}])
    w.close()
    sim.reset_device()
    proc = open_archive(str(root), Limits()).processes[0]
    pm = new_plugin_manager()
    for name, obj in plugins:
        pm.register(obj, name=name)
    calls: list[str] = []
    pm.add_hookcall_monitoring(lambda name, impls, kwargs: calls.append(name), lambda *a: None)
    stats = ProcessReplayer(proc, sim, pm, Limits(), ReplayOptions(strict=True, keep_going=True)).run()
    return stats, [c for c in calls if c.endswith("_event")]


def test_a_watching_plugin_sees_only_its_calls_and_nothing_else_goes_through_pluggy(tmp_path):
    watcher = Watcher()
    stats, hook_calls = _replay(tmp_path, ("watcher", watcher))
    assert stats.replayed == 4 and not stats.refusals
    assert watcher.seen == [("before", "hipGetDevice"), ("after", "hipGetDevice")] * 2
    # Two watched events, one before- and one after-hook call each: the other calls made none.
    assert hook_calls == ["hrr_replay_before_event", "hrr_replay_after_event"] * 2


def test_a_plugin_that_watches_nothing_still_sees_every_event_and_wraps_the_subset(tmp_path):
    watcher, everything = Watcher(), Everything()
    stats, hook_calls = _replay(tmp_path, ("watcher", watcher), ("everything", everything))
    assert stats.replayed == 4 and not stats.refusals
    assert everything.seen == [api for api, _, _ in RECORDS]
    assert watcher.seen == [("before", "hipGetDevice"), ("after", "hipGetDevice")] * 2
    assert hook_calls.count("hrr_replay_before_event") == 4
    assert hook_calls.count("hrr_replay_after_event") == 2


def test_a_watch_naming_another_plugin_filters_nothing(tmp_path):
    """A plugin is filtered by the name it is registered under: a watch under a name no
    implementation carries leaves every hook seeing every event."""
    watcher = Watcher()
    stats, _ = _replay(tmp_path, ("registered-otherwise", watcher))
    assert [api for when, api in watcher.seen if when == "before"] == [api for api, _, _ in RECORDS]


HIP_ERROR_NO_DEVICE = 100


def test_every_plan_path_compares_the_error_with_the_recording(tmp_path):
    """Each record claims hipErrorNoDevice; the sim returns hipSuccess: one divergence per
    record, whether the call runs bare (argument-less, unhooked), hooked or with arguments."""
    records = [("hipGetDevice", [], [0]), ("hipGetDevice", [], [0]), ("hipSetDevice", [0], [])]
    bare, _ = _replay(tmp_path / "bare", records=records, err=HIP_ERROR_NO_DEVICE)
    hooked, _ = _replay(tmp_path / "hooked", ("watcher", Watcher()), records=records, err=HIP_ERROR_NO_DEVICE)
    for stats in (bare, hooked):
        assert stats.replayed == 3 and stats.divergences == 3
        assert [(d.seq, d.api, d.recorded, d.replayed) for d in stats.diverged] == [
            (0, "hipGetDevice", 100, 0), (1, "hipGetDevice", 100, 0), (2, "hipSetDevice", 100, 0)]


class Picky:
    """Wants hipGetDevice's events carrying its records, and hipSetDevice's failures."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []

    @hookimpl
    def hrr_replay_start(self, ctx):
        ctx.watch("picky", ["hipGetDevice"], only="records")
        ctx.watch("picky", ["hipSetDevice"], only="failed")

    @hookimpl
    def hrr_replay_before_event(self, ctx, event, stream):
        self.seen.append(("before", event.seq))

    @hookimpl
    def hrr_replay_after_event(self, ctx, event, result):
        self.seen.append(("after", event.seq))


def test_a_plugin_can_watch_only_its_records_or_only_failures(tmp_path):
    w = open_process_writer(str(tmp_path), 4242, {"backend": "sim"}, manifest={"content_mode": "content"})
    for seq, (api, args, outs, extra) in enumerate([
            ("hipGetDevice", [], [0], {}),
            ("hipGetDevice", [], [0], {"records": {"picky": [1]}}),
            ("hipGetDevice", [], [0], {"records": {"somebody": [1]}}),
            ("hipSetDevice", [0], [], {}),
            ("hipSetDevice", [99], [], {})]):
        w.append([seq, 1, api, args, 101 if args == [99] else 0, outs, extra])
    w.close()
    sim.reset_device()
    proc = open_archive(str(tmp_path), Limits()).processes[0]
    pm = new_plugin_manager()
    picky = Picky()
    pm.register(picky, name="picky")
    stats = ProcessReplayer(proc, sim, pm, Limits(), ReplayOptions(strict=True)).run()
    assert stats.replayed == 5 and not stats.refusals and not stats.divergences
    assert picky.seen == [("before", 1), ("after", 1), ("after", 4)]


def test_watch_names_an_unknown_mode(tmp_path):
    from hrr.pipeline.replay import ReplayContext
    ctx = ReplayContext.__new__(ReplayContext)
    ctx.watched = {}
    with pytest.raises(ValueError, match="one of all, records, failed"):
        ctx.watch("p", ["hipGetDevice"], only="sometimes")
