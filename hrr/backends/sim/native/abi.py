"""Python's side of ``hrr_abi.h``: the launch and services structures and the math table.

The services block holds everything a native kernel may use besides device memory
(fiber stacks, dynamic shared memory, the printf buffer, libm's addresses). The kernel
worker (worker.c) builds its own, over its own static libm; ``make_services`` builds one
in this process for running images here (tests, with this process's libm).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import re
from importlib import resources

import attrs

ABI_HEADER = "hrr_abi.h"
ABI_VERSION = 2

PRINTF_BYTES = 1 << 20          # a launch's printf output beyond this is cut
TRAP_MESSAGE_BYTES = 256        # hrr_services.trap_message's buffer

# hrr_status
OK, E_SHAPE, E_BARRIER, E_TRAP, E_ABI = 0, 1, 2, 3, 4
STATUS_NAMES = {OK: "ok", E_SHAPE: "launch shape beyond the runner's limits",
                E_BARRIER: "threads wait at __syncthreads that others of their block never reach",
                E_TRAP: "the kernel trapped (__trap, abort or a failed assert)",
                E_ABI: "the image was built for another runner ABI"}


def header_text() -> str:
    """hrr_abi.h as shipped in the package."""
    return resources.files(__package__).joinpath(ABI_HEADER).read_text()


def math_functions() -> tuple[tuple[str, str], ...]:
    """(name, signature) of each libm function in the table, in table order (from hrr_abi.h)."""
    block = header_text().split("#define HRR_MATH_TABLE(X)", 1)[1].split("#define HRR_MATH_INDEX", 1)[0]
    return tuple(re.findall(r"X\((\w+),\s*(\w+)\)", block))


MATH = math_functions()


class Services(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in (
        "abi_version", "dyn_shared", "dyn_shared_cap", "stacks", "stack_bytes", "max_fibers",
        "printf_buf", "printf_cap", "printf_used_at", "trap_message")] + [("math", ctypes.c_uint64 * len(MATH))]


class Launch(ctypes.Structure):
    _fields_ = [("kernel", ctypes.c_uint64), ("args", ctypes.c_uint64), ("grid", ctypes.c_uint32 * 3),
                ("block", ctypes.c_uint32 * 3), ("dyn_shared_bytes", ctypes.c_uint32),
                ("reserved", ctypes.c_uint32), ("services", ctypes.c_uint64), ("block_begin", ctypes.c_uint64),
                ("block_end", ctypes.c_uint64)]


def math_table() -> list[int]:
    """The addresses of the table's libm functions in this process, in table order."""
    libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    return [ctypes.cast(getattr(libm, name), ctypes.c_void_p).value or 0 for name, _ in MATH]


@attrs.define(eq=False)
class ServicesBlock:
    """A services block and the memory it points at, kept alive together in this process."""

    services: Services
    stacks: mmap.mmap
    buffers: list
    printf_used: ctypes.c_uint64

    @property
    def address(self) -> int:
        return ctypes.addressof(self.services)

    def take_printf(self) -> bytes:
        """The printf output since the last call (and reset the buffer)."""
        used = min(self.printf_used.value, self.services.printf_cap)
        out = ctypes.string_at(self.services.printf_buf, used)
        self.printf_used.value = 0
        return out

    def trap_message(self) -> str:
        return ctypes.string_at(self.services.trap_message).decode(errors="replace")


def make_services(max_fibers: int = 1024, stack_bytes: int = 128 << 10, dyn_shared_cap: int = 64 << 10,
                  printf_cap: int = PRINTF_BYTES) -> ServicesBlock:
    """Allocate a services block in this process (stacks are reserved, committed on touch)."""
    stacks = mmap.mmap(-1, max_fibers * stack_bytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
                       | getattr(mmap, "MAP_NORESERVE", 0))
    shared = (ctypes.c_uint8 * dyn_shared_cap)()
    printf_buf = (ctypes.c_char * printf_cap)()
    trap = (ctypes.c_char * TRAP_MESSAGE_BYTES)()
    used = ctypes.c_uint64(0)
    svc = Services()
    svc.abi_version = ABI_VERSION
    svc.dyn_shared, svc.dyn_shared_cap = ctypes.addressof(shared), dyn_shared_cap
    svc.stacks = ctypes.addressof(ctypes.c_char.from_buffer(stacks))
    svc.stack_bytes, svc.max_fibers = stack_bytes, max_fibers
    svc.printf_buf, svc.printf_cap = ctypes.addressof(printf_buf), printf_cap
    svc.printf_used_at = ctypes.addressof(used)
    svc.trap_message = ctypes.addressof(trap)
    for i, addr in enumerate(math_table()):
        svc.math[i] = addr
    return ServicesBlock(svc, stacks, [shared, printf_buf, trap], used)
