"""Clang offload bundles (``.hipfb``, ``hipModuleLoadData`` fat binaries), plain and compressed.

Plain layout (``__CLANG_OFFLOAD_BUNDLE__``): the 24-byte magic, a u64 entry count, then per
entry a u64 offset, u64 size, u64 id length and the id (``hipv4-amdgcn-amd-amdhsa--gfx90a``),
each offset from the start of the bundle. Compressed (``CCOB``): u16 format version, u16
method (0 zlib, 1 zstd), then v1: u32 raw size; v2: u32 file size, u32 raw size; v3: u64
file size, u64 raw size; then the low 64 bits of the raw bundle's MD5, then the stream,
whose output is a plain bundle. All integers little-endian; every one is checked here.
"""
from __future__ import annotations

import hashlib
import io
import struct
import zlib
from typing import Callable

import attrs

from hrr.backends.amdgpu.codeobject import split_target
from hrr.backends.amdgpu.errors import CodeObjectError, check_range

BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
CCOB_MAGIC = b"CCOB"
MAX_ENTRIES = 4096
MAX_ID = 4096
MAX_DECOMPRESSED = 256 << 20
ZLIB, ZSTD = 0, 1
# version -> (struct of the fields after magic, version and method; whether it has a file size)
_CCOB_HEADERS = {1: (struct.Struct("<IQ"), False), 2: (struct.Struct("<IIQ"), True),
                 3: (struct.Struct("<QQQ"), True)}


@attrs.frozen
class BundleEntry:
    """One entry of a plain bundle: its id split into offload kind, triple and target id."""

    bundle_id: str
    offset: int
    size: int
    kind: str
    triple: str
    target: str

    @property
    def processor(self) -> str:
        """The target id without its features: ``gfx90a`` for ``gfx90a:xnack-``."""
        return self.target.split(":", 1)[0]

    @property
    def is_amdgcn(self) -> bool:
        """True for AMD GPU code (not the host entry, not another offload target)."""
        return self.triple.startswith("amdgcn-")


def split_bundle_id(bundle_id: str) -> tuple[str, str, str]:
    """(offload kind, triple, target id) of ``hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-``."""
    kind, _, rest = bundle_id.partition("-")
    return (kind, *split_target(rest))


def read_bundle(data: bytes) -> tuple[BundleEntry, ...]:
    """The entries of a plain offload bundle, each checked to lie inside ``data``."""
    if data[:len(BUNDLE_MAGIC)] != BUNDLE_MAGIC:
        raise CodeObjectError("not a clang offload bundle (bad magic)", 0)
    pos = len(BUNDLE_MAGIC)
    check_range(len(data), pos, 8, "bundle entry count")
    (count,) = struct.unpack_from("<Q", data, pos)
    if count > MAX_ENTRIES:
        raise CodeObjectError(f"bundle claims {count} entries (limit {MAX_ENTRIES})", pos)
    pos += 8
    entries = []
    for i in range(count):
        check_range(len(data), pos, 24, f"bundle entry {i} header")
        off, size, id_len = struct.unpack_from("<QQQ", data, pos)
        if id_len > MAX_ID:
            raise CodeObjectError(f"bundle entry {i} id claims {id_len} bytes (limit {MAX_ID})", pos + 16)
        check_range(len(data), pos + 24, id_len, f"bundle entry {i} id")
        raw_id = data[pos + 24:pos + 24 + id_len]
        try:
            bundle_id = raw_id.decode("ascii")
        except UnicodeDecodeError:
            raise CodeObjectError(f"bundle entry {i} id is not ASCII: {raw_id[:40]!r}", pos + 24) from None
        if not bundle_id.isprintable():
            raise CodeObjectError(f"bundle entry {i} id has control characters: {bundle_id[:40]!r}", pos + 24)
        check_range(len(data), off, size, f"bundle entry {i} ({bundle_id}) data")
        entries.append(BundleEntry(bundle_id, off, size, *split_bundle_id(bundle_id)))
        pos += 24 + id_len
    return tuple(entries)


def _features_agree(entry: str, wanted: str) -> bool:
    # A feature an entry does not name (xnack "any") runs either way; a named one must not
    # contradict the requested setting.
    asked = {f[:-1]: f[-1] for f in wanted.split(":")[1:] if f}
    return all(asked.get(f[:-1], f[-1]) == f[-1] for f in entry.split(":")[1:] if f)


