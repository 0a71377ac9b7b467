"""AMDGPU code objects: the ELF, its notes, and the kernels the metadata note describes.

A code object (code object v3 and later, the ``.hsaco`` / ``.co`` a HIP or OpenCL compiler
emits) carries an ``NT_AMDGPU_METADATA`` note, owner ``AMDGPU``: a msgpack map whose
``amdhsa.kernels`` lists each kernel's arguments (offset, size, value kind) and kernarg
segment. Everything here reads untrusted bytes: every offset and size is checked against
the input before use, sizes are capped, and every failure is a ``CodeObjectError``.
"""
from __future__ import annotations

import struct
from typing import Any, Iterator

import attrs
import msgpack

from hrr.backends.amdgpu.errors import CodeObjectError, check_range
from hrr.hiptypes.kernargs import POINTER, STRUCT, UNKNOWN, VALUE, KernelLayout, ParamSpec

ELF_MAGIC = b"\x7fELF"
EM_AMDGPU = 224
ELFOSABI_AMDGPU_HSA = 64
_OTHER_OSABI = {65: "AMDGPU PAL", 66: "AMDGPU Mesa3D"}
SHT_NOTE = 7
PT_NOTE = 4
NT_AMDGPU_METADATA = 32
NT_AMD_HSA_METADATA = 10  # code object v2's YAML note, owner "AMD"

# Caps on what an input may claim; real code objects are far below each.
MAX_NOTE_DESC = 16 << 20
MAX_KERNELS = 1 << 16
MAX_ARGS = 4096
MAX_KERNARG_SEGMENT = 1 << 20
MAX_NAME = 4096
MAX_NOTES = 1 << 16
# Maps and arrays one metadata note may decode to: a note of empty maps would otherwise
# cost ~64 bytes of memory per byte of input.
MAX_CONTAINERS = 1 << 20

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_PHDR = struct.Struct("<IIQQQQQQ")
_NHDR = struct.Struct("<III")

# Value kinds that hold an address: whole pointer parameters.
_POINTER_KINDS = frozenset({"global_buffer", "dynamic_shared_pointer"})
# OpenCL handles (image, sampler, pipe, queue) are opaque words the runtime fills.
_HANDLE_KINDS = frozenset({"image", "sampler", "pipe", "queue"})
# by_value type names (OpenCL's .type_name) that are 8-byte scalars, never pointers.
_SCALAR_TYPES = frozenset({"long", "ulong", "double", "size_t", "ptrdiff_t", "intptr_t", "uintptr_t",
                           "long long", "unsigned long", "unsigned long long", "int64_t", "uint64_t"})


@attrs.frozen
class KernelArg:
    """One entry of a kernel's ``.args``, hidden arguments included."""

    offset: int
    size: int
    value_kind: str
    name: str = ""
    type_name: str = ""
    address_space: str = ""

    @property
    def hidden(self) -> bool:
        """True for arguments the runtime fills (``hidden_*``), not the program."""
        return self.value_kind.startswith("hidden_")


@attrs.frozen
class AmdKernel:
    """A kernel as its code object describes it; ``layout`` holds only the user arguments."""

    name: str
    symbol: str
    args: tuple[KernelArg, ...]
    kernarg_segment_size: int
    kernarg_segment_align: int
    layout: KernelLayout

    @property
    def hidden_args(self) -> tuple[KernelArg, ...]:
        """The arguments the runtime appends (they count for ``kernarg_segment_size``)."""
        return tuple(a for a in self.args if a.hidden)


@attrs.frozen
class CodeObject:
    """What one ELF code object says about its kernels."""

    target: str
    version: tuple[int, int]
    kernels: tuple[AmdKernel, ...]

    @property
    def processor(self) -> str:
        """The GPU processor (``gfx90a``) from ``amdhsa.target``, or "" when absent (v3)."""
        triple, target_id = split_target(self.target)
        return target_id.split(":", 1)[0] if triple.startswith("amdgcn-") else ""

    def kernel(self, name: str) -> AmdKernel:
        """The kernel named ``name`` (its source name, or its ``.kd`` symbol)."""
        for k in self.kernels:
            if name in (k.name, k.symbol):
                return k
        raise KeyError(name)

    def layouts(self) -> dict[str, KernelLayout]:
        """Each kernel's user-argument layout, by kernel name."""
        return {k.name: k.layout for k in self.kernels}


