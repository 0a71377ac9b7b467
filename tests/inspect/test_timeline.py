"""`hrr export --chrome-trace`: the file follows the Trace Event Format's rules and shows
what the archive holds (tracks per thread and stream, kernels, copies, graphs, instants)."""
from __future__ import annotations

import json
import shutil
import threading
import tracemalloc
from pathlib import Path

import hrrtest
import pytest
from inspect_helpers import TraceError, by_track, describe, hrr_cli, make_app, validate_trace

from hrr.archive import open_archive
from hrr.inspect.timeline import CLOCK_NOTE, export_chrome_trace


def test_serving_step_trace_validates_and_shows_streams_graphs_snapshots(serving_archive, tmp_path):
    out = tmp_path / "trace.json"
    proc = hrr_cli("export", "--chrome-trace", out, serving_archive)
    assert proc.returncode == 0, describe(proc)
    assert "trace events from 67 records" in proc.stderr
    data = validate_trace(out)
    assert data["otherData"]["clock"] == CLOCK_NOTE and data["otherData"]["skipped_records"] == 0
    tracks = by_track(data)
    names = sorted(name for name, _ in tracks.values())
    assert [n for n in names if n.startswith("thread")] == [names[-1]]      # one app thread
    streams = {name: evs for name, evs in tracks.values() if name.startswith("stream")}
    assert len(streams) == 2, names
    compute, post = (streams[k] for k in sorted(streams))
    # Stream 1 (compute): the eager step's two kernels, then three graph launches, each a
    # slice holding the graph's two kernels inside it.
    kernels = [e for e in compute if e["ph"] == "X" and e["cat"] == "kernel"]
    assert [e["name"] for e in kernels[:2]] == ["add_u32", "sum_u32"]
    assert kernels[0]["args"]["grid"] == [2, 1, 1] and kernels[0]["args"]["block"] == [128, 1, 1]
    graphs = [e for e in compute if e["ph"] == "X" and e["cat"] == "graph"]
    assert [g["name"] for g in graphs] == ["graph exec #1"] * 3
    for g in graphs:
        inside = [e for e in kernels if g["ts"] <= e["ts"] and e["ts"] + e["dur"] <= g["ts"] + g["dur"]]
        assert [e["name"] for e in inside] == ["add_u32", "sum_u32"], g
        assert g["args"]["nodes"] == 2
    # Nothing ran on the stream while it was being captured.
    assert len(kernels) == 2 + 3 * 2
    # Stream 2 (post): four DtoH copies of 4 bytes, the struct kernel, syncs, event waits.
    copies = [e for e in post if e["ph"] == "X" and e["cat"] == "copy"]
    assert [(c["args"]["direction"], c["args"]["bytes"]) for c in copies] == [("DtoH", 4)] * 4
    instants = [e for e in post if e["ph"] == "i"]
    assert [e["name"] for e in instants].count("synchronize") == 4
    assert [e["name"] for e in instants].count("wait event") == 4
    assert [e["name"] for e in instants].count("DtoH result") == 4
    assert all(e["s"] in ("t", "p", "g") for e in instants)
    # Pinned snapshots: before the eager launches and before every graph launch.
    snaps = [e for evs in streams.values() for e in evs if e["ph"] == "i" and e["cat"] == "snapshot"]
    assert sum(e["name"] == "graph_capture snapshot" for e in snaps) == 3
    assert any(e["name"] == "pinned_snapshot snapshot" and e["args"]["bytes"] == 2048 for e in snaps)
    # The synchronous DtoH copy of the hidden state goes to the null stream.
    null = next(evs for name, evs in tracks.values() if name == "null stream")
    assert [(e["name"], e["args"]["bytes"]) for e in null if e["ph"] == "X"] == [("memcpy DtoH", 1024)]


