"""File-system helpers: private modes, atomic whole-file writes, no-follow opens."""
from __future__ import annotations

import os
import secrets
import stat

from hrr.archive.format import DIR_MODE, FILE_MODE, TMP_PREFIX

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def make_private_dir(path: str) -> bool:
    """Create ``path`` with mode 0700 whatever the umask; False if it already existed as a dir.

    Raises FileExistsError if something that is not a real directory (e.g. a symlink) is there.
    """
    try:
        os.mkdir(path, DIR_MODE)
    except FileExistsError:
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode):
            raise FileExistsError(f"{path} exists and is not a directory (or is a symlink)") from None
        return False
    os.chmod(path, DIR_MODE)
    return True


def write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    """Write every byte of ``data`` to ``fd`` (os.write may write less than asked)."""
    view = memoryview(data).cast("B")
    while view:
        n = os.write(fd, view)
        view = view[n:]


def atomic_write(path: str, data: bytes | bytearray | memoryview, *, fsync: bool = False) -> None:
    """Write ``path`` whole: a 0600 temp file in the same directory, then os.replace."""
    directory, name = os.path.split(path)
    tmp = os.path.join(directory, f"{TMP_PREFIX}{name}-{secrets.token_hex(8)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        write_all(fd, data)
        if fsync:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        _unlink_quiet(tmp)
        raise
    os.close(fd)
    try:
        os.replace(tmp, path)   # replaces a planted symlink itself, never writes through it
    except BaseException:
        _unlink_quiet(tmp)
        raise


def open_dir_nofollow(name: str, dir_fd: int | None = None) -> int:
    """Open a directory without following a symlink at its last component."""
    return os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)


def open_file_nofollow(name: str, dir_fd: int | None = None) -> tuple[int, os.stat_result]:
    """Open a regular file for reading without following symlinks or blocking on a FIFO;
    a file with more than one hard link is refused too.

    Returns (fd, fstat). Raises OSError (ELOOP for a symlink) or ValueError if not a regular file.
    """
    fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _NONBLOCK, dir_fd=dir_fd)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise ValueError("not a regular file")
    if st.st_nlink != 1:  # a hard link may be a file outside the archive: never read through one
        os.close(fd)
        raise ValueError(f"has {st.st_nlink} hard links; hrr never reads through a link")
    return fd, st


def read_exact(fd: int, size: int) -> bytes:
    """Read exactly ``size`` bytes from ``fd``; raises ValueError if the file is shorter or longer."""
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 24))
        if not chunk:
            raise ValueError(f"file shrank while reading ({size - left} of {size} bytes)")
        chunks.append(chunk)
        left -= len(chunk)
    if os.read(fd, 1):
        raise ValueError("file grew while reading")
    return b"".join(chunks)


def _unlink_quiet(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
