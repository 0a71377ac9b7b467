"""Archives in the formats an older hrr wrote (events.bin versions 1 and 2), for the tests
that check the reader, replay and the inspection commands still read them. hrr's own writer
writes version 3 only; docs/archive-format.md describes every version.

``open_old_writer(root, pid, header, format_version=N)`` returns a writer with the methods
of hrr's ``ProcessWriter`` that tests and the capture session use:

- version 2 is version 3's framing, so it is hrr's own writer with its file header and
  manifest rewritten to say 2 (the records are the caller's: a launch's ``extra.launch`` as
  formats 1 and 2 wrote it is a map);
- version 1 is :class:`V1Writer`: hrr's writer (blobs, code objects, manifest) with an
  events.bin of one event frame per record (count 0), each record as given, API names and
  thread ids spelled out, no API table in the header.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any, Mapping

import msgpack

from hrr.archive import forking, open_process_writer
from hrr.archive.format import (FILE_HEADER, FRAME_EVENT, FRAME_TRAILER, api_table, encode_file_header,
                                encode_frame, unpack_untrusted)
from hrr.archive.fsutil import write_all
from hrr.archive.writer import ProcessWriter
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


class V1Writer(ProcessWriter):
    """A format 1 events.bin, as an older hrr wrote it, beside hrr's own blobs, code objects
    and manifest (this is hrr's writer with its events file swapped for a version 1 one).

    Frames wait in memory and are written out at :meth:`flush` (so an archive left unclosed
    after ``flush`` reads as a killed capture's: no trailer, ``clean_shutdown`` false), when
    a megabyte waits, and at :meth:`close`. Not crash-safe, no size cap: a test helper."""

    def __init__(self, root: str | os.PathLike[str], pid: int, header: Mapping[str, Any],
                 manifest: Mapping[str, Any], *, pack_blobs: bool | None = None) -> None:
        created = header.get("created", time.time())
        super().__init__(os.fspath(root), pid, {**header, "created": created}, manifest,
                         pack_blobs=config().pack_blobs if pack_blobs is None else pack_blobs)
        self._api_names = api_table()
        self._pending = bytearray()        # frames not yet written to events.bin
        # events.bin starts again as version 1: its own header, no API table, no mapping
        self._mm.close()
        self._mm = None
        head = encode_file_header({**header, "format_version": 1, "pid": pid, "created": created}, 1)
        os.ftruncate(self._fd, 0)
        os.lseek(self._fd, 0, os.SEEK_SET)
        write_all(self._fd, head)
        self._pos = len(head)

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
            self._pos += len(self._pending)
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

    # -- close ------------------------------------------------------------------------
    def close(self, **manifest_fields: Any) -> None:
        """The trailer, then the manifest with clean_shutdown true."""
        with self._lock:
            if self._closed:
                return
            self._drain()
            self._closed = self._off = True
            trailer = msgpack.packb({"events": self._events, "closed": time.time()}, use_bin_type=True)
            frame = encode_frame(FRAME_TRAILER, trailer)
            write_all(self._fd, frame)
            self._pos += len(frame)
            os.fsync(self._fd)
            os.close(self._fd)
            if self._pack is not None:
                self._pack.sync()
                self._pack.close()
            self._manifest.update(manifest_fields)
            self._manifest["clean_shutdown"] = True
            self._write_manifest()
        forking.untrack_writer(self)

    def close_on_signal(self, signal_name: str, **manifest_fields: Any) -> None:
        self.close(**manifest_fields, closed_on_signal=signal_name)

    @property
    def bytes_written(self) -> int:
        """events.bin's bytes (those waiting included), blobs and code objects."""
        return self._pos + len(self._pending) + self._stored
