"""Code object inputs read one way by every backend and by capture: the file ``hipModuleLoad``
names, and the image argument ``hipModuleLoadData`` takes (a buffer, or an address)."""
from __future__ import annotations

import ctypes
import os
import struct
from typing import Any

from hrr.hiptypes import kernelsource
from hrr.hiptypes.pointers import as_address
from hrr.hiptypes.simcode import MAGIC as SIM_MAGIC
from hrr.hiptypes.simcode import code_object_size

#: The most bytes read at an address for one image (a loader that took more is not followed).
MAX_IMAGE_AT_ADDRESS = 256 << 20
ELF64_MAGIC = b"\x7fELF\x02\x01"            # a 64-bit little-endian ELF
_ELF64 = struct.Struct("<32xQQ6xHHHH")       # e_phoff, e_shoff, e_phentsize, e_phnum, e_shentsize, e_shnum
_FATBIN = struct.Struct("<IHHQ")              # magic, version, header size, size of what follows
_FATBIN_MAGIC = 0xBA55ED50


def buffer_or_address(image: Any) -> bytes | int:
    """A ``hipModuleLoadData`` image: its bytes when it is a buffer, else the address it names
    (how much to read there depends on the code object's format: each backend knows its own)."""
    try:
        return bytes(memoryview(image).cast("B"))
    except TypeError:
        return as_address(image)


def image_at(addr: int) -> bytes | None:
    """The code object at process address ``addr`` when its own header says how long it is
    (hrr's kernel source container, a sim code object, a 64-bit little-endian ELF, a CUDA
    fat binary), else None. Call it only once a load of ``addr`` succeeded: the loader has
    read those bytes already, so they are mapped."""
    if not addr:
        return None
    try:
        size = _image_size(addr, ctypes.string_at(addr, 16))
    except ValueError:   # a header claiming an impossible length
        return None
    if size is None or size > MAX_IMAGE_AT_ADDRESS:
        return None
    return ctypes.string_at(addr, size)


def elf64_size(header: bytes) -> int:
    """The length of a 64-bit ELF image from its header's first 62 bytes: where its section
    or program headers end, whichever is later."""
    phoff, shoff, phentsize, phnum, shentsize, shnum = _ELF64.unpack(header[:_ELF64.size])
    return max(shoff + shentsize * shnum, phoff + phentsize * phnum, 64)


def _image_size(addr: int, head: bytes) -> int | None:
    """The length of the image at ``addr`` (``head``: its first 16 bytes) by its format."""
    if head.startswith(kernelsource.MAGIC):
        return kernelsource.total_size(ctypes.string_at(addr, kernelsource.PREFIX_BYTES))
    if head.startswith(SIM_MAGIC):
        return code_object_size(head[:12])
    if head.startswith(ELF64_MAGIC):
        return elf64_size(ctypes.string_at(addr, _ELF64.size))
    if int.from_bytes(head[:4], "little") == _FATBIN_MAGIC:
        _magic, _version, header_size, body = _FATBIN.unpack(head)
        return header_size + body
    return None


def code_file_path(fname: Any) -> str:
    """``fname`` (str, bytes or a NUL-terminated buffer of them) as a path."""
    path = fname if isinstance(fname, str) else os.fsdecode(bytes(fname))
    return path.split("\0", 1)[0]


def read_code_file(fname: Any, limit: int | None = None) -> bytes:
    """The bytes of the file (at most ``limit + 1`` when a limit is given, so a caller can
    tell a larger file); OSError or ValueError when it cannot be read."""
    with open(code_file_path(fname), "rb") as f:
        return f.read() if limit is None else f.read(limit + 1)


__all__ = ["ELF64_MAGIC", "MAX_IMAGE_AT_ADDRESS", "buffer_or_address", "code_file_path", "elf64_size", "image_at",
           "read_code_file"]
