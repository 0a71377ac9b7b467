"""The archive reader: validates an untrusted archive before acting on any of it.

Order of checks for each process: the directory is a real directory (no symlink); events.bin
magic and format version (first, before any length in the file is trusted); the header's
length, checksum and msgpack; manifest.json size, JSON and field types. Frames are then
streamed lazily: each frame's type and length are checked against the limits before its
payload is read, its checksum before it is decoded, msgpack runs with safe settings;
``checked_events`` then checks each decoded value against the event schema
(``hrr.events.codec``), so what acts on events only ever sees well-typed events or refused
records (named by file, record index and byte offset), never an exception.
"""
from __future__ import annotations

import itertools
import os
from typing import Any, Callable, Iterator

import attrs
import msgpack

from hrr.archive import manifest as manifest_mod
from hrr.archive.blobs import StoreReader
from hrr.archive.format import (BATCH_SLACK, EVENTS_FILE, FILE_HEADER, FRAME_EVENT, FRAME_HEADER, FRAME_OPEN,
                                FRAME_TRAILER, FRAME_TYPES, HEADER_MIN_LIMIT, HEADER_SEED_TYPE, MANIFEST_FILE,
                                MAX_BATCH_RECORDS, PID_DIR_RE, UNPACK_ERRORS, check_prefix, checksum, decode_record,
                                record_unpacker, unpack_untrusted)
from hrr.archive.fsutil import open_dir_nofollow, open_file_nofollow, read_exact
from hrr.archive.limits import Limits
from hrr.errors import ArchiveError, FormatError, LimitExceeded
from hrr.events.codec import event_from_wire
from hrr.events.model import API, TID, WIRE_LEN, Event

_ZERO3 = b"\x00\x00\x00"


@attrs.frozen
class Record:
    """A good event frame: its index among event frames, its byte offset, its decoded value,
    and (from ``checked_events``) the schema-checked Event built from it."""
    index: int
    offset: int
    value: Any
    event: Event | None = None


def _triple(index: int, offset: int, value: Any) -> tuple[int, int, Any]:
    return index, offset, value


def _alone(item: Any) -> list[Any]:
    return [item]


def _same(item: Any) -> Any:
    return item


@attrs.frozen
class BadRecord:
    """An event frame that was refused (bad checksum, undecodable msgpack, bad framing,
    a value that does not match the event schema)."""
    index: int
    offset: int
    reason: str
    path: str = ""

    @property
    def where(self) -> str:
        """``<events.bin path> record <index> at offset <offset>``."""
        return f"{self.path or 'events.bin'} record {self.index} at offset {self.offset}"


@attrs.define
class StreamState:
    """What a full walk over events.bin found (framing only; msgpack errors are BadRecords)."""
    frames: int = 0              # event frames, good and bad, before the end of the stream
    bad_checksums: int = 0
    torn: bool = False           # the last frame (or the file header) is incomplete
    stopped: str | None = None   # framing damage that ended the walk early
    trailer: dict[str, Any] | None = None
    trailer_offset: int | None = None
    after_trailer: bool = False  # bytes follow the trailer
    valid_end: int = 0           # end offset of the last frame with a good checksum (or of the header)
    valid_frames: int = 0        # event frames before valid_end
    size: int = 0
    # v2: the last batch frame was open (never closed by the writer) or torn, and its records
    # were read one by one by their own msgpack framing: where its frame header is, how many.
    open_start: int | None = None
    open_records: int = 0


def _read_trailer(state: "StreamState", payload: bytes, offset: int, end: int, f: Any) -> None:
    """Note a trailer frame whose checksum held: where the valid stream ends, its event
    count (-1 when unreadable) and whether anything follows it."""
    state.valid_end, state.valid_frames = end, state.frames
    state.trailer_offset = offset
    try:
        trailer = unpack_untrusted(payload)
    except ValueError:
        trailer = None
    state.trailer = trailer if isinstance(trailer, dict) and type(trailer.get("events")) is int \
        else {"events": -1}
    state.after_trailer = bool(f.read(1))


