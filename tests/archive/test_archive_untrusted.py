"""The reader treats an archive as untrusted: version first, names, links, sizes, hashes, limits."""
from __future__ import annotations

import json
import os
import struct
import threading

import pytest

from archive_helpers import frame_at, pid_dir, write_archive
from hrr.archive import Limits, open_archive, open_process_writer
from hrr.archive import blobs as blobs_mod
from hrr.archive.format import FILE_HEADER, MAGIC
from hrr.errors import ArchiveError, BlobError, FormatError, LimitExceeded

# These tests open, tamper with or link blob files: one file per blob.
pytestmark = pytest.mark.usefixtures("loose_blobs")


def _events(root):
    return os.path.join(pid_dir(root), "events.bin")


def _patch(path, offset, data):
    raw = bytearray(open(path, "rb").read())
    raw[offset:offset + len(data)] = data
    open(path, "wb").write(bytes(raw))


def test_unknown_version_is_refused_before_anything_else(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root)
    path = _events(root)
    _patch(path, 8, struct.pack("<I", 4))
    _patch(path, 12, struct.pack("<I", 0xFFFFFFFF))      # a header length the reader must not trust yet
    with pytest.raises(FormatError) as exc:
        open_archive(root)
    msg = str(exc.value)
    assert "unknown format version 4" in msg and path in msg and "offset 8" in msg


def test_bad_magic_is_refused(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root)
    path = _events(root)
    _patch(path, 0, b"PK\x03\x04")
    with pytest.raises(FormatError) as exc:
        open_archive(root)
    msg = str(exc.value)
    assert "bad magic" in msg and path in msg and "offset 0" in msg


def test_short_file_with_wrong_magic_prefix_is_bad_magic_not_torn(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root)
    open(_events(root), "wb").write(b"HRX")
    with pytest.raises(FormatError, match="bad magic"):
        open_archive(root)
    open(_events(root), "wb").write(MAGIC[:3])
    assert open_archive(root).processes[0].torn


def test_header_checksum_and_header_pid_are_checked(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root)
    _patch(_events(root), FILE_HEADER.size + 1, b"\xff")
    with pytest.raises(FormatError, match="checksum"):
        open_archive(root)
    root2 = str(tmp_path / "b")
    write_archive(root2)
    os.rename(pid_dir(root2), pid_dir(root2, 99))
    with pytest.raises(FormatError, match="pid"):
        open_archive(root2)


def test_blob_content_not_matching_its_name_is_refused(tmp_path):
    root = str(tmp_path / "a")
    w = write_archive(root, close=False)
    name = w.put_blob(b"original bytes")
    w.close()
    path = os.path.join(pid_dir(root), "blobs", name[:2], name)
    os.chmod(path, 0o600)
    open(path, "wb").write(b"tampered bytes")
    proc = open_archive(root).processes[0]
    with pytest.raises(BlobError) as exc:
        proc.read_blob(name)
    assert name in str(exc.value) and path in str(exc.value) and "hashes to" in str(exc.value)


def test_oversized_blob_is_refused_before_it_is_read(tmp_path, monkeypatch):
    root = str(tmp_path / "a")
    w = write_archive(root, close=False)
    name = w.put_blob(b"x" * 100)
    small = w.put_blob(b"y" * 10)
    w.close()
    proc = open_archive(root, Limits(max_file_bytes=50)).processes[0]
    assert proc.blob_size(name) == 100                 # size alone is fine
    assert proc.read_blob(small) == b"y" * 10

    def must_not_read(*a, **k):
        raise AssertionError("blob was read before its size was checked")
    monkeypatch.setattr(blobs_mod, "read_exact", must_not_read)
    with pytest.raises(BlobError) as exc:
        proc.read_blob(name)
    assert "max_file_bytes=50" in str(exc.value) and name in str(exc.value)


@pytest.mark.parametrize("bad", ["../../../../etc/passwd", "A" * 32, "a" * 31, "a" * 33, "0" * 31 + "/",
                                 "", "0" * 32 + "\n", None, 123, b"0" * 32])
def test_malformed_blob_names_are_refused(tmp_path, bad):
    root = str(tmp_path / "a")
    write_archive(root)
    proc = open_archive(root).processes[0]
    for call in (proc.read_blob, proc.blob_size, proc.read_code_object):
        with pytest.raises(BlobError, match="malformed"):
            call(bad)


