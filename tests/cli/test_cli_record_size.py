"""The default record size cap bounds what decoding one record can cost: the worst record
shape (a list of empty maps) is measured per payload byte, as bench/record_decode.py does,
and the cap times that cost stays under 1 GiB. The writer's cap is the reader's default,
and `hrr replay --max-record-bytes` sets it."""
from __future__ import annotations

import importlib.util
import os

from cli_helpers import app, capture, describe, hrr

from hrr.archive import Limits
from hrr.archive import writer as writer_mod

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GiB = 1 << 30


def _bench():
    spec = importlib.util.spec_from_file_location("hrr_record_decode",
                                                  os.path.join(REPO, "bench", "record_decode.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_default_bounds_one_records_decode_memory():
    bench = _bench()
    worst = max(bench.cost(bench.payload(item, 1 << 20)) for item in bench.SHAPES.values())
    assert worst > 30   # the measurement sees the containers (about 74 bytes per byte on CPython 3.11)
    assert worst * Limits().max_record_bytes < GiB, (worst, Limits().max_record_bytes)
    assert writer_mod.MAX_RECORD_BYTES == Limits().max_record_bytes


def test_replay_takes_max_record_bytes(tmp_path):
    root = tmp_path / "a.hrr"
    capture(root, *app("fork_bad_free.py", 0))
    hrr("replay", "--strict", "--max-record-bytes", 1 << 20, root, check=0)
    proc = hrr("replay", "--strict", "--max-record-bytes", 4, root)
    assert proc.returncode == 1 and "is over max_record_bytes" in proc.stdout, describe(proc)
