"""The least a recorder written in Python can add to a call: the floor under the capture keys.

``MinimalRecorder(hip)`` records ``hipGetDevice`` and ``hipModuleLaunchKernel`` as plainly
as Python allows: call the function, build the record list (a launch's kernel arguments
read from its kernelParams by sizes known in advance), pack it with msgpack and copy it
into an anonymous mapping. No lock, no thread number, no checks, no batch framing, no
crash safety, no plugins, nothing a real archive needs beyond the bytes: any recorder in
Python does at least this, so its overhead is a lower bound for ``call_overhead_us`` and
``launch_overhead_us`` on the machine it runs on. Every other call passes through unrecorded.
"""
from __future__ import annotations

import ctypes
import mmap
import sys
from typing import Any

import msgpack

# Kernel argument sizes of the built-in kernels the bench launches (the C ABIs in BRIEF.md):
# three parameters each, read unrolled.
ARG_SIZES = {b"fill_u32": (8, 4, 4), b"copy_u8": (8, 8, 8)}
GET_DEVICE, MODULE_LAUNCH = 1, 2
_SPACE = 1 << 28


class MinimalRecorder:
    """``hip``'s surface with the two benchmarked calls recorded minimally."""

    def __init__(self, hip: Any) -> None:
        self._hip = hip
        self._mm = mmap.mmap(-1, _SPACE)
        self._sizes: dict[int, tuple[int, ...]] = {}
        packb = msgpack.Packer().pack
        mm, state = self._mm, [0, 0]     # next sequence number, next free byte
        get_device, launch = hip.hipGetDevice, hip.hipModuleLaunchKernel
        sizes = self._sizes
        # The process's memory as one byte view: slicing it is the cheapest read Python has
        # (hrr's own kernelParams reader reads the same way).
        memory = memoryview((ctypes.c_char * sys.maxsize).from_address(0)).cast("B")

        def write(payload: bytes) -> None:
            pos = state[1]
            if pos + len(payload) > _SPACE:
                pos = 0
            end = pos + len(payload)
            mm[pos:end] = payload
            state[1] = end

        def hipGetDevice() -> Any:
            result = get_device()
            seq = state[0]
            state[0] = seq + 1
            write(packb([seq, 0, GET_DEVICE, [], int(result[0]), [result[1]], {}]))
            return result

        def hipModuleLaunchKernel(f: Any, gx: int, gy: int, gz: int, bx: int, by: int, bz: int,
                                  shared: int, stream: Any, params: Any, extra: Any) -> Any:
            n0, n1, n2 = sizes[int(f)]
            p0, p1, p2 = params
            kernargs = b"".join((memory[p0:p0 + n0], memory[p1:p1 + n1], memory[p2:p2 + n2]))
            result = launch(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra)
            seq = state[0]
            state[0] = seq + 1
            write(packb([seq, 0, MODULE_LAUNCH, [int(f), gx, gy, gz, bx, by, bz, shared, int(stream)],
                         int(result[0]), [], kernargs]))
            return result

        self.hipGetDevice = hipGetDevice
        self.hipModuleLaunchKernel = hipModuleLaunchKernel

    def hipModuleGetFunction(self, module: Any, name: bytes) -> Any:
        """The real call; the function's argument sizes are noted for its launches."""
        result = self._hip.hipModuleGetFunction(module, name)
        if name in ARG_SIZES and len(result) > 1:
            self._sizes[int(result[1])] = ARG_SIZES[name]
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._hip, name)

    def close(self) -> None:
        self._mm.close()
