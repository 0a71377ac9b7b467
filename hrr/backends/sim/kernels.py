"""Kernel libraries and sim code objects.

A kernel library is a Python object (``KernelLibrary``) registered under the entry-point
group ``hrr.kernel_libraries``. A sim code object is bytes that *name* a library, its
version and some of its kernels; it never carries code, so an archive that holds one
cannot make replay run anything that is not already installed.

Code object layout: ``MAGIC`` (8 bytes), a little-endian uint32 header length, then a
UTF-8 JSON header ``{"library": str, "version": str, "kernels": [str, ...]}``.
"""
from __future__ import annotations

import ctypes
import json
import struct
from importlib.metadata import entry_points
from typing import Any, Callable, Mapping

import attrs
import numpy as np

from hrr.backends import kernelsource
from hrr.backends.codefile import buffer_or_address
from hrr.backends.kernargs import KernelLayout

ENTRY_POINT_GROUP = "hrr.kernel_libraries"
MAGIC = b"\x7fHRRSIM\x01"
MAX_HEADER_BYTES = 1 << 20
MAX_HEADER_DEPTH = 16


class CodeObjectError(ValueError):
    """Bytes that are not a usable sim code object; ``code`` is the hipError_t name to report."""

    def __init__(self, message: str, code: str = "hipErrorInvalidImage") -> None:
        super().__init__(message)
        self.code = code


class DeviceFault(Exception):
    """A fault while device work runs (e.g. an illegal address); ``code`` is a hipError_t name."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class LaunchContext:
    """What a kernel implementation sees: its kernarg bytes, launch shape and memory.

    ``resolve(addr, nbytes)`` maps a device-visible address to a writable numpy uint8
    view (device or pinned host memory) and raises DeviceFault for anything else."""

    def __init__(self, name: str, args: bytes, grid: tuple[int, int, int],
                 block: tuple[int, int, int], resolve: Callable[[int, int], np.ndarray], shared: int = 0) -> None:
        self.name, self.args, self.grid, self.block, self.shared = name, args, grid, block, shared
        self._resolve = resolve

    def u32(self, offset: int) -> int:
        return struct.unpack_from("<I", self.args, offset)[0]

    def u64(self, offset: int) -> int:
        return struct.unpack_from("<Q", self.args, offset)[0]

    ptr = u64

    def array(self, addr: int, dtype: type, count: int) -> np.ndarray:
        """``count`` elements of ``dtype`` at device-visible ``addr`` (a writable view)."""
        dt = np.dtype(dtype).newbyteorder("<")
        return self._resolve(addr, int(count) * dt.itemsize).view(dt)


# A kernel returns False when it cannot run yet (it blocks its stream); anything else
# means it completed. It must not write memory before deciding to block.
KernelImpl = Callable[[LaunchContext], "bool | None"]


@attrs.frozen
class KernelDef:
    """One kernel: its name, its parameter layout and a vectorised implementation."""

    name: str
    layout: KernelLayout
    impl: KernelImpl = attrs.field(eq=False, repr=False)


@attrs.frozen
class KernelLibrary:
    """A named, versioned set of kernels that code objects can refer to."""

    name: str
    version: str
    kernels: Mapping[str, KernelDef]
    # __device__ globals every module of the library gets: name -> bytes (hipModuleGetGlobal)
    globals: Mapping[str, int] = attrs.field(factory=dict)

    def code_object(self, kernel_names: list[str] | None = None) -> bytes:
        """A code object naming this library and ``kernel_names`` (default: all)."""
        return encode_code_object(self.name, self.version, kernel_names or sorted(self.kernels))


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


_extra_libraries: dict[str, KernelLibrary] = {}
_entry_point_cache: dict[str, KernelLibrary] | None = None


def _major(version: str) -> str:
    return version.split(".", 1)[0]


def installed_libraries() -> dict[str, KernelLibrary]:
    """Every kernel library: entry points (loaded once) plus ones registered at run time."""
    global _entry_point_cache
    if _entry_point_cache is None:
        found: dict[str, KernelLibrary] = {}
        for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            try:
                lib = ep.load()
            except Exception:  # noqa: BLE001 - a broken library must not break the device
                continue
            if isinstance(lib, KernelLibrary):
                found[lib.name] = lib
        if "builtin" not in found:  # e.g. run from a source tree that was never installed
            from hrr.backends.sim.builtin_kernels import LIBRARY
            found["builtin"] = LIBRARY
        _entry_point_cache = found
    return {**_entry_point_cache, **_extra_libraries}


def register_library(library: KernelLibrary) -> None:
    """Install a library without packaging (tests, notebooks)."""
    _extra_libraries[library.name] = library


def unregister_library(name: str) -> None:
    _extra_libraries.pop(name, None)


def resolve_code_object(data: bytes) -> tuple[KernelLibrary, CodeObject]:
    """The installed library a code object names; CodeObjectError when it cannot load here."""
    co = decode_code_object(data)
    lib = installed_libraries().get(co.library)
    if lib is None:
        raise CodeObjectError(f"kernel library {co.library!r} (version {co.version}) is not "
                              f"installed", code="hipErrorNoBinaryForGpu")
    if _major(lib.version) != _major(co.version):
        raise CodeObjectError(f"kernel library {co.library!r} is version {lib.version}, the code "
                              f"object needs {co.version}", code="hipErrorNoBinaryForGpu")
    missing = [k for k in co.kernels if k not in lib.kernels]
    if missing:
        raise CodeObjectError(f"kernel library {co.library!r} lacks {', '.join(missing)}",
                              code="hipErrorNoBinaryForGpu")
    return lib, co


@attrs.define(eq=False)
class Module:
    """A loaded code object (hipModuleLoadData): its library and the kernels it names."""

    handle: int
    library: KernelLibrary
    kernels: tuple
    globals: dict = attrs.Factory(dict)   # name -> device address of this module's copy
    image_base: int | None = None          # a native module's image allocation (its globals live in it)


@attrs.define(eq=False)
class Function:
    """A kernel of a loaded module (hipModuleGetFunction)."""

    handle: int
    module: Module
    kernel: KernelDef
    # what hipFuncSetAttribute / SetCacheConfig / SetSharedMemConfig set (hip-python enum values)
    attributes: dict = attrs.Factory(dict)


def image_bytes(image: Any) -> bytes:
    """hipModuleLoadData's image as bytes: a buffer as is, or an address whose code object
    header says how many bytes to read (CodeObjectError when NULL or not a code object)."""
    addr = buffer_or_address(image)
    if isinstance(addr, bytes):
        return addr
    if not addr:
        raise CodeObjectError("hipModuleLoadData: NULL image", code="hipErrorInvalidValue")
    try:
        held = kernelsource.read_at(addr)
    except kernelsource.KernelSourceError as exc:
        raise CodeObjectError(str(exc)) from None
    return held if held is not None else ctypes.string_at(addr, code_object_size(ctypes.string_at(addr, 12)))


def kernel_name(kname: Any) -> str:
    """hipModuleGetFunction's name argument (str or bytes, NUL-terminated or not) as a str."""
    name = bytes(kname).decode(errors="replace") if not isinstance(kname, str) else kname
    return name.rstrip("\0")
