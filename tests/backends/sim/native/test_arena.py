"""Device and pinned memory live in shareable arenas: addresses, page release, fork copies."""
from __future__ import annotations

import ctypes
import os
import resource
import subprocess
import sys

import numpy as np
import pytest
from forkcheck import run_child

from hrr.backends.sim import device as sim_device
from hrr.backends.sim import hip
from hrr.backends.sim.native import arena as arenas
from hrr.backends.sim.native.arena import DEVICE_BASE, DEVICE_END, PINNED_BASE

OK = hip.hipError_t.hipSuccess
H2D, D2H = hip.hipMemcpyKind.hipMemcpyHostToDevice, hip.hipMemcpyKind.hipMemcpyDeviceToHost
pytestmark = pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="arenas share memory through memfd (Linux)")


def _memory():
    return sim_device.current().memory


def _data_extents(arena: arenas.Arena) -> list[tuple[int, int]]:
    return arena._data_extents()


def _maps_entry(addr: int) -> str | None:
    with open("/proc/self/maps") as f:
        for line in f:
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            if lo <= addr < hi:
                return line
    return None


def test_device_memory_is_the_arena_at_offset_address_minus_base():
    err, d = hip.hipMalloc(1000)
    assert err == OK and DEVICE_BASE <= int(d) < DEVICE_END
    src = np.arange(1000, dtype=np.uint8)
    assert hip.hipMemcpy(d, src, 1000, H2D) == (OK,)
    arena = _memory().device_arena
    assert bytes(arena.view(int(d) - DEVICE_BASE, 1000)) == src.tobytes()
    assert os.pread(arena.fd, 1000, int(d) - DEVICE_BASE) == src.tobytes()   # the shared file itself


def test_the_device_range_is_reserved_without_access_here():
    hip.hipMalloc(16)
    entry = _maps_entry(DEVICE_BASE)
    assert entry is not None and entry.split()[1] == "---p", entry
    assert not _memory().is_device_address(DEVICE_END) and _memory().is_device_address(DEVICE_END - 1)


def test_freeing_gives_whole_pages_back_and_keeps_the_neighbours():
    err, a = hip.hipMalloc(100)
    err, big = hip.hipMalloc(1 << 20)
    err, c = hip.hipMalloc(100)
    err, d = hip.hipMalloc(5000)
    for p, n in ((a, 100), (big, 1 << 20), (c, 100), (d, 5000)):
        assert hip.hipMemcpy(p, np.full(n, 5, np.uint8), n, H2D) == (OK,)
    arena = _memory().device_arena
    before = sum(n for _, n in _data_extents(arena))
    assert hip.hipFree(big) == (OK,)
    after = sum(n for _, n in _data_extents(arena))
    assert before - after >= (1 << 20) - 2 * arenas.PAGE
    assert hip.hipFree(d) == (OK,)
    for p in (a, c):
        out = np.zeros(100, np.uint8)
        assert hip.hipMemcpy(out, p, 100, D2H) == (OK,) and (out == 5).all()


def test_page_aligned_device_allocations():
    mem = _memory()
    mem.malloc(10)
    alloc = mem.malloc(5000, align=4096)
    assert alloc is not None and alloc.base % 4096 == 0 and alloc.storage.ctypes.data % 4096 == 0
    nxt = mem.malloc(1)
    assert nxt is not None and nxt.base >= alloc.base + 5000


def test_pinned_memory_is_at_the_fixed_base_page_aligned_and_zero_when_reused():
    err, h = hip.hipHostMalloc(100, 0)
    assert err == OK and int(h) % 4096 == 0
    assert _memory().pinned_arena.fixed and PINNED_BASE <= int(h) < PINNED_BASE + arenas.PINNED_SPAN
    ctypes.memset(int(h), 0xAB, 100)
    assert os.pread(_memory().pinned_arena.fd, 4, int(h) - PINNED_BASE) == b"\xab" * 4
    assert hip.hipHostFree(h) == (OK,)
    err, again = hip.hipHostMalloc(50, 0)
    assert err == OK and int(again) == int(h)          # freed pages are reused...
    assert ctypes.string_at(int(again), 100) == bytes(100)   # ...and read as zeros


def test_device_reset_continues_addresses_and_forgets_the_old_bytes():
    err, d = hip.hipMalloc(4096)
    assert hip.hipMemcpy(d, np.full(4096, 7, np.uint8), 4096, H2D) == (OK,)
    arena = _memory().device_arena
    assert _data_extents(arena)
    assert hip.hipDeviceReset() == (OK,)
    assert _data_extents(arena) == []
    err, d2 = hip.hipMalloc(16)
    assert err == OK and int(d2) > int(d)


