"""The content-addressed store: blobs/<2 hex>/<32 hex> and code/<32 hex>, named by xxh3_128;
small blobs may instead live in blobs/pack-<n>.dat (see pack.py). Loose files are looked up first."""
from __future__ import annotations

import os
from typing import Any, Callable

from hrr.archive.format import BLOBS_DIR, CODE_DIR, content_name, is_valid_name
from hrr.archive.fsutil import atomic_write, make_private_dir, open_dir_nofollow, open_file_nofollow, read_exact
from hrr.archive.pack import PackEntry, PackIndex
from hrr.errors import BlobError, LimitExceeded


class _Missing(Exception):
    """A blob is not a loose file: look in the packs (carries the error to raise if not there)."""

    def __init__(self, error: BlobError) -> None:
        super().__init__(str(error))
        self.error = error


def relpath(kind: str, name: str) -> tuple[str, ...]:
    """Path components of a stored object: ("blobs", "ab", name) or ("code", name)."""
    return (BLOBS_DIR, name[:2], name) if kind == "blob" else (CODE_DIR, name)


def store(pid_dir: str, kind: str, name: str, data: Any, made_dirs: set[str]) -> bool:
    """Write ``data`` (whose content name is ``name``) atomically unless that file exists.

    Returns whether it wrote. ``made_dirs`` caches directories already created.
    """
    parts = relpath(kind, name)
    directory = os.path.join(pid_dir, *parts[:-1])
    if directory not in made_dirs:
        for i in range(1, len(parts)):
            make_private_dir(os.path.join(pid_dir, *parts[:i]))
        made_dirs.add(directory)
    path = os.path.join(directory, name)
    if os.path.lexists(path):
        return False
    atomic_write(path, data)
    return True


class StoreReader:
    """Verified reads from one process directory's blob and code stores (never follows links)."""

    def __init__(self, pid_dir_fd: int, pid_dir: str, max_file_bytes: int, max_host_bytes: int = 1 << 62) -> None:
        self._dir_fd, self._dir, self._max = pid_dir_fd, pid_dir, max_file_bytes
        self._max_host, self._held = max_host_bytes, 0
        self._packs: PackIndex | None = None   # loaded at the first blob not found loose
        #: what the pack indexes' memory is charged to (replay's host budget); by default a
        #: cap of ``max_host_bytes`` for this process's indexes
        self.charge: Callable[[int, str], Any] = self._within_cap

    def _within_cap(self, n: int, what: str) -> int:
        if self._held + n > self._max_host:
            raise LimitExceeded(f"{what} needs {n} bytes of host memory, over max_host_bytes={self._max_host}")
        self._held += n
        return n

    def _pack_index(self) -> PackIndex | None:
        if self._packs is None:
            try:
                fd = open_dir_nofollow(BLOBS_DIR, self._dir_fd)
            except OSError:
                return None
            try:
                self._packs = PackIndex(fd, self._max, lambda n, what: self.charge(n, what))
            finally:
                os.close(fd)
        return self._packs

    def _packed(self, name: str, missing: BlobError) -> PackEntry:
        """The checked pack entry of blob ``name``, or ``missing`` (with why packs did not help) raised."""
        index = self._pack_index()
        if index is None:
            raise missing
        entry = index.get(name)
        if entry is not None:
            return entry
        where = os.path.join(self._dir, BLOBS_DIR)
        refused = index.why_refused(name)
        if refused is not None:
            raise BlobError(f"blob {name}: {refused}", where=where,
                            hint="the archive is corrupt or was tampered with")
        if index.problems:
            raise BlobError(f"blob {name} is missing; {'; '.join(index.problems)}", where=where,
                            hint="symlinks, hard links and special files are refused")
        raise missing

    def size(self, kind: str, name: str) -> int:
        """Size in bytes of a stored object, from fstat, without reading it."""
        try:
            fd, st = self._open(kind, name)
        except _Missing as exc:
            return self._packed(name, exc.error).length
        os.close(fd)
        return st.st_size

    def read(self, kind: str, name: str) -> bytes:
        """The bytes of a stored object, after checking its size and that they hash to its name."""
        try:
            fd, st = self._open(kind, name)
        except _Missing as exc:
            return self._read_packed(name, self._packed(name, exc.error))
        where = self._where(kind, name)
        try:
            if st.st_size > self._max:
                raise BlobError(f"{kind} {name} is {st.st_size} bytes, over max_file_bytes={self._max}",
                                where=where, hint="raise --max-file-bytes if you trust this archive")
            try:
                data = read_exact(fd, st.st_size)
            except ValueError as exc:
                raise BlobError(f"{kind} {name} changed while being read: {exc}", where=where) from None
        finally:
            os.close(fd)
        actual = content_name(data)
        if actual != name:
            raise BlobError(f"{kind} content hashes to {actual}, not to its name {name}",
                            where=where, hint="the archive is corrupt or was tampered with")
        return data

    def _read_packed(self, name: str, entry: PackEntry) -> bytes:
        where = os.path.join(self._dir, BLOBS_DIR, entry.pack)
        if entry.length > self._max:
            raise BlobError(f"blob {name} is {entry.length} bytes, over max_file_bytes={self._max}",
                            where=where, hint="raise --max-file-bytes if you trust this archive")
        try:
            bfd = open_dir_nofollow(BLOBS_DIR, self._dir_fd)
            try:
                fd, _ = open_file_nofollow(entry.pack, bfd)
            finally:
                os.close(bfd)
        except (OSError, ValueError) as exc:
            raise BlobError(f"blob {name}: {entry.pack} is not a regular file inside the archive ({exc})",
                            where=where, hint="symlinks, hard links and special files are refused") from None
        try:
            data = os.pread(fd, entry.length, entry.offset)
        except OSError as exc:
            raise BlobError(f"blob {name}: cannot read {entry.pack} ({exc})", where=where) from None
        finally:
            os.close(fd)
        if len(data) != entry.length:
            raise BlobError(f"blob {name}: {entry.pack} shrank while being read", where=where)
        actual = content_name(data)
        if actual != name:
            raise BlobError(f"blob content at offset {entry.offset} of {entry.pack} hashes to {actual}, "
                            f"not to its name {name}", where=where,
                            hint="the archive is corrupt or was tampered with")
        return data

    def _where(self, kind: str, name: str) -> str:
        return os.path.join(self._dir, *relpath(kind, name)) if is_valid_name(name) else self._dir

    def _open(self, kind: str, name: str) -> tuple[int, os.stat_result]:
        if not is_valid_name(name):
            raise BlobError(f"malformed {kind} name {name!r}: must be 32 lowercase hex characters",
                            where=self._dir, hint="the archive is corrupt or was tampered with")
        parts = relpath(kind, name)
        where = self._where(kind, name)
        fds: list[int] = []
        try:
            dir_fd = self._dir_fd
            for part in parts[:-1]:
                dir_fd = open_dir_nofollow(part, dir_fd)
                fds.append(dir_fd)
            return open_file_nofollow(parts[-1], dir_fd)
        except FileNotFoundError:
            error = BlobError(f"{kind} {name} is missing", where=where,
                              hint="the capture may have been killed while writing it")
            if kind != "blob":
                raise error from None
            raise _Missing(error) from None
        except (OSError, ValueError) as exc:
            raise BlobError(f"{kind} {name} is not a regular file inside the archive ({exc})",
                            where=where, hint="symlinks and special files are refused") from None
        finally:
            for fd in fds:
                os.close(fd)
