"""The per-process archive writer: buffered event frames, blobs, code objects, manifest.

Records are packed into an in-memory buffer (no syscall per record); ``flush`` writes the
buffer with one ``write`` to the append-only events.bin, and a daemon thread flushes every
``flush_interval`` seconds while there is data. Whole files (blobs, code objects, manifest)
are written to a temp file in the same directory and renamed into place.
"""
from __future__ import annotations

import atexit
import os
import threading
import time
from typing import Any, Mapping

import msgpack

from hrr.archive import blobs, forking, manifest as manifest_mod
from hrr.archive.format import (EVENTS_FILE, FILE_MODE, FORMAT_VERSION, FRAME_EVENT, FRAME_TRAILER,
                                MANIFEST_FILE, PID_DIR_PREFIX, content_name, encode_file_header,
                                encode_frame, frame_header)
from hrr.archive.fsutil import atomic_write, make_private_dir, write_all
from hrr.errors import ArchiveError, LimitExceeded

FLUSH_INTERVAL = 0.05
#: A buffer larger than this is flushed by the appending thread itself (bounds memory).
MAX_BUFFER_BYTES = 8 << 20
#: Largest payload the writer accepts; matches the reader's default Limits.max_record_bytes.
MAX_RECORD_BYTES = 64 << 20


def open_process_writer(root: str | os.PathLike[str], pid: int, header: Mapping[str, Any], *,
                        manifest: Mapping[str, Any] | None = None,
                        flush_interval: float = FLUSH_INTERVAL) -> "ProcessWriter":
    """Create ``root/pid-<pid>/`` and return a writer for it (manifest written, clean_shutdown false).

    ``header`` must name ``backend``; its msgpack-native fields go into the events.bin header.
    ``manifest`` gives initial manifest fields (plugins, content_mode, host_snapshots, ...).
    """
    return ProcessWriter(os.fspath(root), pid, header, manifest or {}, flush_interval)