def split_target(text: str) -> tuple[str, str]:
    """(triple, target id) of ``amdgcn-amd-amdhsa--gfx90a:xnack-``: the target id starts at
    the first component from the fourth on that starts with ``gfx`` (it may hold dashes, as
    ``gfx10-3-generic`` and ``xnack-`` do); older texts write a three-part triple."""
    parts = text.split("-")
    for i in range(3, len(parts)):
        if parts[i].startswith("gfx"):
            return "-".join(parts[:i]).rstrip("-"), "-".join(parts[i:])
    return text.rstrip("-"), ""


def param_kind(arg: KernelArg) -> str:
    """The ``kernargs`` parameter kind for a (non-hidden) argument.

    The metadata says ``by_value`` for scalars and structs alike: below 8 bytes it cannot
    hold a pointer (VALUE); above, it is an aggregate whose words may (STRUCT); exactly 8
    bytes is a scalar only when OpenCL's ``.type_name`` says so, else UNKNOWN (capture then
    looks at the word, as it does for cuda's parameters)."""
    kind = arg.value_kind
    if kind in _POINTER_KINDS:
        return POINTER
    if kind == "by_value":
        if arg.size < 8 or arg.type_name in _SCALAR_TYPES:
            return VALUE
        return STRUCT if arg.size > 8 else UNKNOWN
    return UNKNOWN  # handles and value kinds newer than this reader


# ------------------------------------------------------------------ ELF and notes
def _sections_notes(data: bytes, shoff: int, shentsize: int, shnum: int) -> list[tuple[int, int, int]]:
    if shentsize != _SHDR.size:
        raise CodeObjectError(f"section header entry size is {shentsize}, expected {_SHDR.size}", 0x3A)
    check_range(len(data), shoff, shnum * _SHDR.size, f"section header table ({shnum} entries)")
    found = []
    for i in range(shnum):
        at = shoff + i * _SHDR.size
        _, sh_type, _, _, off, size, _, _, align, _ = _SHDR.unpack_from(data, at)
        if sh_type == SHT_NOTE:
            check_range(len(data), off, size, f"note section {i} (header at {at:#x})")
            found.append((off, size, 8 if align == 8 else 4))
    return found


def _segment_notes(data: bytes, phoff: int, phentsize: int, phnum: int) -> list[tuple[int, int, int]]:
    if phentsize != _PHDR.size:
        raise CodeObjectError(f"program header entry size is {phentsize}, expected {_PHDR.size}", 0x36)
    check_range(len(data), phoff, phnum * _PHDR.size, f"program header table ({phnum} entries)")
    found = []
    for i in range(phnum):
        at = phoff + i * _PHDR.size
        p_type, _, off, _, _, size, _, align = _PHDR.unpack_from(data, at)
        if p_type == PT_NOTE:
            check_range(len(data), off, size, f"note segment {i} (header at {at:#x})")
            found.append((off, size, 8 if align == 8 else 4))
    return found


