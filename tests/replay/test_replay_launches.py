"""The fast replay of launch records (hrr/replay/launches.py): a launch in capture's common
shape replays in one pass, and every record it doubts goes, untouched, to the general path,
which replays it or refuses it exactly as before."""
from __future__ import annotations

import struct

import pytest
from hostile import D2H, HostileArchive
from hrrtest import only, replay, text

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


def test_any_record_replayed_between_equal_launches_checks_the_next_again(tmp_path, paths):
    def launch(a, fn, d):
        _fill(a, fn, d, 7)
        _fill(a, fn, d, 7)
        a.call("hipDeviceSynchronize", [])
        _fill(a, fn, d, 7)
        _fill(a, fn, d, 7)
    result = replay(_archive(tmp_path, launch).root, backend="sim", strict=True)
    assert result.exit_code == 0 and only(result).checks == (1, 0, 0), text(result)
    assert only(result).repeated_launches == 2


def test_an_equal_launch_after_a_free_is_checked_and_refused(tmp_path, paths):
    """A launch equal to the one before a hipFree of its buffer is not made again: checked,
    its pointer lies in no allocation, refused."""
    a = HostileArchive(tmp_path / "a")
    a.call("hipInit", [0])
    fn = a.function("fill_u32")
    d = a.device(16)
    _fill(a, fn, d, 3)
    a.call("hipFree", [d])
    _fill(a, fn, d, 3)
    result = replay(a.close().root, backend="sim", strict=False)
    refusals = [f"{r.api} [{r.category}]: {r.reason}" for r in only(result).refusals]
    assert len(refusals) == 1 and "inside no allocation replay made" in refusals[0], (refusals, text(result))
    assert only(result).repeated_launches == 0


def test_a_record_unlike_the_last_launch_is_checked(tmp_path, paths):
    """Equal launches, then one whose pointer word lies outside every allocation: refused,
    not made as the launch before it."""
    def launch(a, fn, d):
        _fill(a, fn, d, 7)
        _fill(a, fn, d, 7)
        _fill(a, fn, d, 7, ptrs=[[0, d + (1 << 30), 0]])
    result = replay(_archive(tmp_path, launch).root, backend="sim", strict=False)
    refusals = [r.reason for r in only(result).refusals]
    assert len(refusals) == 1 and "inside no allocation replay made" in refusals[0], text(result)
    assert only(result).repeated_launches == 1 and paths["fast"] == 2
