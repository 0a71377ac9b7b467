"""What the sim's kernels are: a kernel library (``KernelLibrary``: Python kernels, each a
``KernelDef``), what a kernel sees when it runs (``LaunchContext``), and a loaded module and
function. Which libraries are installed: ``libraries.py``; the code object that names one:
``hrr.hiptypes.simcode``.
"""
from __future__ import annotations

import ctypes
import struct
from typing import Any, Callable, Mapping

import attrs
import numpy as np

from hrr.hiptypes import kernelsource
from hrr.hiptypes.codefile import buffer_or_address
from hrr.hiptypes.kernargs import KernelLayout
from hrr.hiptypes.simcode import CodeObjectError, code_object_size, encode_code_object


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
