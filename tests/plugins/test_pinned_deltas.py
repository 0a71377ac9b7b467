"""Chunk deltas: a launch records only the chunks of a pinned allocation that changed since
its last record (hashed in place, only changed chunks copied); the whole allocation when
it has no last record on the launch stream, or when another thread's record of it is in
flight. Replay applies the runs in order and matches byte for byte."""
from __future__ import annotations

import ctypes
import threading

import msgpack
import numpy as np
from pinned_helpers import Kernels, d2h, pinned, records, text, whole_chunks, xxh

from hrr_plugins.pinned_snapshot import Tracker
from hrr_plugins.pinned_snapshot.records import CHUNK_BYTES

SIZE = 4 * CHUNK_BYTES - 100     # the last chunk is short


def _spans(rec: dict) -> list[tuple[int, int]]:
    return [(s["offset"], s["length"]) for s in rec["snaps"]]


def delta_app(hip, be, session):
    k = Kernels(hip, be)
    _err, p = hip.hipHostMalloc(SIZE, 0)
    buf = np.ctypeslib.as_array((ctypes.c_uint8 * SIZE).from_address(int(p)))
    buf[:] = np.random.default_rng(5).integers(0, 255, SIZE, dtype=np.uint8)
    _err, d = hip.hipMalloc(SIZE)
    _err, other = hip.hipStreamCreate()
    n = ctypes.c_uint64(SIZE)

    def launch(stream=None):
        k.launch(k.copy_u8, (d, p, n), stream)
        assert hip.hipDeviceSynchronize()[0] == 0
        assert d2h(hip, d, SIZE).tobytes() == buf.tobytes()

    launch()                                   # the whole allocation
    launch()                                   # unchanged: no record
    buf[2 * CHUNK_BYTES + 5] ^= 0xFF
    launch()                                   # chunk 2
    buf[7] ^= 0xFF
    buf[SIZE - 1] ^= 0xFF
    launch()                                   # chunks 0 and 3: two runs
    buf[9] ^= 0xFF
    buf[2 * CHUNK_BYTES] ^= 0xFF
    launch()                                   # chunks 0 and 2, one apart: one run of three
    launch(other)                              # unchanged, another stream: the whole allocation
    launch(other)                              # unchanged: no record


def test_deltas_list_changed_chunks_and_replay_matches(cap, rep, backend_name):
    root = cap(delta_app)
    recs = [r for _api, rs in records(root) for r in rs]
    c = CHUNK_BYTES
    assert [_spans(r) for r in recs] == [
        [(0, SIZE)], [(2 * c, c)], [(0, c), (3 * c, c - 100)], [(0, 3 * c)], [(0, SIZE)]]
    assert all(s["base"] == recs[0]["snaps"][0]["base"] for r in recs for s in r["snaps"])
    assert len(msgpack.packb(recs[1])) < 200   # one changed chunk: a small record
    full = whole_chunks(recs, c)
    assert full[-1] == recs[-1]["snaps"][0]["chunks"] and full[-2] == full[-1]
    result = rep(root)
    assert result.exit_code == 0, text(result)
    assert result.processes[0].checks_failed == 0 and result.processes[0].checks_passed >= 7
    assert pinned(result).restored == len(recs) and pinned(result).refused == 0


class _Ctx:
    """The part of CaptureContext a Tracker uses; counts the blobs written."""

    def __init__(self) -> None:
        self.puts = 0

    def content_allowed(self, kind):
        return True

    def put_blob(self, kind, data):
        self.puts += 1
        return xxh(bytes(data))

    def add_unreplayable(self, api, reason, **detail):
        raise AssertionError(reason)


CHUNK = 64


def _tracker(nchunks: int = 4):
    buf = ctypes.create_string_buffer(bytes(i % 251 for i in range(nchunks * CHUNK)), nchunks * CHUNK)
    t = Tracker(1 << 20, chunk_bytes=CHUNK)
    t.add(ctypes.addressof(buf), nchunks * CHUNK, "pinned")
    return t, ctypes.addressof(buf), buf


