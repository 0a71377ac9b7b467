"""Capture's scan of a launch's pointer words keeps its last answer per layout: it must give
what a fresh scan gives, and never an answer from before the allocation table changed."""
from __future__ import annotations

import struct

import attrs
from hrrtest import fresh_backend

from hrr.hiptypes.kernargs import KernelLayout, ParamSpec, WordOffsets, _words_reader, pointer_word_offsets
from hrr.allocations import DEVICE, PINNED
from hrr.capture.session import CaptureSession
from hrr.config import config

LAYOUT = KernelLayout((ParamSpec(0, 8, "pointer"), ParamSpec(8, 4, "value"), ParamSpec(16, 24, "struct"),
                       ParamSpec(40, 8, "pointer")))


def _session(root):
    cfg = attrs.evolve(config(), backend="sim", content_mode="content")
    return CaptureSession(fresh_backend("sim"), cfg, str(root), plugins=[])


def _kernargs(*words: int) -> bytes:
    """LAYOUT's bytes with its five pointer-word candidates (0, 16, 24, 32, 40) set."""
    a, b, c, d, e = words
    return struct.pack("<QIIQQQQ", a, 7, 0, b, c, d, e)


def test_a_kept_answer_is_what_a_fresh_scan_gives(tmp_path):
    s = _session(tmp_path / "a")
    try:
        offsets = pointer_word_offsets(LAYOUT)
        assert type(offsets) is WordOffsets and offsets == (0, 16, 24, 32, 40)
        s.track_allocation(0x10000, 0x1000, DEVICE)
        s.track_allocation(0x40000, 0x100, PINNED)

        def both(kernargs):
            kept = s.scan_pointers(offsets, kernargs)
            again = s.scan_pointers(offsets, kernargs)         # the kept answer
            fresh = s.scan_pointers(tuple(offsets), kernargs)  # a plain tuple: no keeping
            assert kept == again == fresh
            return fresh[1]
        assert both(_kernargs(0x10010, 0, 0x40000, 5, 0x10fff)) == [[0, 0x10000, 0x10], [24, 0x40000, 0],
                                                                     [40, 0x10000, 0xfff]]
        assert both(_kernargs(0x10010, 0, 0x40000, 5, 0x11000)) == [[0, 0x10000, 0x10], [24, 0x40000, 0]]
        # the same words, the table changed: a free and a new allocation are seen at once
        assert s.allocations.remove(0x40000) is not None
        assert both(_kernargs(0x10010, 0, 0x40000, 5, 0x11000)) == [[0, 0x10000, 0x10]]
        s.track_allocation(0x11000, 8, PINNED)
        assert both(_kernargs(0x10010, 0, 0x40000, 5, 0x11000)) == [[0, 0x10000, 0x10], [40, 0x11000, 0]]
        s.allocations.clear()
        assert both(_kernargs(0x10010, 0, 0x40000, 5, 0x11000)) == []
    finally:
        s.close()


def test_another_session_does_not_get_this_ones_answer(tmp_path):
    s, t = _session(tmp_path / "a"), _session(tmp_path / "b")
    try:
        s.track_allocation(0x10000, 0x1000, DEVICE)
        t.track_allocation(0x20000, 0x1000, DEVICE)
        assert s.allocations.version == t.allocations.version
        offsets, kernargs = pointer_word_offsets(LAYOUT), _kernargs(0x10010, 0, 0, 0, 0x20000)
        assert s.scan_pointers(offsets, kernargs)[1] == [[0, 0x10000, 0x10]]
        assert t.scan_pointers(offsets, kernargs)[1] == [[40, 0x20000, 0]]
    finally:
        s.close()
        t.close()


def test_the_words_reader_reads_every_offset():
    data = bytes(range(64))
    for offsets in ((0, 8, 16), (8, 40), (0, 4), (16, 0), ()):   # spaced, gapped, overlapping, unordered
        want = tuple(struct.unpack_from("<Q", data, o)[0] for o in offsets)
        assert _words_reader(offsets)(data) == want
