"""Format version 2: batch frames, API numbers from the header, per-frame thread indexes,
the open batch a killed writer leaves, and repair closing it."""
from __future__ import annotations

import os
import shutil
import threading

import msgpack
import pytest

from archive_helpers import LoggedMap, as_lists, pid_dir, write_archive
from hrr.archive import BadRecord, Record, open_archive, open_process_writer, repair
from hrr.archive import writer as writer_mod
from hrr.archive.format import (FILE_HEADER, FRAME_EVENT, FRAME_HEADER, HEADER_SEED_TYPE, MAGIC, checksum,
                                encode_frame, escape_record)

TID = 140000000000001
EVENTS = [[i, TID + i % 2, api, [0] if api == "hipInit" else [], 0, [], {}]
          for i, api in enumerate(["hipInit", "hipDeviceSynchronize", "hipInit", "hipDeviceSynchronize"])]


def _events_path(root, pid=4242):
    return os.path.join(pid_dir(root, pid), "events.bin")


def _values(root):
    with open_archive(root) as a:
        return [r.value if isinstance(r, Record) else r for r in a.processes[0].events()]


def test_events_are_numbered_batched_and_read_back_by_name(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root, records=EVENTS)
    assert _values(root) == EVENTS
    raw = open(_events_path(root), "rb").read()
    assert b"hipDeviceSynchronize" in raw[:2000] and raw.count(b"hipDeviceSynchronize") == 1   # header only
    with open_archive(root) as a:
        proc = a.processes[0]
        assert proc.version == 3 and proc.clean   # version 2's framing, written as 3 and proc.scan().frames == 4
        assert proc.header["apis"][0] == "hipInit" or "hipInit" in proc.header["apis"]


def test_the_header_table_not_this_hrrs_catalogue_names_the_apis(tmp_path):
    """A reader maps numbers through the archive's own table: swap two names there and the
    records read back swapped (an archive from an hrr whose catalogue order differs)."""
    root = str(tmp_path / "a")
    write_archive(root, records=EVENTS)
    path = _events_path(root)
    data = open(path, "rb").read()
    _, version, hlen, _ = FILE_HEADER.unpack_from(data)
    header = msgpack.unpackb(data[FILE_HEADER.size:FILE_HEADER.size + hlen], raw=False)
    apis = header["apis"]
    i, j = apis.index("hipInit"), apis.index("hipDeviceSynchronize")
    apis[i], apis[j] = apis[j], apis[i]
    body = msgpack.packb(header, use_bin_type=True)
    head = FILE_HEADER.pack(MAGIC, version, len(body), checksum(HEADER_SEED_TYPE, body)) + body
    open(path, "wb").write(head + data[FILE_HEADER.size + hlen:])
    swap = {"hipInit": "hipDeviceSynchronize", "hipDeviceSynchronize": "hipInit"}
    assert [v[2] for v in _values(root)] == [swap[e[2]] for e in EVENTS]


def test_values_that_look_like_numbered_records_read_back_exactly(tmp_path):
    odd = [[1, 2, 3, 4, 5, 6, 7], [1, 2, [3], 4, 5, 6, 7], [1, 2, [], 4, 5, 6, 7],
           [0, TID, "hipNotInTheCatalogue", [], 0, [], {}], [0, {"t": 1}, "hipInit", [0], 0, [], {}],
           [0, TID, None, [], 0, [], {}], ["x"], {"seq": 1}, 5, None]
    root = str(tmp_path / "a")
    write_archive(root, records=odd + EVENTS)
    assert _values(root) == odd + EVENTS


