"""The benchmark's code path runs (tiny sizes) and writes every issue-11 key as a number.
No time is asserted: figures come from `bash scripts/bench.sh`, never from tests."""
from __future__ import annotations

import importlib.util
import json
import math
import os
import tempfile

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _bench():
    spec = importlib.util.spec_from_file_location("hrr_bench", os.path.join(REPO, "bench", "bench.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tiny_run_writes_every_cpu_key_as_a_number(tmp_path, monkeypatch):
    scratch = tmp_path / "tmp"   # the bench's temp folders (archives, compile caches) go with tmp_path
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    bench = _bench()
    out = tmp_path / "results.json"
    lines: list[str] = []
    bench.run(["--tiny", "--out", str(out)], say=lines.append)
    data = json.loads(out.read_text())
    from hrr.backends.sim.native import toolchain
    native = bench.NATIVE_KEYS if toolchain.find_toolchain() is not None else ()
    for key in (*bench.CPU_KEYS, *native, "replay_launch_us"):
        assert type(data[key]) is float and math.isfinite(data[key]), key
    assert not set(bench.GPU_KEYS) & set(data)           # GPU ratios only with --backend cuda
    assert not [k for k in data if k.endswith("_format1")]   # hrr writes one format: nothing else is timed
    assert data["archive_bytes_per_event"] > 0 and data["snapshot_changed_bytes"] > 0
    assert data["meta"]["mode"] == "tiny" and data["meta"]["nproc"] >= 1
    if native:   # N of native_ns_per_thread_wN: the CPUs this process may use
        from hrr.backends.sim.native import pool
        assert data["meta"]["native_workers_n"] == pool.available_cpus()
    assert lines[-1] == f"wrote {out}"


def test_only_native_measures_the_native_keys_alone(tmp_path, monkeypatch):
    from hrr.backends.sim.native import toolchain
    if toolchain.find_toolchain() is None:
        pytest.skip("no C++ compiler for the sim")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    bench = _bench()
    out = tmp_path / "results.json"
    bench.run(["--tiny", "--only", "native", "--out", str(out)], say=lambda line: None)
    data = json.loads(out.read_text())
    assert set(data) == {*bench.NATIVE_KEYS, "meta"}
    assert data["native_ns_per_thread_w2"] > 0 and "--only native" in data["meta"]["command"]


def test_quick_and_full_modes_measure_the_issue_sizes():
    bench = _bench()
    assert bench.QUICK.snapshot_mb == bench.FULL.snapshot_mb == 64
    assert bench.QUICK.rounds >= 3 and bench.FULL.rounds >= bench.QUICK.rounds


def test_every_timed_run_starts_from_a_collected_heap():
    """A full collection lands in a variant's run only by what that run allocates itself,
    never by what earlier runs left behind (launch_overhead_us moved 4.7 -> 10 us that way)."""
    import gc
    bench = _bench()
    log: list[str] = []

    def on_gc(phase, info):
        if phase == "stop" and info["generation"] == 2:
            log.append("full")

    def variant(name):
        def run():
            log.append(name)
            return 1.0
        return run

    gc.callbacks.append(on_gc)
    try:
        bench.alternate({"a": variant("a"), "b": variant("b")}, rounds=2)
    finally:
        gc.callbacks.remove(on_gc)
    assert log == ["full", "a", "full", "b", "full", "a", "full", "b"]


def test_only_record_measures_the_record_keys_of_both_paths(tmp_path):
    bench = _bench()
    out = tmp_path / "results.json"
    bench.run(["--tiny", "--only", "record", "--out", str(out)], say=lambda line: None)
    data = json.loads(out.read_text())
    assert set(data) == {"call_overhead_us", "call_overhead_python_us", "call_overhead_floor_us",
                         "launch_overhead_us", "launch_overhead_python_us", "launch_overhead_floor_us",
                         "archive_bytes_per_event", "meta"}
    assert all(type(v) is float for k, v in data.items() if k != "meta")
