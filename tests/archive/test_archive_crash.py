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
import smallfs

from archive_helpers import RECORDS, as_lists, frame_at, pid_dir, write_archive
from hrr.archive import BadRecord, Record, open_archive, repair
from hrr.archive.format import FRAME_EVENT, FRAME_HEADER, encode_frame

# These tests open, tamper with or link blob files: one file per blob.
pytestmark = pytest.mark.usefixtures("loose_blobs")


def _snapshot_unclosed(tmp_path, version=2):
    """(events bytes with trailer, manifest bytes as a killed capture leaves it, record end offsets),
    one frame per record."""
    root = str(tmp_path / "src")
    w = write_archive(root, close=False, version=version, flush_each=True)
    w.put_blob(b"some host bytes")
    d = pid_dir(root)
    manifest_unclosed = open(os.path.join(d, "manifest.json"), "rb").read()
    w.close()
    full = open(os.path.join(d, "events.bin"), "rb").read()
    with open_archive(root) as a:
        recs = list(a.processes[0].events())
    ends = [frame_at(r, version) + FRAME_HEADER.size + len(msgpack.packb(RECORDS[r.index])) for r in recs]
    return d, full, manifest_unclosed, frame_at(recs[0], version), ends


@pytest.mark.parametrize("version", [1, 2])
def test_truncated_at_every_offset_reads_complete_records_and_repairs(tmp_path, version):
    src, full, manifest_unclosed, header_end, ends = _snapshot_unclosed(tmp_path, version)
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


def _corrupt(tmp_path, mutate, version=1):
    root = str(tmp_path / "a")
    write_archive(root, version=version, flush_each=True)
    path = os.path.join(pid_dir(root), "events.bin")
    data = bytearray(open(path, "rb").read())
    recs = list(open_archive(root).processes[0].events())
    mutate(data, recs)
    open(path, "wb").write(bytes(data))
    return root, recs


@pytest.mark.parametrize("version", [1, 2])
def test_corrupted_middle_frame_is_a_bad_record_and_the_rest_read(tmp_path, version):
    def flip(data, recs):
        data[frame_at(recs[1], version) + FRAME_HEADER.size + 2] ^= 0xFF
    root, recs = _corrupt(tmp_path, flip, version)
    proc = open_archive(root).processes[0]
    got = list(proc.events())
    assert isinstance(got[1], BadRecord) and got[1].index == 1 and got[1].offset == frame_at(recs[1], version)
    assert "checksum" in got[1].reason
    assert [r.value for r in got if isinstance(r, Record)] == as_lists([RECORDS[0], *RECORDS[2:]])
    assert proc.clean            # a bad frame in the middle is refused, not a torn archive


def test_undecodable_msgpack_with_good_checksum_is_a_bad_record(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root, records=[[1]], close=False).close()
    path = os.path.join(pid_dir(root), "events.bin")
    data = open(path, "rb").read()
    trailer_at = frame_at(list(open_archive(root).processes[0].events())[-1], 2) + FRAME_HEADER.size + 2
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


@pytest.mark.parametrize("version", [1, 2])
def test_implausible_frame_length_stops_without_allocating(tmp_path, version):
    def huge(data, recs):
        struct.pack_into("<I", data, frame_at(recs[2], version) + 4, 0xFFFFFFF0)
    root, recs = _corrupt(tmp_path, huge, version)
    proc = open_archive(root).processes[0]
    got = list(proc.events())
    assert [type(r) for r in got] == [Record, Record, BadRecord]
    assert got[2].offset == frame_at(recs[2], version) and "unreadable frame header" in got[2].reason
    assert not proc.clean
    assert repair(root).count("repaired") == 1
    assert [r.value for r in open_archive(root).processes[0].events()] == as_lists(RECORDS[:2])


