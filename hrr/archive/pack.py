"""Pack files: many small blobs in one ``blobs/pack-<n>.dat`` with an append-only index.

``blobs/pack-<n>.idx`` = 8-byte magic, then fixed 40-byte entries
``[16-byte xxh3_128 digest | u64 offset | u64 length | u64 xxh3_64 of the first 32 bytes]``
(little-endian). A blob's bytes are written to the .dat *before* its index entry, so a
process killed at any instant leaves every indexed blob whole (or, after a machine crash,
failing its hash check: never a wrong blob); a torn last entry is ignored. The reader
checks every entry (checksum, bounds against the pack's size, no overlap) and the hash of
what it reads; a bad entry is a ``BlobError`` for that blob only, never a crash.
``pack_archive`` moves loose blob files into a new pack: pack and index written and
fsynced first, loose files removed after, so an interrupted ``hrr pack`` loses nothing.
"""
from __future__ import annotations

import os
import re
import stat
import struct
from typing import Any, Callable

import attrs
import numpy as np
import xxhash

from hrr.archive import manifest as manifest_mod
from hrr.archive.format import BLOBS_DIR, FILE_MODE, MANIFEST_FILE, PID_DIR_RE, content_name, is_valid_name
from hrr.archive.fsutil import open_dir_nofollow, open_file_nofollow, read_exact, replace_file, write_all
from hrr.errors import ArchiveError

IDX_MAGIC = b"HRRPIDX\x01"
ENTRY = struct.Struct("<16sQQQ")       # digest, offset, length, xxh3_64 of the first 32 bytes
PACK_RE = re.compile(r"pack-([0-9]{1,9})\.idx")
#: Blobs under this size go into packs during capture; larger ones stay as their own files.
SMALL_BLOB = 64 << 10
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def encode_entry(name: str, offset: int, length: int) -> bytes:
    """One 40-byte index entry for blob ``name`` stored at ``offset`` (``length`` bytes)."""
    head = bytes.fromhex(name) + struct.pack("<QQ", offset, length)
    return head + struct.pack("<Q", xxhash.xxh3_64_intdigest(head))


class PackWriter:
    """Appends blobs to a new pack-<n>.dat/.idx pair in ``blobs_dir``. Not thread-safe (callers lock)."""

    def __init__(self, blobs_dir: str) -> None:
        n = 0
        while True:
            dat = os.path.join(blobs_dir, f"pack-{n}.dat")
            idx = os.path.join(blobs_dir, f"pack-{n}.idx")
            if not os.path.lexists(dat) and not os.path.lexists(idx):
                break
            n += 1
        self.number = n
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
        self._dat = os.open(dat, flags, FILE_MODE)
        try:
            self._idx = os.open(idx, flags | os.O_APPEND, FILE_MODE)
        except OSError:
            os.close(self._dat)
            raise
        self.size = 0
        try:
            os.fchmod(self._dat, FILE_MODE)
            os.fchmod(self._idx, FILE_MODE)
            write_all(self._idx, IDX_MAGIC)
        except OSError:
            self.close()
            raise

    def add(self, name: str, data: Any) -> None:
        """Append ``data`` (named ``name``) then its index entry; raises OSError (nothing indexed then)."""
        view = memoryview(data).cast("B")
        off = self.size
        while view:
            n = os.pwrite(self._dat, view, off)
            view, off = view[n:], off + n
        length = off - self.size
        entry = encode_entry(name, self.size, length)
        self.size = off   # even if the entry fails: the bytes are there, unindexed
        if os.write(self._idx, entry) != len(entry):   # a short entry is torn: the reader ignores it
            raise OSError(28, "short write of a pack index entry")

    def sync(self) -> None:
        """fsync both files."""
        os.fsync(self._dat)
        os.fsync(self._idx)

    def close(self) -> None:
        """Close both files (idempotent)."""
        for attr in ("_dat", "_idx"):
            fd = getattr(self, attr, -1)
            if fd >= 0:
                setattr(self, attr, -1)
                try:
                    os.close(fd)
                except OSError:
                    pass


@attrs.frozen
class PackEntry:
    pack: str      # "pack-<n>.dat"
    offset: int
    length: int


#: Host memory one index entry takes at the peak of its check (the 40-byte entry read, the
#: sort orders and masks; 138 bytes measured by tracemalloc over 200,000 entries), charged
#: before the index is read; once loaded it holds 32 (digest, offset, length).
ENTRY_COST = 144
_ROW = np.dtype([("digest", "S16"), ("offset", "<u8"), ("length", "<u8"), ("check", "<u8")])
_WHY = {1: "entry checksum mismatch", 2: "offset + length is outside {dat}", 3: "overlaps another entry of {dat}"}


