"""Archives in the formats an older hrr wrote (events.bin versions 1 and 2), for the tests
that check the reader, replay and the inspection commands still read them. hrr's own writer
writes version 3 only; docs/archive-format.md describes every version.

``open_old_writer(root, pid, header, format_version=N)`` returns a writer with the methods
of hrr's ``ProcessWriter`` that tests and the capture session use:

- version 2 is version 3's framing, so it is hrr's own writer with its file header and
  manifest rewritten to say 2 (the records are the caller's: a launch's ``extra.launch`` as
  formats 1 and 2 wrote it is a map);
- version 1 is :class:`V1Writer`: one event frame per record (count 0), each record as
  given, API names and thread ids spelled out, no API table in the header.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any, Mapping

import msgpack

from hrr.archive import blobs, manifest as manifest_mod, open_process_writer
from hrr.archive.format import (BLOBS_DIR, EVENTS_FILE, FILE_HEADER, FILE_MODE, FRAME_EVENT, FRAME_TRAILER,
                                MANIFEST_FILE, PID_DIR_PREFIX, api_table, content_name, encode_file_header,
                                encode_frame, unpack_untrusted)
from hrr.archive.fsutil import make_private_dir, replace_file, write_all
from hrr.archive.pack import SMALL_BLOB, PackWriter
from hrr.config import config

OLD_VERSIONS = (1, 2)
_DRAIN_BYTES = 1 << 20     # V1Writer writes its frames out once this many are waiting


def open_old_writer(root: str | os.PathLike[str], pid: int, header: Mapping[str, Any], *,
                    format_version: int, manifest: Mapping[str, Any] | None = None,
                    pack_blobs: bool | None = None) -> Any:
    """A writer of ``root/pid-<pid>/`` in events.bin format ``format_version`` (1 or 2)."""
    if format_version not in OLD_VERSIONS:
        raise ValueError(f"format {format_version} is not an old format: use hrr.archive.open_process_writer")
    fields = {**(manifest or {}), "format_version": format_version}
    if format_version == 1:
        return V1Writer(root, pid, header, fields, pack_blobs=pack_blobs)
    w = open_process_writer(root, pid, header, manifest=fields, pack_blobs=pack_blobs)
    _rewrite_header_version(w.events_path, format_version)
    return w


def _rewrite_header_version(events_path: str, version: int) -> None:
    """Give the file header of a just-opened events.bin ``version`` (same length: a version
    number is one msgpack byte). The writer maps the file shared, so it sees the new bytes."""
    fd = os.open(events_path, os.O_RDWR | os.O_NOFOLLOW)
    try:
        head = os.pread(fd, FILE_HEADER.size, 0)
        hlen = FILE_HEADER.unpack(head)[2]
        fields = unpack_untrusted(os.pread(fd, hlen, FILE_HEADER.size))
        new = encode_file_header(fields, version)
        assert len(new) == FILE_HEADER.size + hlen, "the header changed length"
        os.pwrite(fd, new, 0)
    finally:
        os.close(fd)


class V1Writer:
    """A format 1 events.bin, blobs, code objects and manifest, as an older hrr wrote them.

    Frames wait in memory and are written out at :meth:`flush` (so an archive left unclosed
    after ``flush`` reads as a killed capture's: no trailer, ``clean_shutdown`` false), when
    a megabyte waits, and at :meth:`close`. Not crash-safe, no size cap: a test helper."""

    def __init__(self, root: str | os.PathLike[str], pid: int, header: Mapping[str, Any],
                 manifest: Mapping[str, Any], *, pack_blobs: bool | None = None) -> None:
        root = os.fspath(root)
        self.pid = pid
        self.path = os.path.join(root, f"{PID_DIR_PREFIX}{pid}")
        self.events_path = os.path.join(self.path, EVENTS_FILE)
        self._lock = threading.Lock()
        self._packer = msgpack.Packer(use_bin_type=True)
        self._api_names = api_table()
        self._api_numbers = {name: i for i, name in enumerate(self._api_names)}
        self.seq = 0                       # the next append_call's sequence number
        self._events = 0
        self._closed = False
        self._pending = bytearray()        # frames not yet written to events.bin
        self._known: set[tuple[str, str]] = set()
        self._made_dirs: set[str] = set()
        self._pack: PackWriter | None = None
        self._pack_below = SMALL_BLOB if (config().pack_blobs if pack_blobs is None else pack_blobs) else 0
        self._stored = 0
        self._counts = {"events": 0, "blobs": 0, "blob_bytes": 0, "code_objects": 0, "code_bytes": 0}
        make_private_dir(root)
        os.mkdir(self.path, 0o700)
        os.chmod(self.path, 0o700)
        fields = {**header, "format_version": 1, "pid": pid, "created": header.get("created", time.time())}
        head = encode_file_header(fields, 1)
        self._fd = os.open(self.events_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
        os.fchmod(self._fd, FILE_MODE)
        write_all(self._fd, head)
        self._written = len(head)
        self._manifest = manifest_mod.default_manifest(pid, header["backend"])
        self._manifest["created"] = fields["created"]
        self._manifest.update(manifest)
        self._write_manifest()

    # -- events -----------------------------------------------------------------------
    def append(self, record: Any) -> None:
        """One event frame holding ``record`` (any msgpack-native value) as it is."""
        with self._lock:
            self._add(record)

    def append_call(self, api: int, args: Any, err: int, outs: Any, extra: Any) -> int:
        """Append ``[seq, tid, name, args, err, outs, extra]`` and return seq (numbers go on after close)."""
        with self._lock:
            seq = self.seq
            self.seq = seq + 1
            self._add([seq, threading.get_ident(), self._api_names[api], args, err, outs, extra])
            return seq

    def api_number(self, name: str) -> int:
        """The number :meth:`append_call` takes for ``name`` (the product writer's numbering)."""
        return self._api_numbers[name]

    def _add(self, record: Any) -> None:   # caller holds _lock
        if self._closed:
            return
        self._pending += encode_frame(FRAME_EVENT, self._packer.pack(record))
        self._events += 1
        if len(self._pending) >= _DRAIN_BYTES:
            self._drain()

    def _drain(self) -> None:   # caller holds _lock
        if self._pending:
            write_all(self._fd, bytes(self._pending))
            self._written += len(self._pending)
            self._pending.clear()

    def flush(self) -> None:
        """Write the waiting frames to events.bin."""
        with self._lock:
            if not self._closed:
                self._drain()

    def sync(self) -> None:
        with self._lock:
            if not self._closed:
                self._drain()
                os.fsync(self._fd)

    # -- blobs and code objects -------------------------------------------------------
    def put_blob(self, data: Any) -> str:
        return self._put("blob", data)

    def put_code_object(self, data: Any) -> str:
        return self._put("code", data)

    def _put(self, kind: str, data: Any) -> str:
        name = content_name(data)
        nbytes = memoryview(data).nbytes
        with self._lock:
            if self._closed or (kind, name) in self._known:
                return name
            if kind == "blob" and nbytes < self._pack_below:
                if self._pack is None:
                    blobs_dir = os.path.join(self.path, BLOBS_DIR)
                    make_private_dir(blobs_dir)
                    self._pack = PackWriter(blobs_dir)
                    self._manifest["blob_store"] = {"packs": self._pack.number + 1}
                self._pack.add(name, data)
                written = True
            else:
                written = blobs.store(self.path, kind, name, data, self._made_dirs)
            self._known.add((kind, name))
            if written:
                prefix = "blob" if kind == "blob" else "code_object"
                self._counts[f"{prefix}s"] += 1
                self._counts[f"{prefix.split('_')[0]}_bytes"] += nbytes
                self._stored += nbytes
        return name

    # -- manifest and close -----------------------------------------------------------
    def update_manifest(self, **fields: Any) -> None:
        with self._lock:
            if not self._closed:
                self._manifest.update(fields)
                self._write_manifest()

    def add_unreplayable(self, api: str, reason: str, **extra: Any) -> None:
        with self._lock:
            entry = {"api": api, "reason": reason, **extra}
            if not self._closed and entry not in self._manifest["unreplayable_apis"]:
                self._manifest["unreplayable_apis"] = [*self._manifest["unreplayable_apis"], entry]
                self._write_manifest()

    def close(self, **manifest_fields: Any) -> None:
        """The trailer, then the manifest with clean_shutdown true."""
        with self._lock:
            if self._closed:
                return
            self._drain()
            self._closed = True
            trailer = msgpack.packb({"events": self._events, "closed": time.time()}, use_bin_type=True)
            frame = encode_frame(FRAME_TRAILER, trailer)
            write_all(self._fd, frame)
            self._written += len(frame)
            os.fsync(self._fd)
            os.close(self._fd)
            if self._pack is not None:
                self._pack.sync()
                self._pack.close()
            self._manifest.update(manifest_fields)
            self._manifest["clean_shutdown"] = True
            self._write_manifest()

    def close_on_signal(self, signal_name: str, **manifest_fields: Any) -> None:
        self.close(**manifest_fields, closed_on_signal=signal_name)

    @property
    def bytes_written(self) -> int:
        """events.bin's bytes (those waiting included), blobs and code objects."""
        return self._written + len(self._pending) + self._stored

    @property
    def closed(self) -> bool:
        return self._closed

    def _write_manifest(self) -> None:   # caller holds _lock (or is the constructor)
        self._manifest["counts"] = {**self._manifest.get("counts", {}), **self._counts, "events": self._events}
        replace_file(os.path.join(self.path, MANIFEST_FILE), manifest_mod.encode(self._manifest), fsync=True)
