"""Kernel argument layouts of the ``hip`` backend, read from the code objects themselves.

hip-python gives no way to ask a function handle for its parameters, so the layouts come
from the bytes a program hands ``hipModuleLoadData``: ``hrr.backends.amdgpu`` parses the
ELF code object or clang offload bundle (hidden arguments left out). A module's layouts
are kept by its handle, and ``hipModuleGetFunction`` maps the function handle it returns to
its kernel's layout. A code object hrr cannot read never fails the call: its launches are
recorded without a layout, and say why.
"""
from __future__ import annotations

import ctypes
import threading
from typing import Any

from hrr.backends.amdgpu import CodeObjectError, kernel_layouts
from hrr.hiptypes.codefile import ELF64_MAGIC, MAX_IMAGE_AT_ADDRESS, buffer_or_address, elf64_size, read_code_file
from hrr.hiptypes import handle_or_zero
from hrr.hiptypes.kernargs import KernelLayout

#: The largest code object read from a bare address (an ELF whose headers claim more is skipped).
MAX_IMAGE_FROM_ADDRESS = MAX_IMAGE_AT_ADDRESS


class Layouts:
    """Kernel layouts by module handle and by function handle, shared by every thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.modules: dict[int, dict[str, KernelLayout]] = {}
        self.functions: dict[int, KernelLayout] = {}
        self.errors: dict[int, str] = {}   # module handle -> why its code object was not read

    def loaded(self, module: Any, image: Any) -> None:
        """Keep the layouts of the code object ``image`` that module handle ``module`` holds."""
        key = handle_or_zero(module)
        try:
            layouts = kernel_layouts(image_bytes(image))
        except (CodeObjectError, ValueError, TypeError, OSError) as exc:
            with self.lock:
                self.errors[key] = f"its code object cannot be read: {exc}"
            return
        with self.lock:
            self.modules[key] = layouts
            self.errors.pop(key, None)

    def got_function(self, module: Any, name: Any, function: Any) -> None:
        """Map function handle ``function`` (kernel ``name`` of ``module``) to its layout."""
        kname = name.decode() if isinstance(name, (bytes, bytearray)) else str(name)
        key = handle_or_zero(function)
        with self.lock:
            layout = self.modules.get(handle_or_zero(module), {}).get(kname)
            if layout is None:   # a handle value reused from an unloaded module keeps no old layout
                self.functions.pop(key, None)
            else:
                self.functions[key] = layout

    def unloaded(self, module: Any) -> None:
        with self.lock:
            self.modules.pop(handle_or_zero(module), None)
            self.errors.pop(handle_or_zero(module), None)

    def layout(self, function: Any) -> KernelLayout:
        """The user-argument layout of a function handle ``hipModuleGetFunction`` returned."""
        layout = self.functions.get(handle_or_zero(function))
        if layout is None:
            raise KeyError(f"no argument layout is known for function {function!r} (not from "
                           "hipModuleGetFunction of a module whose code object hrr could read)")
        return layout

    def clear(self) -> None:
        with self.lock:
            self.modules.clear()
            self.functions.clear()
            self.errors.clear()


def image_bytes(image: Any) -> bytes:
    """The code object a ``hipModuleLoadData`` image argument holds: its bytes when it is a
    buffer, else read at its address (an ELF image is as long as its headers say)."""
    if isinstance(image, str):
        raise TypeError("a str is not a code object")
    addr = buffer_or_address(image)
    if isinstance(addr, bytes):
        return addr
    if not addr:
        raise ValueError("the image is NULL")
    head = ctypes.string_at(addr, 64)
    if not head.startswith(ELF64_MAGIC):
        raise ValueError("an image given by address is read only when it is a 64-bit ELF code object")
    size = elf64_size(head)
    if size > MAX_IMAGE_FROM_ADDRESS:
        raise ValueError(f"the ELF headers claim {size} bytes")
    return ctypes.string_at(addr, size)


def file_bytes(fname: Any) -> bytes:
    """The code object file ``hipModuleLoad`` was given (one byte past the limit at most)."""
    return read_code_file(fname, MAX_IMAGE_FROM_ADDRESS)


__all__ = ["Layouts", "image_bytes", "file_bytes", "MAX_IMAGE_FROM_ADDRESS"]