def open_archive(root: str | os.PathLike[str], limits: Limits = Limits()) -> "Archive":
    """Open an archive directory (or one ``pid-<pid>`` directory) for reading, validating it."""
    return Archive(os.fspath(root), limits)


class Archive:
    """An archive root and the per-process archives inside it."""

    def __init__(self, path: str, limits: Limits) -> None:
        self.path, self.limits = path, limits
        try:
            names = sorted(os.listdir(path))
        except OSError as exc:
            raise ArchiveError(f"cannot list the archive: {exc}", where=path,
                               hint="pass the directory written by `hrr capture -o`") from None
        if EVENTS_FILE in names and PID_DIR_RE.fullmatch(os.path.basename(os.path.normpath(path))):
            parent, base = os.path.split(os.path.normpath(path))
            pid_dirs = [(parent or ".", base)]
        else:
            pid_dirs = [(path, n) for n in names if PID_DIR_RE.fullmatch(n)]
        if not pid_dirs:
            raise ArchiveError("no pid-<pid> directories: not an hrr archive", where=path,
                               hint="pass the directory written by `hrr capture -o`")
        if len(pid_dirs) > limits.max_processes:
            raise LimitExceeded(f"{len(pid_dirs)} processes, over max_processes={limits.max_processes}",
                                where=path, hint="raise the limit if you trust this archive")
        pid_dirs.sort(key=lambda d: int(d[1][4:]))
        self.processes: list[ProcessArchive] = []
        try:
            for parent, name in pid_dirs:
                self.processes.append(ProcessArchive(parent, name, limits))
        except BaseException:
            self.close()
            raise

    def process(self, pid: int) -> "ProcessArchive":
        """The process archive for ``pid``; ArchiveError if there is none."""
        for proc in self.processes:
            if proc.pid == pid:
                return proc
        raise ArchiveError(f"no process {pid} in the archive", where=self.path,
                           hint=f"processes: {[p.pid for p in self.processes]}")

    def close(self) -> None:
        """Release the directory handles held by every process archive."""
        for proc in self.processes:
            proc.close()

    def __enter__(self) -> "Archive":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ProcessArchive:
    """One ``pid-<pid>`` directory: header, manifest, event stream, blobs and code objects."""

    def __init__(self, parent: str, name: str, limits: Limits, *, tolerate_bad_manifest: bool = False) -> None:
        match = PID_DIR_RE.fullmatch(name)
        if not match:
            raise ArchiveError(f"{name!r} is not a pid-<pid> directory name", where=parent)
        self.pid = int(match.group(1))
        self.path = os.path.join(parent, name)
        self.limits = limits
        self.events_path = os.path.join(self.path, EVENTS_FILE)
        try:
            self._dir_fd = open_dir_nofollow(self.path)
        except OSError as exc:
            raise ArchiveError(f"cannot open the process directory ({exc})", where=self.path,
                               hint="symlinked pid directories are refused") from None
        self._store = StoreReader(self._dir_fd, self.path, limits.max_file_bytes, limits.max_host_bytes)
        self._state: StreamState | None = None
        self.version = 0
        self._apis: list[str] = []
        try:
            self.header, self._data_start, self.header_torn = self._read_header()
            self.manifest, self.manifest_error = self._read_manifest(tolerate_bad_manifest)
        except BaseException:
            self.close()
            raise

    # -- header and manifest --------------------------------------------------------------
    def _open_events(self) -> Any:
        try:
            fd, _ = open_file_nofollow(EVENTS_FILE, self._dir_fd)
        except FileNotFoundError:
            raise ArchiveError("events.bin is missing", where=self.events_path,
                               hint="this process recorded nothing readable") from None
        except (OSError, ValueError) as exc:
            raise ArchiveError(f"events.bin is not a regular file ({exc})", where=self.events_path,
                               hint="symlinks and special files are refused") from None
        return os.fdopen(fd, "rb", buffering=1 << 20)

    def _read_header(self) -> tuple[dict[str, Any] | None, int, bool]:
        where = self.events_path
        with self._open_events() as f:
            prefix = f.read(FILE_HEADER.size)
            if not check_prefix(prefix, where) or len(prefix) < FILE_HEADER.size:
                return None, 0, True
            _, _, length, expected = FILE_HEADER.unpack(prefix)
            if length > max(self.limits.max_record_bytes, HEADER_MIN_LIMIT):
                raise FormatError(f"header length {length} is over max_record_bytes", where=f"{where} at offset 12")
            body = f.read(length)
        if len(body) < length:
            return None, 0, True
        off = f"{where} at offset {FILE_HEADER.size}"
        if checksum(HEADER_SEED_TYPE, body) != expected:
            raise FormatError("file header checksum mismatch", where=off, hint="the archive is corrupt")
        try:
            header = unpack_untrusted(body)
        except ValueError as exc:
            raise FormatError(f"file header: {exc}", where=off) from None
        version = int.from_bytes(prefix[8:12], "little")
        if not isinstance(header, dict) or header.get("format_version") != version \
                or header.get("pid") != self.pid or type(header.get("backend")) is not str:
            raise FormatError("file header must be a map with format_version, this directory's pid and backend",
                              where=off, hint="the archive is corrupt or was tampered with")
        apis = header.get("apis", [])
        if version >= 2 and (type(apis) is not list or not all(type(a) is str for a in apis)):
            raise FormatError("file header field apis must be a list of API names", where=off,
                              hint="the archive is corrupt or was tampered with")
        self.version, self._apis = version, apis
        return header, FILE_HEADER.size + length, False

    def _read_manifest(self, tolerate: bool) -> tuple[dict[str, Any], str | None]:
        where = os.path.join(self.path, MANIFEST_FILE)
        fallback = manifest_mod.default_manifest(self.pid, (self.header or {}).get("backend", "unknown"))
        if self.version:   # a rebuilt manifest names the version events.bin is written in
            fallback["format_version"] = self.version
        try:
            fd, st = open_file_nofollow(MANIFEST_FILE, self._dir_fd)
        except FileNotFoundError:
            return fallback, "manifest.json is missing"
        except (OSError, ValueError) as exc:
            if tolerate:  # repair: rebuilt and renamed into place, never written through
                return fallback, f"manifest.json is not a regular file ({exc})"
            raise ArchiveError(f"manifest.json is not a regular file ({exc})", where=where,
                               hint="symlinks and special files are refused") from None
        try:
            if st.st_size > self.limits.max_manifest_bytes:
                raise FormatError(f"manifest is {st.st_size} bytes, over max_manifest_bytes", where=where)
            value = manifest_mod.decode(read_exact(fd, st.st_size), where)
            if value["pid"] != self.pid:
                raise FormatError(f"manifest pid {value['pid']} is not the directory's pid", where=where)
            return value, None
        except (FormatError, ValueError) as exc:
            if not tolerate:
                raise
            return fallback, str(exc)
        finally:
            os.close(fd)

    # -- events ---------------------------------------------------------------------------
    def events(self) -> Iterator[Record | BadRecord]:
        """Yield every complete event frame: Record if good, BadRecord if refused; stops at a torn tail.

        Format level only (framing, checksum, msgpack): ``value`` may be any msgpack value.
        Anything that acts on events uses :meth:`checked_events`."""
        return self._walk(decode=True)

    def raw_events(self) -> Iterator[tuple[int, int, Any] | BadRecord]:
        """Like :meth:`events`, each good record as the tuple ``(index, offset, value)``: no
        object per record, for replay's hot path (which checks the schema itself)."""
        if self.version < 2 or self.header_torn:
            return self._walk(decode=True, make=_triple)
        # One list per batch frame, flattened in C: no generator step per record.
        return itertools.chain.from_iterable(self._walk(decode=True, make=_triple, batched=True))

    def checked_events(self) -> Iterator[Record | BadRecord]:
        """Like :meth:`events`, and each value is also checked against the event schema
        (``hrr.events.codec``): a Record carries its ``event``; a value of the wrong shape or
        type is a BadRecord naming the field, never an exception."""
        return self._walk(decode=True, make=self._checked)

    def _checked(self, index: int, offset: int, value: Any) -> Record | BadRecord:
        try:
            event = event_from_wire(value)
        except FormatError as exc:
            return BadRecord(index, offset, exc.what, self.events_path)
        return Record(index, offset, value, event)

    def scan(self, progress: Callable[[int], None] | None = None) -> StreamState:
        """Walk the frames without decoding them (checksums checked) and return what was found.
        ``progress(n)`` is called as frames are walked (the first walk only)."""
        if self._state is None:
            for _ in self._walk(decode=False, progress=progress):
                pass
        assert self._state is not None
        return self._state

    def _walk(self, decode: bool, progress: Callable[[int], None] | None = None,
              make: Callable[[int, int, Any], Any] = Record, batched: bool = False) -> Iterator[Any]:
        """Every event record (``make(index, offset, value)`` builds what is yielded); with
        ``batched`` (version 2 only), lists of them, one per frame."""
        state = StreamState(torn=self.header_torn, valid_end=self._data_start)
        if self.header_torn:
            self._state = state
            return
        if self.version >= 2:
            yield from self._walk_v2(state, decode, progress, make, batched)
            return
        limits, where = self.limits, self.events_path
        with self._open_events() as f:
            offset = self._data_start
            f.seek(offset)
            while True:
                if progress is not None:
                    progress(state.frames)
                head = f.read(FRAME_HEADER.size)
                if not head.strip(b"\0"):
                    break   # end of file, or the zero-filled space a writer reserved and never used
                if len(head) < FRAME_HEADER.size:
                    state.torn = bool(head)
                    break
                ftype, reserved, length, expected = FRAME_HEADER.unpack(head)
                if ftype not in FRAME_TYPES or reserved != _ZERO3 or length > limits.max_record_bytes:
                    state.stopped = (f"unreadable frame header (type {ftype}, length {length}); "
                                     f"the rest of the file is skipped")
                    yield BadRecord(state.frames, offset, state.stopped, where)
                    break
                payload = f.read(length)
                if len(payload) < length:
                    state.torn = True
                    break
                end = offset + FRAME_HEADER.size + length
                if checksum(ftype, payload) != expected:
                    state.bad_checksums += 1
                    yield BadRecord(state.frames, offset, f"{FRAME_TYPES[ftype]} frame checksum mismatch", where)
                    state.frames += 1
                    offset = end
                    continue
                if ftype == FRAME_TRAILER:
                    _read_trailer(state, payload, offset, end, f)
                    break
                if state.frames >= limits.max_events:
                    raise LimitExceeded(f"more than max_events={limits.max_events} events",
                                        where=f"{where} record {state.frames} at offset {offset}",
                                        hint="raise the limit if you trust this archive")
                if decode:
                    try:
                        yield make(state.frames, offset, unpack_untrusted(payload))
                    except ValueError as exc:
                        yield BadRecord(state.frames, offset, str(exc), where)
                state.frames += 1
                state.valid_end, state.valid_frames = end, state.frames
                offset = end
            state.size = os.fstat(f.fileno()).st_size
        self._state = state

    def _walk_v2(self, state: StreamState, decode: bool, progress: Callable[[int], None] | None,
                 make: Callable[[int, int, Any], Any], batched: bool = False) -> Iterator[Any]:
        """Version 2: batch frames of ``count`` records under one checksum; an open or torn
        last batch is read record by record (each whole by its own msgpack framing)."""
        limits, where = self.limits, self.events_path
        one: Callable[[Any], Any] = _alone if batched else _same
        most = limits.max_record_bytes + BATCH_SLACK
        with self._open_events() as f:
            offset = self._data_start
            f.seek(offset)
            while True:
                if progress is not None:
                    progress(state.frames)
                head = f.read(FRAME_HEADER.size)
                if not head or head[0] == FRAME_OPEN:
                    if len(head) == FRAME_HEADER.size:
                        yield from map(one, self._loose_records(f, state, offset, b"", decode, make))
                    elif head.strip(b"\0"):
                        state.torn = True
                    break
                if len(head) < FRAME_HEADER.size:
                    state.torn = True
                    break
                ftype, count3, length, expected = FRAME_HEADER.unpack(head)
                count = int.from_bytes(count3, "little")
                if ftype not in FRAME_TYPES or length > most or count > MAX_BATCH_RECORDS \
                        or (ftype == FRAME_TRAILER and count):
                    state.stopped = (f"unreadable frame header (type {ftype}, count {count}, length {length}); "
                                     f"the rest of the file is skipped")
                    yield one(BadRecord(state.frames, offset, state.stopped, where))
                    break
                payload = f.read(length)
                body = offset + FRAME_HEADER.size
                if len(payload) < length:
                    if ftype == FRAME_EVENT:   # cut short (a copy, a disk): keep its whole records
                        yield from map(one, self._loose_records(f, state, offset, payload, decode, make, torn=True))
                    state.torn = True
                    break
                end = body + length
                if checksum(ftype, payload, count) != expected:
                    state.bad_checksums += 1
                    for _ in range(count or 1):
                        yield one(BadRecord(state.frames, offset, f"{FRAME_TYPES[ftype]} frame checksum mismatch",
                                            where))
                        state.frames += 1
                    offset = end
                    continue
                if ftype == FRAME_TRAILER:
                    _read_trailer(state, payload, offset, end, f)
                    break
                count = count or 1
                if state.frames + count > limits.max_events:
                    raise LimitExceeded(f"more than max_events={limits.max_events} events",
                                        where=f"{where} record {max(state.frames, limits.max_events)} "
                                              f"at offset {offset}",
                                        hint="raise the limit if you trust this archive")
                if decode:
                    records = self._batch(payload, count, body, state.frames, make)
                    if batched:
                        yield records
                    else:
                        yield from records
                state.frames += count
                state.valid_end, state.valid_frames = end, state.frames
                offset = end
            state.size = os.fstat(f.fileno()).st_size
        self._state = state

    def _batch(self, payload: bytes, count: int, body: int, index: int,
               make: Callable[[int, int, Any], Any]) -> list[Any]:
        """The ``count`` records of one checked batch frame; the rest of the frame is refused
        at the first record that does not decode."""
        where, apis, most = self.events_path, self._apis, self.limits.max_record_bytes
        napis = len(apis)
        unpacker = record_unpacker(len(payload))
        unpacker.feed(payload)
        unpack, tell = unpacker.unpack, unpacker.tell
        threads: list[int] = []
        nthreads = 0
        out: list[Any] = []
        triple = make is _triple
        sized = len(payload) > most   # else no record in it can be over the limit
        at = 0
        for i in range(count):
            try:
                value = unpack()
            except UNPACK_ERRORS as exc:
                reason = "truncated" if isinstance(exc, msgpack.OutOfData) else f"{type(exc).__name__}: {exc}"
                out.extend(BadRecord(index + j, body + at, f"undecodable msgpack: {reason}", where)
                           for j in range(i, count))
                return out
            end = tell()
            try:
                if sized and end - at > most:
                    raise ValueError(f"record of {end - at} bytes is over max_record_bytes")
                # The common record (an API number, a declared thread index) is resolved
                # here; decode_record settles every other shape and names what is wrong.
                if type(value) is list and len(value) == WIRE_LEN:
                    api, t = value[API], value[TID]
                    if type(api) is int and type(t) is int and 0 <= api < napis and 0 <= t < nthreads:
                        value[API], value[TID] = apis[api], threads[t]
                    else:
                        value = decode_record(value, apis, threads)
                        nthreads = len(threads)
                else:
                    value = decode_record(value, apis, threads)
                out.append((index + i, body + at, value) if triple else make(index + i, body + at, value))
            except ValueError as exc:
                out.append(BadRecord(index + i, body + at, str(exc), where))
            at = end
        if at != len(payload):
            out.append(BadRecord(index + count - 1, body + at,
                                 f"undecodable msgpack: {len(payload) - at} bytes after the frame's {count} records",
                                 where))
        return out

    def _loose_records(self, f: Any, state: StreamState, offset: int, start: bytes, decode: bool,
                       make: Callable[[int, int, Any], Any],
                       torn: bool = False) -> Iterator[Record | BadRecord]:
        """Records of the batch whose frame header starts at ``offset`` and was never written
        (or whose payload is cut short), one by one: up to a zero byte, the end of the file or
        a record cut short. Each is whole by its own msgpack framing; none has a checksum."""
        limits, where, apis = self.limits, self.events_path, self._apis
        body = offset + FRAME_HEADER.size
        unpacker = record_unpacker(limits.max_record_bytes + BATCH_SLACK)
        if start:
            unpacker.feed(start)
        threads: list[int] = []
        at = 0
        while True:
            try:
                value = unpacker.unpack()
            except msgpack.OutOfData:
                chunk = b"" if torn else f.read(1 << 16)
                if chunk:
                    unpacker.feed(chunk)
                    continue
                state.torn = state.torn or unpacker.tell() > at or torn
                break
            except UNPACK_ERRORS as exc:
                state.stopped = f"unreadable record in the unclosed last batch ({type(exc).__name__}); " \
                                f"the rest of the file is skipped"
                yield BadRecord(state.frames, body + at, state.stopped, where)
                break
            if value == 0 and type(value) is int:
                break   # a zero byte: the writer's unused space (or a record it never finished)
            if state.frames >= limits.max_events:
                raise LimitExceeded(f"more than max_events={limits.max_events} events",
                                    where=f"{where} record {state.frames} at offset {body + at}",
                                    hint="raise the limit if you trust this archive")
            if decode:
                try:
                    yield make(state.frames, body + at, decode_record(value, apis, threads))
                except ValueError as exc:
                    yield BadRecord(state.frames, body + at, str(exc), where)
            at = unpacker.tell()
            state.frames += 1
            state.open_records += 1
            state.open_start = offset
            state.valid_end, state.valid_frames = body + at, state.frames

    @property
    def torn(self) -> bool:
        """True when the file header or the last frame is incomplete (a capture killed mid-write)."""
        return self.scan().torn

    @property
    def trailer(self) -> dict[str, Any] | None:
        """The trailer frame's map ({"events": n, ...}) or None if the capture did not close."""
        return self.scan().trailer

    @property
    def clean(self) -> bool:
        """True when the trailer is present, agrees with the frames, and the manifest says clean_shutdown."""
        state = self.scan()
        return (state.trailer is not None and state.trailer.get("events") == state.frames
                and not state.after_trailer and not state.stopped and self.manifest_error is None
                and self.manifest.get("clean_shutdown") is True)

    # -- blobs and code objects -----------------------------------------------------------
    def read_blob(self, name: str) -> bytes:
        """A blob's bytes, checked: well-formed name, regular file, size limit (before reading), hash."""
        return self._store.read("blob", name)

    def blob_size(self, name: str) -> int:
        """A blob's size in bytes, without reading it."""
        return self._store.size("blob", name)

    def set_host_charge(self, charge: Callable[[int, str], Any]) -> None:
        """Charge the memory the pack indexes take when loaded to ``charge`` (replay's host
        budget) instead of a cap of their own."""
        self._store.charge = charge

    def read_code_object(self, name: str) -> bytes:
        """A code object's bytes, checked like a blob."""
        return self._store.read("code", name)

    def code_object_size(self, name: str) -> int:
        """A code object's size in bytes, without reading it."""
        return self._store.size("code", name)

    def close(self) -> None:
        """Release the directory handle."""
        fd, self._dir_fd = getattr(self, "_dir_fd", -1), -1
        if fd >= 0:
            os.close(fd)

    def __repr__(self) -> str:
        return f"<ProcessArchive {self.path}>"

