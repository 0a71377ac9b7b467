"""Read a native kernel image (toolchain.py's ELF shared object) for loading into device memory.

An image is loaded by copying its PT_LOAD segments to a page-aligned base and adding the base
to every R_*_RELATIVE relocation; nothing else (no loader, no libraries, no constructors). The
kernels are found through the metadata objects toolchain.py generates (``__hrr_meta_*``:
entry pointer, kernel pointer, parameter count, then {offset, size, kind} per parameter).
Every read is bounded: the bytes may come from someone else's archive.
"""
from __future__ import annotations

import struct
from typing import Callable

import attrs

from hrr.hiptypes.kernargs import POINTER, STRUCT, VALUE, KernelLayout, ParamSpec

PAGE = 4096
MAX_MEMORY = 1 << 30          # an image larger than this is not one of ours
MAX_PARAMS = 4096

EM_X86_64, EM_AARCH64 = 62, 183
RELATIVE = {EM_X86_64: 8, EM_AARCH64: 1027}
NONE_RELOC = {EM_X86_64: 0, EM_AARCH64: 0}
PT_LOAD, PT_DYNAMIC, PT_INTERP, PT_TLS = 1, 2, 3, 7
SHT_SYMTAB, SHT_RELA, SHT_REL = 2, 4, 9
STT_OBJECT, STT_FUNC = 1, 2
DT_NULL, DT_NEEDED, DT_PLTRELSZ, DT_RELA, DT_RELASZ, DT_RELAENT = 0, 1, 2, 7, 8, 9
DT_INIT, DT_FINI, DT_REL, DT_RELSZ, DT_JMPREL = 12, 13, 17, 18, 23
DT_INIT_ARRAY, DT_FINI_ARRAY, DT_INIT_ARRAYSZ, DT_PREINIT_ARRAY, DT_PREINIT_ARRAYSZ = 25, 26, 27, 32, 33
DT_RELRSZ, DT_RELR = 35, 36
KINDS = {0: POINTER, 1: VALUE, 2: STRUCT}
KERNEL_SECTION = "hrr_kernels"   # where hrr_device.h's __global__ puts kernels (clang only)
PRIVATE_SECTION = "hrr_private"  # the runtime's state and __shared__ (toolchain.PRIVATE_SCRIPT)
#: Symbols of an image that are not the program's globals.
_OWN = {"threadIdx", "blockIdx", "blockDim", "gridDim", "_DYNAMIC", "_GLOBAL_OFFSET_TABLE_", "__dso_handle"}


class ImageError(ValueError):
    """Bytes that are not a loadable native kernel image."""


@attrs.frozen
class Segment:
    """A PT_LOAD segment: where its file bytes go in the image's memory."""

    vaddr: int
    offset: int
    filesz: int
    memsz: int
    flags: int


@attrs.frozen
class NativeKernel:
    """A kernel of an image: its entry (``void (*)(const void *kernargs)``) and parameters."""

    entry: int
    layout: KernelLayout