CHILD = textwrap.dedent("""
    import os, sys
    from hrr.archive import open_process_writer
    w = open_process_writer(sys.argv[1], os.getpid(), {"backend": "sim"})
    calls = sys.argv[2] == "append_call"
    api = w.api_number("hipMemcpy")
    i = 0
    while True:
        if calls:
            w.append_call(api, [bytes(i % 251)], 0, [i], {})
        else:
            w.append([i, "hipMemcpy", {"payload": bytes(i % 251), "n": i}])
        if i % 50 == 0:
            w.put_blob(os.urandom(4096))
        os.write(1, b"%d\\n" % i)     # reported only once append has returned
        i += 1
""")


@pytest.mark.parametrize("how", ["append", "append_call"])
@pytest.mark.parametrize("after", [0, 700, 6000])
def test_sigkill_keeps_every_appended_record(tmp_path, after, how):
    """Killed right after the writer's n-th append returned: that record is in the file, and
    so is every record before it (no buffer, no flush: the mapped pages outlive the process)."""
    root = str(tmp_path / "a")
    child = subprocess.Popen([sys.executable, "-c", CHILD, root, how], stdout=subprocess.PIPE)
    reported = -1
    for line in child.stdout:
        reported = int(line)
        if reported >= after:
            break
    child.send_signal(signal.SIGKILL)
    for line in child.stdout:       # anything it still managed to report
        reported = int(line)
    child.wait()
    child.stdout.close()
    events = os.path.join(pid_dir_of(root), "events.bin")
    with open_archive(root) as a:
        (proc,) = a.processes
        got = list(proc.events())
        state = proc.scan()
        assert not proc.clean and not proc.torn and state.valid_end < os.path.getsize(events)   # a zero tail
        assert reported + 1 <= len(got) <= reported + 2
        assert all(isinstance(r, Record) and r.value[0] == r.index for r in got)
        manifest = json.load(open(os.path.join(proc.path, "manifest.json")))
        assert manifest["clean_shutdown"] is False
    report = repair(root)
    assert report.count("repaired") == 1, report.summary()
    with open_archive(root) as a:
        proc = a.processes[0]
        assert proc.clean and [r.value[0] for r in proc.events()] == list(range(len(got)))
        assert os.path.getsize(events) == proc.scan().valid_end         # cut to its real length
        assert proc.manifest["counts"]["blobs"] >= reported // 50
        for sub in os.listdir(os.path.join(proc.path, "blobs")):
            assert not [n for n in os.listdir(os.path.join(proc.path, "blobs", sub)) if n.startswith(".tmp-")]


def pid_dir_of(root):
    (name,) = [n for n in os.listdir(root) if n.startswith("pid-")]
    return os.path.join(root, name)


def test_unclosed_writer_leaves_zero_tail_read_as_unused_space(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root, close=False)
    events = os.path.join(pid_dir(root), "events.bin")
    with open_archive(root) as a:
        proc = a.processes[0]
        assert [r.value for r in proc.events()] == as_lists(RECORDS)
        state = proc.scan()
        assert not proc.torn and state.stopped is None and not proc.clean
        tail = open(events, "rb").read()[state.valid_end:]
        assert len(tail) > 0 and not tail.strip(b"\0")
    (pr,) = repair(root).processes
    assert pr.action == "repaired" and pr.truncated_bytes == len(tail)
    with open_archive(root) as a:
        assert a.processes[0].clean and [r.value for r in a.processes[0].events()] == as_lists(RECORDS)


def test_killed_between_trailer_and_cut_is_repaired_without_a_second_trailer(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root)
    d = pid_dir(root)
    closed = open(os.path.join(d, "events.bin"), "rb").read()
    with open(os.path.join(d, "events.bin"), "ab") as f:
        f.write(bytes(5000))                       # the reserved tail close() had not cut yet
    manifest = json.load(open(os.path.join(d, "manifest.json")))
    manifest["clean_shutdown"] = False
    json.dump(manifest, open(os.path.join(d, "manifest.json"), "w"))
    assert not open_archive(root).processes[0].clean
    assert repair(root).count("repaired") == 1
    assert open(os.path.join(d, "events.bin"), "rb").read() == closed