def test_missing_blob_is_refused(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root)
    with pytest.raises(BlobError, match="missing"):
        open_archive(root).processes[0].read_blob("0" * 32)


def _archive_with_blob(tmp_path, data=b"payload"):
    root = str(tmp_path / "a")
    w = write_archive(root, close=False)
    name = w.put_blob(data)
    code = w.put_code_object(data)
    w.close()
    return root, name, code


def test_symlinked_blob_file_is_refused(tmp_path):
    root, name, _ = _archive_with_blob(tmp_path)
    path = os.path.join(pid_dir(root), "blobs", name[:2], name)
    outside = str(tmp_path / "outside")
    os.rename(path, outside)                # same content: only the link itself is wrong
    os.symlink(outside, path)
    proc = open_archive(root).processes[0]
    for call in (proc.read_blob, proc.blob_size):
        with pytest.raises(BlobError, match="not a regular file"):
            call(name)


def test_symlinked_blob_prefix_dir_and_code_object_are_refused(tmp_path):
    root, name, code = _archive_with_blob(tmp_path)
    prefix = os.path.join(pid_dir(root), "blobs", name[:2])
    os.rename(prefix, str(tmp_path / "elsewhere"))
    os.symlink(str(tmp_path / "elsewhere"), prefix)
    code_path = os.path.join(pid_dir(root), "code", code)
    os.rename(code_path, str(tmp_path / "code-elsewhere"))
    os.symlink(str(tmp_path / "code-elsewhere"), code_path)
    proc = open_archive(root).processes[0]
    with pytest.raises(BlobError):
        proc.read_blob(name)
    with pytest.raises(BlobError):
        proc.read_code_object(code)


def test_fifo_blob_is_refused_without_blocking(tmp_path):
    root, name, _ = _archive_with_blob(tmp_path)
    path = os.path.join(pid_dir(root), "blobs", name[:2], name)
    os.remove(path)
    os.mkfifo(path)
    proc = open_archive(root).processes[0]
    outcome: list = []

    def read():
        try:
            proc.read_blob(name)
        except BlobError as exc:
            outcome.append(str(exc))
    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(10)
    blocked = t.is_alive()
    if blocked:                        # unblock the reader so the test run can end
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    assert not blocked, "reading a FIFO blocked"
    assert outcome and "not a regular file" in outcome[0]


def test_symlinked_pid_dir_events_and_manifest_are_refused(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root)
    real = str(tmp_path / "real")
    os.rename(pid_dir(root), real)
    os.symlink(real, pid_dir(root))
    with pytest.raises(ArchiveError, match="symlink"):
        open_archive(root)
    for name in ("events.bin", "manifest.json"):
        root2 = str(tmp_path / f"b-{name}")
        write_archive(root2)
        path = os.path.join(pid_dir(root2), name)
        os.rename(path, str(tmp_path / f"moved-{name}"))
        os.symlink(str(tmp_path / f"moved-{name}"), path)
        with pytest.raises(ArchiveError, match="symlink"):
            open_archive(root2)


def _set_manifest(root, **changes):
    path = os.path.join(pid_dir(root), "manifest.json")
    m = json.load(open(path))
    m.update(changes)
    open(path, "w").write(json.dumps(m))


@pytest.mark.parametrize("field,value", [("host_snapshots", "yes"), ("pid", "4242"), ("clean_shutdown", 1),
                                         ("content_mode", "everything"), ("plugins", {"a": 1}),
                                         ("unreplayable_apis", [{"api": "hipFoo"}]), ("counts", {"events": -1}),
                                         ("format_version", 4), ("pid", 1)])
def test_manifest_field_types_are_checked(tmp_path, field, value):
    root = str(tmp_path / "a")
    write_archive(root)
    _set_manifest(root, **{field: value})
    with pytest.raises(FormatError) as exc:
        open_archive(root)
    assert repr(field) in str(exc.value) or "pid" in str(exc.value) or "version" in str(exc.value)
    assert "manifest.json" in str(exc.value)


def test_manifest_unknown_fields_tolerated_and_bad_json_refused(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root)
    _set_manifest(root, from_the_future={"x": [1, 2]})
    assert open_archive(root).processes[0].manifest["from_the_future"] == {"x": [1, 2]}
    path = os.path.join(pid_dir(root), "manifest.json")
    for junk in ("[" * 100000, '{"pid": NaN}', "\xff", "[1]"):
        open(path, "w", errors="surrogateescape").write(junk)
        with pytest.raises(FormatError, match="manifest"):
            open_archive(root)