def test_threads_get_their_own_tracks_and_a_failed_call_is_marked(tmp_path):
    def app(hip, hiprtc, be):
        barrier = threading.Barrier(2)
        results = []

        def work(value):
            stream = hip.hipStreamCreate()[1]
            barrier.wait()
            results.append(make_app(value=value)(hip, hiprtc, be))
            hip.hipStreamDestroy(stream)
        hip.hipInit(0)
        threads = [threading.Thread(target=work, args=(v,)) for v in (1, 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert hip.hipFree(12345)[0] != 0      # a failed call: no device work
        return results
    hrrtest.capture(tmp_path / "a", app)
    out = tmp_path / "t.json"
    export_chrome_trace(str(tmp_path / "a"), str(out))
    data = validate_trace(out)
    tracks = by_track(data)
    threads = [evs for name, evs in tracks.values() if name.startswith("thread")]
    assert len(threads) == 3   # main thread and two workers
    failed = [e for evs in threads for e in evs if e["ph"] == "X" and "(error" in e["name"]]
    assert [e["name"].split()[0] for e in failed] == ["hipFree"] and failed[0]["args"]["err"] != 0
    # Four app streams (two per worker) plus the null stream, each its own track.
    assert sum(name.startswith("stream") for name, _ in tracks.values()) == 4
    kernels = [e["name"] for _, evs in tracks.values() for e in evs if e["ph"] == "X" and e["cat"] == "kernel"]
    assert sorted(kernels) == ["copy_u8", "copy_u8", "fill_u32", "fill_u32"]


def test_bad_records_are_skipped_and_counted(tmp_path):
    from cli.cli_helpers import rewrite_events
    hrrtest.capture(tmp_path / "a", make_app())
    proc = open_archive(str(tmp_path / "a")).processes[0]
    rewrite_events(Path(proc.path), lambda values: values)   # one frame (one checksum) per record
    offsets = [item.offset for item in proc.events()]     # v2: a record's offset is its own bytes'
    path = Path(proc.events_path)
    data = bytearray(path.read_bytes())
    data[offsets[3] + 2] ^= 0xFF      # one record's checksum now fails
    path.write_bytes(bytes(data))
    out = tmp_path / "t.json"
    summary = export_chrome_trace(str(tmp_path / "a"), str(out))
    assert summary["skipped_records"] == 1 and summary["records"] == len(offsets) - 1
    data = validate_trace(out)
    assert data["otherData"]["skipped_records"] == 1 and "record 3 " in data["otherData"]["first_skipped"]


def test_unreadable_archive_is_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    proc = hrr_cli("export", "--chrome-trace", tmp_path / "t.json", tmp_path / "empty")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, describe(proc)
    assert [ln for ln in proc.stderr.splitlines() if ln.startswith("hrr: error:")] == \
        [ln for ln in proc.stderr.splitlines() if ln.strip()], describe(proc)
    assert "not an hrr archive" in proc.stderr


def _copy_app(calls: int):
    def app(hip, _hiprtc, _be):
        hip.hipInit(0)
        dev = hip.hipMalloc(64)[1]
        stream = hip.hipStreamCreate()[1]
        for i in range(calls):
            hip.hipMemsetAsync(dev, i & 0xFF, 64, stream)
        hip.hipStreamSynchronize(stream)
    return app


def test_memory_does_not_grow_with_the_archive(tmp_path):
    # Streaming: peak Python memory while exporting 10x more records stays about the same.
    peaks = []
    for calls in (200, 2000):
        hrrtest.capture(tmp_path / str(calls), _copy_app(calls))
        tracemalloc.start()
        export_chrome_trace(str(tmp_path / str(calls)), str(tmp_path / f"{calls}.json"))
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        validate_trace(tmp_path / f"{calls}.json")
    assert peaks[1] < peaks[0] * 1.5 + 200_000, peaks


@pytest.mark.parametrize("broken, message", [
    ({"ph": "X", "name": "x", "ts": 5, "pid": 1, "tid": 1, "dur": -1}, "dur >= 0"),
    ({"ph": "B", "name": "x", "ts": 5, "pid": 1, "tid": 1}, "never ends"),
    ({"ph": "E", "ts": 5, "pid": 1, "tid": 1}, "no open B"),
    ({"ph": "X", "name": "x", "ts": 0, "pid": 1, "tid": 1, "dur": 1}, "backwards"),
    ({"ph": "X", "name": "x", "ts": 5, "pid": 1, "tid": 9, "dur": 1}, "without a thread_name"),
    ({"ph": "X", "name": "x", "ts": "5", "pid": 1, "tid": 1, "dur": 1}, "wrong type"),
    ({"ph": "i", "name": "x", "ts": 5, "pid": 1, "tid": 1, "s": "x"}, "scope"),
])
def test_the_checker_rejects_what_the_format_forbids(tmp_path, broken, message):
    # The checker must be able to fail, or the tests above prove nothing.
    events = [{"ph": "M", "name": "process_name", "ts": 0, "pid": 1, "tid": 0, "args": {"name": "p"}},
              {"ph": "M", "name": "thread_name", "ts": 0, "pid": 1, "tid": 1, "args": {"name": "t"}},
              {"ph": "X", "name": "ok", "ts": 2, "pid": 1, "tid": 1, "dur": 1}, broken]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    with pytest.raises(TraceError, match=message):
        validate_trace(path)
    path.write_text(json.dumps({"traceEvents": events[:3]}))
    validate_trace(path)


def test_records_out_of_sequence_order_still_give_non_decreasing_tracks(tmp_path):
    from cli.cli_helpers import rewrite_events

    hrrtest.capture(tmp_path / "a", make_app())
    pid_dir = next((tmp_path / "a").iterdir())

    def swap(values):   # two records written in the other order (a thread preempted)
        values[5][0], values[6][0] = values[6][0], values[5][0]
        return values
    rewrite_events(pid_dir, swap)
    export_chrome_trace(str(tmp_path / "a"), str(tmp_path / "t.json"))
    validate_trace(tmp_path / "t.json")


def test_malformed_records_are_skipped_by_export_and_diff(tmp_path):
    # Checksums are good, the values are not events: acted on by neither command.
    from cli.cli_helpers import rewrite_events

    from hrr.inspect.diff import diff_archives

    hrrtest.capture(tmp_path / "a", make_app())
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    pid_dir = next((tmp_path / "b").iterdir())

    def spoil(values):
        values[4] = ["not", "an", "event"]
        values[6] = [values[6][0], values[6][1], 17, {"x": 1}, "err", None, []]   # wrong types
        return values
    rewrite_events(pid_dir, spoil)
    summary = export_chrome_trace(str(tmp_path / "b"), str(tmp_path / "t.json"))
    assert summary["skipped_records"] == 2
    validate_trace(tmp_path / "t.json")
    lines: list[str] = []
    result = diff_archives(str(tmp_path / "a"), str(tmp_path / "b"), echo=lines.append)
    assert not result.equal and result.index_a == 4 and result.index_b == 5
    assert any("B: 1 unreadable record(s) skipped" in ln and "record 4 " in ln for ln in lines), lines
