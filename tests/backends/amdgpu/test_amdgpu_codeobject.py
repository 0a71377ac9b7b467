"""Kernel argument layouts from real AMDGPU code objects (ELF + msgpack metadata note)."""
from __future__ import annotations

import struct

import msgpack
import pytest

from hrr.backends.amdgpu import CodeObjectError, KernelArg, parse_code_object, parse_metadata, read_code_object
from hrr.backends.amdgpu.codeobject import param_kind
from hrr.hiptypes.kernargs import POINTER, STRUCT, UNKNOWN, VALUE, pointer_word_offsets

SCALE = [(0, 8, POINTER), (8, 4, VALUE), (16, 8, UNKNOWN), (24, 16, STRUCT), (40, 1, VALUE)]


def shape(kernel):
    return [(p.offset, p.size, p.kind) for p in kernel.layout.params]


def test_hip_code_object_v5_gfx90a(fixture_bytes):
    co = read_code_object(fixture_bytes("hip_gfx90a.co"))
    assert (co.target, co.version, co.processor) == ("amdgcn-amd-amdhsa--gfx90a", (1, 2), "gfx90a")
    assert [k.name for k in co.kernels] == ["vadd", "scale", "strided"]
    vadd, scale, strided = co.kernels
    assert shape(vadd) == [(0, 8, POINTER), (8, 8, POINTER), (16, 8, POINTER), (24, 4, VALUE)]
    assert [p.name for p in vadd.layout.params] == ["arg0", "arg1", "arg2", "arg3"]
    assert shape(scale) == SCALE
    assert (vadd.kernarg_segment_size, scale.kernarg_segment_size) == (28, 44)
    assert vadd.symbol == "vadd.kd" and vadd.kernarg_segment_align == 8 and not vadd.hidden_args
    # strided reads blockDim: v5 keeps its hidden arguments, which are not user arguments
    # but make up most of the kernarg segment.
    assert shape(strided) == [(0, 8, POINTER), (8, 16, STRUCT)]
    assert strided.layout.size == 24 and strided.kernarg_segment_size == 280
    hidden = strided.hidden_args
    assert len(hidden) == 13 and all(a.value_kind.startswith("hidden_") for a in hidden)
    assert hidden[0] == KernelArg(24, 4, "hidden_block_count_x")
    assert len(strided.args) == 15


def test_hip_code_object_v4_gfx1030(fixture_bytes):
    co = read_code_object(fixture_bytes("hip_gfx1030_v4.co"))
    assert (co.version, co.processor) == ((1, 1), "gfx1030")
    assert shape(co.kernel("scale")) == SCALE
    assert co.kernel("strided").kernarg_segment_size == 24 and not co.kernel("strided").hidden_args


def test_opencl_names_local_and_constant_pointers(fixture_bytes):
    co = read_code_object(fixture_bytes("ocl_gfx1030.co"))
    (fill,) = co.kernels
    assert [(p.name, p.offset, p.size, p.kind) for p in fill.layout.params] == [
        ("x", 0, 8, POINTER), ("s", 8, 4, VALUE), ("count", 16, 8, VALUE), ("p", 24, 16, STRUCT),
        ("tmp", 40, 4, POINTER), ("lut", 48, 8, POINTER)]
    assert fill.args[4].value_kind == "dynamic_shared_pointer" and fill.args[4].address_space == "local"
    # The 4-byte LDS offset is no device address; the long is a scalar; the struct's words are looked at.
    assert pointer_word_offsets(fill.layout) == (0, 24, 32, 48)


def test_kernel_lookup_by_name_or_symbol(fixture_bytes):
    co = read_code_object(fixture_bytes("hip_gfx90a.co"))
    assert co.kernel("scale.kd") is co.kernel("scale")
    assert co.layouts()["vadd"] is co.kernel("vadd").layout
    with pytest.raises(KeyError):
        co.kernel("missing")


@pytest.mark.parametrize("kind,size,type_name,want", [
    ("global_buffer", 8, "", POINTER), ("dynamic_shared_pointer", 4, "", POINTER),
    ("by_value", 4, "", VALUE), ("by_value", 8, "", UNKNOWN), ("by_value", 8, "ulong", VALUE),
    ("by_value", 12, "", STRUCT), ("image", 8, "", UNKNOWN), ("some_future_kind", 8, "", UNKNOWN)])
def test_param_kind(kind, size, type_name, want):
    assert param_kind(KernelArg(0, size, kind, type_name=type_name)) == want


def meta(**kernel):
    k = {".name": "k", ".symbol": "k.kd", ".kernarg_segment_size": 16, ".kernarg_segment_align": 8,
         ".args": [{".offset": 0, ".size": 8, ".value_kind": "global_buffer"}]}
    k.update(kernel)
    return msgpack.packb({"amdhsa.version": [1, 2], "amdhsa.kernels": [k]})


@pytest.mark.parametrize("kernel,words", [
    ({".args": [{".offset": 0, ".size": 8, ".value_kind": "by_value"},
                {".offset": 4, ".size": 8, ".value_kind": "by_value"}]}, "overlaps"),
    ({".args": [{".offset": 12, ".size": 8, ".value_kind": "by_value"}]}, "past .kernarg_segment_size 16"),
    ({".args": [{".offset": -1, ".size": 8, ".value_kind": "by_value"}]}, ".offset is -1"),
    ({".args": [{".offset": 0, ".size": True, ".value_kind": "by_value"}]}, ".size is True"),
    ({".args": [{".offset": 0, ".size": 8}]}, ".value_kind is None"),
    ({".args": "nope"}, ".args is not a list"),
    ({".name": 7}, ".name is 7"),
    ({".kernarg_segment_size": 1 << 40}, ".kernarg_segment_size is"),
    ({".kernarg_segment_align": 6}, "not a power of two"),
])
def test_bad_metadata_names_the_field(kernel, words):
    with pytest.raises(CodeObjectError) as e:
        parse_metadata(meta(**kernel), at=0x123)
    assert words in str(e.value) and "kernel 0" in str(e.value) and "at offset 0x123" in str(e.value)


