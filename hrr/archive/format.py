"""The on-disk format: constants, names, and the byte layout of events.bin.

events.bin = file header, then frames back to back (see DESIGN.md, "The archive"):

    file header  MAGIC (8) | version u32 LE | header_len u32 LE | header_sum u64 LE | header msgpack
    frame        type u8 | count u24 LE | payload_len u32 LE | payload_sum u64 LE | payload

Version 3 (written): version 2's framing; a kernel launch's ``extra.launch`` is a list with
fixed positions (hrr/events/launch.py) where versions 1 and 2 wrote a map. Readers take
either form in any version: the number tells an older hrr that it cannot read the archive.
Version 2 (read; as 3, launches as maps): an event frame holds ``count`` msgpack records back to back under one
checksum (count 0 reads as 1); a record may name its API by number (the header's ``apis``
list) and its thread by a per-frame index (see :func:`encode_record`). A frame whose type
byte is 0 is the writer's open batch: its records follow, each whole once its first byte
is non-zero. Version 1 (still read): one record per event frame, count 0.

Every checksum is xxh3_64 of the payload seeded with ``(count << 40) | (type << 32) | length``
so that a damaged type, count or length byte also fails the check. Integers are little-endian.
"""
from __future__ import annotations

import re
import struct
from typing import Any

import msgpack
import xxhash

from hrr.api.wire import API, TID, WIRE_LEN
from hrr.errors import FormatError

MAGIC = b"HRREVT\r\n"            # CR LF catches text-mode / line-ending mangling
FORMAT_VERSION = 3
READ_VERSIONS = (1, 2, 3)        # every events.bin version this hrr reads
EVENTS_FILE = "events.bin"
MANIFEST_FILE = "manifest.json"
BLOBS_DIR = "blobs"
CODE_DIR = "code"
PID_DIR_PREFIX = "pid-"
TMP_PREFIX = ".tmp-"             # every temp file starts with this; repair deletes them
DIR_MODE = 0o700
FILE_MODE = 0o600

FILE_HEADER = struct.Struct("<8sIIQ")    # magic, version, header_len, header_sum
PREFIX_LEN = 12                          # magic + version: what is checked first
FRAME_HEADER = struct.Struct("<B3sIQ")   # type, reserved, payload_len, payload_sum
FRAME_OPEN = 0                           # v2: the batch a writer has not closed yet
FRAME_EVENT = 1                          # v1: one record; v2: a batch of `count` records
FRAME_TRAILER = 2
FRAME_TYPES = {FRAME_EVENT: "event", FRAME_TRAILER: "trailer"}
MAX_BATCH_RECORDS = 4096                 # a frame claiming more is unreadable (the writer closes at 256)
HEADER_MIN_LIMIT = 64 << 10              # a file header this long is always read (v2 holds the API table)
BATCH_SLACK = 64 << 10                   # a batch payload may pass max_record_bytes by this much
HEADER_SEED_TYPE = 0                     # the file header's checksum uses type 0

NAME_RE = re.compile(r"[0-9a-f]{32}")    # blob and code-object names: xxh3_128 hex
PID_DIR_RE = re.compile(r"pid-([0-9]{1,10})")


def checksum(frame_type: int, payload: bytes | memoryview, count: int = 0) -> int:
    """xxh3_64 of ``payload`` seeded with the frame's record count, type and length."""
    return xxhash.xxh3_64_intdigest(payload, seed=(count << 40) | (frame_type << 32) | len(payload))


def content_name(data: Any) -> str:
    """The content address of ``data`` (any C-contiguous buffer): xxh3_128 hex, 32 chars."""
    return xxhash.xxh3_128_hexdigest(data)


def is_valid_name(name: object) -> bool:
    """True when ``name`` is exactly 32 lowercase hex characters (no path parts)."""
    return type(name) is str and NAME_RE.fullmatch(name) is not None


def encode_file_header(fields: dict[str, Any], version: int = FORMAT_VERSION) -> bytes:
    """The file header bytes for a header map (msgpack-native values only)."""
    body = msgpack.packb({**fields, "format_version": version}, use_bin_type=True)
    return FILE_HEADER.pack(MAGIC, version, len(body), checksum(HEADER_SEED_TYPE, body)) + body


def encode_frame(frame_type: int, payload: bytes, count: int = 0) -> bytes:
    """Frame header + payload for one already-packed payload (``count`` records; 0: one)."""
    return frame_header(frame_type, payload, count) + payload


def frame_header(frame_type: int, payload: bytes | memoryview, count: int = 0) -> bytes:
    """Only the 16-byte frame header for ``payload`` (to append without concatenating)."""
    return FRAME_HEADER.pack(frame_type, count.to_bytes(3, "little"), len(payload),
                             checksum(frame_type, payload, count))


# -- version 2 records ----------------------------------------------------------------------
# An event [seq, tid, api, args, err, outs, extra] whose api is in the header's ``apis``
# list is written [seq, t, number, args, err, outs, extra]: t is [tid] at the thread's first
# record in a frame (it then gets the frame's next thread index) and that index after.
# Any other value is written as it is, except that a 7-item list whose third item is an
# int or a list gets that item wrapped in a 1-item list, so every value reads back exactly.

def api_table() -> list[str]:
    """The API names by number, as the writer puts them in the header: catalogue order, then pseudo-events."""
    from hrr.api.catalogue import CATALOGUE
    from hrr.events.model import PSEUDO_EVENTS
    return [*CATALOGUE, *sorted(PSEUDO_EVENTS)]


