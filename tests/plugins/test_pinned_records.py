"""Replay's validation of snapshot records (untrusted input): the round trip, and records
refused for bad bounds, overflow, a device allocation, an unknown allocation and short
payloads. A refused record ends the launch before anything is queued."""
from __future__ import annotations

import collections

import numpy as np
import pytest
from pinned_helpers import xxh

from hrr.errors import BlobError
from hrr.events.model import Event
from hrr.pipeline.context import EventRefused
from hrr.replay.state import ReplayAllocation, ReplayMemory
from hrr_plugins.pinned_snapshot.records import make_record, restore

CAP_BASE = 0x7F00_0000_0000
DEV_BASE = 0x10_0000_0000
SIZE = 256


class FakeCtx:
    """The part of ReplayContext that restore() uses, over replay's real ReplayMemory."""

    def __init__(self, blobs: dict[str, bytes], max_file: int = 1 << 30) -> None:
        self.memory = ReplayMemory()
        self.buf = np.zeros(SIZE, np.uint8)
        self.memory.add(ReplayAllocation(CAP_BASE, int(self.buf.ctypes.data), SIZE, "pinned", self.buf))
        self.memory.add(ReplayAllocation(DEV_BASE, 0xDEAD0000, SIZE, "device"))
        self.blobs, self.max_file = blobs, max_file
        self.counters = collections.Counter()
        self.queued = []

    def allocation(self, addr):
        return self.memory.find(addr)

    def blob_size(self, name):
        if name not in self.blobs:
            raise BlobError(f"blob {name} is missing")
        return len(self.blobs[name])

    def read_blob(self, name):
        data = self.blobs[name]
        if len(data) > self.max_file:
            raise BlobError(f"blob {name} is over max_file_bytes={self.max_file}")
        return data

    def enqueue_host_fn(self, stream, fn):
        self.queued.append(fn)
        return 0


def _blob(data: bytes, blobs: dict) -> list:
    name = xxh(data)
    blobs[name] = data
    return [name, len(data)]


def _event():
    return Event(seq=7, tid=1, api="hipModuleLaunchKernel")


def _good(blobs, base=CAP_BASE, offset=0, data=bytes(range(128)) * 2):
    return {"base": base, "offset": offset, "length": len(data),
            "chunks": [_blob(data[:200], blobs), _blob(data[200:], blobs)]}


def test_record_round_trip_restores_bytes():
    blobs: dict = {}
    data = bytes(range(256))
    ctx = FakeCtx(blobs)
    rec = make_record(5, False, [_good(blobs, data=data)])
    assert restore(ctx, _event(), None, [rec], label="t", skip_capture=False) == 1
    assert ctx.buf.tobytes() == bytes(SIZE)       # nothing written before the stream runs it
    ctx.queued[0]()
    assert ctx.buf.tobytes() == data
    assert ctx.counters["pinned_restored"] == 1 and ctx.counters["pinned_refused"] == 0


def test_during_capture_and_capturing_stream_are_skipped():
    blobs: dict = {}
    ctx = FakeCtx(blobs)
    restore(ctx, _event(), None, [make_record(5, True, [_good(blobs)])], label="t", skip_capture=False)
    restore(ctx, _event(), None, [make_record(5, False, [_good(blobs)])], label="t", skip_capture=True)
    assert ctx.queued == [] and ctx.counters["pinned_skipped_graph_capture"] == 2


def _bad_cases():
    b: dict = {}
    good = _good(b)
    small = _blob(bytes(100), b)
    short = {"base": CAP_BASE, "offset": 0, "length": 101, "chunks": [[small[0], 101]]}
    return b, {
        "length past the end": dict(good, offset=1),
        "offset past the end": dict(good, offset=SIZE + 8, length=0, chunks=[]),
        "overflow": dict(good, offset=(1 << 64) - 8),
        "negative length": dict(good, length=-1),
        "device allocation": dict(good, base=DEV_BASE),
        "unknown allocation": dict(good, base=CAP_BASE + 0x10000),
        "chunks do not add up": dict(good, length=good["length"] - 1),
        "short payload": short,
        "missing blob": dict(good, chunks=[["0" * 32, 200], good["chunks"][1]]),
        "malformed chunk": dict(good, chunks=[[1, 2]]),
        "not a dict": [1, 2, 3],
    }


@pytest.mark.parametrize("case", list(_bad_cases()[1]))
def test_bad_record_is_refused_before_anything_is_queued(case):
    blobs, cases = _bad_cases()
    ctx = FakeCtx(blobs)
    # A valid record first: the whole launch is still refused, and nothing is queued.
    recs = [make_record(5, False, [_good(blobs)]), make_record(5, False, [cases[case]])]
    with pytest.raises(EventRefused) as info:
        restore(ctx, _event(), None, recs, label="pinned snapshot", skip_capture=False)
    assert "record 1 of record 7" in info.value.reason
    assert ctx.counters["pinned_refused"] == 1
    assert ctx.queued == [] and ctx.buf.tobytes() == bytes(SIZE)


def test_bad_record_refused_even_when_skipped_for_capture():
    blobs, cases = _bad_cases()
    ctx = FakeCtx(blobs)
    with pytest.raises(EventRefused):
        restore(ctx, _event(), None, [make_record(5, True, [cases["overflow"]])], label="t",
                skip_capture=True)
    with pytest.raises(EventRefused):
        restore(ctx, _event(), None, [make_record(5, False, [cases["short payload"]])], label="t",
                skip_capture=True)
    assert ctx.counters["pinned_refused"] == 2 and ctx.counters["pinned_skipped_graph_capture"] == 0


def test_blob_over_cap_and_failed_enqueue_refuse():
    blobs: dict = {}
    ctx = FakeCtx(blobs, max_file=100)
    with pytest.raises(EventRefused):
        restore(ctx, _event(), None, [make_record(5, False, [_good(blobs)])], label="t", skip_capture=False)
    assert ctx.queued == [] and ctx.counters["pinned_refused"] == 1
    ctx = FakeCtx(blobs)
    ctx.enqueue_host_fn = lambda stream, fn: 1
    with pytest.raises(EventRefused) as info:
        restore(ctx, _event(), None, [make_record(5, False, [_good(blobs)])], label="t", skip_capture=False)
    assert info.value.category == "enqueue" and ctx.counters["pinned_restored"] == 0


def test_runs_of_changed_chunks_restore_in_place_and_count_one_allocation():
    blobs: dict = {}
    ctx = FakeCtx(blobs)
    ctx.buf[:] = 7
    runs = [{"base": CAP_BASE, "offset": 16, "length": 8, "chunks": [_blob(b"a" * 8, blobs)]},
            {"base": CAP_BASE, "offset": 200, "length": 56,
             "chunks": [_blob(b"b" * 50, blobs), _blob(b"c" * 6, blobs)]}]
    assert restore(ctx, _event(), None, [make_record(5, False, runs)], label="t", skip_capture=False) == 1
    ctx.queued[0]()
    assert ctx.buf.tobytes() == b"\x07" * 16 + b"a" * 8 + b"\x07" * 176 + b"b" * 50 + b"c" * 6
    assert ctx.counters["pinned_restored"] == 1
    restore(ctx, _event(), None, [make_record(5, True, runs)], label="t", skip_capture=False)
    assert ctx.counters["pinned_skipped_graph_capture"] == 1