@pytest.mark.parametrize("doc,words", [
    (b"\xc1", "not valid msgpack"), (msgpack.packb([1, 2]), "not a map"),
    (msgpack.packb({"amdhsa.kernels": []}), "amdhsa.version"),
    (msgpack.packb({"amdhsa.version": [1, 2], "amdhsa.kernels": [3]}), "kernel 0 is 3"),
    (msgpack.packb({"amdhsa.version": [1, 2], "amdhsa.kernels": {}}), "amdhsa.kernels is not a list")])
def test_bad_metadata_document(doc, words):
    with pytest.raises(CodeObjectError, match="AMDGPU metadata") as e:
        parse_metadata(doc)
    assert words in str(e.value)


def test_metadata_container_budget(monkeypatch):
    monkeypatch.setattr("hrr.backends.amdgpu.codeobject.MAX_CONTAINERS", 100)
    parse_metadata(meta())  # a handful of maps and arrays
    with pytest.raises(CodeObjectError, match="not valid msgpack .*more than 100 maps and arrays"):
        parse_metadata(msgpack.packb([{}] * 101))


def patched(data, offset, fmt, value):
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


@pytest.mark.parametrize("offset,fmt,value,words,at", [
    (0x12, "<H", 62, "ELF machine is 62, not AMDGPU", 0x12),
    (7, "<B", 65, "AMDGPU PAL", 7),
    (4, "<B", 1, "64-bit little-endian", 4),
    (0x10, "<H", 2, "ELF type 2", 0x10),
    (0x3A, "<H", 40, "section header entry size is 40", 0x3A),
    (0x3C, "<H", 60000, "section header table (60000 entries) of 3840000 bytes runs past the end", None)])
def test_bad_elf_header(fixture_bytes, offset, fmt, value, words, at):
    with pytest.raises(CodeObjectError) as e:
        parse_code_object(patched(fixture_bytes("hip_gfx90a.co"), offset, fmt, value))
    assert words in str(e.value)
    assert at is None or e.value.offset == at


def test_notes_found_through_program_headers(fixture_bytes):
    data = fixture_bytes("hip_gfx90a.co")
    no_sections = patched(data, 0x3C, "<H", 0)  # e_shnum: the PT_NOTE segment is used instead
    assert parse_code_object(no_sections) == parse_code_object(data)
    with pytest.raises(CodeObjectError, match="neither section headers nor program headers"):
        parse_code_object(patched(no_sections, 0x38, "<H", 0))
    with pytest.raises(CodeObjectError, match="program header entry size is 32") as e:
        parse_code_object(patched(no_sections, 0x36, "<H", 32))
    assert e.value.offset == 0x36


def test_note_walk_is_bounded(fixture_bytes, monkeypatch):
    # Every section header made a note section over the same 12-byte empty note: the walk
    # stops at the cap instead of visiting sections x notes.
    data = bytearray(fixture_bytes("hip_gfx90a.co"))
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shnum, = struct.unpack_from("<H", data, 0x3C)
    data[0x100:0x10C] = struct.pack("<III", 0, 0, 1)
    for i in range(shnum):
        struct.pack_into("<IIQQQQ", data, shoff + 64 * i, 0, 7, 0, 0, 0x100, 12)
    monkeypatch.setattr("hrr.backends.amdgpu.codeobject.MAX_NOTES", 5)
    with pytest.raises(CodeObjectError, match="more than 5 notes and no AMDGPU metadata"):
        parse_code_object(bytes(data))


def metadata_note(data):
    pos = data.index(b"AMDGPU\0\0")
    return pos - 12


def test_code_object_v2_note_is_named(fixture_bytes):
    data = fixture_bytes("hip_gfx90a.co")
    note = metadata_note(data)
    # owner "AMDGPU" -> "AMD", NUL-padded to the same name size so the descriptor stays put.
    legacy = bytearray(data)
    struct.pack_into("<I", legacy, note + 8, 10)
    legacy[note + 12:note + 20] = b"AMD\0\0\0\0\0"
    with pytest.raises(CodeObjectError, match="code object v2"):
        parse_code_object(bytes(legacy))
    legacy[note + 12:note + 16] = b"XYZ\0"
    with pytest.raises(CodeObjectError, match="no AMDGPU metadata note"):
        parse_code_object(bytes(legacy))


def test_note_descriptor_overrun_is_caught(fixture_bytes):
    data = fixture_bytes("hip_gfx90a.co")
    note = metadata_note(data)
    with pytest.raises(CodeObjectError, match="note descriptor of 1048576 bytes overruns") as e:
        parse_code_object(patched(data, note + 4, "<I", 1 << 20))
    assert e.value.offset == note


def test_not_a_code_object():
    with pytest.raises(CodeObjectError, match="not an AMDGPU code object or clang offload bundle"):
        read_code_object(b"MZ\x90\x00" * 8)
    with pytest.raises(CodeObjectError, match="ELF header needs 64 bytes"):
        read_code_object(b"\x7fELF\x02\x01")