def test_a_batch_closes_at_its_record_bound_and_threads_are_declared_per_frame(tmp_path):
    root = str(tmp_path / "a")
    n = writer_mod.BATCH_RECORDS * 2 + 5
    records = [[i, TID + i % 3, "hipDeviceSynchronize", [], 0, [], {}] for i in range(n)]
    write_archive(root, records=records)
    data = open(_events_path(root), "rb").read()
    with open_archive(root) as a:
        proc = a.processes[0]
        got = list(proc.events())
        start = proc._data_start
    assert [r.value for r in got] == records
    counts, pos = [], start
    while True:
        ftype, count3, length, _ = FRAME_HEADER.unpack_from(data, pos)
        if ftype != FRAME_EVENT:
            break
        counts.append(int.from_bytes(count3, "little"))
        pos += FRAME_HEADER.size + length
    assert counts == [writer_mod.BATCH_RECORDS, writer_mod.BATCH_RECORDS, 5]
    assert len(data) - start < n * 12          # a cheap event is a dozen bytes or less


def test_damaged_batch_refuses_its_records_by_count_and_reads_the_rest(tmp_path):
    root = str(tmp_path / "a")
    w = open_process_writer(root, 4242, {"backend": "sim"})
    for e in EVENTS[:3]:
        w.append(e)
    w.flush()
    w.append(EVENTS[3])
    w.close()
    path = _events_path(root)
    data = bytearray(open(path, "rb").read())
    first = [r for r in open_archive(root).processes[0].events()][0]
    data[first.offset + 3] ^= 0x40
    open(path, "wb").write(bytes(data))
    got = list(open_archive(root).processes[0].events())
    assert [type(r) for r in got] == [BadRecord] * 3 + [Record]
    assert [r.index for r in got] == [0, 1, 2, 3] and "checksum" in got[0].reason
    assert got[3].value == EVENTS[3] and open_archive(root).processes[0].clean


@pytest.mark.parametrize("bad,why", [
    ([0, 7, 0, [0], 0, [], {}], "thread index 7"),
    ([0, [TID], 100000, [0], 0, [], {}], "API number 100000"),
    ([0, "t", 0, [0], 0, [], {}], "thread index or [tid]"),
    ([0, [TID], [1, 2], [0], 0, [], {}], "1-item list"),
])
def test_unresolvable_numbers_are_refused_records(tmp_path, bad, why):
    root = str(tmp_path / "a")
    write_archive(root, records=[EVENTS[0]])
    path = _events_path(root)
    with open_archive(root) as a:
        trailer_at = a.processes[0].scan().trailer_offset
    data = open(path, "rb").read()[:trailer_at]
    payload = msgpack.packb(bad) + msgpack.packb(escape_record(["after"]))
    open(path, "wb").write(data + encode_frame(FRAME_EVENT, payload, 2))
    got = list(open_archive(root).processes[0].events())
    assert isinstance(got[1], BadRecord) and why in got[1].reason, got[1]
    assert got[2].value == ["after"]


def test_open_batch_of_a_killed_writer_reads_record_by_record_and_repair_closes_it(tmp_path):
    root = str(tmp_path / "a")
    w = write_archive(root, records=EVENTS[:2], close=False)     # flushed: one closed batch
    for e in EVENTS[2:]:
        w.append(e)                                               # in the open batch
    path = _events_path(root)
    with open_archive(root) as a:
        proc = a.processes[0]
        assert [r.value for r in proc.events()] == EVENTS
        state = proc.scan()
        assert state.open_start is not None and state.open_records == 2 and not proc.torn and not proc.clean
    # A record the writer was copying when it died: every byte but the first (written last).
    data = bytearray(open(path, "rb").read())
    half = msgpack.packb(["never", "returned"])
    data[state.valid_end + 1:state.valid_end + len(half)] = half[1:]
    open(path, "wb").write(bytes(data))
    assert _values(root) == EVENTS
    (pr,) = repair(root).processes
    assert pr.action == "repaired" and pr.events_kept == 4
    with open_archive(root) as a:
        proc = a.processes[0]
        assert proc.clean and [r.value for r in proc.events()] == EVENTS
        assert proc.scan().open_start is None                  # the batch now has its checksum
    assert repair(root).count("clean") == 1


