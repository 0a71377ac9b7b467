"""``hrr repair``: close every process archive a killed capture left open. Idempotent.

For each pid directory that is not clean: delete leftover temp files, cut events.bin after
its last complete frame with a good checksum (rewriting a torn file header from the
manifest), append a trailer, and rewrite the manifest with clean_shutdown and repaired
true. Every file is reached through directory fds opened without following a symlink,
and a file with more than one hard link is never written; a process whose events.bin has
bad magic or an unknown version is reported as failed and left untouched. Repair needs no
free space: it cuts in place, writes the trailer into bytes the file already has where it
can, and rewrites the manifest in place when a new copy does not fit; what did not fit is
reported ("partly repaired") and a later run finishes the job.
"""
from __future__ import annotations

import os
import stat
import time
from typing import Any, Iterator

import attrs
import msgpack

from hrr.archive import manifest as manifest_mod
from hrr.archive.format import (BLOBS_DIR, CODE_DIR, EVENTS_FILE, FILE_MODE, FORMAT_VERSION, FRAME_EVENT, FRAME_HEADER,
                                FRAME_TRAILER, MANIFEST_FILE, PID_DIR_RE, TMP_PREFIX, api_table, encode_file_header,
                                encode_frame, frame_header, is_valid_name)
from hrr.archive.fsutil import is_out_of_space, open_dir_nofollow, open_single_link, replace_file
from hrr.archive.limits import Limits
from hrr.archive.reader import ProcessArchive
from hrr.errors import ArchiveError, HrrError


@attrs.define
class ProcessRepair:
    """What repair did to one process archive."""
    pid: int
    path: str
    action: str = "clean"            # "clean" (left alone), "repaired", "partial" (see error) or "failed"
    truncated_bytes: int = 0
    events_kept: int = 0
    bad_frames: int = 0
    header_rewritten: bool = False
    manifest_rebuilt: bool = False
    temp_files_removed: int = 0
    manifest_in_place: bool = False  # the disk had no room for a new manifest: rewritten in place
    error: str | None = None         # why it failed, or what a partial repair could not do
    recording_stopped: str | None = None   # the manifest's `incomplete` reason, if any

    def describe(self) -> str:
        """One line for the CLI."""
        if self.action == "failed":
            return f"pid {self.pid}: FAILED: {self.error}"
        if self.action == "partial":
            return f"pid {self.pid}: PARTLY repaired: {self.error}"
        if self.action == "clean":
            stopped = f" (its recording had stopped early: {self.recording_stopped})" if self.recording_stopped else ""
            return f"pid {self.pid}: already complete{stopped}"
        extra = [f"{self.events_kept} events kept",
                 f"{self.truncated_bytes} bytes cut after the last complete record"]
        if self.bad_frames:
            extra.append(f"{self.bad_frames} bad frames")
        if self.header_rewritten:
            extra.append("header rewritten")
        if self.manifest_rebuilt:
            extra.append("manifest rebuilt")
        if self.temp_files_removed:
            extra.append(f"{self.temp_files_removed} temp files removed")
        if self.manifest_in_place:
            extra.append("manifest rewritten in place (disk full)")
        return f"pid {self.pid}: repaired ({', '.join(extra)})"


@attrs.define
class RepairReport:
    """Per-process results of one repair run."""
    root: str
    processes: list[ProcessRepair] = attrs.Factory(list)
    interrupted: str | None = None   # the pid directory Ctrl-C stopped repair in

    def count(self, action: str) -> int:
        """How many processes ended with ``action``."""
        return sum(p.action == action for p in self.processes)

    def summary(self) -> str:
        """`Repair summary: R repaired, C already complete, F failed[, P partly repaired]`."""
        partial = f", {self.count('partial')} partly repaired" if self.count("partial") else ""
        return (f"Repair summary: {self.count('repaired')} repaired, {self.count('clean')} already complete, "
                f"{self.count('failed')} failed{partial}")


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
        try:
            _repair_one(root, name, limits, result, progress)
        except (HrrError, OSError) as exc:
            result.action, result.error = "failed", str(exc)
        except KeyboardInterrupt:
            # Repair is safe to stop at any instant (as a killed capture is): say how far
            # it got; running it again finishes the job.
            report.interrupted = name
            return report
        report.processes.append(result)
    return report