def _launch(t, ctx, addr, stream=0, ok=True):
    t.begin_call()
    rec = t.snapshot(ctx, [addr], stream, False)
    t.end_call(ok)
    return rec


def test_unchanged_bytes_are_hashed_in_place_not_copied():
    ctx = _Ctx()
    t, addr, buf = _tracker()
    copies = []
    t.after_copy = lambda base, size: copies.append(base)
    assert _spans(_launch(t, ctx, addr)) == [(0, 4 * CHUNK)]
    assert copies == [addr] and ctx.puts == 4
    assert _launch(t, ctx, addr) is None
    assert copies == [addr] and ctx.puts == 4        # nothing copied, nothing written
    buf[CHUNK + 1] = b"!"
    assert _spans(_launch(t, ctx, addr)) == [(CHUNK, CHUNK)]
    assert copies == [addr, addr] and ctx.puts == 5  # the changed chunk alone


def test_stream_change_and_failed_launch_list_against_the_last_record():
    ctx = _Ctx()
    t, addr, buf = _tracker()
    _launch(t, ctx, addr)
    assert _spans(_launch(t, ctx, addr, stream=7)) == [(0, 4 * CHUNK)]   # another stream: whole
    buf[1] = b"!"
    assert _spans(_launch(t, ctx, addr, stream=7, ok=False)) == [(0, CHUNK)]
    buf[3 * CHUNK] = b"!"
    # The failed launch's record never became the last: chunk 0 is listed again.
    assert _spans(_launch(t, ctx, addr, stream=7)) == [(0, CHUNK), (3 * CHUNK, CHUNK)]


def test_a_record_made_while_another_is_in_flight_lists_everything():
    """Thread A's delta is in flight when thread B snapshots the same allocation: the two
    events may reach the archive in either order, so B lists every chunk, and the launch
    after both lists every chunk again."""
    ctx = _Ctx()
    t, addr, buf = _tracker()
    _launch(t, ctx, addr)
    buf[CHUNK] = b"!"
    t.begin_call()
    assert _spans(t.snapshot(ctx, [addr], 0, False)) == [(CHUNK, CHUNK)]   # A, in flight
    got = []
    th = threading.Thread(target=lambda: got.append(_launch(t, ctx, addr)))
    th.start()
    th.join()
    assert _spans(got[0]) == [(0, 4 * CHUNK)]
    t.end_call(True)
    assert _spans(_launch(t, ctx, addr)) == [(0, 4 * CHUNK)]
    assert _launch(t, ctx, addr) is None


def test_many_scattered_changes_become_one_span():
    ctx = _Ctx()
    t, addr, buf = _tracker(nchunks=300)
    _launch(t, ctx, addr)
    for i in range(0, 300, 3):
        buf[i * CHUNK] = b"!"
    assert _spans(_launch(t, ctx, addr)) == [(0, 298 * CHUNK)]   # 100 runs: one span


def test_a_record_stays_within_replays_snapshot_limit(monkeypatch):
    """Runs of several allocations in one launch: past the number of snaps replay accepts
    in a record, each allocation's runs become one span."""
    import hrr_plugins.pinned_snapshot as plugin

    monkeypatch.setattr(plugin, "MAX_SNAPS_PER_RECORD", 4)
    ctx = _Ctx()
    made = [_tracker() for _ in range(3)]
    t = made[0][0]
    for _t, addr, _buf in made[1:]:
        t.add(addr, 4 * CHUNK, "pinned")
    addrs = [addr for _t, addr, _buf in made]
    t.begin_call()
    t.snapshot(ctx, addrs, 0, False)
    t.end_call(True)
    for _t, _addr, buf in made:
        buf[0] = b"!"
        buf[3 * CHUNK] = b"!"
    t.begin_call()
    rec = t.snapshot(ctx, addrs, 0, False)
    t.end_call(True)
    assert [(s["base"], s["offset"], s["length"]) for s in rec["snaps"]] == [(a, 0, 4 * CHUNK) for a in addrs]
