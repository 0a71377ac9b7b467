"""Reading native kernel images: what the loader needs (segments, RELATIVE relocations, the
launch entry, kernels, globals) and a clear ImageError for anything it cannot load."""
from __future__ import annotations

import random
import struct

import numpy as np
import pytest
from nativerun import Loaded

from hrr.backends.sim.native import abi
from hrr.backends.sim.native.elfimage import PAGE, ImageError, parse_image
from hrr.backends.sim.native.toolchain import SourceUnit, compile_program, find_toolchain

pytestmark = pytest.mark.skipif(find_toolchain() is None, reason="no C++ compiler for native kernels")

SOURCE = b"""
__device__ int counter;
__constant__ float coeffs[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__device__ float *table = nullptr;
static __device__ const char *names[2] = {"a", "b"};
extern "C" __global__ void bump(float *out) {
  atomicAdd(&counter, 1);
  out[threadIdx.x] = coeffs[threadIdx.x] + (names[0][0] == 'a');
}
"""


@pytest.fixture(scope="module")
def image_bytes(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("HRR_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "hrr-kernels"))
    try:
        result = compile_program([SourceUnit("globals.hip", SOURCE)], [])
    finally:
        mp.undo()
    assert result.ok, result.log
    return result.image


def test_image_shape(image_bytes):
    img = parse_image(image_bytes)
    assert img.memory_size % PAGE == 0
    assert img.memory_size >= max(s.vaddr + s.memsz for s in img.segments)
    assert 0 < img.launch < img.memory_size
    assert set(img.kernels) == {"bump"}
    assert [(p.offset, p.size, p.kind) for p in img.kernels["bump"].layout.params] == [(0, 8, "pointer")]
    assert set(img.globals) == {"counter", "coeffs", "table"}
    assert img.globals["counter"][1] == 4 and img.globals["coeffs"][1] == 16 and img.globals["table"][1] == 8
    assert img.relocations  # the pointers in names[] and the kernel metadata


def test_relocated_applies_the_base_to_every_relative_relocation(image_bytes):
    img = parse_image(image_bytes)
    base = 0x4000_0010_0000
    mem = img.relocated(base)
    assert len(mem) == img.memory_size
    for off, addend in zip(img.relocations, img.addends, strict=True):
        assert struct.unpack_from("<Q", mem, off)[0] == base + addend
    off, size = img.globals["coeffs"]
    assert struct.unpack_from("<4f", mem, off) == (1.0, 2.0, 3.0, 4.0)
    with pytest.raises(ImageError, match="not page aligned"):
        img.relocated(base + 8)


def test_loaded_image_globals_are_live(image_bytes):
    prog = Loaded(image_bytes)
    out = np.zeros(4, dtype=np.float32)
    assert prog.launch("bump", [out], block=(4, 1, 1)) == abi.OK
    assert out.tolist() == [2.0, 3.0, 4.0, 5.0]
    counter = np.frombuffer(prog.memory, dtype=np.int32, count=1, offset=prog.image.globals["counter"][0])
    assert counter[0] == 4


def _phdr_offset(data: bytes, index: int) -> int:
    return struct.unpack_from("<Q", data, 32)[0] + 56 * index


def _first_phdr_of(data: bytes, p_type: int) -> int:
    phnum = struct.unpack_from("<H", data, 56)[0]
    for i in range(phnum):
        if struct.unpack_from("<I", data, _phdr_offset(data, i))[0] == p_type:
            return _phdr_offset(data, i)
    raise AssertionError("no such segment")


def test_refuses_interpreter_and_tls_segments(image_bytes):
    for new_type, message in ((3, "interpreter"), (7, "thread-local")):
        data = bytearray(image_bytes)
        struct.pack_into("<I", data, _first_phdr_of(image_bytes, 0x6474E551), new_type)   # PT_GNU_STACK
        with pytest.raises(ImageError, match=message):
            parse_image(bytes(data))


def _dynamic_entries(data: bytes) -> list[tuple[int, int]]:
    off = struct.unpack_from("<Q", data, _first_phdr_of(data, 2) + 8)[0]
    out = []
    while True:
        tag, _val = struct.unpack_from("<qQ", data, off)
        out.append((tag, off))
        if tag == 0:
            return out
        off += 16


def test_refuses_other_relocations_and_constructors(image_bytes):
    img = parse_image(image_bytes)
    rela = dict(_dynamic_entries(image_bytes))[7]
    rela_vaddr = struct.unpack_from("<Q", image_bytes, rela + 8)[0]
    seg = next(s for s in img.segments if s.vaddr <= rela_vaddr < s.vaddr + s.filesz)
    first = seg.offset + rela_vaddr - seg.vaddr
    data = bytearray(image_bytes)
    struct.pack_into("<Q", data, first + 8, (1 << 32) | 1)   # R_X86_64_64 against symbol 1
    with pytest.raises(ImageError, match="relocation of type 1"):
        parse_image(bytes(data))
    # turn the DT_NULL terminator into DT_INIT_ARRAYSZ = 8
    data = bytearray(image_bytes)
    null_at = dict(_dynamic_entries(image_bytes))[0]
    struct.pack_into("<qQ", data, null_at, 27, 8)
    with pytest.raises(ImageError, match="constructors"):
        parse_image(bytes(data))


@pytest.mark.parametrize("data, message", [
    (b"", "not an ELF"), (b"MZ" + bytes(100), "not an ELF"),
    (b"\x7fELF\x01\x01" + bytes(100), "64-bit little-endian"),
])
def test_refuses_what_is_not_an_image(data, message):
    with pytest.raises(ImageError, match=message):
        parse_image(data)


def test_refuses_an_ordinary_shared_library():
    import ctypes.util
    path = ctypes.util.find_library("m")
    if path is None:
        pytest.skip("no libm to read")
    import os
    for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"):
        if os.path.exists(os.path.join(d, path)):
            data = open(os.path.join(d, path), "rb").read()
            break
    else:
        pytest.skip("libm not found on disk")
    with pytest.raises(ImageError):
        parse_image(data)


def test_truncated_and_corrupted_images_raise_only_image_error(image_bytes):
    for cut in list(range(0, 200, 7)) + [len(image_bytes) // 2, len(image_bytes) - 1]:
        with pytest.raises(ImageError):
            parse_image(image_bytes[:cut])
    rng = random.Random(13)
    for _ in range(300):
        data = bytearray(image_bytes)
        for _ in range(rng.randint(1, 8)):
            pos = rng.randrange(0, min(len(data), 4096)) if rng.random() < 0.7 else rng.randrange(len(data))
            data[pos] = rng.randrange(256)
        try:
            img = parse_image(bytes(data))
        except ImageError:
            continue
        if img.memory_size <= 64 << 20:
            img.relocated(0x4000_0000_0000)


def test_an_aarch64_image_builds_and_parses(tmp_path, monkeypatch):
    import importlib.util
    import sys
    if importlib.util.find_spec("ziglang") is None:
        pytest.skip("ziglang cross-compiles the aarch64 image")
    monkeypatch.setenv("HRR_SIM_CXX", f"{sys.executable} -m ziglang c++ -target aarch64-linux-none")
    monkeypatch.setenv("HRR_CACHE_DIR", str(tmp_path))
    result = compile_program([SourceUnit("globals.hip", SOURCE)], [])
    assert result.ok, result.log
    img = parse_image(result.image)
    assert img.machine == 183 and set(img.kernels) == {"bump"} and "counter" in img.globals
    mem = img.relocated(0x4000_0000_0000)
    for off, addend in zip(img.relocations, img.addends, strict=True):
        assert struct.unpack_from("<Q", mem, off)[0] == 0x4000_0000_0000 + addend
