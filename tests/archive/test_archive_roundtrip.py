"""Round trip: records, blobs (dedup), code objects, manifest fields, permissions, the mapped events.bin."""
from __future__ import annotations

import json
import os
import stat
import threading

import numpy as np
import pytest
import xxhash

from archive_helpers import RECORDS, as_lists, pid_dir, write_archive
from hrr.archive import FORMAT_VERSION, BadRecord, Record, open_archive, open_process_writer
from hrr.archive import writer as writer_mod
from hrr.archive.format import FILE_HEADER
from hrr.errors import ArchiveError


def test_records_round_trip(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root)
    with open_archive(root) as archive:
        (proc,) = archive.processes
        got = list(proc.events())
        assert all(isinstance(r, Record) for r in got)
        assert [r.value for r in got] == as_lists(RECORDS)
        assert [r.index for r in got] == list(range(len(RECORDS)))
        assert got[0].offset > FILE_HEADER.size and got == sorted(got, key=lambda r: r.offset)
        assert proc.clean and not proc.torn and proc.trailer["events"] == len(RECORDS)
        assert proc.header["format_version"] == FORMAT_VERSION and proc.header["pid"] == 4242
        assert proc.header["backend"] == "sim"


@pytest.mark.usefixtures("loose_blobs")
def test_blobs_dedup_and_code_objects(tmp_path):
    root = str(tmp_path / "a")
    w = open_process_writer(root, 7, {"backend": "sim"})
    payload = bytes(range(256)) * 10
    name = w.put_blob(payload)
    assert name == xxhash.xxh3_128_hexdigest(payload)
    assert w.put_blob(bytearray(payload)) == name                         # same content, another type
    assert w.put_blob(memoryview(np.frombuffer(payload, np.uint8))) == name
    other = w.put_blob(b"other")
    code = w.put_code_object(b"\x7fELF-code")
    assert w.put_code_object(payload) == name           # same bytes as a blob: stored as code too
    assert w.put_code_object(b"\x7fELF-code") == code
    w.close()
    d = pid_dir(root, 7)
    assert sorted(os.listdir(os.path.join(d, "blobs"))) == sorted({name[:2], other[:2]})
    assert os.listdir(os.path.join(d, "blobs", name[:2])).count(name) == 1
    assert sorted(os.listdir(os.path.join(d, "code"))) == sorted([code, name])
    proc = open_archive(root).processes[0]
    assert proc.read_blob(name) == payload and proc.blob_size(name) == len(payload)
    assert proc.read_code_object(code) == b"\x7fELF-code" and proc.code_object_size(code) == 9
    counts = proc.manifest["counts"]
    assert counts["blobs"] == 2 and counts["blob_bytes"] == len(payload) + 5
    assert counts["code_objects"] == 2
    assert open_archive(d).processes[0].read_code_object(name) == payload   # a pid dir opens too


def test_blob_dedup_skips_existing_file(tmp_path):
    root = str(tmp_path / "a")
    w = open_process_writer(root, 8, {"backend": "sim"})
    name = xxhash.xxh3_128_hexdigest(b"abc")
    os.makedirs(os.path.join(pid_dir(root, 8), "blobs", name[:2]))
    path = os.path.join(pid_dir(root, 8), "blobs", name[:2], name)
    with open(path, "wb") as f:
        f.write(b"abc")
    before = os.stat(path).st_ino
    assert w.put_blob(b"abc") == name
    assert os.stat(path).st_ino == before       # not rewritten
    w.close()


def test_manifest_fields(tmp_path):
    root = str(tmp_path / "a")
    w = open_process_writer(root, 9, {"backend": "cuda"},
                            manifest={"plugins": {"pinned_snapshot": "0.1"}, "content_mode": "metadata-only"})
    path = os.path.join(pid_dir(root, 9), "manifest.json")
    at_open = json.load(open(path))
    assert at_open["clean_shutdown"] is False and at_open["format_version"] == FORMAT_VERSION
    w.append([1])
    w.add_unreplayable("hipIpcOpenMemHandle", "needs another process", events=1)
    w.add_unreplayable("hipIpcOpenMemHandle", "needs another process", events=1)   # once only
    w.update_manifest(host_snapshots=True, custom_field={"x": 1})
    w.close(counts={"host_snapshot_chunks": 3})
    m = open_archive(root).processes[0].manifest
    assert m["pid"] == 9 and m["backend"] == "cuda" and m["plugins"] == {"pinned_snapshot": "0.1"}
    assert m["content_mode"] == "metadata-only" and m["host_snapshots"] is True
    assert m["unreplayable_apis"] == [{"api": "hipIpcOpenMemHandle", "reason": "needs another process", "events": 1}]
    assert m["counts"]["events"] == 1 and m["counts"]["host_snapshot_chunks"] == 3
    assert m["clean_shutdown"] is True and m["custom_field"] == {"x": 1}