def test_a_forked_child_has_its_own_copy_of_device_and_pinned_memory():
    err, d = hip.hipMalloc(64)
    assert hip.hipMemcpy(d, np.full(64, 1, np.uint8), 64, H2D) == (OK,)
    err, h = hip.hipHostMalloc(64, 0)
    ctypes.memset(int(h), 2, 64)
    parent_fd = _memory().device_arena.fd

    def body() -> int:
        out = np.zeros(64, np.uint8)
        if hip.hipMemcpy(out, d, 64, D2H) != (OK,) or not (out == 1).all():
            return 3            # the child sees the parent's bytes as they were at fork
        if ctypes.string_at(int(h), 64) != b"\x02" * 64:
            return 4
        if os.fstat(_memory().device_arena.fd).st_ino == os.stat(f"/proc/{os.getppid()}/fd/{parent_fd}").st_ino:
            return 5            # still the parent's file
        if hip.hipMemcpy(d, np.full(64, 9, np.uint8), 64, H2D) != (OK,):
            return 6
        ctypes.memset(int(h), 8, 64)
        return 0

    assert run_child(body) == 0
    out = np.zeros(64, np.uint8)
    assert hip.hipMemcpy(out, d, 64, D2H) == (OK,) and (out == 1).all()   # the child wrote its own copy
    assert ctypes.string_at(int(h), 64) == b"\x02" * 64


def test_a_child_whose_copy_cannot_be_made_still_never_writes_the_parents_memory(monkeypatch):
    err, d = hip.hipMalloc(64)
    assert hip.hipMemcpy(d, np.full(64, 1, np.uint8), 64, H2D) == (OK,)

    def no_copy(self):
        raise OSError(24, "Too many open files")
    monkeypatch.setattr(arenas.Arena, "private_copy", no_copy)

    def body() -> int:
        if _memory().device_arena.shareable:
            return 3
        return 0 if hip.hipMemcpy(d, np.full(64, 9, np.uint8), 64, H2D) == (OK,) else 4

    assert run_child(body) == 0
    out = np.zeros(64, np.uint8)
    assert hip.hipMemcpy(out, d, 64, D2H) == (OK,) and (out == 1).all()


def test_small_allocations_freed_one_by_one_give_their_pages_back_in_batches():
    mem = _memory()
    keep = mem.malloc(64)
    keep.storage[:] = 3
    for _ in range(1000):
        # a small allocation freed while a page-aligned one lives after it...
        for alloc in (mem.malloc(256), mem.malloc(4096, align=4096)):
            alloc.storage[:] = 1
            mem.free_device(alloc.base)
        # ...and one freed on the page the allocator still fills, which then jumps ahead
        for size, align in ((256, 256), (4096, 4096)):
            alloc = mem.malloc(size, align=align)
            alloc.storage[:] = 1
            mem.free_device(alloc.base)
    used = sum(n for _, n in _data_extents(mem.device_arena))
    assert used <= (1 << 20) + 2 * arenas.PAGE          # at most one batch pending
    assert (keep.storage == 3).all()


def test_giving_pages_back_never_touches_live_bytes():
    """Random (seeded) allocations and frees: every live allocation keeps its bytes, and
    what stays resident is the live pages plus at most one pending batch."""
    rng = np.random.default_rng(13)
    mem = _memory()
    live: dict[int, tuple[object, int]] = {}
    for step in range(3000):
        if live and rng.random() < 0.45:
            base = int(rng.choice(list(live)))
            alloc, tag = live.pop(base)
            assert (alloc.storage == tag).all(), step
            mem.free_device(base)
        else:
            size = int(rng.choice([1, 100, 256, 700, 4096, 5000, 20000, 70000]))
            alloc = mem.malloc(size, align=int(rng.choice([256, 256, 4096])))
            tag = step % 251 + 1
            alloc.storage[:] = tag
            live[alloc.base] = (alloc, tag)
    for alloc, tag in live.values():
        assert (alloc.storage == tag).all()
    pages = {p for alloc, _ in live.values()
             for p in range(alloc.base // arenas.PAGE, -(-(alloc.base + alloc.size) // arenas.PAGE))}
    used = sum(n for _, n in _data_extents(mem.device_arena))
    assert used <= len(pages) * arenas.PAGE + (1 << 20) + (64 << 10)


_UNDER_A_FILE_SIZE_LIMIT = """
import numpy as np
from hrr.backends.sim import hip, device
err, d = hip.hipMalloc(1 << 20)
assert err == 0 and hip.hipMemset(d, 3, 1 << 20) == (0,)
out = np.zeros(16, np.uint8)
assert hip.hipMemcpy(out, d, 16, hip.hipMemcpyKind.hipMemcpyDeviceToHost) == (0,) and (out == 3).all()
err, h = hip.hipHostMalloc(64, 0)
assert err == 0
arena = device.current().memory.device_arena
print(arena.shareable, arena.not_shared)
"""


def test_a_file_size_limit_makes_the_arenas_private_instead_of_killing_the_program():
    """`ulimit -f` below an arena's size: growing the file would raise SIGXFSZ (fatal by default)."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))
    done = subprocess.run([sys.executable, "-c", _UNDER_A_FILE_SIZE_LIMIT], capture_output=True, text=True,
                          preexec_fn=limit, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("False the file-size limit (ulimit -f, 65536 bytes)"), done.stdout


def test_an_address_space_limit_shrinks_the_arenas_and_leaves_room_for_the_program():
    """`ulimit -v` (the fuzz harness sets 6 GiB): 1 TiB arenas would not map at all."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
    probe = _UNDER_A_FILE_SIZE_LIMIT + "import numpy; numpy.ones(1 << 28, numpy.uint8)\n" \
        "m = device.current().memory\nprint(m.device_arena.size >> 20, m.pinned_arena.size >> 20)\n"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, preexec_fn=limit, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True ", "1024 512"]