@attrs.frozen(eq=False)
class NativeImage:
    """A parsed image; offsets are relative to the base it is loaded at."""

    data: bytes = attrs.field(repr=False)
    machine: int
    memory_size: int
    segments: tuple[Segment, ...]
    relocations: tuple[int, ...]
    addends: tuple[int, ...] = attrs.field(repr=False)
    launch: int
    kernels: dict[str, NativeKernel]
    globals: dict[str, tuple[int, int]]
    #: metadata object symbol -> the lookup name of its kernel (how toolchain.py finds what a
    #: name expression lowered to)
    entries: dict[str, str] = attrs.field(factory=dict, repr=False)
    #: __global__ functions (clang builds put them in their own section) that got no entry: a
    #: kernel defined where toolchain.py could not see it (through a macro, say)
    unlaunchable: tuple[str, ...] = ()
    #: [start, end) of the pages that hold what a launch changes besides device memory (the
    #: runtime's state, __shared__): zeros, nothing else on them; None when the image has no
    #: such pages (then its launches are never spread over several workers)
    private: tuple[int, int] | None = None

    def relocated(self, base: int) -> bytes:
        """The image's memory (memory_size bytes) as it must lie at the page-aligned ``base``."""
        if base % PAGE:
            raise ImageError(f"image base {base:#x} is not page aligned")
        mem = bytearray(self.memory_size)
        for seg in self.segments:
            mem[seg.vaddr:seg.vaddr + seg.filesz] = self.data[seg.offset:seg.offset + seg.filesz]
        for off, addend in zip(self.relocations, self.addends, strict=True):
            struct.pack_into("<Q", mem, off, (base + addend) & 0xFFFFFFFFFFFFFFFF)
        return bytes(mem)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def unpack(self, fmt: str, offset: int, what: str) -> tuple:
        size = struct.calcsize(fmt)
        if offset < 0 or offset + size > len(self.data):
            raise ImageError(f"truncated image: {what} at {offset:#x} lies past its {len(self.data)} bytes")
        return struct.unpack_from(fmt, self.data, offset)

    def cstr(self, offset: int, limit: int, what: str) -> str:
        if offset < 0 or offset >= limit or limit > len(self.data):
            raise ImageError(f"bad image: {what} string offset {offset:#x} out of range")
        end = self.data.find(b"\0", offset, limit)
        if end < 0:
            raise ImageError(f"bad image: unterminated {what} string")
        return self.data[offset:end].decode(errors="replace")


