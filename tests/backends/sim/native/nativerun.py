"""Run native kernel images in the test process: the image is mapped into RWX memory here,
relocated for that address, and its __hrr_launch called through ctypes with a services block
(no worker process, no sandbox: the tests' kernels are our own)."""
from __future__ import annotations

import ctypes
import mmap
import struct
from typing import Any

import numpy as np

from hrr.backends.sim.native import abi
from hrr.backends.sim.native.elfimage import NativeImage, parse_image
from hrr.backends.sim.native.toolchain import SourceUnit, compile_program

LAUNCH_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)


class Loaded:
    """An image mapped at a page-aligned address of this process, and a services block."""

    def __init__(self, image: bytes, **services: Any) -> None:
        self.image: NativeImage = parse_image(image)
        self.memory = mmap.mmap(-1, self.image.memory_size,
                                prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        self.base = ctypes.addressof(ctypes.c_char.from_buffer(self.memory))
        self.memory[:] = self.image.relocated(self.base)
        self.services = abi.make_services(**services)
        self.launch_fn = LAUNCH_FN(self.base + self.image.launch)
        self.keep: list = []

    def global_address(self, name: str) -> int:
        return self.base + self.image.globals[name][0]

    def launch(self, kernel: str, args: list, grid=(1, 1, 1), block=(1, 1, 1), dyn_shared: int = 0) -> int:
        """Launch with the arguments packed at the kernel's layout; numpy arrays are passed as
        their data pointers, ctypes values and bytes as their bytes."""
        k = self.image.kernels[kernel]
        buf = bytearray(max(k.layout.size, 8))
        assert len(args) == len(k.layout.params)
        for spec, arg in zip(k.layout.params, args, strict=True):
            if isinstance(arg, np.ndarray):
                data = struct.pack("<Q", arg.ctypes.data)
            elif isinstance(arg, (bytes, bytearray)):
                data = bytes(arg)
            else:
                data = bytes(arg)
            assert len(data) == spec.size, (spec, data)
            buf[spec.offset:spec.offset + spec.size] = data
        argbuf = (ctypes.c_char * len(buf)).from_buffer_copy(bytes(buf))
        launch = abi.Launch()
        launch.kernel = self.base + k.entry
        launch.args = ctypes.addressof(argbuf)
        launch.grid[:] = list(grid)
        launch.block[:] = list(block)
        launch.dyn_shared_bytes = dyn_shared
        launch.services = self.services.address
        return self.launch_fn(ctypes.addressof(launch))


def build(source: bytes | str, options=(), name: str = "prog.hip", headers=()) -> Loaded:
    """Compile one unit and load it; the compile must succeed."""
    src = source.encode() if isinstance(source, str) else source
    result = compile_program([SourceUnit(name, src, tuple(headers))], list(options))
    assert result.ok, result.log
    assert result.image is not None
    return Loaded(result.image)