def test_repair_never_writes_through_a_hard_or_symbolic_link(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root, close=False)
    d = pid_dir(root)
    outside = tmp_path / "precious.bin"
    os.link(os.path.join(d, "events.bin"), outside)            # events.bin is also a file outside
    before = outside.read_bytes()
    (pr,) = repair(root).processes
    assert pr.action == "failed" and "2 hard links" in pr.error and "copy the archive" in pr.error
    assert outside.read_bytes() == before
    # a copy (independent files) repairs; a hard-linked manifest is replaced, never written through
    os.unlink(outside)
    os.link(os.path.join(d, "manifest.json"), tmp_path / "manifest-elsewhere.json")
    manifest_before = (tmp_path / "manifest-elsewhere.json").read_bytes()
    os.makedirs(tmp_path / "elsewhere")
    (tmp_path / "elsewhere" / ".tmp-keep").write_bytes(b"not the archive's")
    os.symlink(tmp_path / "elsewhere", os.path.join(d, "code"))          # a planted symlinked store dir
    (pr,) = repair(root).processes
    assert pr.action == "repaired", pr
    assert (tmp_path / "manifest-elsewhere.json").read_bytes() == manifest_before
    assert (tmp_path / "elsewhere" / ".tmp-keep").exists() and pr.temp_files_removed == 0


TRAILER_DOES_NOT_FIT = r"""
import json, os, sys
from hrr.archive import open_archive, open_process_writer, repair
mnt = sys.argv[1]
root = f"{mnt}/a"
w = open_process_writer(root, 77, {"backend": "sim"})
for i in range(50):
    w.append([i, "x" * 40])
w.close()
d = f"{root}/pid-77"
with open_archive(root) as a:
    pos = a.processes[0].scan().trailer_offset
w = None
# Rebuild it as a killed writer left it with no room at all: the last record ends on a page
# boundary, nothing follows it, the manifest is unclosed, and the disk is full.
data = open(f"{d}/events.bin", "rb").read()[:pos]
pad = (-(len(data) + 16 + 3)) % 4096 + 4096
import msgpack
from hrr.archive.format import FRAME_EVENT, encode_frame

data += encode_frame(FRAME_EVENT, msgpack.packb(b"p" * pad, use_bin_type=True))
assert len(data) % 4096 == 0
open(f"{d}/events.bin", "wb").write(data)
m = json.load(open(f"{d}/manifest.json"))
m["clean_shutdown"] = False
open(f"{d}/manifest.json", "w").write(json.dumps(m))
fd = os.open(f"{mnt}/filler", os.O_WRONLY | os.O_CREAT, 0o600)
try:
    while True:
        os.write(fd, b"x" * 4096)
except OSError:
    os.close(fd)
out = {"free": os.statvfs(mnt).f_bavail}
(p,) = repair(root).processes
out["first"] = [p.action, p.error, os.path.getsize(f"{d}/events.bin") == len(data)]
with open_archive(root) as a:
    out["readable"] = len(list(a.processes[0].events()))
os.unlink(f"{mnt}/filler")
(p,) = repair(root).processes
out["second"] = [p.action, p.error]
with open_archive(root) as a:
    out["clean"] = a.processes[0].clean
    out["events"] = len(list(a.processes[0].events()))
print(json.dumps(out))
"""


def test_repair_on_a_full_disk_says_what_it_could_not_write(tmp_path):
    reason = smallfs.unavailable_reason()
    if reason:
        pytest.skip(reason)
    done = smallfs.run_python_on_tmpfs("1m", tmp_path / "mnt", TRAILER_DOES_NOT_FIT)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["free"] == 0
    action, error, untouched = out["first"]
    assert action == "partial" and "no space left" in error and "51 complete records" in error, error
    assert untouched and out["readable"] == 51
    assert out["second"] == ["repaired", None] and out["clean"] is True and out["events"] == 51


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
