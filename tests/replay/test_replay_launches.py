"""The fast replay of launch records (hrr/replay/launches.py): a launch in capture's common
shape replays in one pass, and every record it doubts goes, untouched, to the general path,
which replays it or refuses it exactly as before."""
from __future__ import annotations

import struct

import pytest
from hostile import D2H, HostileArchive
from hrrtest import archive_calls, only, replay, text

from hrr.archive import Limits, open_archive
from hrr.backends import sim
from hrr.pipeline import hookimpl
from hrr.pipeline.manager import new_plugin_manager
from hrr.replay import launches
from hrr.replay.engine import ProcessReplayer, ReplayOptions

from hrr.events.launch import launch_list


FORMS = ["list", "map"]   # extra.launch as format 3 writes it, and as formats 1 and 2 did


def _fill(a: HostileArchive, fn: int, d: int, value: int, *, args: list | None = None, **change) -> None:
    """fill_u32(d, value, 4) on the null stream, as capture records it (``change``: the
    launch map's fields replaced), in the archive's ``launch_form``."""
    launch = {"kernel": "fill_u32", "grid": [1, 1, 1], "block": [4, 1, 1],
              "kernargs": struct.pack("<QII", d, value, 4), "ptrs": [[0, d, 0]]}
    launch.update(change)
    wire = launch_list(launch) if getattr(a, "launch_form", "map") == "list" else launch
    a.call("hipModuleLaunchKernel", args or [fn, 1, 1, 1, 4, 1, 1, 0, 0, None, None], extra={"launch": wire})


def _archive(tmp_path, launch, form: str = "map") -> HostileArchive:
    """hipInit, a device buffer, ``launch(a, fn, d)``, then a copy back checked against 7s;
    ``_fill`` writes its launches in ``form``."""
    a = HostileArchive(tmp_path / "a")
    a.launch_form = form
    a.call("hipInit", [0])
    d = a.device(16)
    fn = a.function("fill_u32")
    launch(a, fn, d)
    a.copy(["h", 0x1000, 16, a.blob(struct.pack("<4I", 7, 7, 7, 7))], ["a", d, 16, None], 16, D2H)
    return a.close()


@pytest.mark.parametrize("form", FORMS)
def test_common_launches_replay_in_one_pass(tmp_path, paths, form):
    def launch(a, fn, d):
        for value in (1, 2, 7):
            _fill(a, fn, d, value)
    result = replay(_archive(tmp_path, launch, form).root, backend="sim", strict=True)
    assert result.exit_code == 0 and only(result).checks == (1, 0, 0), text(result)
    assert paths == {"fast": 3, "general": 0}


# Records the fast runner must decline that the general path replays as recorded.
DECLINED = [
    ("plugin records", lambda a, fn, d: a.call(
        "hipModuleLaunchKernel", [fn, 1, 1, 1, 4, 1, 1, 0, 0, None, None],
        extra={"launch": {"kernel": "fill_u32", "grid": [1, 1, 1], "block": [4, 1, 1],
                          "kernargs": struct.pack("<QII", d, 7, 4), "ptrs": [[0, d, 0]]},
               "records": {"somebody_else": [1]}})),
    ("a grid argument as a float", lambda a, fn, d: _fill(a, fn, d, 7, args=[fn, 1.0, 1, 1, 4, 1, 1, 0, 0, None,
                                                                         None])),
    ("another field beside the launch", lambda a, fn, d: a.call(
        "hipModuleLaunchKernel", [fn, 1, 1, 1, 4, 1, 1, 0, 0, None, None],
        extra={"launch": {"kernel": "fill_u32", "grid": [1, 1, 1], "block": [4, 1, 1],
                          "kernargs": struct.pack("<QII", d, 7, 4), "ptrs": [[0, d, 0]]}, "n": 3})),
    ("the launch map with an error field", lambda a, fn, d: _fill(a, fn, d, 7, offsets=[0, 8, 12])),
    ("format 3's list with offsets", lambda a, fn, d: a.call(
        "hipModuleLaunchKernel", [fn, 1, 1, 1, 4, 1, 1, 0, 0, None, None],
        extra={"launch": ["fill_u32", [1, 1, 1], [4, 1, 1], struct.pack("<QII", d, 7, 4), [[0, d, 0]], [0, 8, 12]]})),
]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("label,launch", DECLINED, ids=[d[0] for d in DECLINED])
def test_a_doubted_record_goes_to_the_general_path(tmp_path, paths, label, launch, form):
    result = replay(_archive(tmp_path, launch, form).root, backend="sim", strict=False)
    assert only(result).checks == (1, 0, 0), text(result)
    assert paths == {"fast": 0, "general": 1}