def parse_image(data: bytes) -> NativeImage:
    """Parse and check an image; ImageError says what is wrong with one that cannot be loaded."""
    data = bytes(data)
    r = _Reader(data)
    if len(data) < 64 or data[:4] != b"\x7fELF":
        raise ImageError("not an ELF file")
    if data[4] != 2 or data[5] != 1:
        raise ImageError("not a 64-bit little-endian ELF file")
    (e_type, e_machine, _ver, _entry, e_phoff, e_shoff, _flags, _ehsize, e_phentsize, e_phnum,
     e_shentsize, e_shnum, e_shstrndx) = r.unpack("<HHIQQQIHHHHHH", 16, "ELF header")
    if e_type != 3:
        raise ImageError("not a shared object (ELF type %d)" % e_type)
    if e_machine not in RELATIVE:
        raise ImageError(f"unsupported machine {e_machine}")
    if e_phentsize != 56 or (e_shnum and e_shentsize != 64):
        raise ImageError("bad ELF header sizes")

    segments: list[Segment] = []
    dynamic: tuple[int, int] | None = None
    for i in range(e_phnum):
        p_type, p_flags, p_offset, p_vaddr, _paddr, p_filesz, p_memsz, _align = r.unpack(
            "<IIQQQQQQ", e_phoff + i * 56, "program header")
        if p_type == PT_INTERP:
            raise ImageError("the image asks for an interpreter: not a freestanding kernel image")
        if p_type == PT_TLS:
            raise ImageError("the image has thread-local storage, which kernels cannot have")
        if p_type == PT_LOAD:
            if p_filesz > p_memsz or p_offset + p_filesz > len(data) or p_vaddr + p_memsz > MAX_MEMORY:
                raise ImageError("bad or truncated PT_LOAD segment")
            segments.append(Segment(p_vaddr, p_offset, p_filesz, p_memsz, p_flags))
        elif p_type == PT_DYNAMIC:
            dynamic = (p_offset, p_filesz)
    if not segments:
        raise ImageError("the image has nothing to load")
    memory_size = -(-max(s.vaddr + s.memsz for s in segments) // PAGE) * PAGE

    def file_offset(vaddr: int, size: int, what: str) -> int:
        for s in segments:
            if s.vaddr <= vaddr and vaddr + size <= s.vaddr + s.filesz:
                return s.offset + (vaddr - s.vaddr)
        raise ImageError(f"bad image: {what} at {vaddr:#x} is not in a loaded segment")

    relocs: list[tuple[int, int]] = []
    machine_relative = RELATIVE[e_machine]
    if dynamic is not None:
        dyn: dict[int, int] = {}
        off, size = dynamic
        for k in range(min(size // 16, 4096)):
            tag, val = r.unpack("<qQ", off + 16 * k, "dynamic entry")
            if tag == DT_NULL:
                break
            if tag == DT_NEEDED:
                raise ImageError("the image needs a shared library: not a freestanding kernel image")
            dyn[tag] = val
        if dyn.get(DT_INIT_ARRAYSZ) or dyn.get(DT_PREINIT_ARRAYSZ) or DT_INIT in dyn:
            raise ImageError("the image has constructors (.init_array), which the loader does not run")
        if dyn.get(DT_PLTRELSZ) or dyn.get(DT_RELSZ) or dyn.get(DT_RELRSZ):
            raise ImageError("the image has relocations other than RELA RELATIVE ones")
        if dyn.get(DT_RELASZ):
            rela_off = file_offset(dyn.get(DT_RELA, 0), dyn[DT_RELASZ], "RELA table")
            if dyn.get(DT_RELAENT, 24) != 24:
                raise ImageError("bad RELA entry size")
            for k in range(dyn[DT_RELASZ] // 24):
                r_offset, r_info, r_addend = r.unpack("<QQq", rela_off + 24 * k, "relocation")
                rtype = r_info & 0xFFFFFFFF
                if rtype == NONE_RELOC[e_machine]:
                    continue
                if rtype != machine_relative or r_info >> 32:
                    raise ImageError(f"the image has a relocation of type {rtype} (only RELATIVE ones load)")
                if r_offset + 8 > memory_size or r_offset % 8 or not 0 <= r_addend < memory_size:
                    raise ImageError(f"bad RELATIVE relocation at {r_offset:#x}")
                relocs.append((r_offset, r_addend))
    addend_at = dict(relocs)

    symbols = _symbols(r, e_shoff, e_shnum)
    launch = next((value for name, (value, _size, kind, _) in symbols.items() if name == "__hrr_launch"
                   and kind == STT_FUNC), None)
    if launch is None:
        raise ImageError("the image has no __hrr_launch (not built by hrr's toolchain)")
    funcs_at: dict[int, list[str]] = {}
    for name, (value, _size, kind, _) in symbols.items():
        if kind == STT_FUNC:
            funcs_at.setdefault(value, []).append(name)

    kernels: dict[str, NativeKernel] = {}
    globals_: dict[str, tuple[int, int]] = {}
    start, end = _section_range(r, e_shoff, e_shnum, e_shstrndx, KERNEL_SECTION)
    entries: dict[str, str] = {}
    for name, (value, size, kind, _) in symbols.items():
        if kind != STT_OBJECT:
            continue
        if "__hrr_meta_" in name:
            lookup, kernel = _read_meta(r, name, value, size, addend_at, funcs_at, file_offset)
            kernels[lookup] = kernel
            entries[name] = lookup
        elif not (name in _OWN or name.startswith(("__hrr", "_ZZ", "_ZL")) or "." in name or "__hrr_" in name
                    or "_GLOBAL__N_" in name):
            if value + size > memory_size:
                raise ImageError(f"bad image: symbol {name} lies outside the image")
            globals_[name] = (value, size)
    defined = {name for name, (value, _size, kind, _) in symbols.items() if kind == STT_FUNC and start <= value < end}
    private = _private_pages(_section_range(r, e_shoff, e_shnum, e_shstrndx, PRIVATE_SECTION), segments,
                             [o for o, _ in relocs], memory_size)
    if private is not None:   # __shared__ and the runtime's own: no global a program can look up
        globals_ = {n: (v, size) for n, (v, size) in globals_.items() if not private[0] <= v < private[1]}
    return NativeImage(data, e_machine, memory_size, tuple(segments), tuple(o for o, _ in relocs),
                       tuple(a for _, a in relocs), launch, kernels, globals_, entries,
                       tuple(sorted(defined - set(kernels))), private)


def _private_pages(span: tuple[int, int], segments: list[Segment], relocations: list[int],
                   memory_size: int) -> tuple[int, int] | None:
    """The private section's pages, if they are whole pages of zeros that nothing else shares:
    no file bytes and no relocation on them (the worker maps them as fresh anonymous memory)."""
    start, end = span[0], -(-span[1] // PAGE) * PAGE
    if end <= start or start % PAGE or end > memory_size:
        return None
    if any(s.filesz and s.vaddr < end and start < s.vaddr + s.filesz for s in segments):
        return None
    if any(start <= off < end for off in relocations):
        return None
    return start, end


def _section_range(r: _Reader, shoff: int, shnum: int, shstrndx: int, wanted: str) -> tuple[int, int]:
    """[start, end) addresses of the named section (empty when there is none)."""
    if not shnum or shstrndx >= shnum:
        return 0, 0
    str_off, str_size = r.unpack("<QQ", shoff + 64 * shstrndx + 24, "section header")
    for i in range(min(shnum, 65536)):
        sh_name, _type, _flags, sh_addr, _off, sh_size = r.unpack("<IIQQQQ", shoff + 64 * i, "section header")
        if sh_name < str_size and r.cstr(str_off + sh_name, min(str_off + str_size, len(r.data)), "section") == wanted:
            return sh_addr, sh_addr + sh_size
    return 0, 0


def _symbols(r: _Reader, shoff: int, shnum: int) -> dict[str, tuple[int, int, int, int]]:
    """name -> (value, size, type, binding) from .symtab (global bindings win over local ones)."""
    out: dict[str, tuple[int, int, int, int]] = {}
    sections = [r.unpack("<IIQQQQIIQQ", shoff + 64 * i, "section header") for i in range(min(shnum, 65536))]
    for sh in sections:
        if sh[1] != SHT_SYMTAB:
            continue
        _name, _type, _flags, _addr, offset, size, link, _info, _align, entsize = sh
        if entsize != 24 or link >= len(sections):
            raise ImageError("bad symbol table")
        str_off, str_size = sections[link][4], sections[link][5]
        if str_off + str_size > len(r.data):
            raise ImageError("truncated string table")
        for k in range(min(size // 24, 1 << 20)):
            st_name, st_info, _other, st_shndx, st_value, st_size = r.unpack("<IBBHQQ", offset + 24 * k, "symbol")
            if st_shndx == 0 or not st_name or (st_info & 0xF) not in (STT_OBJECT, STT_FUNC):
                continue
            name = r.cstr(str_off + st_name, str_off + str_size, "symbol")
            bind = st_info >> 4
            if name not in out or (bind and not out[name][3]):
                out[name] = (st_value, st_size, st_info & 0xF, bind)
    if not out:
        raise ImageError("the image has no symbol table (stripped?)")
    return out


def _read_meta(r: _Reader, name: str, value: int, size: int, addend_at: dict[int, int],
               funcs_at: dict[int, list[str]],
               file_offset: Callable[[int, int, str], int]) -> tuple[str, NativeKernel]:
    if size < 20 or value % 8:
        raise ImageError(f"bad kernel metadata {name}")
    off = file_offset(value, size, name)
    count, = r.unpack("<I", off + 16, name)
    if count > MAX_PARAMS or 20 + 12 * count > size:
        raise ImageError(f"bad kernel metadata {name}: {count} parameters")
    entry, kernel = addend_at.get(value), addend_at.get(value + 8)
    if entry is None or kernel is None:
        raise ImageError(f"bad kernel metadata {name}: no relocated entry or kernel pointer")
    names = funcs_at.get(kernel, [])
    candidates = [n for n in names if not n.startswith("__hrr") and "__hrr_k_" not in n]
    if not candidates:
        raise ImageError(f"bad kernel metadata {name}: no kernel symbol at {kernel:#x}")
    params = []
    for i in range(count):
        p_off, p_size, p_kind = r.unpack("<III", off + 20 + 12 * i, name)
        if p_kind not in KINDS or p_off + p_size > 1 << 20:
            raise ImageError(f"bad kernel metadata {name}: parameter {i}")
        params.append(ParamSpec(p_off, p_size, KINDS[p_kind]))
    return sorted(candidates)[0], NativeKernel(entry, KernelLayout(tuple(params)))
