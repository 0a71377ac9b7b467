"""The per-process archive writer: event frames in a memory-mapped events.bin, blobs, code objects, manifest.

``append`` packs a record straight into a shared mapping of events.bin: no syscall per
record, and once it returns the record is in the kernel's page cache, which keeps it
whatever kills the process next (SIGKILL and segfaults included). It writes format
version 3 only (the reader also reads 1 and 2). Records go into the open batch frame: each
record's bytes are copied in with its first byte last, so a record is either whole or
starts with a zero byte, which readers take as the end.
The batch is closed (its count, length and one xxh3 checksum written, type byte last) when
it reaches BATCH_RECORDS records or BATCH_BYTES bytes, at ``flush()`` (sync points), at
fork and at close. ``append_call``, capture's hot path, checks one bound for a thread
already declared in the open batch (``_limit``: room, size cap, batch bytes) and leaves the
rest (a new batch or thread, growth, the cap, a stop) to its slow path. The file is reserved on
disk (``posix_fallocate``) in growing steps *before* each mapping, so a full disk or the
file-size limit is an error at growth time instead of a SIGBUS; the unused reserved tail
stays zero, which readers take as the end of the stream. ``close`` writes the trailer into
space kept for it, cuts the file to its real length and fsyncs. A write that fails for
lack of space (or any other I/O error) stops the recording, never the program: the
archive is marked incomplete, hrr says so on stderr, and later calls are only counted.
Whole files (large blobs, code objects, manifest) are written to a temp file and renamed;
small blobs are appended to a pack (pack.py). With a size cap, recording stops the same
way once the process directory would pass it.
"""
from __future__ import annotations

import errno
import mmap
import os
import sys
import threading
import time
from typing import Any, Mapping

import msgpack

from hrr.archive import blobs, forking, manifest as manifest_mod
from hrr.archive.pack import ENTRY, SMALL_BLOB, PackWriter
from hrr.archive.format import (EVENTS_FILE, FILE_MODE, FORMAT_VERSION, FRAME_EVENT, FRAME_HEADER, FRAME_TRAILER,
                                MANIFEST_FILE, PID_DIR_PREFIX, api_table, checksum, content_name,
                                encode_file_header, encode_frame, escape_record, BLOBS_DIR)
from hrr.api.wire import API, ARGS, ERR, EXTRA, OUTS, SEQ, TID, WIRE_LEN
from hrr.archive.fsutil import check_file_size_limit, make_private_dir, preallocate, replace_file, write_all
from hrr.archive.limits import DEFAULT_MAX_RECORD_BYTES
from hrr.errors import ArchiveError, LimitExceeded

#: Largest payload the writer accepts: the reader's default Limits.max_record_bytes.
MAX_RECORD_BYTES = DEFAULT_MAX_RECORD_BYTES
#: events.bin is reserved in steps that double from FIRST_STEP up to MAX_STEP (halved down
#: to what one record needs when the disk or the file-size limit refuses a large step).
FIRST_STEP = 256 << 10
MAX_STEP = 64 << 20
#: Space always kept free after the last record, so that close() can write the trailer
#: without asking the disk for more (a trailer frame is under 64 bytes).
TRAILER_RESERVE = 128
#: A batch frame is closed once it holds this many records or bytes (one checksum each).
BATCH_RECORDS = 256
BATCH_BYTES = 64 << 10
_PAGE = mmap.PAGESIZE
_get_ident = threading.get_ident
_NATIVE_HINT = "records may hold only lists, str-keyed dicts, ints, floats, str, bytes, bools and None"


