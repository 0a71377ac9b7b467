"""The on-disk format: constants, names, and the byte layout of events.bin.

events.bin = file header, then frames back to back (see DESIGN.md, "The archive"):

    file header  MAGIC (8) | version u32 LE | header_len u32 LE | header_sum u64 LE | header msgpack
    frame        type u8 | 3 zero bytes | payload_len u32 LE | payload_sum u64 LE | payload msgpack

Every checksum is xxh3_64 of the payload seeded with ``(type << 32) | length`` so that a
damaged type or length byte also fails the check. All integers are little-endian.
"""
from __future__ import annotations

import re
import struct
from typing import Any

import msgpack
import xxhash

from hrr.errors import FormatError

MAGIC = b"HRREVT\r\n"            # CR LF catches text-mode / line-ending mangling
FORMAT_VERSION = 1
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
FRAME_EVENT = 1
FRAME_TRAILER = 2
FRAME_TYPES = {FRAME_EVENT: "event", FRAME_TRAILER: "trailer"}
HEADER_SEED_TYPE = 0                     # the file header's checksum uses type 0

NAME_RE = re.compile(r"[0-9a-f]{32}")    # blob and code-object names: xxh3_128 hex
PID_DIR_RE = re.compile(r"pid-([0-9]{1,10})")

_RESERVED = b"\x00\x00\x00"


def checksum(frame_type: int, payload: bytes | memoryview) -> int:
    """xxh3_64 of ``payload`` seeded with the frame type and length."""
    return xxhash.xxh3_64_intdigest(payload, seed=(frame_type << 32) | len(payload))


def content_name(data: Any) -> str:
    """The content address of ``data`` (any C-contiguous buffer): xxh3_128 hex, 32 chars."""
    return xxhash.xxh3_128_hexdigest(data)


def is_valid_name(name: object) -> bool:
    """True when ``name`` is exactly 32 lowercase hex characters (no path parts)."""
    return type(name) is str and NAME_RE.fullmatch(name) is not None


def encode_file_header(fields: dict[str, Any]) -> bytes:
    """The file header bytes for a header map (msgpack-native values only)."""
    body = msgpack.packb(fields, use_bin_type=True)
    return FILE_HEADER.pack(MAGIC, FORMAT_VERSION, len(body), checksum(HEADER_SEED_TYPE, body)) + body


def encode_frame(frame_type: int, payload: bytes) -> bytes:
    """Frame header + payload for one already-packed payload."""
    return FRAME_HEADER.pack(frame_type, _RESERVED, len(payload), checksum(frame_type, payload)) + payload


def frame_header(frame_type: int, payload: bytes) -> bytes:
    """Only the 16-byte frame header for ``payload`` (to append without concatenating)."""
    return FRAME_HEADER.pack(frame_type, _RESERVED, len(payload), checksum(frame_type, payload))


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
    if version != FORMAT_VERSION:
        raise FormatError(
            f"unknown format version {version} (this hrr reads version {FORMAT_VERSION})",
            where=f"{where} at offset {len(MAGIC)}",
            hint="read it with the hrr release that wrote it")
    return True


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
