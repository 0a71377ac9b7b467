"""``hrr repair``: close every process archive a killed capture left open. Idempotent.

For each pid directory that is not clean: cut events.bin after its last complete frame with
a good checksum (rewriting a torn file header from the manifest), append a trailer, rewrite
the manifest with clean_shutdown and repaired true, and delete leftover temp files. Files
are opened without following symlinks; a process whose events.bin has bad magic or an
unknown version is reported as failed and left untouched.
"""
from __future__ import annotations

import os
import stat
import time
from typing import Any

import attrs
import msgpack

from hrr.archive import manifest as manifest_mod
from hrr.archive.format import (BLOBS_DIR, CODE_DIR, EVENTS_FILE, FILE_MODE, FORMAT_VERSION, FRAME_TRAILER, MANIFEST_FILE,
                                PID_DIR_RE, TMP_PREFIX, encode_file_header, encode_frame, is_valid_name)
from hrr.archive.fsutil import atomic_write, write_all
from hrr.archive.limits import Limits
from hrr.archive.reader import ProcessArchive
from hrr.errors import HrrError


@attrs.define
class ProcessRepair:
    """What repair did to one process archive."""
    pid: int
    path: str
    action: str = "clean"            # "clean" (left alone), "repaired" or "failed"
    truncated_bytes: int = 0
    events_kept: int = 0
    bad_frames: int = 0
    header_rewritten: bool = False
    manifest_rebuilt: bool = False
    temp_files_removed: int = 0
    error: str | None = None

    def describe(self) -> str:
        """One line for the CLI."""
        if self.action == "failed":
            return f"pid {self.pid}: FAILED: {self.error}"
        if self.action == "clean":
            return f"pid {self.pid}: already complete"
        extra = [f"{self.events_kept} events kept", f"{self.truncated_bytes} torn bytes cut"]
        if self.bad_frames:
            extra.append(f"{self.bad_frames} bad frames")
        if self.header_rewritten:
            extra.append("header rewritten")
        if self.manifest_rebuilt:
            extra.append("manifest rebuilt")
        if self.temp_files_removed:
            extra.append(f"{self.temp_files_removed} temp files removed")
        return f"pid {self.pid}: repaired ({', '.join(extra)})"


@attrs.define
class RepairReport:
    """Per-process results of one repair run."""
    root: str
    processes: list[ProcessRepair] = attrs.Factory(list)

    def count(self, action: str) -> int:
        """How many processes ended with ``action``."""
        return sum(p.action == action for p in self.processes)

    def summary(self) -> str:
        """`Repair summary: R repaired, C already complete, F failed`."""
        return (f"Repair summary: {self.count('repaired')} repaired, {self.count('clean')} already complete, "
                f"{self.count('failed')} failed")


def repair(root: str | os.PathLike[str], limits: Limits = Limits(), progress: Any = None) -> RepairReport:
    """Repair every ``pid-<pid>`` directory under ``root`` that was not closed cleanly.
    ``progress``: a :class:`hrr.cli.progress.Bar` (or None), told of each process and frame."""
    root = os.fspath(root)
    report = RepairReport(root)
    for name in sorted(os.listdir(root)):
        match = PID_DIR_RE.fullmatch(name)
        if not match:
            continue
        result = ProcessRepair(int(match.group(1)), os.path.join(root, name))
        report.processes.append(result)
        if os.path.islink(result.path):
            result.action, result.error = "failed", "pid directory is a symlink; refused"
            continue
        try:
            _repair_one(root, name, limits, result, progress)
        except (HrrError, OSError) as exc:
            result.action, result.error = "failed", str(exc)
    return report


