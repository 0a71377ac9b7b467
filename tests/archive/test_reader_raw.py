"""``raw_events()``, replay's read path (one list per batch frame, API numbers and thread
indices resolved inline), yields exactly what ``events()`` yields, record for record, on
sound and damaged archives of both format versions."""
from __future__ import annotations

import os

import msgpack
import pytest

from archive_helpers import pid_dir, write_archive
from hrr.archive import BadRecord, Record, open_archive
from hrr.archive.format import FRAME_EVENT, encode_frame, escape_record

TID = 140000000000001
EVENTS = [[i, TID + i % 3, api, [0] if api == "hipInit" else [], 0, [], {}]
          for i, api in enumerate(["hipInit", "hipDeviceSynchronize", "hipGetLastError"] * 200)]


def _same(proc) -> list:
    """Both reads of ``proc``, as comparable rows; asserts they agree."""
    slow = [(r.index, r.offset, r.value) if isinstance(r, Record) else r for r in proc.events()]
    fast = list(proc.raw_events())
    assert fast == slow
    return fast


def _path(root: str) -> str:
    return os.path.join(pid_dir(root, 4242), "events.bin")


@pytest.mark.parametrize("version", [1, 2])
def test_sound_archive(tmp_path, version):
    root = str(tmp_path / "a")
    write_archive(root, records=EVENTS, version=version)
    got = _same(open_archive(root).processes[0])
    assert [v for _, _, v in got] == EVENTS


def test_damaged_batch_and_unresolvable_numbers(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root, records=EVENTS)
    with open_archive(root) as a:
        proc = a.processes[0]
        first = next(iter(proc.events()))
        trailer_at = proc.scan().trailer_offset
    data = bytearray(open(_path(root), "rb").read()[:trailer_at])
    data[first.offset + 3] ^= 0x40                          # the first batch's checksum fails
    payload = b"".join(msgpack.packb(v) for v in (
        [0, [TID], 0, [0], 0, [], {}], [1, 0, 0, [0], 0, [], {}],     # declared, then indexed
        [2, 7, 0, [0], 0, [], {}], [3, 0, 100000, [0], 0, [], {}],    # undeclared thread, unknown API
        [4, -1, 0, [0], 0, [], {}], escape_record(["after"])))
    open(_path(root), "wb").write(bytes(data) + encode_frame(FRAME_EVENT, payload, 6))
    got = _same(open_archive(root).processes[0])
    bad = [r for r in got if isinstance(r, BadRecord)]
    assert len(bad) == 256 + 3 and got[-1][2] == ["after"]
    assert got[-6][2] == [0, TID, "hipInit", [0], 0, [], {}] and got[-5][2][1] == TID


def test_open_batch_of_a_killed_writer(tmp_path):
    root = str(tmp_path / "a")
    w = write_archive(root, records=EVENTS[:300], close=False)
    for e in EVENTS[300:310]:
        w.append(e)
    got = _same(open_archive(root).processes[0])
    assert [v for _, _, v in got] == EVENTS[:310]
