"""Crash resilience: truncation at every byte, corrupt frames, SIGKILL mid-write, repair."""
from __future__ import annotations

import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import textwrap

import msgpack
import pytest

from archive_helpers import RECORDS, as_lists, pid_dir, write_archive
from hrr.archive import BadRecord, Record, open_archive, repair
from hrr.archive.format import FRAME_EVENT, FRAME_HEADER, encode_frame


def _snapshot_unclosed(tmp_path):
    """(events bytes with trailer, manifest bytes as a killed capture leaves it, record end offsets)."""
    root = str(tmp_path / "src")
    w = write_archive(root, close=False)
    w.put_blob(b"some host bytes")
    d = pid_dir(root)
    manifest_unclosed = open(os.path.join(d, "manifest.json"), "rb").read()
    w.close()
    full = open(os.path.join(d, "events.bin"), "rb").read()
    with open_archive(root) as a:
        recs = list(a.processes[0].events())
    ends = [r.offset + FRAME_HEADER.size + len(msgpack.packb(RECORDS[r.index])) for r in recs]
    return d, full, manifest_unclosed, recs[0].offset, ends


def test_truncated_at_every_offset_reads_complete_records_and_repairs(tmp_path):
    src, full, manifest_unclosed, header_end, ends = _snapshot_unclosed(tmp_path)
    boundaries = {header_end, *ends, len(full)}     # the only cuts that leave no torn tail
    blob = next(_blob_names(src))
    for n in range(len(full) + 1):
        root = str(tmp_path / f"cut{n}")
        d = pid_dir(root)
        shutil.copytree(src, d)
        with open(os.path.join(d, "events.bin"), "wb") as f:
            f.write(full[:n])
        with open(os.path.join(d, "manifest.json"), "wb") as f:
            f.write(manifest_unclosed)
        expected = [RECORDS[i] for i, end in enumerate(ends) if end <= n]
        with open_archive(root) as a:
            proc = a.processes[0]
            got = list(proc.events())
            assert all(isinstance(r, Record) for r in got), n
            assert [r.value for r in got] == as_lists(expected), n
            assert not proc.clean, n
            assert proc.torn == (n not in boundaries), n
        report = repair(root)
        assert report.count("repaired") == 1 and report.count("failed") == 0, (n, report.summary())
        with open_archive(root) as a:
            proc = a.processes[0]
            assert proc.clean and not proc.torn, n
            assert [r.value for r in proc.events()] == as_lists(expected), n
            assert proc.manifest["repaired"] is True and proc.manifest["counts"]["events"] == len(expected)
            assert proc.read_blob(blob) == b"some host bytes"
        assert repair(root).count("clean") == 1, n        # idempotent


def _blob_names(d):
    for sub in os.listdir(os.path.join(d, "blobs")):
        yield from os.listdir(os.path.join(d, "blobs", sub))


def test_torn_header_and_empty_file(tmp_path):
    src, full, manifest_unclosed, header_end, ends = _snapshot_unclosed(tmp_path)
    for n in (0, 5, 12, 20, header_end - 1):
        root = str(tmp_path / f"h{n}")
        shutil.copytree(src, pid_dir(root))
        with open(os.path.join(pid_dir(root), "events.bin"), "wb") as f:
            f.write(full[:n])
        proc = open_archive(root).processes[0]
        assert proc.header is None and proc.torn and list(proc.events()) == []


def _corrupt(tmp_path, mutate):
    root = str(tmp_path / "a")
    write_archive(root)
    path = os.path.join(pid_dir(root), "events.bin")
    data = bytearray(open(path, "rb").read())
    recs = list(open_archive(root).processes[0].events())
    mutate(data, recs)
    open(path, "wb").write(bytes(data))
    return root, recs


def test_corrupted_middle_frame_is_a_bad_record_and_the_rest_read(tmp_path):
    def flip(data, recs):
        data[recs[1].offset + FRAME_HEADER.size + 2] ^= 0xFF
    root, recs = _corrupt(tmp_path, flip)
    proc = open_archive(root).processes[0]
    got = list(proc.events())
    assert isinstance(got[1], BadRecord) and got[1].index == 1 and got[1].offset == recs[1].offset
    assert "checksum" in got[1].reason
    assert [r.value for r in got if isinstance(r, Record)] == as_lists([RECORDS[0], *RECORDS[2:]])
    assert proc.clean            # a bad frame in the middle is refused, not a torn archive


