"""Pack files: round trip, `pack_archive`, and a tampered or torn pack or index refused per
blob (named, never a wrong blob, never a crash); symlinked and hard-linked packs refused."""
from __future__ import annotations

import os
import struct

import pytest

from hrr.archive import open_archive, open_process_writer
from hrr.archive.pack import ENTRY, ENTRY_COST, IDX_MAGIC, encode_entry, pack_archive
from hrr.errors import ArchiveError, BlobError


def _blob(i: int) -> bytes:
    return i.to_bytes(4, "little") * (8 + i % 5)


def _write(root, n=50, *, packed=True, big=False, close=True):
    w = open_process_writer(root, 7, {"backend": "sim"}, pack_blobs=packed, max_bytes=None, warn_bytes=None)
    names = [w.put_blob(_blob(i)) for i in range(n)]
    if big:
        names.append(w.put_blob(b"B" * (100 << 10)))
    w.append({"blobs": names})
    if close:
        w.close()
    return names


def _read_all(root):
    with open_archive(root) as a:
        (p,) = a.processes
        out = {}
        for name in _names(root):
            try:
                out[name] = p.read_blob(name)
            except BlobError as exc:
                out[name] = exc
        return out


def _names(root):
    with open_archive(root) as a:
        return next(r.value for r in a.processes[0].events())["blobs"]


def _blobs_dir(root):
    return root / "pid-7" / "blobs"


def test_round_trip_through_a_pack_keeps_few_files(tmp_path):
    names = _write(tmp_path, 500, big=True)
    got = _read_all(tmp_path)
    assert [got[n] for n in names[:-1]] == [_blob(i) for i in range(500)]
    assert got[names[-1]] == b"B" * (100 << 10)      # large: its own file
    files = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert len(files) == 5, files
    with open_archive(tmp_path) as a:
        p = a.processes[0]
        assert p.blob_size(names[3]) == len(_blob(3)) and p.manifest["blob_store"] == {"packs": 1}


def test_pack_archive_moves_loose_blobs_and_is_idempotent(tmp_path):
    names = _write(tmp_path, 60, packed=False, big=True)
    assert len(list(_blobs_dir(tmp_path).rglob("*"))) > 60
    report = pack_archive(str(tmp_path))
    assert report.packed == 60 and not report.skipped
    got = _read_all(tmp_path)
    assert [got[n] for n in names[:-1]] == [_blob(i) for i in range(60)] and got[names[-1]] == b"B" * (100 << 10)
    assert sorted(p.name for p in _blobs_dir(tmp_path).iterdir() if p.is_file()) == ["pack-0.dat", "pack-0.idx"]
    assert pack_archive(str(tmp_path)).packed == 0


def test_pack_archive_refuses_an_open_archive(tmp_path):
    _write(tmp_path, 3, packed=False, close=False)
    with pytest.raises(ArchiveError, match="not closed"):
        pack_archive(str(tmp_path))


