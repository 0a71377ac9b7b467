"""AMD GPU code objects, read without ROCm: kernel argument layouts for the ``hip`` backend.

``read_code_object`` takes what a program hands ``hipModuleLoadData`` (an ELF code object,
a plain clang offload bundle, or a compressed one) and returns the kernels its AMDGPU
metadata note describes; ``kernel_layouts`` gives each kernel's ``KernelLayout``. The
input is untrusted: every failure is a ``CodeObjectError`` naming what and where.
"""
from __future__ import annotations

from hrr.backends.amdgpu.bundle import (BUNDLE_MAGIC, CCOB_MAGIC, MAX_DECOMPRESSED, BundleEntry,
                                        decompress_bundle, read_bundle, select_entry)
from hrr.backends.amdgpu.codeobject import (ELF_MAGIC, AmdKernel, CodeObject, KernelArg, parse_code_object,
                                            parse_metadata)
from hrr.backends.amdgpu.errors import CodeObjectError
from hrr.hiptypes.kernargs import KernelLayout


def _from_bundle(plain: bytes, arch: str | None, where: str) -> CodeObject:
    try:
        entry = select_entry(read_bundle(plain), arch)
    except CodeObjectError as e:
        raise e.within(where) if where else e from None
    try:
        return parse_code_object(plain[entry.offset:entry.offset + entry.size])
    except CodeObjectError as e:
        inner = f"bundle entry {entry.bundle_id!r}"
        raise e.within(f"{where}, {inner}" if where else inner, entry.offset) from None


def read_code_object(data: bytes | bytearray | memoryview, arch: str | None = None, *,
                     max_decompressed: int = MAX_DECOMPRESSED) -> CodeObject:
    """The kernels of an ELF code object or of the bundle entry for ``arch`` (the first
    amdgcn entry when None). ``arch`` does not filter a bare ELF code object."""
    raw = bytes(data)
    if raw[:4] == ELF_MAGIC:
        return parse_code_object(raw)
    if raw[:len(BUNDLE_MAGIC)] == BUNDLE_MAGIC:
        return _from_bundle(raw, arch, "")
    if raw[:4] == CCOB_MAGIC:
        return _from_bundle(decompress_bundle(raw, max_decompressed), arch, "decompressed bundle")
    raise CodeObjectError(f"not an AMDGPU code object or clang offload bundle (starts with {raw[:8]!r})", 0)


def kernel_layouts(data: bytes | bytearray | memoryview, arch: str | None = None) -> dict[str, KernelLayout]:
    """Each kernel's user-argument layout (hidden arguments left out), by kernel name."""
    return read_code_object(data, arch).layouts()


__all__ = ["AmdKernel", "BundleEntry", "CodeObject", "CodeObjectError", "KernelArg", "decompress_bundle",
           "kernel_layouts", "parse_code_object", "parse_metadata", "read_bundle", "read_code_object",
           "select_entry"]