def decode_record(value: Any, apis: list[str], threads: list[int]) -> Any:
    """The wire value of one decoded v2 record (``threads``: this frame's thread table, extended
    in place). Raises ValueError for an API number or thread index it cannot resolve."""
    if type(value) is not list or len(value) != WIRE_LEN:
        return value
    api = value[API]
    if type(api) is int:
        if not 0 <= api < len(apis):
            raise ValueError(f"API number {api} is not in the header's table of {len(apis)}")
        value[API] = apis[api]
        t = value[TID]
        if type(t) is int:
            if not 0 <= t < len(threads):
                raise ValueError(f"thread index {t} is not declared earlier in its frame")
            value[TID] = threads[t]
        elif type(t) is list and len(t) == 1 and type(t[0]) is int:
            if len(threads) >= MAX_BATCH_RECORDS:
                raise ValueError("more threads declared in one frame than it can hold records")
            threads.append(t[0])
            value[TID] = t[0]
        else:
            raise ValueError("an API-numbered record needs a thread index or [tid]")
    elif type(api) is list:
        if len(api) != 1:
            raise ValueError("a wrapped third item must be a 1-item list")
        value[API] = api[0]
    return value


def escape_record(value: Any) -> Any:
    """``value`` as the writer writes a record it does not number (see decode_record)."""
    if type(value) in (list, tuple) and len(value) == WIRE_LEN and type(value[API]) in (int, list, tuple):
        value = list(value)
        value[API] = [value[API]]
    return value


def split_events(data: bytes) -> tuple[bytes, int, list[Any], bytes | None]:
    """(file header bytes, version, wire values of the event records, trailer payload or None)
    of a well-formed events.bin; for tools and tests that edit records. Raises ValueError."""
    if len(data) < FILE_HEADER.size or not check_prefix(data[:PREFIX_LEN], "events.bin"):
        raise ValueError("events.bin is too short")
    _, version, hlen, _ = FILE_HEADER.unpack_from(data, 0)
    pos = FILE_HEADER.size + hlen
    header = unpack_untrusted(data[FILE_HEADER.size:pos])
    apis = header.get("apis", []) if isinstance(header, dict) else []
    values: list[Any] = []
    trailer = None
    while pos + FRAME_HEADER.size <= len(data):
        ftype, count3, length, _ = FRAME_HEADER.unpack_from(data, pos)
        start = pos + FRAME_HEADER.size
        payload = data[start:start + length] if ftype != FRAME_OPEN else data[start:].rstrip(b"\0")
        pos = start + len(payload)
        if ftype == FRAME_TRAILER:
            trailer = payload
            break
        if version == 1:
            values.append(unpack_untrusted(payload))
            continue
        threads: list[int] = []
        unpacker = record_unpacker(len(payload))
        unpacker.feed(payload)
        values.extend(decode_record(v, apis, threads) for v in unpacker)
        if ftype == FRAME_OPEN:
            break
    return data[:FILE_HEADER.size + hlen], version, values, trailer


def join_events(header: bytes, values: list[Any], trailer: bytes | None, version: int = FORMAT_VERSION) -> bytes:
    """events.bin from a file header, wire values (one frame each, names spelled out) and a
    trailer payload, every checksum valid: what a careful tamperer writes."""
    out = [header]
    for v in values:
        v = v if version == 1 else escape_record(v)
        out.append(encode_frame(FRAME_EVENT, msgpack.packb(v, use_bin_type=True)))
    if trailer is not None:
        out.append(encode_frame(FRAME_TRAILER, trailer))
    return b"".join(out)


def check_prefix(prefix: bytes, where: str) -> bool:
    """Check magic and version in the first bytes of events.bin; False if too short to tell.

    Raises FormatError for bad magic or an unknown version. This is the first check the
    reader makes, before any length or msgpack in the file is trusted.
    """
    n = min(len(prefix), len(MAGIC))
    if prefix[:n] != MAGIC[:n]:
        raise FormatError(
            f"bad magic {bytes(prefix[:len(MAGIC)])!r}, expected {MAGIC!r}: not an hrr events file",
            where=f"{where} at offset 0",
            hint="point hrr at an archive written by `hrr capture`")
    if len(prefix) < PREFIX_LEN:
        return False
    (version,) = struct.unpack_from("<I", prefix, len(MAGIC))
    if version not in READ_VERSIONS:
        raise FormatError(
            f"unknown format version {version} (this hrr reads versions "
            f"{', '.join(map(str, READ_VERSIONS))})",
            where=f"{where} at offset {len(MAGIC)}",
            hint="read it with the hrr release that wrote it")
    return True


UNPACK_ERRORS = (ValueError, TypeError, msgpack.StackError, msgpack.FormatError, msgpack.OutOfData,
                 msgpack.ExtraData, RecursionError, OverflowError)


def record_unpacker(max_bytes: int) -> msgpack.Unpacker:
    """A streaming unpacker for untrusted records (the settings of :func:`unpack_untrusted`)."""
    return msgpack.Unpacker(raw=False, strict_map_key=True, use_list=True, ext_hook=_refuse_ext,
                            max_buffer_size=max(max_bytes, 1))


def unpack_untrusted(payload: bytes) -> Any:
    """Decode one msgpack object from untrusted bytes; raises ValueError on anything odd."""
    try:
        return msgpack.unpackb(payload, raw=False, strict_map_key=True, use_list=True,
                               ext_hook=_refuse_ext)
    except (ValueError, TypeError, msgpack.StackError, msgpack.FormatError,
            msgpack.ExtraData, RecursionError, OverflowError) as exc:
        raise ValueError(f"undecodable msgpack: {type(exc).__name__}: {exc}") from None


def _refuse_ext(code: int, data: bytes) -> Any:
    raise ValueError(f"msgpack ext type {code} is never written by hrr")