# Records the general path refuses: declined by the fast runner, refused as before.
REFUSED = [
    ("an unknown function", lambda a, fn, d: _fill(a, fn + 0x1000, d, 7), "unknown function handle"),
    ("an unknown stream", lambda a, fn, d: _fill(a, fn, d, 7, args=[fn, 1, 1, 1, 4, 1, 1, 0, 0x999, None, None]),
     "unknown stream handle"),
    ("a pointer into no allocation", lambda a, fn, d: _fill(a, fn, d, 7, ptrs=[[0, d + (1 << 30), 0]]),
     "inside no allocation replay made"),
    ("a pointer word past the bytes", lambda a, fn, d: _fill(a, fn, d, 7, ptrs=[[16, d, 0]]),
     "lies outside the kernarg buffer"),
    ("a misaligned pointer word", lambda a, fn, d: _fill(a, fn, d, 7, ptrs=[[4, d, 0]]),
     "lies outside the kernarg buffer"),
    # (the map form's refusal, the list form's: it names the item)
    ("a bool in the grid", lambda a, fn, d: _fill(a, fn, d, 7, grid=[True, 1, 1]),
     ("extra.launch must be a map", "extra.launch[1] (grid) must be a list of 3 ints")),
    ("kernargs as a string", lambda a, fn, d: _fill(a, fn, d, 7, kernargs="x" * 16),
     ("extra.launch must be a map", "extra.launch[3] (kernargs) must be bytes")),
    ("more words than the bytes hold", lambda a, fn, d: _fill(a, fn, d, 7, ptrs=[[0, d, 0]] * 3),
     ("extra.launch must be a map", "extra.launch[4] (ptrs) has 3 words, more than kernargs' 2")),
    ("a pointer word of two ints", lambda a, fn, d: _fill(a, fn, d, 7, ptrs=[[0, d]]),
     ("extra.launch must be a map", "extra.launch[4] (ptrs) must be a list of [offset, base, delta] int triples")),
    ("a kernel name of bytes", lambda a, fn, d: _fill(a, fn, d, 7, kernel=b"fill_u32"),
     ("extra.launch must be a map", "extra.launch[0] (kernel) must be a string")),
    ("an argument where none belongs", lambda a, fn, d: _fill(a, fn, d, 7, args=[fn, 1, 1, 1, 4, 1, 1, 0, 0, 5,
                                                                          None]),
     "kernelParams"),
]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("label,launch,expected", REFUSED, ids=[r[0] for r in REFUSED])
def test_a_bad_launch_is_refused_by_the_general_path(tmp_path, paths, label, launch, expected, form):
    if isinstance(expected, tuple):
        expected = expected[0 if form == "map" else 1]
    result = replay(_archive(tmp_path, launch, form).root, backend="sim", strict=True)
    refusals = [f"{r.api} [{r.category}]: {r.reason}" for r in only(result).refusals]
    assert len(refusals) == 1 and expected in refusals[0], (refusals, text(result))
    assert paths["fast"] == 0 and result.exit_code == 1