def _repair_one(root: str, name: str, limits: Limits, result: ProcessRepair, progress: Any = None) -> None:
    events = os.path.join(root, name, EVENTS_FILE)
    if not os.path.lexists(events):   # killed between mkdir and creating events.bin
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        os.close(os.open(events, flags, FILE_MODE))
    proc = ProcessArchive(root, name, limits, tolerate_bad_manifest=True)
    try:
        if progress is not None:  # the walk over the frames is repair's long part
            progress.task(f"repair {name}", manifest=proc.manifest)
            proc.scan(progress)
            progress.end()
        if proc.clean:
            return
        result.action = "repaired"
        state = proc.scan()
        flags = os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(EVENTS_FILE, flags, dir_fd=proc._dir_fd)
        try:
            if proc.header_torn:
                header = {"format_version": FORMAT_VERSION, "pid": proc.pid,
                          "backend": proc.manifest.get("backend", "unknown"), "repaired": True}
                result.truncated_bytes = os.fstat(fd).st_size
                os.ftruncate(fd, 0)
                write_all(fd, encode_file_header(header))
                result.header_rewritten = True
                kept, trailer_ok = 0, False
            else:
                trailer_ok = state.trailer is not None and state.trailer.get("events") == state.valid_frames
                cut = state.valid_end if trailer_ok else (
                    state.trailer_offset if state.trailer is not None else state.valid_end)
                size = os.fstat(fd).st_size
                result.truncated_bytes = size - cut
                os.ftruncate(fd, cut)
                os.lseek(fd, cut, os.SEEK_SET)
                kept = state.valid_frames
            if not trailer_ok:
                body = msgpack.packb({"events": kept, "closed": time.time(), "repaired": True},
                                     use_bin_type=True)
                write_all(fd, encode_frame(FRAME_TRAILER, body))
            os.fsync(fd)
        finally:
            os.close(fd)
        result.events_kept, result.bad_frames = kept, state.bad_checksums
        manifest = dict(proc.manifest)
        result.manifest_rebuilt = proc.manifest_error is not None
        if result.manifest_rebuilt:
            manifest["manifest_rebuilt"] = proc.manifest_error
        counts = dict(manifest.get("counts", {}))
        counts.update(_count_store(proc.path), events=kept)
        manifest.update(counts=counts, clean_shutdown=True, repaired=True)
        atomic_write(os.path.join(proc.path, MANIFEST_FILE), manifest_mod.encode(manifest), fsync=True)
        result.temp_files_removed = _remove_temp_files(proc.path)
    finally:
        proc.close()
    check = ProcessArchive(root, name, limits)
    try:
        if not check.clean:
            result.action, result.error = "failed", "archive still not clean after repair"
    finally:
        check.close()


def _real_dirs(path: str) -> list[str]:
    """``path`` and its subdirectories one and two levels down that are real directories."""
    out = []
    for sub in ("", BLOBS_DIR, CODE_DIR):
        base = os.path.join(path, sub) if sub else path
        if not _is_real_dir(base):
            continue
        out.append(base)
        if sub == BLOBS_DIR:
            out.extend(os.path.join(base, n) for n in sorted(os.listdir(base)) if _is_real_dir(os.path.join(base, n)))
    return out


def _is_real_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _remove_temp_files(path: str) -> int:
    removed = 0
    for directory in _real_dirs(path):
        for n in os.listdir(directory):
            if n.startswith(TMP_PREFIX):
                os.unlink(os.path.join(directory, n))   # unlink never follows a symlink
                removed += 1
    return removed


def _count_store(path: str) -> dict[str, int]:
    """Recount stored blobs and code objects (regular files with valid names only)."""
    counts = {"blobs": 0, "blob_bytes": 0, "code_objects": 0, "code_bytes": 0}
    for directory in _real_dirs(path)[1:]:
        key = "code_object" if os.path.basename(directory) == CODE_DIR else "blob"
        for n in os.listdir(directory):
            if not is_valid_name(n):
                continue
            st = os.lstat(os.path.join(directory, n))
            if stat.S_ISREG(st.st_mode):
                counts[f"{key}s"] += 1
                counts[f"{key.split('_')[0]}_bytes"] += st.st_size
    return counts