def select_entry(entries: tuple[BundleEntry, ...], arch: str | None = None) -> BundleEntry:
    """The entry for ``arch`` (``gfx90a`` or a full target id such as ``gfx90a:xnack-``),
    or the first non-empty amdgcn entry when ``arch`` is None."""
    gpu = [e for e in entries if e.is_amdgcn and e.size]
    if arch is None:
        if gpu:
            return gpu[0]
    else:
        exact = [e for e in gpu if e.target == arch]
        close = [e for e in gpu if e.processor == arch.split(":", 1)[0] and _features_agree(e.target, arch)]
        if exact or close:
            return (exact or sorted(close, key=lambda e: e.target.count(":")))[0]
    have = ", ".join(e.bundle_id for e in entries) or "none"
    want = f"for {arch}" if arch else "(amdgcn, non-empty)"
    raise CodeObjectError(f"no bundle entry {want}; entries: {have}", 0)


def _zstd_decompressor() -> Callable[[bytes, int], bytes]:
    try:
        import zstandard  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        pass
    else:
        def with_zstandard(body: bytes, limit: int) -> bytes:
            reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(body))
            out = bytearray()
            while len(out) <= limit:
                chunk = reader.read(min(1 << 20, limit + 1 - len(out)))
                if not chunk:
                    break
                out += chunk
            return bytes(out)
        return with_zstandard
    try:
        from compression import zstd  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise CodeObjectError("the bundle is zstd-compressed and no zstd module is installed "
                              "(pip install zstandard; zlib-compressed bundles need nothing)", 6) from None

    def with_stdlib(body: bytes, limit: int) -> bytes:
        return bytes(zstd.ZstdDecompressor().decompress(body, max_length=limit + 1))
    return with_stdlib


def _zlib_decompress(body: bytes, limit: int) -> bytes:
    d = zlib.decompressobj()
    out = d.decompress(body, limit + 1)
    if not d.eof and len(out) <= limit:
        raise zlib.error("the stream is truncated")
    return out


def decompress_bundle(data: bytes, max_size: int = MAX_DECOMPRESSED) -> bytes:
    """The plain bundle inside a compressed (``CCOB``) one, its size and MD5 checked."""
    if data[:4] != CCOB_MAGIC:
        raise CodeObjectError("not a compressed offload bundle (bad magic)", 0)
    check_range(len(data), 4, 4, "compressed bundle version and method")
    version, method = struct.unpack_from("<HH", data, 4)
    if version not in _CCOB_HEADERS:
        raise CodeObjectError(f"compressed bundle format version {version} is unknown (1, 2, 3 are read)", 4)
    fields, has_file_size = _CCOB_HEADERS[version]
    check_range(len(data), 8, fields.size, f"compressed bundle v{version} header")
    head = 8 + fields.size
    if has_file_size:
        file_size, raw_size, digest = fields.unpack_from(data, 8)
        if not head <= file_size <= len(data):
            raise CodeObjectError(f"compressed bundle claims {file_size} bytes; the input has {len(data)} "
                                  f"and the header alone {head}", 8)
    else:
        (raw_size, digest), file_size = fields.unpack_from(data, 8), len(data)
    if raw_size > max_size:
        raise CodeObjectError(f"compressed bundle claims {raw_size} bytes uncompressed (limit {max_size})",
                              {1: 8, 2: 12, 3: 16}[version])
    inflate: Callable[[bytes, int], bytes]
    if method == ZLIB:
        inflate, name = _zlib_decompress, "zlib"
    elif method == ZSTD:
        inflate, name = _zstd_decompressor(), "zstd"
    else:
        raise CodeObjectError(f"compression method {method} is unknown (0 zlib, 1 zstd)", 6)
    try:
        raw = inflate(data[head:file_size], raw_size)
    except Exception as e:  # noqa: BLE001 - zlib.error, zstandard.ZstdError, ...: all mean a bad stream
        raise CodeObjectError(f"{name} stream is corrupt ({e})", head) from None
    if len(raw) != raw_size:
        more = "more than" if len(raw) > raw_size else f"{len(raw)} bytes, not"
        raise CodeObjectError(f"{name} stream inflates to {more} the {raw_size} bytes the header says", head)
    if struct.unpack_from("<Q", hashlib.md5(raw, usedforsecurity=False).digest())[0] != digest:
        raise CodeObjectError("the decompressed bundle does not match the header's MD5", head - 8)
    return raw


__all__ = ["BundleEntry", "read_bundle", "select_entry", "decompress_bundle", "split_bundle_id",
           "BUNDLE_MAGIC", "CCOB_MAGIC", "MAX_DECOMPRESSED"]