def test_undecodable_msgpack_with_good_checksum_is_a_bad_record(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root, records=[[1]], close=False).close()
    path = os.path.join(pid_dir(root), "events.bin")
    data = open(path, "rb").read()
    trailer_at = list(open_archive(root).processes[0].events())[-1].offset + FRAME_HEADER.size + 2
    bad = [encode_frame(FRAME_EVENT, b"\xc1"),                        # never-used msgpack byte
           encode_frame(FRAME_EVENT, b"\x92\x01"),                     # truncated array
           encode_frame(FRAME_EVENT, b"\x81\x01\x02"),                 # int map key (strict_map_key)
           encode_frame(FRAME_EVENT, b"\xd4\x05\x00"),                 # ext type
           encode_frame(FRAME_EVENT, b"\xdd\xff\xff\xff\xff"),         # array32 claiming 4G items
           encode_frame(FRAME_EVENT, b"\x91" * 100000 + b"\xc0"),      # deep nesting
           encode_frame(FRAME_EVENT, msgpack.packb(["fine"]))]
    open(path, "wb").write(data[:trailer_at] + b"".join(bad))
    got = list(open_archive(root).processes[0].events())
    assert [type(r).__name__ for r in got] == ["Record"] + ["BadRecord"] * 6 + ["Record"]
    assert got[-1].value == ["fine"] and got[-1].index == 7
    assert all("msgpack" in r.reason for r in got[1:-1])


def test_implausible_frame_length_stops_without_allocating(tmp_path):
    def huge(data, recs):
        struct.pack_into("<I", data, recs[2].offset + 4, 0xFFFFFFF0)
    root, recs = _corrupt(tmp_path, huge)
    proc = open_archive(root).processes[0]
    got = list(proc.events())
    assert [type(r) for r in got] == [Record, Record, BadRecord]
    assert got[2].offset == recs[2].offset and "unreadable frame header" in got[2].reason
    assert not proc.clean
    assert repair(root).count("repaired") == 1
    assert [r.value for r in open_archive(root).processes[0].events()] == as_lists(RECORDS[:2])


CHILD = textwrap.dedent("""
    import os, sys
    from hrr.archive import open_process_writer
    w = open_process_writer(sys.argv[1], os.getpid(), {"backend": "sim"}, flush_interval=0.001)
    i = 0
    while True:
        w.append([i, "hipMemcpy", {"payload": bytes(i % 251), "n": i}])
        if i % 50 == 0:
            w.put_blob(os.urandom(4096))
        if i % 7 == 0:
            w.flush()
        if i == 2000:
            print("ready", flush=True)
        i += 1
""")


@pytest.mark.parametrize("delay", [0.0, 0.05, 0.2])
def test_sigkill_mid_write_leaves_readable_repairable_archive(tmp_path, delay):
    root = str(tmp_path / "a")
    child = subprocess.Popen([sys.executable, "-c", CHILD, root], stdout=subprocess.PIPE)
    assert child.stdout.readline().strip() == b"ready"
    if delay:
        import time
        time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    child.wait()
    with open_archive(root) as a:
        (proc,) = a.processes
        got = list(proc.events())
        assert not proc.clean and len(got) > 1900
        assert all(isinstance(r, Record) and r.value[0] == r.index for r in got)
        manifest = json.load(open(os.path.join(proc.path, "manifest.json")))
        assert manifest["clean_shutdown"] is False
    report = repair(root)
    assert report.count("repaired") == 1, report.summary()
    with open_archive(root) as a:
        proc = a.processes[0]
        assert proc.clean and [r.value[0] for r in proc.events()] == list(range(len(got)))
        assert proc.manifest["counts"]["blobs"] >= 40
        for sub in os.listdir(os.path.join(proc.path, "blobs")):
            assert not [n for n in os.listdir(os.path.join(proc.path, "blobs", sub)) if n.startswith(".tmp-")]


def test_repair_removes_temp_files_and_rebuilds_missing_manifest(tmp_path):
    root = str(tmp_path / "a")
    w = write_archive(root, close=False)
    name = w.put_blob(b"x")
    d = pid_dir(root)
    os.remove(os.path.join(d, "manifest.json"))
    for rel in (".tmp-manifest.json-0011", f"blobs/{name[:2]}/.tmp-{name}-22"):
        open(os.path.join(d, rel), "wb").write(b"partial")
    proc = open_archive(root).processes[0]
    assert proc.manifest_error and not proc.clean
    report = repair(root)
    (pr,) = report.processes
    assert pr.action == "repaired" and pr.manifest_rebuilt and pr.temp_files_removed == 2
    assert "repaired" in pr.describe() and report.summary().startswith("Repair summary: 1 repaired")
    proc = open_archive(root).processes[0]
    assert proc.clean and proc.manifest["counts"]["blobs"] == 1
    assert [r.value for r in proc.events()] == as_lists(RECORDS)


def test_repair_refuses_unknown_version(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root, close=False)
    path = os.path.join(pid_dir(root), "events.bin")
    data = bytearray(open(path, "rb").read())
    struct.pack_into("<I", data, 8, 99)
    open(path, "wb").write(bytes(data))
    (pr,) = repair(root).processes
    assert pr.action == "failed" and "version 99" in pr.error
    assert open(path, "rb").read() == bytes(data)        # left untouched