class ProcessWriter:
    """Writes one process's events.bin, blobs, code objects and manifest. Thread-safe."""

    def __init__(self, root: str, pid: int, header: Mapping[str, Any], manifest: Mapping[str, Any],
                 flush_interval: float) -> None:
        backend = header.get("backend")
        if type(backend) is not str:
            raise ArchiveError("writer header must name the backend as a string", where=root)
        self.pid = pid
        self.path = os.path.join(root, f"{PID_DIR_PREFIX}{pid}")
        self._lock = threading.Lock()      # buffer, counts, manifest, dedup set
        self._io_lock = threading.Lock()   # events.bin writes; always taken before _lock
        self._buf = bytearray()
        self._packer = msgpack.Packer(use_bin_type=True)
        self._events = 0
        self._known: set[tuple[str, str]] = set()   # (kind, name) known to be on disk
        self._made_dirs: set[str] = set()
        self._counts = {"events": 0, "blobs": 0, "blob_bytes": 0, "code_objects": 0, "code_bytes": 0}
        self._closed = False
        self._inert = False
        self.write_error: BaseException | None = None
        try:
            make_private_dir(root)
            os.mkdir(self.path, 0o700)
            os.chmod(self.path, 0o700)
        except OSError as exc:
            raise ArchiveError(f"cannot create the process directory: {exc}", where=self.path,
                               hint="choose a new archive directory for each capture") from None
        fields = {**header, "format_version": FORMAT_VERSION, "pid": pid,
                  "created": header.get("created", time.time())}
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) \
            | getattr(os, "O_CLOEXEC", 0)
        self._fd = os.open(os.path.join(self.path, EVENTS_FILE), flags, FILE_MODE)
        os.fchmod(self._fd, FILE_MODE)
        try:
            write_all(self._fd, encode_file_header(fields))
        except (TypeError, ValueError, OverflowError) as exc:
            os.close(self._fd)
            raise ArchiveError(f"header is not msgpack-native: {exc}", where=self.path) from None
        self._manifest = manifest_mod.default_manifest(pid, backend)
        self._manifest["created"] = fields["created"]
        self._manifest.update(manifest)
        self._write_manifest()
        forking.track_writer(self)
        self._wake = threading.Event()
        self._flusher = threading.Thread(target=self._flush_loop, args=(flush_interval,),
                                         name=f"hrr-archive-flusher-{pid}", daemon=True)
        self._flusher.start()

    # -- events ---------------------------------------------------------------------------
    def append(self, record: Any) -> None:
        """Pack ``record`` (msgpack-native values) as an event frame into the in-memory buffer."""
        with self._lock:
            if self._inert or self._closed:
                return
            try:
                payload = self._packer.pack(record)
            except (TypeError, ValueError, OverflowError) as exc:
                self._packer.reset()
                raise ArchiveError(f"record is not msgpack-native: {exc}", where=self.path,
                                   hint="records may hold only lists, str-keyed dicts, ints, floats, "
                                        "str, bytes, bools and None") from None
            if len(payload) > MAX_RECORD_BYTES:
                raise LimitExceeded(f"record of {len(payload)} bytes is over {MAX_RECORD_BYTES}",
                                    where=f"{self.path} record {self._events}",
                                    hint="store large data with put_blob and record its name")
            self._buf += frame_header(FRAME_EVENT, payload)
            self._buf += payload
            self._events += 1
            big = len(self._buf) > MAX_BUFFER_BYTES
        if big:
            self.flush()

    def flush(self) -> None:
        """Write the buffered frames to events.bin with one write."""
        with self._io_lock:
            with self._lock:
                if self._inert or not self._buf or self.write_error is not None:
                    return
                data, self._buf = self._buf, bytearray()
            try:
                write_all(self._fd, data)
            except OSError as exc:
                self.write_error = exc
                raise ArchiveError(f"cannot write events: {exc}", where=os.path.join(self.path, EVENTS_FILE),
                                   hint="the disk may be full; the archive keeps the records written so far")

    def _flush_loop(self, interval: float) -> None:
        while not self._wake.wait(interval):
            if self._inert or self._closed:
                return
            if self._buf:
                try:
                    self.flush()
                except ArchiveError:
                    return

    # -- blobs and code objects -----------------------------------------------------------
    def put_blob(self, data: Any) -> str:
        """Store ``data`` (bytes or a C-contiguous buffer, hashed and written as given) once; return its name."""
        return self._put("blob", data)

    def put_code_object(self, data: Any) -> str:
        """Store a code object once under code/<xxh3_128 hex>; return its name."""
        return self._put("code", data)

    def _put(self, kind: str, data: Any) -> str:
        name = content_name(data)
        with self._lock:
            if (kind, name) in self._known or self._inert or self._closed:
                return name
        try:
            written = blobs.store(self.path, kind, name, data, self._made_dirs)
        except OSError as exc:
            raise ArchiveError(f"cannot write {kind} {name}: {exc}", where=self.path,
                               hint="the disk may be full, or a link was planted in the archive") from None
        with self._lock:
            if (kind, name) not in self._known:
                self._known.add((kind, name))
                if written:
                    prefix = "blob" if kind == "blob" else "code_object"
                    self._counts[f"{prefix}s"] += 1
                    self._counts[f"{prefix.split('_')[0]}_bytes"] += memoryview(data).nbytes
        return name

    # -- manifest and close ---------------------------------------------------------------
    def update_manifest(self, **fields: Any) -> None:
        """Merge ``fields`` into the manifest and rewrite it atomically."""
        with self._lock:
            if self._inert:
                return
            self._manifest.update(fields)
            self._write_manifest()

    def add_unreplayable(self, api: str, reason: str, **extra: Any) -> None:
        """Note once in the manifest that ``api`` cannot be replayed, and why."""
        with self._lock:
            if self._inert:
                return
            entry = {"api": api, "reason": reason, **extra}
            if entry not in self._manifest["unreplayable_apis"]:
                self._manifest["unreplayable_apis"] = [*self._manifest["unreplayable_apis"], entry]
                self._write_manifest()

    def close(self, **manifest_fields: Any) -> None:
        """Flush, append the trailer, fsync, and write the manifest with clean_shutdown true."""
        if self._inert or self._closed:
            return
        self.flush()
        with self._io_lock:
            with self._lock:
                if self._closed:
                    return
                self._closed = True
                self._wake.set()
                trailer = msgpack.packb({"events": self._events, "closed": time.time()}, use_bin_type=True)
                write_all(self._fd, encode_frame(FRAME_TRAILER, trailer))
                os.fsync(self._fd)
                os.close(self._fd)
                self._manifest.update(manifest_fields)
                self._manifest["clean_shutdown"] = True
                self._write_manifest()
        forking.untrack_writer(self)

    @property
    def closed(self) -> bool:
        """True after close(), or in a forked child (an inherited writer writes nothing)."""
        return self._closed or self._inert

    def _write_manifest(self) -> None:   # caller holds _lock (or is the constructor)
        self._manifest["counts"] = {**self._manifest.get("counts", {}), **self._counts,
                                    "events": self._events}
        atomic_write(os.path.join(self.path, MANIFEST_FILE), manifest_mod.encode(self._manifest), fsync=True)

    # -- fork support (see forking.py) ----------------------------------------------------
    def _fork_locks(self) -> tuple[threading.Lock, threading.Lock]:
        return (self._io_lock, self._lock)

    def _become_inert(self) -> None:
        self._inert = True
        self._buf = bytearray()
        try:
            os.close(self._fd)
        except OSError:
            pass


@atexit.register
def _flush_at_exit() -> None:
    """Flush what open writers buffered (the daemon flusher does not run at interpreter exit)."""
    for writer in forking.live_writers():
        try:
            writer.flush()
        except Exception:
            pass