def test_manifest_over_its_limit_is_refused(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root)
    with pytest.raises(FormatError, match="max_manifest_bytes"):
        open_archive(root, Limits(max_manifest_bytes=64))


def test_event_and_process_limits(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root)
    proc = open_archive(root, Limits(max_events=2)).processes[0]
    with pytest.raises(LimitExceeded) as exc:
        list(proc.events())
    assert "max_events=2" in str(exc.value) and "record 2" in str(exc.value)
    write_archive(root, pid=4243)
    with pytest.raises(LimitExceeded, match="max_processes"):
        open_archive(root, Limits(max_processes=1))


def test_record_over_max_record_bytes_is_not_decoded(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root, records=[[b"x" * 1000], [1]], version=1)
    got = list(open_archive(root, Limits(max_record_bytes=100)).processes[0].events())
    assert type(got[0]).__name__ == "BadRecord" and len(got) == 1


def test_limits_are_validated_and_frozen():
    with pytest.raises(ValueError):
        Limits(max_file_bytes=0)
    with pytest.raises(ValueError):
        Limits(max_events=True)
    with pytest.raises(Exception):  # noqa: B017 - attrs picks the exception class; any refusal will do
        Limits().max_events = 5   # type: ignore[misc]


def test_not_an_archive(tmp_path):
    with pytest.raises(ArchiveError, match="not an hrr archive"):
        open_archive(str(tmp_path))
    with pytest.raises(ArchiveError, match="cannot list"):
        open_archive(str(tmp_path / "missing"))


def test_reader_never_writes(tmp_path):
    root = str(tmp_path / "a")
    w = open_process_writer(root, 5, {"backend": "sim"})
    w.append([1])
    w.flush()                    # not closed: torn-free but unclean
    before = {p: os.stat(os.path.join(dp, p)).st_mtime_ns for dp, _, fs in os.walk(root) for p in fs}
    proc = open_archive(root).processes[0]
    list(proc.events())
    assert not proc.clean and proc.scan().frames == 1
    after = {p: os.stat(os.path.join(dp, p)).st_mtime_ns for dp, _, fs in os.walk(root) for p in fs}
    assert before == after
    w.close()


# -- replay of untrusted archives (the reader's checks, then replay's own) ----------------

def _replay(root, strict):
    from hrrtest import replay
    return replay(root, backend="sim", strict=strict)


def test_replay_refuses_records_that_are_not_events(tmp_path):
    """Frames that decode but are not event records are refused one by one, never a
    traceback; --strict fails on them."""
    root = str(tmp_path / "a")
    write_archive(root)
    result = _replay(root, strict=True)
    (proc,) = result.processes
    assert result.exit_code == 1, proc
    assert len(proc.refusals) == 4, proc
    assert sum(r.category == "bad_record" and "not a 7-item array" in r.reason for r in proc.refusals) == 4, proc


def test_replay_fails_when_the_trailer_claims_records_events_bin_lacks(tmp_path):
    """A frame cut out of a closed archive, its trailer kept: the counts disagree."""
    root = str(tmp_path / "a")
    write_archive(root, flush_each=True)
    path = _events(root)
    with open_archive(root) as a:
        proc = a.processes[0]
        offsets = [frame_at(r, 2) for r in proc.events()]
        trailer_at = proc.scan().trailer_offset
    raw = open(path, "rb").read()
    open(path, "wb").write(raw[:offsets[1]] + raw[offsets[2]:])   # the second record removed
    assert offsets[2] < trailer_at
    result = _replay(root, strict=False)
    (proc,) = result.processes
    assert result.exit_code == 1, proc
    assert "its trailer says the process recorded 4 records, events.bin holds 3: records " \
           "were lost or removed" in proc.failures, proc


def test_record_over_max_record_bytes_inside_a_batch_is_refused_and_the_rest_read(tmp_path):
    root = str(tmp_path / "a")
    write_archive(root, records=[[b"x" * 1000], [1]])
    got = list(open_archive(root, Limits(max_record_bytes=100)).processes[0].events())
    assert type(got[0]).__name__ == "BadRecord" and "max_record_bytes" in got[0].reason
    assert [r.value for r in got[1:]] == [[1]]