def _notes(data: bytes, off: int, size: int, align: int) -> Iterator[tuple[bytes, int, int, int]]:
    """(owner, type, descriptor offset, descriptor size) of each note in a note area."""
    end = off + size
    pos = off
    while pos < end:
        if end - pos < _NHDR.size:
            raise CodeObjectError(f"note header needs {_NHDR.size} bytes, the note area has {end - pos} left", pos)
        namesz, descsz, ntype = _NHDR.unpack_from(data, pos)
        name_at = pos + _NHDR.size
        desc_at = name_at + -(-namesz // align) * align
        if namesz > MAX_NAME or desc_at > end:
            raise CodeObjectError(f"note owner name of {namesz} bytes overruns its note area", pos)
        if descsz > MAX_NOTE_DESC or descsz > end - desc_at:
            raise CodeObjectError(f"note descriptor of {descsz} bytes overruns its note area", pos)
        owner = data[name_at:name_at + namesz].rstrip(b"\0")
        yield owner, ntype, desc_at, descsz
        pos = desc_at + -(-descsz // align) * align


def _metadata_note(data: bytes) -> tuple[int, int]:
    """Offset and size of the NT_AMDGPU_METADATA descriptor of an ELF code object."""
    if len(data) < _EHDR.size:
        raise CodeObjectError(f"ELF header needs {_EHDR.size} bytes, the input has {len(data)}", 0)
    (ident, e_type, machine, _, _, phoff, shoff, _, _, phentsize, phnum, shentsize, shnum,
     _) = _EHDR.unpack_from(data, 0)
    if ident[:4] != ELF_MAGIC:
        raise CodeObjectError("not an ELF file (bad magic)", 0)
    if ident[4] != 2 or ident[5] != 1:
        raise CodeObjectError("not a 64-bit little-endian ELF file, as AMDGPU code objects are", 4)
    if machine != EM_AMDGPU:
        raise CodeObjectError(f"ELF machine is {machine}, not AMDGPU ({EM_AMDGPU})", 0x12)
    if ident[7] != ELFOSABI_AMDGPU_HSA:
        abi = _OTHER_OSABI.get(ident[7], f"OS ABI {ident[7]}")
        raise CodeObjectError(f"not an HSA code object ({abi}, expected {ELFOSABI_AMDGPU_HSA})", 7)
    if e_type not in (1, 3):
        raise CodeObjectError(f"ELF type {e_type} is neither a relocatable object nor a shared object", 0x10)
    if shoff and shnum:
        areas = _sections_notes(data, shoff, shentsize, shnum)
    elif phoff and phnum:
        areas = _segment_notes(data, phoff, phentsize, phnum)
    else:
        raise CodeObjectError("ELF has neither section headers nor program headers to find notes by", 0x20)
    legacy = None
    seen = 0
    for area in areas:
        for owner, ntype, desc_at, descsz in _notes(data, *area):
            seen += 1
            if seen > MAX_NOTES:  # many note headers may name the same bytes: bound the walk
                raise CodeObjectError(f"more than {MAX_NOTES} notes and no AMDGPU metadata among them", desc_at)
            if owner == b"AMDGPU" and ntype == NT_AMDGPU_METADATA:
                return desc_at, descsz
            if owner == b"AMD" and ntype == NT_AMD_HSA_METADATA:
                legacy = desc_at
    if legacy is not None:
        raise CodeObjectError("code object v2 (YAML metadata note) is not supported; v3 and later are", legacy)
    raise CodeObjectError(f"no AMDGPU metadata note (owner AMDGPU, type {NT_AMDGPU_METADATA})", 0)


# ------------------------------------------------------------------ metadata
def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class _Meta:
    """Typed reads from the decoded msgpack map, each failure naming its field."""

    def __init__(self, at: int) -> None:
        self.at = at

    def fail(self, what: str) -> CodeObjectError:
        return CodeObjectError(f"AMDGPU metadata: {what}", self.at)

    def text(self, m: dict, key: str, where: str, default: str | None = None) -> str:
        v = m.get(key, default)
        if not isinstance(v, str) or len(v) > MAX_NAME:
            raise self.fail(f"{where}: {key} is {_show(v)}, not a string")
        return v

    def count(self, m: dict, key: str, where: str, limit: int, default: int | None = None) -> int:
        v: Any = m.get(key, default)
        if not _is_int(v) or not 0 <= v <= limit:
            raise self.fail(f"{where}: {key} is {_show(v)}, not an integer in [0, {limit}]")
        return int(v)


def _show(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _kernel(meta: _Meta, k: Any, index: int) -> AmdKernel:
    if not isinstance(k, dict):
        raise meta.fail(f"kernel {index} is {_show(k)}, not a map")
    name = meta.text(k, ".name", f"kernel {index}")
    where = f"kernel {index} ({name!r})"
    symbol = meta.text(k, ".symbol", where, default=name + ".kd")
    seg_size = meta.count(k, ".kernarg_segment_size", where, MAX_KERNARG_SEGMENT)
    seg_align = meta.count(k, ".kernarg_segment_align", where, 4096, default=4)
    if seg_align & (seg_align - 1) or not seg_align:
        raise meta.fail(f"{where}: .kernarg_segment_align {seg_align} is not a power of two")
    raw_args = k.get(".args", [])
    if not isinstance(raw_args, list) or len(raw_args) > MAX_ARGS:
        raise meta.fail(f"{where}: .args is not a list of at most {MAX_ARGS} arguments")
    args: list[KernelArg] = []
    end = 0
    for i, a in enumerate(raw_args):
        at = f"{where} argument {i}"
        if not isinstance(a, dict):
            raise meta.fail(f"{at} is {_show(a)}, not a map")
        off = meta.count(a, ".offset", at, MAX_KERNARG_SEGMENT)
        size = meta.count(a, ".size", at, MAX_KERNARG_SEGMENT)
        kind = meta.text(a, ".value_kind", at)
        if off < end:
            raise meta.fail(f"{at} at offset {off} overlaps the argument before it (which ends at {end})")
        if off + size > seg_size:
            raise meta.fail(f"{at} ends at {off + size}, past .kernarg_segment_size {seg_size}")
        end = off + size
        args.append(KernelArg(off, size, kind, meta.text(a, ".name", at, ""), meta.text(a, ".type_name", at, ""),
                              meta.text(a, ".address_space", at, "")))
    params = tuple(ParamSpec(a.offset, a.size, param_kind(a), a.name or f"arg{i}")
                   for i, a in enumerate(x for x in args if not x.hidden))
    return AmdKernel(name, symbol, tuple(args), seg_size, seg_align, KernelLayout(params))


def parse_metadata(desc: bytes, at: int = 0) -> CodeObject:
    """The kernels of a metadata note's msgpack descriptor (``at``: its offset, for errors)."""
    meta = _Meta(at)
    budget = [MAX_CONTAINERS]

    def spend(obj: Any) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            raise ValueError(f"more than {MAX_CONTAINERS} maps and arrays")
        return obj

    try:
        doc = msgpack.unpackb(desc, raw=False, strict_map_key=False, object_hook=spend, list_hook=spend)
    except Exception as e:  # noqa: BLE001 - msgpack raises several types for malformed input
        raise meta.fail(f"not valid msgpack ({type(e).__name__}: {e})") from None
    if not isinstance(doc, dict):
        raise meta.fail(f"top level is {type(doc).__name__}, not a map")
    version = doc.get("amdhsa.version")
    if not (isinstance(version, list) and len(version) >= 2 and all(_is_int(v) for v in version[:2])):
        raise meta.fail(f"amdhsa.version is {_show(version)}, not [major, minor]")
    target = meta.text(doc, "amdhsa.target", "top level", default="")
    kernels = doc.get("amdhsa.kernels", [])
    if not isinstance(kernels, list) or len(kernels) > MAX_KERNELS:
        raise meta.fail(f"amdhsa.kernels is not a list of at most {MAX_KERNELS} kernels")
    return CodeObject(target, (int(version[0]), int(version[1])),
                      tuple(_kernel(meta, k, i) for i, k in enumerate(kernels)))


def parse_code_object(data: bytes) -> CodeObject:
    """The kernels an ELF code object describes. Raises CodeObjectError."""
    data = bytes(data)
    at, size = _metadata_note(data)
    return parse_metadata(data[at:at + size], at)


__all__ = ["AmdKernel", "CodeObject", "KernelArg", "parse_code_object", "parse_metadata", "param_kind", "split_target",
           "ELF_MAGIC", "NT_AMDGPU_METADATA"]
