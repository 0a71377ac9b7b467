"""The built-in kernel library: the kernels hrr ships, with their C ABIs.

Every kernel computes its whole result whatever the launch shape (the semantics of a
grid-stride loop), vectorised with numpy; the sums are written once.
"""
from __future__ import annotations

import numpy as np

from hrr.hiptypes.kernargs import POINTER, STRUCT, VALUE, KernelLayout, ParamSpec
from hrr.backends.sim.kernels import KernelDef, KernelLibrary, LaunchContext

VERSION = "1.0"


def _layout(*params: tuple[int, int, str, str]) -> KernelLayout:
    return KernelLayout(tuple(ParamSpec(o, s, k, n) for o, s, k, n in params))


def fill_u32(ctx: LaunchContext) -> None:
    # fill_u32(uint32_t* dst, uint32_t value, uint32_t n)
    n = ctx.u32(12)
    ctx.array(ctx.ptr(0), np.uint32, n)[:] = ctx.u32(8)


def copy_u8(ctx: LaunchContext) -> None:
    # copy_u8(uint8_t* dst, const uint8_t* src, uint64_t nbytes); copy via a temporary so
    # overlapping ranges behave like a read-all-then-write kernel.
    n = ctx.u64(16)
    src = ctx.array(ctx.ptr(8), np.uint8, n).copy()
    ctx.array(ctx.ptr(0), np.uint8, n)[:] = src


def add_u32(ctx: LaunchContext) -> None:
    # add_u32(uint32_t* dst, const uint32_t* a, const uint32_t* b, uint32_t n)
    n = ctx.u32(24)
    a = ctx.array(ctx.ptr(8), np.uint32, n)
    b = ctx.array(ctx.ptr(16), np.uint32, n)
    ctx.array(ctx.ptr(0), np.uint32, n)[:] = a + b  # uint32 arithmetic wraps mod 2^32


def _sum_mod32(values: np.ndarray) -> int:
    return int(values.sum(dtype=np.uint64)) & 0xFFFFFFFF


def sum_u32(ctx: LaunchContext) -> None:
    # sum_u32(uint32_t* dst, const uint32_t* src, uint32_t n): dst[0] = sum mod 2^32
    total = _sum_mod32(ctx.array(ctx.ptr(8), np.uint32, ctx.u32(16)))
    ctx.array(ctx.ptr(0), np.uint32, 1)[0] = total


def struct_sum_u32(ctx: LaunchContext) -> None:
    # struct_sum_u32(uint32_t* dst, struct {const uint32_t* src; uint32_t n; uint32_t pad;} s)
    total = _sum_mod32(ctx.array(ctx.ptr(8), np.uint32, ctx.u32(16)))
    ctx.array(ctx.ptr(0), np.uint32, 1)[0] = total


def wait_flag(ctx: LaunchContext) -> bool:
    # wait_flag(volatile uint32_t* flag, uint32_t expected): blocks its stream until equal
    return int(ctx.array(ctx.ptr(0), np.uint32, 1)[0]) == ctx.u32(8)


def set_flag(ctx: LaunchContext) -> None:
    # set_flag(uint32_t* flag, uint32_t value)
    ctx.array(ctx.ptr(0), np.uint32, 1)[0] = ctx.u32(8)


_KERNELS = (
    KernelDef("fill_u32", _layout((0, 8, POINTER, "dst"), (8, 4, VALUE, "value"),
                                  (12, 4, VALUE, "n")), fill_u32),
    KernelDef("copy_u8", _layout((0, 8, POINTER, "dst"), (8, 8, POINTER, "src"),
                                 (16, 8, VALUE, "nbytes")), copy_u8),
    KernelDef("add_u32", _layout((0, 8, POINTER, "dst"), (8, 8, POINTER, "a"),
                                 (16, 8, POINTER, "b"), (24, 4, VALUE, "n")), add_u32),
    KernelDef("sum_u32", _layout((0, 8, POINTER, "dst"), (8, 8, POINTER, "src"),
                                 (16, 4, VALUE, "n")), sum_u32),
    KernelDef("struct_sum_u32", _layout((0, 8, POINTER, "dst"), (8, 16, STRUCT, "s")),
              struct_sum_u32),
    KernelDef("wait_flag", _layout((0, 8, POINTER, "flag"), (8, 4, VALUE, "expected")), wait_flag),
    KernelDef("set_flag", _layout((0, 8, POINTER, "flag"), (8, 4, VALUE, "value")), set_flag),
)

LIBRARY = KernelLibrary("builtin", VERSION, {k.name: k for k in _KERNELS})
