"""Kernel source code objects: a program's HIP C++ source as the bytes hipModuleLoadData takes.

The sim compiles a hiprtc program for the CPU when it loads the module, so the code object
it hands out is the source itself (with the program's headers and compile options), and an
archive carries source, never compiled host code. The cuda backend wraps its cubin in the
same container with the source beside it, so an archive captured on a GPU replays on the sim.

Layout: ``MAGIC`` (8 bytes), a little-endian uint32 body length, then a msgpack map
``{"units": [[name, source, [[header name, header text], ...]], ...], "options": [str, ...],
"native_kind": str, "native": bytes, "names": [name expression, ...]}``. Untrusted input:
sizes are bounded and every field's type is checked before use.
"""
from __future__ import annotations

import ctypes
import struct

import attrs
import msgpack

MAGIC = b"\x7fHRRCXX\x01"
PREFIX_BYTES = 12
MAX_BODY_BYTES = 256 << 20
MAX_UNITS = 256
MAX_HEADERS = 1024
MAX_OPTIONS = 1024


class KernelSourceError(ValueError):
    """Bytes that start like a kernel source code object but are not a valid one."""


#: A header name: at most this long, this many folders deep, each part at most NAME_PART long.
MAX_HEADER_NAME = 1024
MAX_HEADER_DEPTH = 32
MAX_HEADER_PART = 255


def header_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a header's name (a relative path of plain parts, within the
    limits above), or None when it can."""
    if not name or len(name) > MAX_HEADER_NAME:
        return f"is empty or longer than {MAX_HEADER_NAME} characters"
    if any(ord(c) < 32 or c in "\\\x7f" for c in name):
        return "holds a control character or a backslash"
    parts = name.split("/")
    if name.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return "is not a relative path of plain names (no '/' first, no '.', '..' or empty part)"
    if len(parts) > MAX_HEADER_DEPTH:
        return f"is more than {MAX_HEADER_DEPTH} folders deep"
    if any(len(p.encode()) > MAX_HEADER_PART for p in parts):
        return f"has a part longer than {MAX_HEADER_PART} bytes"
    return None


def headers_problem(names: list[str] | tuple[str, ...]) -> str | None:
    """Why a unit's header names cannot all be files of one folder tree (a bad name, or one
    that is another's folder: ``a`` beside ``a/b``), or None."""
    for name in names:
        why = header_name_problem(name)
        if why is not None:
            return f"header name {name[:80]!r} {why}"
    files = set(names)
    for name in files:
        parts = name.split("/")
        for i in range(1, len(parts)):
            if "/".join(parts[:i]) in files:
                return f"header name {'/'.join(parts[:i])[:80]!r} is both a header and the folder of {name[:80]!r}"
    return None


@attrs.frozen
class SourceUnit:
    """One translation unit: its name, its source and the headers hiprtcCreateProgram gave it."""

    name: str
    source: bytes
    headers: tuple[tuple[str, bytes], ...] = ()


@attrs.frozen
class KernelSource:
    """A program's source units and options; ``native`` is a backend's compiled image of it
    (``native_kind`` names which: "cubin"), or empty."""

    units: tuple[SourceUnit, ...]
    options: tuple[str, ...] = ()
    native_kind: str = ""
    native: bytes = b""
    name_expressions: tuple[str, ...] = ()   # hiprtcAddNameExpression's: template kernels to instantiate


def is_kernel_source(data: bytes) -> bool:
    """Whether ``data`` starts with this container's magic."""
    return bytes(data[:len(MAGIC)]) == MAGIC


def total_size(prefix: bytes) -> int:
    """The whole container's size from its first 12 bytes (KernelSourceError when it cannot be one)."""
    if len(prefix) < PREFIX_BYTES or not is_kernel_source(prefix):
        raise KernelSourceError("not a kernel source code object (bad magic)")
    (n,) = struct.unpack_from("<I", prefix, len(MAGIC))
    if n > MAX_BODY_BYTES:
        raise KernelSourceError(f"kernel source code object of {n} bytes exceeds the limit of {MAX_BODY_BYTES}")
    return PREFIX_BYTES + n


def read_at(addr: int) -> bytes | None:
    """The container at process address ``addr``, or None when the bytes there do not start
    with its magic (KernelSourceError when they do but its length is impossible)."""
    prefix = ctypes.string_at(addr, PREFIX_BYTES)
    return ctypes.string_at(addr, total_size(prefix)) if is_kernel_source(prefix) else None


def encode(ks: KernelSource) -> bytes:
    """The container's bytes."""
    body = msgpack.packb({"units": [[u.name, u.source, [list(h) for h in u.headers]] for u in ks.units],
                          "options": list(ks.options), "native_kind": ks.native_kind, "native": ks.native,
                          "names": list(ks.name_expressions)},
                         use_bin_type=True)
    return MAGIC + struct.pack("<I", len(body)) + body


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise KernelSourceError(f"malformed kernel source code object: {what} is not text")
    return value


def _blob(value: object, what: str) -> bytes:
    if not isinstance(value, bytes):
        raise KernelSourceError(f"malformed kernel source code object: {what} is not bytes")
    return value


def decode(data: bytes) -> KernelSource:
    """Parse and validate a container (KernelSourceError, with what is wrong, otherwise)."""
    size = total_size(bytes(data[:PREFIX_BYTES]))
    if len(data) < size:
        raise KernelSourceError(f"truncated kernel source code object: {len(data)} of {size} bytes")
    try:
        body = msgpack.unpackb(bytes(data[PREFIX_BYTES:size]), raw=False, max_array_len=max(MAX_HEADERS, MAX_OPTIONS),
                               max_map_len=16, strict_map_key=True)
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError, TypeError) as exc:
        raise KernelSourceError(f"malformed kernel source code object: {str(exc)[:200]}") from None
    if not isinstance(body, dict) or not isinstance(body.get("units"), list) \
            or not isinstance(body.get("options", []), list):
        raise KernelSourceError("malformed kernel source code object: no unit list")
    units = []
    if not 0 < len(body["units"]) <= MAX_UNITS:
        raise KernelSourceError(f"kernel source code object with {len(body['units'])} units "
                                f"(1 to {MAX_UNITS} allowed)")
    for i, unit in enumerate(body["units"]):
        if not (isinstance(unit, list) and len(unit) == 3 and isinstance(unit[2], list)):
            raise KernelSourceError(f"malformed kernel source code object: unit {i} is not [name, source, headers]")
        headers = []
        for h in unit[2]:
            if not (isinstance(h, list) and len(h) == 2):
                raise KernelSourceError(f"malformed kernel source code object: a header of unit {i}")
            headers.append((_text(h[0], "a header name"), _blob(h[1], "a header's text")))
        why = headers_problem([n for n, _ in headers])
        if why is not None:
            raise KernelSourceError(f"kernel source code object: unit {i}'s {why}")
        units.append(SourceUnit(_text(unit[0], "a unit name"), _blob(unit[1], "a unit's source"), tuple(headers)))
    options = tuple(_text(o, "an option") for o in body.get("options", []))
    names = body.get("names", [])
    if not isinstance(names, list):
        raise KernelSourceError("malformed kernel source code object: names is not a list")
    return KernelSource(tuple(units), options, _text(body.get("native_kind", ""), "native_kind"),
                        _blob(body.get("native", b""), "native"), tuple(_text(n, "a name expression") for n in names))
