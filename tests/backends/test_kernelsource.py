"""The kernel source code object: round trip, and refusal of damaged or hostile bytes."""
from __future__ import annotations

import struct

import msgpack
import pytest

from hrr.hiptypes import kernelsource as ks


def _container(body: object) -> bytes:
    raw = msgpack.packb(body, use_bin_type=True)
    return ks.MAGIC + struct.pack("<I", len(raw)) + raw


def test_round_trip_keeps_every_byte_of_source_and_headers():
    src = ks.KernelSource((ks.SourceUnit("a.hip", bytes(range(256)), (("h.h", b"#define X 1\n"),)),
                           ks.SourceUnit("b.hip", b"__global__ void k() {}")), ("-O3", "-DX=2"), "cubin", b"\x7fELF..")
    data = ks.encode(src)
    assert ks.is_kernel_source(data) and ks.total_size(data[:12]) == len(data)
    assert ks.decode(data) == src
    assert ks.decode(data + b"trailing bytes are not read") == src


@pytest.mark.parametrize("data, message", [
    (b"\x7fELF" + bytes(20), "bad magic"),
    (ks.MAGIC + struct.pack("<I", ks.MAX_BODY_BYTES + 1), "exceeds the limit"),
    (ks.MAGIC + struct.pack("<I", 100) + b"\x80", "truncated"),
    (_container([1, 2]), "no unit list"),
    (_container({"units": []}), "0 units"),
    (_container({"units": [["a", "text, not bytes", []]]}), "a unit's source is not bytes"),
    (_container({"units": [["a", b"x", [["h"]]]]}), "a header of unit 0"),
    (_container({"units": [["a", b"x", []]], "options": [7]}), "an option is not text"),
    (ks.MAGIC + struct.pack("<I", 3) + b"\xc1\xc1\xc1", "malformed"),
])
def test_damaged_containers_are_refused_with_what_is_wrong(data, message):
    with pytest.raises(ks.KernelSourceError, match=message):
        ks.decode(data)


def test_deep_nesting_is_refused_not_a_recursion_crash():
    # 100 000 nested one-element arrays, written by hand (msgpack's packer refuses the depth)
    body = b"\x81\xa5units\x91\x93\xa1a\xc4\x01x" + b"\x91" * 100_000 + b"\xc0"
    data = ks.MAGIC + struct.pack("<I", len(body)) + body
    with pytest.raises(ks.KernelSourceError):
        ks.decode(data)


def test_read_at_an_address_takes_exactly_the_container():
    import ctypes
    data = ks.encode(ks.KernelSource((ks.SourceUnit("a", b"__global__ void k() {}"),)))
    buf = ctypes.create_string_buffer(data + b"bytes after it are not read", len(data) + 27)
    assert ks.read_at(ctypes.addressof(buf)) == data
    other = ctypes.create_string_buffer(b"\x7fELF" + bytes(60))
    assert ks.read_at(ctypes.addressof(other)) is None


def test_every_backend_reads_a_container_given_by_address():
    import ctypes

    from hrr.backends.sim.kernels import image_bytes
    data = ks.encode(ks.KernelSource((ks.SourceUnit("a", b"x"),)))
    buf = ctypes.create_string_buffer(data, len(data))
    assert image_bytes(ctypes.addressof(buf)) == data == image_bytes(bytearray(data))
    try:
        from hrr.backends.cuda.modules import _image_bytes
    except ImportError:   # the cuda extra is absent here
        return
    assert _image_bytes(ctypes.addressof(buf)) == data
    elf = ctypes.create_string_buffer(b"\x7fELF" + bytes(60))
    assert _image_bytes(ctypes.addressof(elf)) == ctypes.addressof(elf)   # the driver reads a cubin itself