@pytest.mark.parametrize("umask", [0, 0o277])
def test_permissions_whatever_the_umask(tmp_path, umask):
    root = str(tmp_path / "a")
    old = os.umask(umask)
    try:
        w = open_process_writer(root, 10, {"backend": "sim"})
        w.append([1])
        w.put_blob(b"blob")
        w.put_code_object(b"code")
        w.close()
    finally:
        os.umask(old)
    d = pid_dir(root, 10)
    for dirpath, _dirnames, filenames in os.walk(root):
        assert stat.S_IMODE(os.stat(dirpath).st_mode) == 0o700, dirpath
        for f in filenames:
            assert stat.S_IMODE(os.stat(os.path.join(dirpath, f)).st_mode) == 0o600, f
    assert {"events.bin", "manifest.json", "blobs", "code"} <= set(os.listdir(d))


def test_appended_records_are_in_the_file_at_once(tmp_path):
    """No buffer: a record is readable from events.bin as soon as append returns."""
    root = str(tmp_path / "a")
    w = open_process_writer(root, 11, {"backend": "sim"})
    for i in range(100):
        w.append([i, "x"])
        if i in (0, 57, 99):
            with open_archive(root) as a:
                proc = a.processes[0]
                assert [r.value for r in proc.events()] == [[j, "x"] for j in range(i + 1)]
                assert not proc.torn and not proc.clean and proc.trailer is None
    w.close()


def test_events_bin_is_reserved_in_steps_and_cut_to_its_length_at_close(tmp_path):
    root = str(tmp_path / "a")
    w = open_process_writer(root, 12, {"backend": "sim"})
    events = os.path.join(pid_dir(root, 12), "events.bin")
    assert os.path.getsize(events) == writer_mod.FIRST_STEP          # reserved up front, zero-filled
    records = [[i, "p" * (i % 300)] for i in range(6000)]            # about 1 MiB: several steps
    for r in records:
        w.append(r)
    reserved = os.path.getsize(events)
    assert reserved > writer_mod.FIRST_STEP and os.stat(events).st_blocks * 512 >= reserved   # not sparse
    w.close()
    with open_archive(root) as a:
        proc = a.processes[0]
        assert [r.value for r in proc.events()] == records and proc.clean
        state = proc.scan()
        assert state.trailer_offset is not None and os.path.getsize(events) == state.valid_end < reserved


def test_concurrent_appends_are_all_recorded(tmp_path):
    root = str(tmp_path / "a")
    w = open_process_writer(root, 13, {"backend": "sim"})

    def work(t):
        for i in range(2000):
            w.append([t, i, "x" * (i % 50)])
            if i % 500 == 0:
                w.put_blob(f"{t}-{i}".encode())
    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    w.close()
    got = list(open_archive(root).processes[0].events())
    assert not any(isinstance(r, BadRecord) for r in got)
    assert sorted((r.value[0], r.value[1]) for r in got) == [(t, i) for t in range(8) for i in range(2000)]


def test_non_native_record_is_refused(tmp_path):
    w = open_process_writer(str(tmp_path / "a"), 14, {"backend": "sim"})
    with pytest.raises(ArchiveError, match="msgpack-native"):
        w.append([object()])
    w.append([1])      # the writer still works afterwards
    w.close()
    assert [r.value for r in open_archive(str(tmp_path / "a")).processes[0].events()] == [[1]]


def test_existing_pid_dir_is_refused(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root)
    with pytest.raises(ArchiveError, match="pid-4242"):
        write_archive(root)