def test_truncated_inside_a_batch_keeps_its_whole_records_and_repairs(tmp_path):
    src = str(tmp_path / "src")
    w = write_archive(src, records=EVENTS, close=False)
    manifest = open(os.path.join(pid_dir(src), "manifest.json"), "rb").read()
    w.close()
    full = open(_events_path(src), "rb").read()
    with open_archive(src) as a:
        proc = a.processes[0]
        recs = list(proc.events())
        header_end, trailer_at = proc._data_start, proc.scan().trailer_offset
    ends = [r.offset for r in recs[1:]] + [trailer_at]      # one batch: its records back to back
    for n in range(header_end, len(full) + 1):
        root = str(tmp_path / f"cut{n}")
        shutil.copytree(pid_dir(src), pid_dir(root))
        open(_events_path(root), "wb").write(full[:n])
        open(os.path.join(pid_dir(root), "manifest.json"), "wb").write(manifest)
        expected = [EVENTS[i] for i, end in enumerate(ends) if end <= n]
        with open_archive(root) as a:
            proc = a.processes[0]
            assert [r.value for r in proc.events()] == expected, n
            assert proc.torn == (n not in (header_end, trailer_at, len(full))), n
        assert repair(root).count("repaired") == 1, n
        assert _values(root) == expected and open_archive(root).processes[0].clean, n


def test_flush_and_fork_close_the_open_batch(tmp_path):
    root = str(tmp_path / "a")
    w = open_process_writer(root, 4242, {"backend": "sim"})
    w.append(EVENTS[0])
    w.flush()
    w.append(EVENTS[1])
    with open_archive(root) as a:
        assert a.processes[0].scan().open_records == 1
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    with open_archive(root) as a:
        state = a.processes[0].scan()
        assert state.open_start is None and state.frames == 2       # closed by the fork handler
    w.close()
    assert _values(root) == EVENTS[:2]


def test_close_on_signal_with_the_lock_held_closes_the_batch(tmp_path):
    root = str(tmp_path / "a")
    w = open_process_writer(root, 4242, {"backend": "sim"})
    for e in EVENTS:
        w.append(e)
    held = threading.Event()
    release = threading.Event()

    def hold():
        with w._lock:
            held.set()
            release.wait(10)
    t = threading.Thread(target=hold)
    t.start()
    held.wait(10)
    w.close_on_signal("SIGTERM")
    release.set()
    t.join()
    with open_archive(root) as a:
        proc = a.processes[0]
        assert proc.clean and [r.value for r in proc.events()] == EVENTS and proc.scan().open_start is None


def test_version_1_archives_still_read_and_repair(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root, records=EVENTS, version=1, close=False)
    with open_archive(root) as a:
        assert a.processes[0].version == 1 and a.processes[0].manifest["format_version"] == 1
    assert _values(root) == as_lists(EVENTS)
    assert repair(root).count("repaired") == 1
    with open_archive(root) as a:
        assert a.processes[0].clean and a.processes[0].version == 1


def test_a_record_and_a_frame_header_are_each_written_first_byte_last(tmp_path):
    """What a kill mid-copy leaves must read as the end of the stream: the byte that makes a
    record (or a closed frame) visible is written after all of its other bytes."""
    root = str(tmp_path / "a")
    w = open_process_writer(root, 4242, {"backend": "sim"})
    w.append(EVENTS[0])
    log: list = []
    w._mm = LoggedMap(w._mm, log)
    w.append(EVENTS[1])
    assert len(log) == 2 and log[1][1] - log[1][0] == 1 and log[1][1] == log[0][0]   # rest, then first byte
    log.clear()
    w.flush()
    assert len(log) == 2 and log[1][1] - log[1][0] == 1 and log[1][1] == log[0][0]   # header rest, then type
    w._mm = w._mm.mm
    w.close()
    assert _values(root) == EVENTS[:2]
