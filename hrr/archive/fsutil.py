"""File-system helpers: private modes, atomic whole-file writes, no-follow opens, preallocation."""
from __future__ import annotations

import errno
import os
import secrets
import stat

from hrr.archive.format import DIR_MODE, FILE_MODE, TMP_PREFIX

try:
    import resource as _resource
except ImportError:   # not on this platform: no file-size limit to check
    _resource = None  # type: ignore[assignment]

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


def claim_empty_dir(path: str) -> None:
    """Make ``path`` an empty directory of mode 0700 for a new archive, whatever the umask.

    Missing parents are created 0700 too; an existing empty directory is re-moded to 0700.
    Raises FileExistsError for a symlink, a non-directory or a non-empty directory.
    """
    missing, parent = [], os.path.dirname(path)
    while parent and not os.path.isdir(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    for p in reversed(missing):
        make_private_dir(p)
    if not make_private_dir(path):
        fd = open_dir_nofollow(path)
        try:
            if os.listdir(fd):
                raise FileExistsError(f"{path} exists and is not empty")
            os.fchmod(fd, DIR_MODE)    # a folder made 0777 (or 0500) before keeps no other mode
        finally:
            os.close(fd)


def is_out_of_space(exc: BaseException) -> bool:
    """True for the errors of a full disk, a full quota or the file-size limit (RLIMIT_FSIZE)."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def check_file_size_limit(size: int) -> None:
    """Raise OSError(EFBIG) if a file of ``size`` bytes is over the file-size limit (ulimit -f).

    Checked before writing, because going over it also sends SIGXFSZ, which kills a program
    that has set it back to its default action (Python itself ignores it)."""
    if _resource is None:
        return
    soft = _resource.getrlimit(_resource.RLIMIT_FSIZE)[0]
    if soft != _resource.RLIM_INFINITY and size > soft:
        raise OSError(errno.EFBIG, f"{os.strerror(errno.EFBIG)} (the file-size limit, ulimit -f, is {soft} bytes)")


def preallocate(fd: int, offset: int, length: int) -> None:
    """Reserve ``[offset, offset + length)`` of ``fd`` on disk, extending the file.

    Raises OSError (ENOSPC, EFBIG...) now rather than SIGBUS later when the range is written
    through a mapping. Where the file system cannot fallocate, zeros are written instead.
    """
    check_file_size_limit(offset + length)
    try:
        os.posix_fallocate(fd, offset, length)
        return
    except AttributeError:      # no posix_fallocate on this platform
        pass
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            raise
    zeros = bytes(min(length, 1 << 20))
    end = offset + length
    while offset < end:
        offset += os.pwrite(fd, zeros[:end - offset], offset)


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


def replace_file(name: str, data: bytes, *, dir_fd: int | None = None, fsync: bool = False) -> str:
    """Replace file ``name`` with ``data``: atomically (temp file + rename) where there is
    room, else, on a full disk, by rewriting the existing file in place.

    In place needs no new blocks when the new content is not larger (a full disk must not
    stop repair or a capture from marking its archive); it refuses a file that is not a
    regular file with one link. Returns "replaced" or "rewritten in place".
    """
    check_file_size_limit(len(data))
    directory, base = os.path.split(name)
    tmp = os.path.join(directory, f"{TMP_PREFIX}{base}-{secrets.token_hex(8)}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, FILE_MODE, dir_fd=dir_fd)
        try:
            os.fchmod(fd, FILE_MODE)
            write_all(fd, data)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)   # replaces a planted link itself
        return "replaced"
    except OSError as exc:
        _unlink_quiet(tmp, dir_fd)
        if not is_out_of_space(exc):
            raise
    fd = open_single_link(name, dir_fd)
    try:
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)
    return "rewritten in place"


def open_single_link(name: str, dir_fd: int | None = None) -> int:
    """Open a regular file read-write without following a symlink; refuse it if it has other
    hard links (writing it would change a file outside the archive). Raises OSError."""
    fd = os.open(name, os.O_RDWR | _NOFOLLOW | _CLOEXEC | _NONBLOCK, dir_fd=dir_fd)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
        os.close(fd)
        what = "not a regular file" if not stat.S_ISREG(st.st_mode) else \
            f"has {st.st_nlink} hard links (another name, maybe outside the archive, shares its content)"
        raise OSError(errno.EMLINK if stat.S_ISREG(st.st_mode) else errno.EINVAL,
                      f"{name} {what}; refusing to write it")
    return fd


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
        raise ValueError(f"has {st.st_nlink} hard links; hrr never reads through a link: "
                         "copy the archive (cp -r) to give it files of its own")
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


def _unlink_quiet(path: str, dir_fd: int | None = None) -> None:
    try:
        os.unlink(path, dir_fd=dir_fd)
    except OSError:
        pass