def _repair_one(root: str, name: str, limits: Limits, result: ProcessRepair, progress: Any = None) -> None:
    try:
        dir_fd = open_dir_nofollow(result.path)
    except OSError as exc:
        raise ArchiveError(f"cannot open the process directory ({exc.strerror})", where=result.path,
                           hint="a pid directory that is a symlink is refused") from None
    try:
        try:
            os.stat(EVENTS_FILE, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:   # killed between mkdir and creating events.bin
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            os.close(os.open(EVENTS_FILE, flags, FILE_MODE, dir_fd=dir_fd))
    finally:
        os.close(dir_fd)
    proc = ProcessArchive(root, name, limits, tolerate_bad_manifest=True)
    try:
        if progress is not None:  # the walk over the frames is repair's long part
            progress.task(f"repair {name}", manifest=proc.manifest)
            proc.scan(progress)
            progress.end()
        stopped = proc.manifest.get("incomplete")
        result.recording_stopped = stopped.get("reason") if isinstance(stopped, dict) else None
        if proc.clean:
            return
        result.action = "repaired"
        state = proc.scan()
        result.temp_files_removed = _remove_temp_files(proc._dir_fd)    # first: frees space on a full disk
        try:
            fd = open_single_link(EVENTS_FILE, proc._dir_fd)
        except OSError as exc:
            raise ArchiveError(f"events.bin cannot be written safely: {exc.strerror}", where=proc.events_path,
                               hint="repair never writes through a link: copy the archive (cp -r) and "
                                    "repair the copy") from None
        try:
            size = os.fstat(fd).st_size
            trailer_ok = False
            if proc.header_torn:
                header = {"format_version": FORMAT_VERSION, "pid": proc.pid, "apis": api_table(),
                          "backend": proc.manifest.get("backend", "unknown"), "repaired": True}
                cut, data, kept = 0, encode_file_header(header), 0
                result.header_rewritten = True
            else:
                trailer_ok = state.trailer is not None and state.trailer.get("events") == state.valid_frames
                cut = state.valid_end if trailer_ok or state.trailer_offset is None else state.trailer_offset
                data, kept = b"", state.valid_frames
                if state.open_start is not None and not trailer_ok:
                    _close_open_batch(fd, state.open_start, state.valid_end, state.open_records)
                    if not state.open_records:
                        cut = state.open_start
            if not trailer_ok:
                body = msgpack.packb({"events": kept, "closed": time.time(), "repaired": True}, use_bin_type=True)
                data += encode_frame(FRAME_TRAILER, body)
            result.truncated_bytes = size - cut
            written = _write_end(fd, cut, data, size)
            os.fsync(fd)
        finally:
            os.close(fd)
        result.events_kept, result.bad_frames = kept, state.bad_checksums
        if not written:
            result.action = "partial"
            result.error = (f"no space left on the device for the trailer: events.bin was cut after its "
                            f"{kept} complete records (byte {cut}) and is readable, but not closed; free "
                            f"some space and run `hrr repair` again")
            return
        manifest = dict(proc.manifest)
        result.manifest_rebuilt = proc.manifest_error is not None
        if result.manifest_rebuilt:
            manifest["manifest_rebuilt"] = proc.manifest_error
        counts = dict(manifest.get("counts", {}))
        counts.update(_count_store(proc._dir_fd), events=kept)
        manifest.update(counts=counts, clean_shutdown=True, repaired=True)
        try:
            how = replace_file(MANIFEST_FILE, manifest_mod.encode(manifest), dir_fd=proc._dir_fd, fsync=True)
        except OSError as exc:
            result.action = "partial"
            result.error = (f"events.bin is closed ({kept} records) but manifest.json could not be rewritten "
                            f"({exc.strerror or exc}); free some space and run `hrr repair` again")
            return
        result.manifest_in_place = how != "replaced"
    finally:
        proc.close()
    check = ProcessArchive(root, name, limits)
    try:
        if not check.clean:
            result.action, result.error = "failed", "archive still not clean after repair"
    finally:
        check.close()


def _close_open_batch(fd: int, start: int, end: int, count: int) -> None:
    """Write the frame header of a v2 batch the writer never closed (or that was cut short),
    over the records read one by one from ``start`` + 16 to ``end``; writes in place."""
    if not count:
        return
    body = start + FRAME_HEADER.size
    payload = os.pread(fd, end - body, body)
    head = frame_header(FRAME_EVENT, payload, count)
    _pwrite_all(fd, head[1:], start + 1)
    _pwrite_all(fd, head[:1], start)   # the type byte last, as the writer does


def _write_end(fd: int, cut: int, data: bytes, size: int) -> bool:
    """Make ``data`` the end of the file from offset ``cut``; False if the disk had no room
    (the file is then cut at ``cut``). Where the file already has the bytes (a reserved or
    torn tail), ``data`` overwrites them before the cut, so a full disk is no obstacle."""
    if size - cut >= len(data):
        _pwrite_all(fd, data, cut)
        os.ftruncate(fd, cut + len(data))
        return True
    os.ftruncate(fd, cut)
    try:
        _pwrite_all(fd, data, cut)
        return True
    except OSError as exc:
        if not is_out_of_space(exc):
            raise
        os.ftruncate(fd, cut)
        return False


def _pwrite_all(fd: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, offset)
        view, offset = view[n:], offset + n


def _store_dirs(dir_fd: int) -> list[tuple[int, str]]:
    """(fd, name) of the pid directory ("") and of blobs/, blobs/<xx>/ and code/ where each is
    a real directory (opened without following a symlink). The caller closes the fds."""
    out = [(os.dup(dir_fd), "")]
    for sub in (BLOBS_DIR, CODE_DIR):
        try:
            fd = open_dir_nofollow(sub, dir_fd)
        except OSError:
            continue
        out.append((fd, sub))
        if sub == BLOBS_DIR:
            for n in sorted(os.listdir(fd)):
                try:
                    out.append((open_dir_nofollow(n, fd), f"{sub}/{n}"))
                except OSError:
                    pass
    return out


def _remove_temp_files(dir_fd: int) -> int:
    removed = 0
    for fd, _ in _closing(_store_dirs(dir_fd)):
        for n in os.listdir(fd):
            if n.startswith(TMP_PREFIX):
                try:
                    os.unlink(n, dir_fd=fd)   # unlink never follows a symlink
                    removed += 1
                except OSError:            # a directory so named: not ours to remove
                    pass
    return removed


def _count_store(dir_fd: int) -> dict[str, int]:
    """Recount stored blobs and code objects (regular files with valid names only)."""
    counts = {"blobs": 0, "blob_bytes": 0, "code_objects": 0, "code_bytes": 0}
    for fd, label in _closing(_store_dirs(dir_fd)):
        if not label:
            continue
        key = "code_object" if label == CODE_DIR else "blob"
        for n in os.listdir(fd):
            if not is_valid_name(n):
                continue
            st = os.stat(n, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISREG(st.st_mode):
                counts[f"{key}s"] += 1
                counts[f"{key.split('_')[0]}_bytes"] += st.st_size
    return counts


def _closing(dirs: list[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    try:
        yield from dirs
    finally:
        for fd, _ in dirs:
            os.close(fd)