def _round_up(n: int) -> int:
    return -(-n // _PAGE) * _PAGE


class ProcessWriter:
    """Writes one process's events.bin, blobs, code objects and manifest. Thread-safe."""

    #: The manifest's ``recorder``: which record path wrote the archive.
    RECORDER = manifest_mod.RECORDERS[1]

    def __init__(self, root: str, pid: int, header: Mapping[str, Any], manifest: Mapping[str, Any], *,
                 max_bytes: int | None = None, warn_bytes: int | None = None, pack_blobs: bool = False) -> None:
        backend = header.get("backend")
        if type(backend) is not str:
            raise ArchiveError("writer header must name the backend as a string", where=root)
        self.pid = pid
        self.path = os.path.join(root, f"{PID_DIR_PREFIX}{pid}")
        self.events_path = os.path.join(self.path, EVENTS_FILE)
        self._lock = self._new_lock()      # mapping, position, counts, manifest, dedup set
        self._io_lock = threading.Lock()   # close and stop; always taken before _lock
        self._packer = msgpack.Packer(use_bin_type=True)
        # append_call packs with a packer that takes only the exact types (list, int, str, dict...):
        # the same bytes for a fifth fewer instructions; anything else is packed again by _packer.
        self._strict = msgpack.Packer(use_bin_type=True, strict_types=True)
        self._packb = self._strict.pack
        self._events = 0
        self._known: set[tuple[str, str]] = set()   # (kind, name) known to be on disk
        self._made_dirs: set[str] = set()
        self._counts = {"events": 0, "blobs": 0, "blob_bytes": 0, "code_objects": 0, "code_bytes": 0}
        self._closed = False
        self._inert = False
        self._off = False                  # closed, inert or stopped: append does nothing
        self.incomplete: dict[str, Any] | None = None   # why recording stopped early
        self._not_recorded = 0             # calls appended after recording stopped
        self._mm: Any = None               # the mmap.mmap of events.bin; None once unmapped
        self._pos = 0                      # end of the last whole frame
        self._cap = 0                      # bytes reserved on disk and mapped
        self._max_bytes, self._warn_bytes = max_bytes, warn_bytes
        self._check_at = 0                 # append checks the cap and warning once past this total
        self._set_check_at()
        self._stored = 0                   # bytes of blobs, code objects and pack entries written
        self._pack: PackWriter | None = None
        self._pack_below = SMALL_BLOB if pack_blobs else 0   # blobs smaller than this go into the pack
        self._batch_start = -1             # offset of the open batch's frame header; -1: none open
        self._batch_first = 0              # _events when the open batch was opened
        self._batch_full = 0               # the open batch is full once _events reaches this
        self._limit = -1                   # append_call's fast path writes a record ending here or before
        # thread id -> index in the open batch; empty whenever no batch is open or recording is
        # off (append_call's fast path relies on it)
        self._threads: dict[int, int] = {}
        apis = api_table()
        self._api_numbers = {name: i for i, name in enumerate(apis)}
        self.seq = 0                       # the next call's sequence number (append_call)
        try:
            make_private_dir(root)
            os.mkdir(self.path, 0o700)
            os.chmod(self.path, 0o700)
        except OSError as exc:
            raise ArchiveError(f"cannot create the process directory: {exc}", where=self.path,
                               hint="choose a new archive directory for each capture") from None
        fields = {**header, "format_version": FORMAT_VERSION, "pid": pid,
                  "created": header.get("created", time.time()), "apis": apis}
        try:
            head = encode_file_header(fields)
        except (TypeError, ValueError, OverflowError) as exc:
            raise ArchiveError(f"header is not msgpack-native: {exc}", where=self.path) from None
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            self._fd = os.open(self.events_path, flags, FILE_MODE)
        except OSError as exc:
            raise ArchiveError(f"cannot create events.bin: {exc}", where=self.events_path) from None
        try:
            os.fchmod(self._fd, FILE_MODE)
            write_all(self._fd, head)    # before the zeros: a kill here leaves a torn header, not zeros
            self._grow(len(head) + TRAILER_RESERVE)
        except OSError as exc:
            os.close(self._fd)
            raise ArchiveError(f"cannot write events.bin: {exc}", where=self.events_path,
                               hint="free some disk space (or raise `ulimit -f`) and capture again") from None
        self._pos = len(head)
        self._manifest = manifest_mod.default_manifest(pid, backend)
        self._manifest["created"] = fields["created"]
        self._manifest["recorder"] = self.RECORDER
        self._manifest.update(manifest)
        try:
            self._write_manifest()
        except OSError as exc:
            self._become_inert()
            raise ArchiveError(f"cannot write {MANIFEST_FILE}: {exc}", where=self.path,
                               hint="free some disk space (or raise `ulimit -f`) and capture again") from None
        forking.track_writer(self)

    def _new_lock(self) -> Any:
        """The state lock (the native path's is its core)."""
        return threading.Lock()

    # -- events ---------------------------------------------------------------------------
    def append(self, record: Any) -> None:
        """Pack ``record`` (msgpack-native values) into the open batch frame of the mapped file.

        Once this returns the record survives any death of the process: its bytes are in
        the mapping, first byte last, so a record is either whole or not there (a zero byte).
        """
        with self._lock:
            if self._off:
                if self.incomplete is not None:
                    self._not_recorded += 1
                return
            new_tid = None
            if type(record) is list and len(record) == WIRE_LEN and type(record[API]) is str \
                    and type(record[TID]) is int:
                num = self._api_numbers.get(record[API])
                if num is not None:
                    tid = record[TID]
                    t: Any = self._threads.get(tid)
                    if t is None:
                        new_tid = tid
                        self._threads[tid] = len(self._threads)
                        t = [tid]
                    record = [record[SEQ], t, num, record[ARGS], record[ERR], record[OUTS], record[EXTRA]]
            else:
                record = escape_record(record)
            try:
                payload = self._pack_any(record)
            except ArchiveError:
                if new_tid is not None:
                    del self._threads[new_tid]
                raise
            self._place_new(payload, new_tid)

    def append_call(self, api: int, args: Any, err: int, outs: Any, extra: Any) -> int:
        """Append one call's record and return its sequence number: capture's hot path.

        ``api`` is the call's number in :func:`~hrr.archive.format.api_table`. The number,
        the calling thread and the record are taken under the writer's one lock, so records
        lie in the file in sequence order with no lock of the caller's own; numbers go on
        being given (and counted as not recorded) once recording stopped. Survives any death
        of the process once it returns, as :meth:`append`."""
        with self._lock:
            seq = self.seq
            self.seq = seq + 1
            # The thread map holds only threads declared in the open batch: a hit means
            # recording on and a batch open, so the common call checks one more thing, that
            # the record ends at or before _limit (room, size cap, batch bytes: see _set_limit).
            t = self._threads.get(_get_ident())
            if t is None:
                return self._append_call_slow(seq, api, args, err, outs, extra)
            try:
                payload = self._packb([seq, t, api, args, err, outs, extra])
            except (TypeError, ValueError, OverflowError):
                self._strict.reset()
                payload = self._pack_any([seq, t, api, args, err, outs, extra])
            pos = self._pos
            end = pos + len(payload)
            if end > self._limit:
                self._place(payload)
                return seq
            mm = self._mm
            # No call from the first byte to the counters: a signal handler (close_on_signal)
            # sees either none or all of this record.
            mm[pos + 1:end] = payload[1:]
            mm[pos] = 0x97                 # last: a 7-item list's first byte (msgpack fixarray)
            self._pos = end
            self._events = n = self._events + 1
            if n >= self._batch_full:
                self._close_batch()
            return seq

    def _append_call_slow(self, seq: int, api: int, args: Any, err: int, outs: Any,
                          extra: Any) -> int:   # caller holds _lock
        """append_call for a thread new to the batch, no batch open or recording off."""
        if self._off:
            if self.incomplete is not None:
                self._not_recorded += 1
            return seq
        tid = _get_ident()
        t: Any = self._threads.get(tid)
        new_tid = None
        if t is None:
            new_tid = tid
            self._threads[tid] = len(self._threads)
            t = [tid]
        try:
            payload = self._pack_any([seq, t, api, args, err, outs, extra])
        except ArchiveError:
            if new_tid is not None:
                del self._threads[new_tid]
            raise
        self._place_new(payload, new_tid)
        return seq

    def _pack_any(self, record: Any) -> bytes:   # caller holds _lock
        """``record`` packed by the packer that takes tuples and subclasses (of int, str, ...) too."""
        try:
            return self._packer.pack(record)
        except (TypeError, ValueError, OverflowError) as exc:
            self._packer.reset()
            raise ArchiveError(f"record is not msgpack-native: {exc}", where=self.path,
                               hint=_NATIVE_HINT) from None

    def api_number(self, name: str) -> int:
        """The number :meth:`append_call` takes for the call (or pseudo-event) ``name``."""
        return self._api_numbers[name]

    def _place_new(self, payload: bytes, new_tid: int | None) -> None:   # caller holds _lock
        """:meth:`_place`, forgetting ``new_tid`` (declared in ``payload``) if the record is not written."""
        placed = False
        try:
            placed = self._place(payload)
        finally:
            if new_tid is not None and not placed:
                self._threads.pop(new_tid, None)   # numbered for a record never written

    def _place(self, payload: bytes) -> bool:   # caller holds _lock; recording on
        """Copy a packed record into the open batch (opening one), first byte last, closing
        the batch when full; False (counted) when the size cap or the disk refused it."""
        n = len(payload)
        if n > MAX_RECORD_BYTES:
            raise LimitExceeded(f"record of {n} bytes is over {MAX_RECORD_BYTES}",
                                where=f"{self.path} record {self._events}",
                                hint="store large data with put_blob and record its name")
        start = self._batch_start
        pos = self._pos
        begin = pos if start >= 0 else pos + FRAME_HEADER.size
        end = begin + n
        if end + TRAILER_RESERVE > self._cap or end + self._stored > self._check_at:
            if not self._room(end, end - pos):
                return False
        mm = self._mm
        # As in append_call: no call from the first byte to the counters.
        mm[begin + 1:end] = payload[1:]
        mm[begin] = payload[0]             # last: the record exists once its first byte is non-zero
        if start < 0:
            self._batch_first = self._events
            self._batch_full = self._events + BATCH_RECORDS
            self._batch_start = start = pos
        self._pos = end
        self._events += 1
        if self._events >= self._batch_full or end - start >= BATCH_BYTES:
            self._close_batch()
        else:
            self._set_limit()
        return True

    def _set_limit(self) -> None:   # caller holds _lock
        """Set _limit: where a record may end for append_call to write it with no other check.

        It keeps the trailer's reserve inside the mapping, the blobs and events under the size
        cap's (or warning's) check, the open batch under BATCH_BYTES and a record under
        MAX_RECORD_BYTES (a record never ends further from the batch's start than its size).
        Lower is always safe (the slow path checks all); it must be lowered whenever _stored grows."""
        start = self._batch_start
        self._limit = -1 if start < 0 else min(self._cap - TRAILER_RESERVE, self._check_at - self._stored,
                                               start + min(BATCH_BYTES - 1, MAX_RECORD_BYTES))

    def _room(self, end: int, more: int) -> bool:   # caller holds _lock
        """Make the mapping reach ``end`` (+ the trailer's reserve); False (counted) when the
        size cap or the disk says no."""
        if self._over_size(more):
            self._not_recorded += 1
            return False
        if end + TRAILER_RESERVE > self._cap:
            try:
                self._grow(end + TRAILER_RESERVE)
            except OSError as exc:
                self._stop(f"cannot grow {EVENTS_FILE}", exc)
                self._not_recorded += 1
                return False
        return True

    def _close_batch(self) -> None:   # caller holds _lock
        """Write the open batch's frame header: count, length and checksum first, type byte last."""
        start = self._batch_start
        if start < 0:
            return
        mm = self._mm
        body = start + FRAME_HEADER.size
        n = self._events - self._batch_first
        if n:
            payload = mm[body:self._pos]
            head = FRAME_HEADER.pack(FRAME_EVENT, n.to_bytes(3, "little"), len(payload),
                                     checksum(FRAME_EVENT, payload, n))
            mm[start + 1:body] = head[1:]
            mm[start] = FRAME_EVENT
        self._batch_start = -1
        self._threads.clear()

    def flush(self) -> None:
        """Close the open batch (its checksum written): capture calls this at every sync point.

        Costs no syscall. The records were safe from a process crash already (the page
        cache keeps them); :meth:`sync` also writes them to the disk (a machine crash).
        """
        with self._lock:
            if not self._off and self._mm is not None:
                self._close_batch()

    def sync(self) -> None:
        """:meth:`flush`, then ask the kernel to write the mapped records to the disk now (msync)."""
        with self._lock:
            if not self._off and self._mm is not None:
                self._close_batch()
                self._mm.flush()

    def _grow(self, end: int) -> None:   # caller holds _lock (or is the constructor)
        """Reserve and map events.bin up to at least ``end`` bytes; raises OSError if the disk says no."""
        need = _round_up(end)
        want = max(need, self._cap + min(max(self._cap, FIRST_STEP), MAX_STEP))
        while True:
            try:
                preallocate(self._fd, self._cap, want - self._cap)
                break
            except OSError:
                if want <= need:
                    raise
                want = max(need, _round_up(self._cap + (want - self._cap) // 2))
        mm = mmap.mmap(self._fd, want, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        old, self._mm, self._cap = self._mm, mm, want
        if old is not None:
            old.close()

    # -- the size cap ---------------------------------------------------------------------
    def _set_check_at(self) -> None:
        limits = [x for x in (self._max_bytes, self._warn_bytes) if x is not None]
        self._check_at = min(limits) if limits else 1 << 62

    def _over_size(self, more: int) -> bool:   # caller holds _lock
        """Warn once past the warning threshold; stop recording (True) if ``more`` bytes would pass the cap."""
        total = self._pos + self._stored + more
        warn = self._warn_bytes
        if warn is not None and total > warn:
            self._warn_bytes = None
            self._set_check_at()
            _say(f"hrr: pid {self.pid}: warning: the archive {self.path} has passed {warn} bytes; "
                 f"`hrr capture --max-archive-bytes N` stops recording at N bytes per process")
        if self._max_bytes is None or total <= self._max_bytes:
            return False
        self._stop_because(f"archive size cap of {self._max_bytes} bytes reached "
                           f"(--max-archive-bytes, HRR_MAX_ARCHIVE_BYTES; counted per process directory)")
        return True

    # -- stopping on a disk fault ---------------------------------------------------------
    def _stop(self, what: str, exc: OSError) -> None:   # caller holds _lock
        """Stop recording after a failed write: keep what is written, mark the archive incomplete."""
        reason = f"{what}: {exc.strerror or exc}"
        if exc.errno == errno.EFBIG and "ulimit" not in reason:
            reason += " (the file-size limit, ulimit -f)"
        self._stop_because(reason)

    def _stop_because(self, reason: str) -> None:   # caller holds _lock
        if self.incomplete is not None:
            return
        self._off = True
        self._threads.clear()              # append_call's fast path off too
        self.incomplete = {"reason": reason, "events_recorded": self._events}
        if not self._closed and not self._inert:
            try:   # give back the reserved tail, so that the manifest (and later the trailer) fit
                os.ftruncate(self._fd, self._pos + TRAILER_RESERVE)
            except OSError:
                pass
        _say(f"hrr: pid {self.pid}: recording stopped: {reason}. The archive {self.path} keeps the "
             f"{self._events} calls made before this and is marked incomplete; the program goes on unrecorded.")
        self._manifest["incomplete"] = dict(self.incomplete)
        self._write_manifest_or_say()

    # -- blobs and code objects -----------------------------------------------------------
    def put_blob(self, data: Any) -> str:
        """Store ``data`` (bytes or a C-contiguous buffer, hashed and written as given) once; return its name."""
        return self._put("blob", data)

    def put_code_object(self, data: Any) -> str:
        """Store a code object once under code/<xxh3_128 hex>; return its name."""
        return self._put("code", data)

    def _put(self, kind: str, data: Any) -> str:
        name = content_name(data)
        nbytes = memoryview(data).nbytes
        with self._lock:
            if (kind, name) in self._known or self._off:
                return name
            if self._over_size(nbytes):
                return name
            if kind == "blob" and nbytes < self._pack_below:
                return self._put_packed(name, data, nbytes)
        try:
            check_file_size_limit(memoryview(data).nbytes)
            written = blobs.store(self.path, kind, name, data, self._made_dirs)
        except OSError as exc:
            # No record can name this object any more: recording stops before the next append.
            with self._lock:
                self._stop(f"cannot write {kind} {name}", exc)
            return name
        with self._lock:
            if (kind, name) not in self._known:
                self._known.add((kind, name))
                if written:
                    prefix = "blob" if kind == "blob" else "code_object"
                    self._counts[f"{prefix}s"] += 1
                    self._counts[f"{prefix.split('_')[0]}_bytes"] += nbytes
                    self._stored += nbytes
                    self._set_limit()
        return name

    def _put_packed(self, name: str, data: Any, nbytes: int) -> str:   # caller holds _lock
        """Append a small blob to this writer's pack (created at the first one)."""
        try:
            if self._pack is None:
                blobs_dir = os.path.join(self.path, BLOBS_DIR)
                make_private_dir(blobs_dir)
                self._pack = PackWriter(blobs_dir)
                self._manifest["blob_store"] = {"packs": self._pack.number + 1}
            check_file_size_limit(self._pack.size + nbytes)
            self._pack.add(name, data)
        except OSError as exc:
            self._stop(f"cannot write blob {name} to a pack", exc)
            return name
        self._known.add(("blob", name))
        self._counts["blobs"] += 1
        self._counts["blob_bytes"] += nbytes
        self._stored += nbytes + ENTRY.size
        self._set_limit()
        return name

    # -- manifest and close ---------------------------------------------------------------
    def update_manifest(self, **fields: Any) -> None:
        """Merge ``fields`` into the manifest and rewrite it atomically."""
        with self._lock:
            if self._off:
                return
            self._manifest.update(fields)
            self._write_manifest_or_stop()

    def add_unreplayable(self, api: str, reason: str, **extra: Any) -> None:
        """Note once in the manifest that ``api`` cannot be replayed, and why."""
        with self._lock:
            if self._off:
                return
            entry = {"api": api, "reason": reason, **extra}
            if entry not in self._manifest["unreplayable_apis"]:
                self._manifest["unreplayable_apis"] = [*self._manifest["unreplayable_apis"], entry]
                self._write_manifest_or_stop()

    def close(self, **manifest_fields: Any) -> None:
        """Append the trailer, cut events.bin to its length, fsync, and write the manifest with
        clean_shutdown true. Never raises for an I/O error: it says on stderr what it could not do."""
        self._close(manifest_fields, lock_timeout=-1)

    def close_on_signal(self, signal_name: str, **manifest_fields: Any) -> None:
        """close() from a signal handler, in a process about to die of ``signal_name``.

        The handler may have interrupted this very thread inside ``append``: a lock not
        obtained within a second is taken to be held by it, and the writer closes after
        the last whole frame without it (nothing else runs once the process dies).
        """
        self._close({**manifest_fields, "closed_on_signal": signal_name}, lock_timeout=1.0)

    def _close(self, manifest_fields: dict[str, Any], lock_timeout: float) -> None:
        if self._inert or self._closed:
            return
        held = [lock for lock in (self._io_lock, self._lock) if lock.acquire(timeout=lock_timeout)]
        try:
            if self._closed or self._inert:
                return
            if self._mm is not None:
                self._close_batch()    # safe without the lock too: append's state changes never straddle a call
            if self._batch_start >= 0 and self._events == self._batch_first:
                self._pos = self._batch_start
            self._closed = self._off = True
            if self._pack is not None:
                try:
                    self._pack.sync()
                except OSError:
                    pass   # the index's torn tail, if any, is ignored by readers
                self._pack.close()
            trailer = msgpack.packb({"events": self._events, "closed": time.time()}, use_bin_type=True)
            frame = encode_frame(FRAME_TRAILER, trailer)
            end = self._pos + len(frame)
            try:
                self._mm[self._pos:end] = frame    # fits: TRAILER_RESERVE is kept free after every append
                self._mm.close()
                os.ftruncate(self._fd, end)
                os.fsync(self._fd)
                self._pos = end
            except OSError as exc:
                self._stop("cannot close events.bin", exc)
            finally:
                os.close(self._fd)
            self._manifest.update(manifest_fields)
            if self.incomplete is not None:
                self._manifest["incomplete"] = {**self.incomplete, "calls_not_recorded": self._not_recorded}
            self._manifest["clean_shutdown"] = True
            self._write_manifest_or_say()
        finally:
            for lock in reversed(held):
                lock.release()
        forking.untrack_writer(self)

    @property
    def bytes_written(self) -> int:
        """Bytes this process directory holds so far: events.bin up to its last record, blobs, code objects."""
        return self._pos + self._stored

    @property
    def closed(self) -> bool:
        """True after close(), or in a forked child (an inherited writer writes nothing)."""
        return self._closed or self._inert

    def _write_manifest(self) -> None:   # caller holds _lock (or is the constructor); raises OSError
        self._manifest["counts"] = {**self._manifest.get("counts", {}), **self._counts,
                                    "events": self._events}
        replace_file(os.path.join(self.path, MANIFEST_FILE), manifest_mod.encode(self._manifest), fsync=True)

    def _write_manifest_or_stop(self) -> None:   # caller holds _lock
        try:
            self._write_manifest()
        except OSError as exc:
            self._stop(f"cannot write {MANIFEST_FILE}", exc)

    def _write_manifest_or_say(self) -> None:   # caller holds _lock
        try:
            self._write_manifest()
        except OSError as exc:
            _say(f"hrr: pid {self.pid}: cannot write {os.path.join(self.path, MANIFEST_FILE)}: {exc.strerror or exc}; "
                 f"every recorded call is kept: run `hrr repair` on the archive once there is space.")

    # -- fork support (see forking.py) ----------------------------------------------------
    def _fork_locks(self) -> tuple[threading.Lock, threading.Lock]:
        return (self._io_lock, self._lock)

    def _at_fork(self) -> None:
        """In the fork handler, with this writer's locks held: close the open batch, so the
        parent's frames are whole at the instant the child was copied."""
        if not self._off and self._mm is not None:
            self._close_batch()

    def _become_inert(self) -> None:
        """In a forked child: unmap and close the parent's file; write nothing ever again."""
        self._inert = self._off = True
        self._threads.clear()
        if self._pack is not None:
            self._pack.close()   # the child's fds only; the parent keeps appending to its pack
            self._pack = None
        mm, self._mm = self._mm, None
        try:
            if mm is not None:
                mm.close()     # the child's mapping only; the parent's stays
            os.close(self._fd)
        except OSError:
            pass


def _say(line: str) -> None:
    """One line on stderr, straight to fd 2 (works in a signal handler and at exit)."""
    try:
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - stderr may be closed or broken; the line is best effort
        pass
    try:
        os.write(2, (line + "\n").encode(errors="replace"))
    except OSError:
        pass
