"""The cache of compiled native images (the sim's kernels, its runtime object, the native record
path's extension), shared by every hrr run of one user.

An archive from a stranger must not be able to change what another program's kernel does,
so: the key is a SHA-256 over typed, length-delimited parts (a unit's name and source, each
header's name and text, each option, each name expression, the toolchain's identity, ...),
so no two different programs encode alike; an entry holds its own key and the digest of its
bytes and is checked against both before use; entries are opened without following links and
used only when they are regular files owned by this user, writable by no one else, in a
folder of the same kind; they are written atomically (a temporary file, then a rename). The
cache is bounded: ``HRR_CACHE_MAX_BYTES`` (default 1 GiB), least recently used entries
evicted past it.
"""
from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Iterable

MAGIC = b"HRRIMG\x01\n"
HEADER = len(MAGIC) + 64 + 32          # magic, the key (hex), the payload's SHA-256
SUFFIX = ".img"
MAX_BYTES_ENV = "HRR_CACHE_MAX_BYTES"
DEFAULT_MAX_BYTES = 1 << 30


def cache_dir() -> Path | None:
    """Where compiled images are kept: $HRR_CACHE_DIR, else $XDG_CACHE_HOME/hrr/kernels, else
    ~/.cache/hrr/kernels; None when it cannot be made or is not this user's alone (a link,
    another owner, writable by group or others)."""
    env = os.environ.get("HRR_CACHE_DIR")
    if env:
        path = Path(env)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        path = Path(base) / "hrr" / "kernels"
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        return None
    return path if os.access(path, os.W_OK) else None


def max_bytes() -> int:
    """The cache's size limit (``HRR_CACHE_MAX_BYTES``; 0 turns caching off)."""
    try:
        return max(0, int(os.environ.get(MAX_BYTES_ENV, DEFAULT_MAX_BYTES)))
    except ValueError:
        return DEFAULT_MAX_BYTES


def key(parts: Iterable[tuple[str, bytes | str]]) -> str:
    """The key of typed parts: each is its tag, a NUL, its length (8 bytes) and its bytes."""
    h = hashlib.sha256(b"hrr image key 1\0")
    for tag, data in parts:
        raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else bytes(data)
        h.update(tag.encode() + b"\0" + len(raw).to_bytes(8, "little") + raw)
    return h.hexdigest()


def _open_own(path: Path) -> tuple[int, os.stat_result] | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022 or st.st_nlink != 1:
        os.close(fd)
        return None
    return fd, st


def get(entry_key: str, limit: int) -> bytes | None:
    """The cached bytes for ``entry_key`` when the entry passes every check and holds at most
    ``limit`` bytes (None otherwise; a damaged entry is removed)."""
    folder = cache_dir()
    if folder is None:
        return None
    path = folder / f"{entry_key}{SUFFIX}"
    opened = _open_own(path)
    if opened is None:
        return None
    fd, st = opened
    with os.fdopen(fd, "rb") as f:
        if st.st_size < HEADER or st.st_size - HEADER > limit:
            return None
        blob = f.read(st.st_size)
    payload = blob[HEADER:]
    if (blob[:len(MAGIC)] != MAGIC or blob[len(MAGIC):len(MAGIC) + 64] != entry_key.encode()
            or blob[len(MAGIC) + 64:HEADER] != hashlib.sha256(payload).digest()):
        _remove(path)
        return None
    try:
        os.utime(path, follow_symlinks=False)   # most recently used
    except OSError:
        pass
    return payload


def put(entry_key: str, data: bytes) -> None:
    """Keep ``data`` under ``entry_key`` (atomically, mode 0600), then evict past the limit;
    nothing when the cache is off, unusable, or the entry alone is over the limit."""
    folder = cache_dir()
    limit = max_bytes()
    if folder is None or len(data) + HEADER > limit:
        return
    blob = MAGIC + entry_key.encode() + hashlib.sha256(data).digest() + data
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, folder / f"{entry_key}{SUFFIX}")
    except OSError:
        _remove(Path(tmp))
        return
    evict(limit)


def _remove(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def entries() -> list[tuple[Path, int, float]]:
    """(path, size, last use) of every entry of this user's, oldest use first."""
    folder = cache_dir()
    if folder is None:
        return []
    found = []
    with os.scandir(folder) as it:
        for e in it:
            if not e.name.endswith(SUFFIX):
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                found.append((Path(e.path), st.st_size, st.st_mtime))
    return sorted(found, key=lambda t: t[2])


def evict(limit: int) -> int:
    """Remove least recently used entries until the cache holds at most ``limit`` bytes;
    returns how many were removed."""
    found = entries()
    total = sum(size for _, size, _ in found)
    removed = 0
    for path, size, _ in found:
        if total <= limit:
            break
        _remove(path)
        total -= size
        removed += 1
    return removed


def info() -> dict[str, object]:
    """What ``hrr cache info`` prints: the folder, its entries and bytes, the limit."""
    folder = cache_dir()
    found = entries()
    return {"folder": str(folder) if folder is not None else None, "entries": len(found),
            "bytes": sum(size for _, size, _ in found), "max_bytes": max_bytes()}


def clear() -> int:
    """Remove every entry (and left-over temporary files); returns how many entries went."""
    folder = cache_dir()
    if folder is None:
        return 0
    n = evict(-1)
    with os.scandir(folder) as it:
        for e in it:
            if e.name.startswith(".tmp-") and e.is_file(follow_symlinks=False):
                _remove(Path(e.path))
    return n
