"""Hostile input: every truncation and a bit flip at every byte of each fixture either
parses or raises a CodeObjectError that says what was wrong and where. Nothing else
escapes (no IndexError, struct.error, MemoryError, msgpack's own errors...)."""
from __future__ import annotations

import random
import re
import struct

from pathlib import Path

import pytest

from hrr.backends.amdgpu import CodeObjectError, read_code_object

FIXTURES = Path(__file__).parent / "fixtures"
ALL = sorted(p.name for p in FIXTURES.iterdir() if p.suffix in (".co", ".hipfb"))

WHERE = re.compile(r"\(at offset 0x[0-9a-f]+\)$")


def outcome(data: bytes, arch: str | None = None) -> str:
    try:
        read_code_object(data, arch)
    except CodeObjectError as e:
        assert e.what and isinstance(e.offset, int) and e.offset >= 0, repr(e)
        assert WHERE.search(str(e)), str(e)
        return "error"
    return "ok"


@pytest.mark.parametrize("name", ALL)
def test_every_truncation(name):
    data = (FIXTURES / name).read_bytes()
    results = [outcome(data[:n]) for n in range(len(data))]
    # Only the padding after a bundle's last entry could go; a cut code object never parses
    # unless the cut falls past everything the reader looks at.
    assert results[0] == results[len(data) // 2] == "error"


def elf_regions(data: bytes, base: int = 0) -> set[int]:
    """Byte positions the reader looks at in an ELF code object: the ELF header, the section
    header table and the note sections (read here with struct, independently of the reader)."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shnum, = struct.unpack_from("<H", data, 0x3C)
    spans = [(0, 64), (shoff, shoff + 64 * shnum)]
    for i in range(shnum):
        _, sh_type, _, _, off, size = struct.unpack_from("<IIQQQQ", data, shoff + 64 * i)
        if sh_type == 7:
            spans.append((off, off + size))
    return {base + p for lo, hi in spans for p in range(lo, hi)}


def read_regions(data: bytes) -> set[int]:
    if data[:4] == b"\x7fELF":
        return elf_regions(data)
    if data[:4] == b"CCOB":
        return set(range(len(data)))  # all of it feeds the decompressor
    count, = struct.unpack_from("<Q", data, 24)
    pos, found = 32, set()
    for _ in range(count):
        off, size, id_len = struct.unpack_from("<QQQ", data, pos)
        pos += 24 + id_len
        if size:  # the code object's own structures are flipped through the .co fixture
            found |= set(range(off, off + 64))
    return found | set(range(pos))


@pytest.mark.parametrize("name", ALL)
def test_a_bit_flip_at_every_byte_read(name):
    data = (FIXTURES / name).read_bytes()
    regions = read_regions(data)
    arch = "gfx90a" if "multi" in name else None
    seen = set()
    for pos in range(len(data)):
        if pos not in regions and pos % 17:
            continue
        flipped = bytearray(data)
        flipped[pos] ^= 1 << (pos % 8)
        result = outcome(bytes(flipped), arch)
        # Code and padding are never read: a flip there changes nothing.
        assert pos in regions or result == "ok" or name.endswith(".hipfb"), pos
        seen.add(result)
    assert "error" in seen  # the flips do reach the structures


@pytest.mark.parametrize("name", ALL)
def test_random_multi_byte_damage(name):
    data = (FIXTURES / name).read_bytes()
    rng = random.Random(name)
    for _ in range(300):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            pos = rng.randrange(len(damaged))
            damaged[pos] = rng.choice((0, 0xFF, rng.randrange(256)))
        outcome(bytes(damaged))
