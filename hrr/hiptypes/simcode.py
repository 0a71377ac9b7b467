"""The sim's code object: bytes that *name* a kernel library, its version and some of its
kernels; it never carries code, so an archive that holds one cannot make replay run
anything that is not already installed. Read by the sim and by whoever sizes an image at
an address (``codefile``).

Layout: ``MAGIC`` (8 bytes), a little-endian uint32 header length, then a UTF-8 JSON
header ``{"library": str, "version": str, "kernels": [str, ...]}``.
"""
from __future__ import annotations

import json
import struct

import attrs

MAGIC = b"\x7fHRRSIM\x01"
MAX_HEADER_BYTES = 1 << 20
MAX_HEADER_DEPTH = 16


class CodeObjectError(ValueError):
    """Bytes that are not a usable sim code object; ``code`` is the hipError_t name to report."""

    def __init__(self, message: str, code: str = "hipErrorInvalidImage") -> None:
        super().__init__(message)
        self.code = code


@attrs.frozen
class CodeObject:
    library: str
    version: str
    kernels: tuple[str, ...]


def encode_code_object(library: str, version: str, kernels: list[str]) -> bytes:
    header = json.dumps({"library": library, "version": version, "kernels": list(kernels)},
                        sort_keys=True).encode()
    return MAGIC + struct.pack("<I", len(header)) + header


def code_object_size(prefix: bytes) -> int:
    """The total size of the code object whose first 12 bytes are ``prefix``."""
    if prefix[:8] != MAGIC or len(prefix) < 12:
        raise CodeObjectError("not a sim code object (bad magic)")
    (n,) = struct.unpack_from("<I", prefix, 8)
    if n > MAX_HEADER_BYTES:
        raise CodeObjectError(f"sim code object header of {n} bytes exceeds the limit")
    return 12 + n


def _json_depth(raw: bytes) -> int:
    """The deepest bracket nesting in ``raw`` (an upper bound: brackets inside strings count too)."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_HEADER_DEPTH:
        return 0                   # few brackets at all: no need to walk (the usual case)
    depth = deepest = 0
    for b in raw:
        if b in (0x5B, 0x7B):      # [ {
            depth += 1
            deepest = max(deepest, depth)
        elif b in (0x5D, 0x7D):    # ] }
            depth -= 1
    return deepest


def decode_code_object(data: bytes) -> CodeObject:
    """Parse and validate a code object's header (not whether its library is installed)."""
    total = code_object_size(bytes(data[:12]))
    if len(data) < total:
        raise CodeObjectError("truncated sim code object")
    raw = bytes(data[12:total])
    # Untrusted bytes: bound the nesting before json recurses (the real header is 1 deep).
    if _json_depth(raw) > MAX_HEADER_DEPTH:
        raise CodeObjectError(f"malformed sim code object header: nested deeper than {MAX_HEADER_DEPTH}")
    try:
        head = json.loads(raw)
        lib, ver, names = head["library"], head["version"], head["kernels"]
    except (ValueError, KeyError, TypeError, RecursionError) as exc:  # deep nesting too
        raise CodeObjectError(f"malformed sim code object header: {str(exc)[:200]}") from None
    if not (isinstance(lib, str) and isinstance(ver, str) and isinstance(names, list)
            and all(isinstance(n, str) for n in names)):
        raise CodeObjectError("malformed sim code object header: wrong field types")
    return CodeObject(lib, ver, tuple(names))