def test_a_failed_launch_is_compared_with_the_recorded_error(tmp_path, paths):
    """A launch recorded as failed with an invalid shape fails again: reproduced, not diverged."""
    def launch(a, fn, d):
        a.call("hipModuleLaunchKernel", [fn, 1, 1, 1, 2048, 1, 1, 0, 0, None, None], err=9,
               extra={"launch": {"kernel": "fill_u32", "grid": [1, 1, 1], "block": [2048, 1, 1],
                                 "kernargs": struct.pack("<QII", d, 7, 4), "ptrs": [[0, d, 0]]}})
        _fill(a, fn, d, 7)
    result = replay(_archive(tmp_path, launch).root, backend="sim", strict=True)
    process = only(result)
    assert process.reproduced_errors == 1 and not process.divergence_count, text(result)
    assert paths == {"fast": 2, "general": 0}


def test_a_backend_may_take_the_packed_bytes_directly(tmp_path, paths, monkeypatch):
    """A backend's ``launch_kernargs`` gets the launch while it stands for the hip function
    replay would call; once that function is another (a test's, a plugin's), it does not."""
    from hrr.backends import sim
    from hrr.hiptypes.kernargs import packed_extra
    taken = []

    def launch_kernargs(function, grid, block, shared, stream, kernargs):
        taken.append((grid, block, shared, len(kernargs)))
        return sim.hip.hipModuleLaunchKernel(function, *grid, *block, shared, stream, None, packed_extra(kernargs))
    launch_kernargs.stands_for = sim.hip.hipModuleLaunchKernel
    monkeypatch.setattr(sim, "launch_kernargs", launch_kernargs, raising=False)

    def launch(a, fn, d):
        _fill(a, fn, d, 7)
    root = _archive(tmp_path, launch).root
    result = replay(root, backend="sim", strict=True)
    assert result.exit_code == 0 and only(result).checks == (1, 0, 0), text(result)
    assert taken == [((1, 1, 1), (4, 1, 1), 0, 16)]
    real = sim.hip.hipModuleLaunchKernel
    monkeypatch.setattr(sim.hip, "hipModuleLaunchKernel", lambda *a: real(*a))
    result = replay(root, backend="sim", strict=True)
    assert result.exit_code == 0 and len(taken) == 1, text(result)


def test_a_capture_address_reused_after_a_free_points_at_the_new_allocation(tmp_path, paths):
    """The runner keeps the translations it made while replay's allocations stay as they
    are: a free and a new allocation at the same capture address take the new one."""
    a = HostileArchive(tmp_path / "a")
    a.call("hipInit", [0])
    fn = a.function("fill_u32")
    d = a.device(16)
    _fill(a, fn, d, 3)
    a.call("hipFree", [d])
    other = a.device(16)         # replay may give it the freed block: d's next one lies elsewhere
    a.call("hipMalloc", [16], outs=[d])
    _fill(a, fn, d, 7)
    a.copy(["h", 0x1000, 16, a.blob(struct.pack("<4I", 7, 7, 7, 7))], ["a", d, 16, None], 16, D2H)
    a.copy(["h", 0x1000, 16, a.blob(bytes(16))], ["a", other, 16, None], 16, D2H)
    result = replay(a.close().root, backend="sim", strict=True)
    assert result.exit_code == 0 and only(result).checks == (2, 0, 0), text(result)
    assert paths == {"fast": 2, "general": 0}


def test_equal_launch_records_make_the_checked_launch_again(tmp_path, paths):
    """Records equal to the launch before them (nothing else replayed between) make that
    launch again unchecked; the first of each run is checked."""
    def launch(a, fn, d):
        for _ in range(5):
            _fill(a, fn, d, 7)
    result = replay(_archive(tmp_path, launch).root, backend="sim", strict=True)
    assert result.exit_code == 0 and only(result).checks == (1, 0, 0), text(result)
    assert paths == {"fast": 5, "general": 0} and only(result).repeated_launches == 4
    assert paths.runs == 4   # taken as one run after the first, in one step