class PackIndex:
    """Every pack index in one blobs/ directory, checked entry by entry (see the module
    docstring) and kept as sorted arrays (32 bytes an entry), its cost charged first:
    ``charge(n, what)`` raises (EventRefused, LimitExceeded) when the host budget is over."""

    def __init__(self, blobs_fd: int, max_file_bytes: int,
                 charge: Callable[[int, str], Any] | None = None) -> None:
        self._tables: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]] = []  # pack, digests, offsets, lengths
        self._bad: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]] = []     # idx, digests, why, entry number
        self.problems: list[str] = []          # packs refused whole
        self.packs = 0
        self.host_bytes = 0
        self._charge = charge
        for fname in sorted(os.listdir(blobs_fd)):
            if PACK_RE.fullmatch(fname):
                self._load(blobs_fd, fname, max_file_bytes)

    def get(self, name: str) -> PackEntry | None:
        """The checked entry of blob ``name`` (the first pack's that has it), or None."""
        key = bytes.fromhex(name)
        for pack, digests, offsets, lengths in self._tables:
            i = int(np.searchsorted(digests, key))
            if i < len(digests) and bytes(digests[i]).ljust(16, b"\0") == key:   # numpy drops trailing NULs
                return PackEntry(pack, int(offsets[i]), int(lengths[i]))
        return None

    def why_refused(self, name: str) -> str | None:
        """Why an index entry naming blob ``name`` was refused, or None."""
        key = bytes.fromhex(name)
        for idx, digests, why, number in self._bad:
            i = int(np.searchsorted(digests, key))
            if i < len(digests) and bytes(digests[i]).ljust(16, b"\0") == key:   # numpy drops trailing NULs
                return f"{idx} entry {int(number[i])}: " + _WHY[int(why[i])].format(dat=idx[:-4] + ".dat")
        return None

    def _load(self, blobs_fd: int, idx_name: str, max_file_bytes: int) -> None:
        dat_name = idx_name[:-4] + ".dat"
        try:
            fd, st = open_file_nofollow(idx_name, blobs_fd)
            try:
                if st.st_size > max_file_bytes:
                    raise ValueError(f"{st.st_size} bytes, over max_file_bytes={max_file_bytes}")
                cost = (st.st_size // ENTRY.size) * ENTRY_COST
                if self._charge is not None:
                    self._charge(cost, f"the pack index {idx_name} ({st.st_size // ENTRY.size} entries)")
                self.host_bytes += cost
                raw = read_exact(fd, st.st_size)
            finally:
                os.close(fd)
        except (OSError, ValueError) as exc:
            self.problems.append(f"{idx_name} refused: {exc}")
            return
        except Exception as exc:   # noqa: BLE001 - the host budget's refusal, whichever class it is
            self.problems.append(f"{idx_name} refused: {exc}")
            return
        try:
            fd, dst = open_file_nofollow(dat_name, blobs_fd)
            os.close(fd)
        except (OSError, ValueError) as exc:
            self.problems.append(f"{dat_name} refused: {exc}")
            return
        if raw[:len(IDX_MAGIC)] != IDX_MAGIC:
            if len(raw) >= len(IDX_MAGIC) or not IDX_MAGIC.startswith(raw):
                self.problems.append(f"{idx_name} refused: bad magic {raw[:8]!r}")
            return   # a torn magic: a pack created as the process died, holding nothing
        self.packs += 1
        body = memoryview(raw)[len(IDX_MAGIC):]
        usable = len(body) - len(body) % ENTRY.size   # a torn last entry is ignored
        rows = np.frombuffer(body[:usable], dtype=_ROW)
        del raw
        n = len(rows)
        why = np.zeros(n, dtype=np.uint8)
        digest64 = xxhash.xxh3_64_intdigest
        checks = rows["check"]
        for i in range(n):
            pos = i * ENTRY.size
            if digest64(body[pos:pos + 32]) != int(checks[i]):
                why[i] = 1
        offsets, lengths = rows["offset"], rows["length"]
        size = np.uint64(dst.st_size)
        why[(why == 0) & ((offsets > size) | (lengths > size - np.minimum(offsets, size)))] = 2
        # the first good entry of each name is the one kept
        good = np.flatnonzero(why == 0)
        order = good[np.argsort(rows["digest"][good], kind="stable")]
        if len(order):
            first = np.ones(len(order), dtype=bool)
            first[1:] = rows["digest"][order][1:] != rows["digest"][order][:-1]
            kept = order[first]
        else:
            kept = order
        # overlap: an entry that starts before the furthest end of those before it (by offset)
        by_off = kept[np.argsort(offsets[kept], kind="stable")]
        if len(by_off) > 1:
            ends = offsets[by_off] + lengths[by_off]
            run = np.maximum.accumulate(ends)
            owner = np.maximum.accumulate(np.where(ends == run, np.arange(len(ends)), 0))
            hit = np.flatnonzero(offsets[by_off][1:] < run[:-1]) + 1
            why[by_off[hit]] = 3
            why[by_off[owner[hit - 1]]] = 3
        kept = kept[why[kept] == 0]
        self._tables.append((dat_name, rows["digest"][kept].copy(), offsets[kept].copy(), lengths[kept].copy()))
        bad = np.flatnonzero(why != 0)
        bad = bad[np.argsort(rows["digest"][bad], kind="stable")]
        self._bad.append((idx_name, rows["digest"][bad].copy(), why[bad].copy(), bad.astype(np.uint64)))


def count_packs(blobs_dir: str) -> int:
    """How many pack indexes ``blobs_dir`` holds (by name)."""
    try:
        return sum(1 for n in os.listdir(blobs_dir) if PACK_RE.fullmatch(n))
    except OSError:
        return 0


@attrs.define
class PackReport:
    packed: int = 0          # loose blobs moved into packs
    bytes: int = 0
    skipped: list[str] = attrs.Factory(list)   # loose files left alone, and why


def pack_archive(path: str, *, small: int = SMALL_BLOB,
                 say: Callable[[str], None] = lambda line: None) -> PackReport:
    """Move every loose blob under ``small`` bytes of every closed pid directory of ``path`` into a new pack.

    Safe to interrupt: loose files are removed only after the pack and index are fsynced.
    """
    report = PackReport()
    try:
        names = sorted(os.listdir(path))
    except OSError as exc:
        raise ArchiveError(f"cannot list the archive ({exc})", where=path) from None
    for name in names:
        if PID_DIR_RE.fullmatch(name):
            _pack_process(os.path.join(path, name), small, report, say)
    return report


def _pack_process(pid_dir: str, small: int, report: PackReport, say: Callable[[str], None]) -> None:
    man_path = os.path.join(pid_dir, MANIFEST_FILE)
    try:
        dir_fd = open_dir_nofollow(pid_dir)
        try:
            fd, st = open_file_nofollow(MANIFEST_FILE, dir_fd)
        finally:
            os.close(dir_fd)
        try:
            manifest = manifest_mod.decode(read_exact(fd, min(st.st_size, 1 << 24)), man_path)
        finally:
            os.close(fd)
    except (OSError, ValueError) as exc:
        raise ArchiveError(f"cannot read the manifest ({exc})", where=man_path,
                           hint="run `hrr repair` on the archive first") from None
    if not isinstance(manifest, dict) or manifest.get("clean_shutdown") is not True:
        raise ArchiveError("this process's archive is not closed (still recording, or killed)", where=pid_dir,
                           hint="wait for the capture to end, or run `hrr repair` on the archive first")
    blobs_dir = os.path.join(pid_dir, BLOBS_DIR)
    if not os.path.isdir(blobs_dir) or os.path.islink(blobs_dir):
        return
    loose: list[tuple[str, str]] = []   # (prefix dir, name)
    for prefix in sorted(os.listdir(blobs_dir)):
        pdir = os.path.join(blobs_dir, prefix)
        if len(prefix) != 2 or os.path.islink(pdir) or not os.path.isdir(pdir):
            continue
        loose.extend((prefix, n) for n in sorted(os.listdir(pdir)) if is_valid_name(n) and n[:2] == prefix)
    if not loose:
        return
    writer: PackWriter | None = None
    moved: list[str] = []
    try:
        for prefix, name in loose:
            fpath = os.path.join(blobs_dir, prefix, name)
            st = os.lstat(fpath)
            if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
                report.skipped.append(f"{fpath}: not a regular file with one link")
                continue
            if st.st_size >= small:
                continue
            fd = os.open(fpath, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK)
            try:
                data = read_exact(fd, st.st_size)
            finally:
                os.close(fd)
            if content_name(data) != name:
                report.skipped.append(f"{fpath}: content does not hash to its name")
                continue
            if writer is None:
                writer = PackWriter(blobs_dir)
            writer.add(name, data)
            moved.append(fpath)
            report.bytes += len(data)
        if writer is None:
            return
        writer.sync()
    finally:
        if writer is not None:
            writer.close()
    dfd = os.open(blobs_dir, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
    for fpath in moved:   # only now: the pack and its index are on disk
        os.unlink(fpath)
        report.packed += 1
    for prefix in {os.path.basename(os.path.dirname(p)) for p in moved}:
        try:
            os.rmdir(os.path.join(blobs_dir, prefix))
        except OSError:
            pass   # not empty: large blobs stay loose
    store = manifest.get("blob_store")
    manifest["blob_store"] = {**(store if isinstance(store, dict) else {}), "packs": count_packs(blobs_dir)}
    replace_file(man_path, manifest_mod.encode(manifest), fsync=True)
    say(f"hrr: {os.path.basename(pid_dir)}: {len(moved)} blobs packed into {blobs_dir}/pack-{writer.number}.dat")