@pytest.mark.parametrize("cut", ["index-mid-entry", "pack-short"])
def test_interrupted_pack_leaves_the_archive_readable(tmp_path, cut):
    """A `hrr pack` killed before it removed the loose files: pack or index torn, loose files still there."""
    names = _write(tmp_path, 40, packed=False)
    loose = {p: p.read_bytes() for p in _blobs_dir(tmp_path).rglob("*") if p.is_file()}
    pack_archive(str(tmp_path))
    for p, data in loose.items():      # as before the unlinks
        p.parent.mkdir(exist_ok=True)
        p.write_bytes(data)
    target = _blobs_dir(tmp_path) / ("pack-0.idx" if cut == "index-mid-entry" else "pack-0.dat")
    size = target.stat().st_size
    os.truncate(target, size - (ENTRY.size // 2 if cut == "index-mid-entry" else 100))
    got = _read_all(tmp_path)
    assert [got[n] for n in names] == [_blob(i) for i in range(40)]


def test_torn_index_tail_is_ignored_the_rest_reads(tmp_path):
    names = _write(tmp_path, 10)
    idx = _blobs_dir(tmp_path) / "pack-0.idx"
    os.truncate(idx, idx.stat().st_size - 1)          # the last entry is torn: that blob is absent
    got = _read_all(tmp_path)
    assert [got[n] for n in names[:9]] == [_blob(i) for i in range(9)]
    assert isinstance(got[names[9]], BlobError) and "missing" in got[names[9]].what


def test_tampered_pack_bytes_fail_the_hash_check_named(tmp_path):
    names = _write(tmp_path, 10)
    dat = _blobs_dir(tmp_path) / "pack-0.dat"
    raw = bytearray(dat.read_bytes())
    raw[len(_blob(0)) + 1] ^= 0xFF                      # inside blob 1
    dat.write_bytes(raw)
    got = _read_all(tmp_path)
    err = got[names[1]]
    assert isinstance(err, BlobError) and "hashes to" in err.what and names[1] in err.what
    assert "pack-0.dat" in err.what and got[names[2]] == _blob(2)


def _rewrite_entry(root, i, name, offset, length):
    idx = _blobs_dir(root) / "pack-0.idx"
    raw = bytearray(idx.read_bytes())
    pos = len(IDX_MAGIC) + i * ENTRY.size
    raw[pos:pos + ENTRY.size] = encode_entry(name, offset, length)
    idx.write_bytes(raw)


def test_index_entry_outside_the_pack_is_refused(tmp_path):
    names = _write(tmp_path, 10)
    _rewrite_entry(tmp_path, 4, names[4], 1 << 40, 16)
    got = _read_all(tmp_path)
    assert isinstance(got[names[4]], BlobError) and "outside pack-0.dat" in got[names[4]].what
    assert got[names[5]] == _blob(5)


def test_overlapping_index_entries_are_refused(tmp_path):
    names = _write(tmp_path, 10)
    _rewrite_entry(tmp_path, 4, names[4], 0, 40)          # overlaps blob 0's range
    got = _read_all(tmp_path)
    for n in (names[0], names[4]):
        assert isinstance(got[n], BlobError) and "overlaps" in got[n].what, got[n]
    assert got[names[5]] == _blob(5)


def test_index_entry_checksum_mismatch_is_refused(tmp_path):
    names = _write(tmp_path, 10)
    idx = _blobs_dir(tmp_path) / "pack-0.idx"
    raw = bytearray(idx.read_bytes())
    pos = len(IDX_MAGIC) + 3 * ENTRY.size + 16           # blob 3's offset field
    raw[pos] ^= 1
    idx.write_bytes(raw)
    got = _read_all(tmp_path)
    assert isinstance(got[names[3]], BlobError) and "checksum" in got[names[3]].what


def test_bad_index_magic_is_refused_named(tmp_path):
    names = _write(tmp_path, 3)
    idx = _blobs_dir(tmp_path) / "pack-0.idx"
    idx.write_bytes(b"NOTMAGIC" + idx.read_bytes()[8:])
    err = _read_all(tmp_path)[names[0]]
    assert isinstance(err, BlobError) and "bad magic" in err.what


@pytest.mark.parametrize("which", ["pack-0.dat", "pack-0.idx"])
@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_linked_pack_files_are_refused(tmp_path, which, link):
    root = tmp_path / "a"
    names = _write(root, 5)
    target = _blobs_dir(root) / which
    outside = tmp_path / "outside"
    os.rename(target, outside)
    (os.symlink if link == "symlink" else os.link)(outside, target)
    got = _read_all(root)
    for n in names:
        assert isinstance(got[n], BlobError) and which in got[n].what, got[n]
        assert "symlink" in got[n].what or "hard link" in got[n].what or "Too many levels" in got[n].what


def test_entry_layout_is_as_documented():
    e = encode_entry("00" * 16, 5, 7)
    assert len(e) == ENTRY.size == 40
    digest, off, length, _ = struct.unpack("<16sQQQ", e)
    assert (digest, off, length) == (bytes(16), 5, 7)


def test_failed_pack_write_indexes_nothing_and_stops_recording(tmp_path, monkeypatch):
    w = open_process_writer(tmp_path, 7, {"backend": "sim"}, pack_blobs=True, max_bytes=None, warn_bytes=None)
    first = w.put_blob(_blob(0))

    def full(*_):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "pwrite", full)
    second = w.put_blob(_blob(1))          # never raises into the program
    monkeypatch.undo()
    w.append({"blobs": [first]})          # not recorded: recording stopped
    w.close()
    assert "pack" in w.incomplete["reason"] and "No space" in w.incomplete["reason"]
    idx = _blobs_dir(tmp_path) / "pack-0.idx"
    assert idx.stat().st_size == len(IDX_MAGIC) + ENTRY.size     # the failed blob has no entry
    with open_archive(tmp_path) as a:
        p = a.processes[0]
        assert p.read_blob(first) == _blob(0)
        with pytest.raises(BlobError, match="missing"):
            p.read_blob(second)


def _huge_index(root, entries: int) -> str:
    """pid-7 with one real packed blob and a pack index of ``entries`` entries (the others
    name blobs of one byte each)."""
    names = _write(root, n=1)
    blobs = os.path.join(root, "pid-7", "blobs")
    start = os.path.getsize(os.path.join(blobs, "pack-0.dat"))
    with open(os.path.join(blobs, "pack-0.dat"), "ab") as f:
        f.write(b"x" * entries)
    with open(os.path.join(blobs, "pack-0.idx"), "ab") as f:
        f.write(b"".join(encode_entry(f"{i:032x}", start + i, 1) for i in range(1, entries)))
    return names[0]


def test_a_pack_index_costs_a_bounded_amount_per_entry(tmp_path):
    """Each entry costs at most what is charged for it while checked (about 330 bytes of
    Python objects each before, uncharged), and is held as 32 bytes of arrays."""
    import tracemalloc
    real = _huge_index(tmp_path, 200_000)
    with open_archive(tmp_path) as a:
        (p,) = a.processes
        tracemalloc.start()
        assert p.read_blob(real) == _blob(0)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak <= 200_000 * ENTRY_COST, peak


def test_a_pack_index_is_charged_to_the_host_budget(tmp_path):
    from hrr.archive.limits import Limits
    real = _huge_index(tmp_path, 200_000)
    with open_archive(tmp_path, Limits(max_host_bytes=1 << 20)) as a:
        (p,) = a.processes
        with pytest.raises(BlobError, match="max_host_bytes"):
            p.read_blob(real)
    charged = []
    with open_archive(tmp_path) as a:
        (p,) = a.processes
        p.set_host_charge(lambda n, what: charged.append((n, what)))
        assert p.read_blob(real) == _blob(0)
    assert charged and charged[0][0] >= 200_000 * ENTRY_COST - ENTRY_COST and "pack-0.idx" in charged[0][1]