def test_a_run_stops_at_the_record_after_it_which_is_replayed_next(tmp_path, paths):
    """Equal launches, a different one, equal launches again, then the copy check: each run
    is taken after its first, and the record that ended a run is replayed in its place."""
    def launch(a, fn, d):
        for _ in range(6):
            _fill(a, fn, d, 3)
        _fill(a, fn, d, 5)
        for _ in range(4):
            _fill(a, fn, d, 7)
    result = replay(_archive(tmp_path, launch).root, backend="sim", strict=True)
    assert result.exit_code == 0 and only(result).checks == (1, 0, 0), text(result)
    assert paths == {"fast": 11, "general": 0} and paths.runs == 8 and only(result).repeated_launches == 8
    assert only(result).calls_replayed == only(result).records


def test_max_events_stops_inside_a_run_where_it_would_between_records(tmp_path, paths):
    def launch(a, fn, d):
        for _ in range(10):
            _fill(a, fn, d, 7)
    # hipInit, the allocation, the module, the function, then the launches: 10 events are 4 + 6
    stats = _replayer(_archive(tmp_path, launch).root, Limits(max_events=10))
    assert stats.failures == ["stopped after 10 events (--max-events)"] and stats.events == 10, stats.failures
    assert stats.repeated_launches == 5 and paths.runs == 5


def _replayer(root, limits=None, plugins=()):
    """The archive's one process replayed on the sim by a ProcessReplayer (``limits`` for the
    replay, not the reader) with ``plugins`` registered."""
    sim.reset_device()
    pm = new_plugin_manager()
    for name, plugin in plugins:
        pm.register(plugin, name=name)
    return ProcessReplayer(open_archive(str(root), Limits()).processes[0], sim, pm, limits or Limits(),
                           ReplayOptions(strict=True)).run()


def test_a_launch_of_a_run_that_fails_is_a_divergence_at_its_record(tmp_path, paths, monkeypatch):
    """The launch made again failing inside a run: the divergence names that record; with
    --keep-going the run's later records are still made, each compared."""
    calls = []

    def flaky_repeat(again, n):
        calls.append(n)
        if len(calls) == 1:
            return 2, (98,)   # the third of the run failed (hipErrorInvalidDeviceFunction)
        return n, (0,)
    monkeypatch.setattr(launches, "repeat_launch", flaky_repeat)

    def launch(a, fn, d):
        for _ in range(6):
            _fill(a, fn, d, 7)
    arch = _archive(tmp_path, launch)
    seqs = [v[0] for v in archive_calls(arch.root) if v[2] == "hipModuleLaunchKernel"]
    result = replay(arch.root, backend="sim", strict=False, keep_going=True)
    proc = only(result)
    assert [d.seq for d in proc.divergences] == [seqs[1 + 2]], text(result)
    assert calls == [5, 2] and proc.repeated_launches == 5
    calls.clear()
    stopped = replay(arch.root, backend="sim", strict=False)
    assert stopped.exit_code == 2 and f"record {seqs[3]} (hipModuleLaunchKernel)" in text(stopped)


def test_a_plugin_watching_launches_sees_every_record_one_by_one(tmp_path, paths):
    """With a per-event hook on the launch, no run is taken in one step: the hook is called
    for each record."""
    seen = []

    class Watcher:
        @hookimpl
        def hrr_replay_before_event(self, ctx, event, stream):
            if event.api == "hipModuleLaunchKernel":
                seen.append(event.seq)

    def launch(a, fn, d):
        for _ in range(5):
            _fill(a, fn, d, 7)
    stats = _replayer(_archive(tmp_path, launch).root, plugins=[("watcher", Watcher())])
    assert not stats.failures and not stats.refusals, stats.failures
    assert len(seen) == 5 and paths.runs == 0 and stats.repeated_launches == 4
