"""The compiled kernelParams reader (``kernargs._reader``) gives the bytes the general loop
gives, for every layout it is made for, and leaves every case it cannot read to the loop."""
from __future__ import annotations

import ctypes
import random

import pytest

from hrr.hiptypes import kernargs
from hrr.hiptypes.kernargs import KernelLayout, LaunchArgsError, ParamSpec, pack_kernel_args


def _layout(rng: random.Random, n: int) -> KernelLayout:
    params, at = [], 0
    for i in range(n):
        size = rng.choice((1, 2, 4, 8, 12, 16, 24))
        align = min(size, 8) if size in (1, 2, 4, 8) else rng.choice((4, 8))
        at += rng.choice((0, 0, 3)) if i else 0          # sometimes a wider gap than alignment
        at = (at + align - 1) // align * align
        params.append(ParamSpec(at, size, rng.choice(("pointer", "value", "struct", "unknown"))))
        at += size
    return KernelLayout(tuple(params))


def _args(rng: random.Random, layout: KernelLayout) -> tuple[list, list[int]]:
    keep = [ctypes.create_string_buffer(bytes(rng.randrange(256) for _ in range(p.size)), max(p.size, 1))
            for p in layout.params]
    return keep, [ctypes.addressof(b) for b in keep]


def _expected(layout: KernelLayout, addrs: list[int]) -> bytes:
    buf = bytearray(layout.size)
    for p, a in zip(layout.params, addrs, strict=False):
        buf[p.offset:p.offset + p.size] = ctypes.string_at(a, p.size)
    return bytes(buf)


def test_the_reader_and_the_loop_give_the_same_bytes():
    rng = random.Random(11)
    for case in range(300):
        layout = _layout(rng, rng.randrange(0, 9))
        keep, addrs = _args(rng, layout)
        assert kernargs._reader(layout) is not None, layout
        want = _expected(layout, addrs)
        # the list and tuple forms take the reader, the void* array form the loop
        array = (ctypes.c_void_p * max(len(addrs), 1))(*addrs)
        assert pack_kernel_args(layout, addrs) == want, (case, layout)
        assert pack_kernel_args(layout, tuple(addrs) + (12345,)) == want   # extra entries ignored
        if layout.params:
            assert pack_kernel_args(layout, array) == want
        assert kernargs._reader(layout)(addrs) == want
        del keep


def test_what_the_reader_cannot_read_goes_to_the_loop():
    layout = KernelLayout((ParamSpec(0, 8, "pointer"), ParamSpec(8, 4, "value")))
    read = kernargs._reader(layout)
    assert read is not None
    words = (ctypes.c_uint64(0xDEADBEEF), ctypes.c_uint32(7))
    addrs = [ctypes.addressof(w) for w in words]
    want = bytes(words[0]) + bytes(words[1])
    for bad in ([addrs[0], 0], [addrs[0]], [addrs[0], -addrs[1]], [addrs[0], True],
                [ctypes.c_void_p(addrs[0]), addrs[1]], [addrs[0], 1 << 70]):
        assert read(bad) is None, bad
    # the loop then reads what it can and refuses the rest as it always did
    assert pack_kernel_args(layout, [ctypes.c_void_p(addrs[0]), addrs[1]]) == want
    with pytest.raises(LaunchArgsError, match="NULL"):
        pack_kernel_args(layout, [addrs[0], 0])
    with pytest.raises(LaunchArgsError, match="has 1 entries"):
        pack_kernel_args(layout, [addrs[0]])


def test_overlapping_or_unordered_layouts_get_no_reader():
    words = (ctypes.c_uint64(0x1122334455667788), ctypes.c_uint32(0xAABBCCDD))
    addrs = [ctypes.addressof(w) for w in words]
    for params in ((ParamSpec(8, 4, "value"), ParamSpec(0, 8, "pointer")),
                   (ParamSpec(0, 8, "pointer"), ParamSpec(4, 4, "value"))):
        layout = KernelLayout(params)
        assert kernargs._reader(layout) is None
        assert pack_kernel_args(layout, [addrs[1], addrs[0]] if params[0].offset else addrs) == \
            _expected(layout, [addrs[1], addrs[0]] if params[0].offset else addrs)
