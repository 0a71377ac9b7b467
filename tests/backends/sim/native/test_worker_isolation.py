"""The kernel worker holds nothing of the user's and never outlives its client, tried as an
attacker would (benign payloads): a kernel that reads every byte the worker can read finds
no environment variable of the process that started it; a kernel that writes its own
completion reply and spins is a failed launch, and its worker is stopped."""
from __future__ import annotations

import ctypes
import os
import platform
import secrets
import select
import struct

import numpy as np
import picfuncs
import pytest

from hrr.backends.sim import device as sim_device
from hrr.backends.sim import hip, hiprtc
from hrr.backends.sim.native import arena, toolchain, worker
from hrr.backends.sim.native.worker import FORGED, KernelWorker, sandbox_support

OK = hip.hipError_t.hipSuccess
RTC_OK = hiprtc.hiprtcResult.HIPRTC_SUCCESS
H2D, D2H = hip.hipMemcpyKind.hipMemcpyHostToDevice, hip.hipMemcpyKind.hipMemcpyDeviceToHost
X86_LINUX = platform.machine() == "x86_64" and hasattr(os, "memfd_create")

# Counts every place in the given ranges where the bytes, each XOR 0x5a, equal the key: the
# needle itself is never in the kernel's memory (only its XOR, in device memory).
WALK = rb"""
extern "C" __global__ void walk(const unsigned long long* ranges, unsigned n, const unsigned char* key,
                                unsigned klen, unsigned long long* out) {
  unsigned long long hits = 0, bytes = 0;
  for (unsigned r = 0; r < n; ++r) {
    const volatile unsigned char* p = (const volatile unsigned char*)ranges[2 * r];
    unsigned long long len = ranges[2 * r + 1];
    for (unsigned long long i = 0; i + klen <= len; ++i) {
      unsigned j = 0;
      while (j < klen && (unsigned char)(p[i + j] ^ 0x5a) == key[j]) ++j;
      if (j == klen) ++hits;
    }
    bytes += len;
  }
  out[0] = hits;
  out[1] = bytes;
}
"""


def ok(result):
    assert result[0] in (OK, RTC_OK), result
    rest = result[1:]
    return rest[0] if len(rest) == 1 else (rest or None)


def _walk_kernel():
    prog = ok(hiprtc.hiprtcCreateProgram(WALK, b"walk.hip", 0, [], []))
    assert hiprtc.hiprtcCompileProgram(prog, 1, [b"--offload-arch=gfx942"])[0] == RTC_OK
    code = bytearray(ok(hiprtc.hiprtcGetCodeSize(prog)))
    ok(hiprtc.hiprtcGetCode(prog, code))
    return ok(hip.hipModuleGetFunction(ok(hip.hipModuleLoadData(bytes(code))), b"walk"))


def _device(data: bytes) -> int:
    ptr = ok(hip.hipMalloc(max(len(data), 8)))
    ok(hip.hipMemcpy(ptr, np.frombuffer(data, np.uint8), len(data), H2D))
    return int(ptr)


def _walk(fn, ranges: list[tuple[int, int]], key: bytes) -> tuple[int, int]:
    """(hits, bytes scanned) of the walk kernel over ``ranges`` for ``key``."""
    table = _device(b"".join(struct.pack("<QQ", a, n) for a, n in ranges))
    xored = _device(bytes(b ^ 0x5A for b in key))
    out = ok(hip.hipMalloc(16))
    params = (ctypes.c_uint64(table), ctypes.c_uint32(len(ranges)), ctypes.c_uint64(xored),
              ctypes.c_uint32(len(key)), ctypes.c_uint64(int(out)))
    ok(hip.hipModuleLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, None, params))
    ok(hip.hipDeviceSynchronize())
    got = np.zeros(2, np.uint64)
    ok(hip.hipMemcpy(got, out, 16, D2H))
    return int(got[0]), int(got[1])


def _readable_mappings(pid: int, skip: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Every readable mapping of ``pid`` (start, length), but the [vvar] pages (reading some of
    them faults by design) and the ranges of ``skip`` (the program's own memory)."""
    found = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split()
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            name = fields[5] if len(fields) > 5 else ""
            if fields[1][0] != "r" or name.startswith("[vvar"):
                continue
            if any(lo < s_hi and s_lo < hi for s_lo, s_hi in skip):
                continue
            found.append((lo, hi - lo))
    return found


@pytest.mark.skipif(not X86_LINUX or toolchain.find_toolchain() is None,
                    reason="needs Linux and a C++ compiler for the sim")
def test_a_kernel_reading_all_the_worker_can_read_finds_no_environment_variable(monkeypatch):
    canary = f"canary-{secrets.token_hex(8)}"
    monkeypatch.setenv("HRR_RED_SECRET", canary)
    dev = sim_device.current()
    for w in dev.native_workers.values():
        w.close()   # the next launch starts a worker with the canary in this process's environment
    fn = _walk_kernel()
    # the scan works: the canary placed in device memory is found there
    placed = _device(canary.encode())
    assert _walk(fn, [(placed, len(canary))], canary.encode()) == (1, len(canary))
    pid = next(w.pid for w in dev.native_workers.values() if w.pid is not None)
    # the arenas are the program's device and pinned memory, there by design
    ranges = _readable_mappings(pid, [(a.base, a.base + a.size) for a in (dev.memory.device_arena,
                                                                          dev.memory.pinned_arena)])
    hits, scanned = _walk(fn, ranges, canary.encode())
    assert (hits, scanned) == (0, sum(n for _, n in ranges)) and scanned > 1 << 20
    hits, _ = _walk(fn, ranges, b"HRR_RED_SECRET")
    assert hits == 0
    # nothing of the program's: an empty environment, a bare argv, no descriptor but its pipes
    with open(f"/proc/{pid}/environ", "rb") as f:
        assert f.read() == b""
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        assert f.read() == b"hrr-kernel-worker\0"
    assert sorted(int(fd) for fd in os.listdir(f"/proc/{pid}/fd")) == [0, 1, 2, 3, 4]


pic = pytest.mark.skipif(not X86_LINUX or not sandbox_support()[0], reason="x86_64 launch functions, seccomp")


@pic
def test_a_kernel_that_forges_its_reply_then_spins_is_a_failed_launch(monkeypatch):
    monkeypatch.setattr(worker, "IDLE_GRACE_SECONDS", 1.0)
    code = picfuncs.build()
    memory = sim_device.current().memory
    fn = {}
    for name in ("forge_done", "add_to"):
        alloc = memory.malloc(len(code[name]), align=4096)
        alloc.storage[:] = np.frombuffer(code[name], np.uint8)
        fn[name] = alloc.base
    w = KernelWorker(arena.device_arena(), arena.pinned_arena(), sandbox=True)
    try:
        cell = memory.malloc(4)
        assert w.launch(fn["add_to"], 0, struct.pack("<QI", cell.base, 1), (1, 1, 1), (1, 1, 1), 0).fault is None
        pid = w.pid
        ended = os.pidfd_open(pid)
        out = w.launch(fn["forge_done"], 0, b"", (1, 1, 1), (1, 1, 1), 0)
        assert (out.status, out.fault) == (-1, FORGED)
        assert w.pid is None and select.select([ended], [], [], 0)[0]   # stopped, not left spinning
        os.close(ended)
        with pytest.raises(FileNotFoundError):
            open(f"/proc/{pid}/stat").close()                           # and reaped
        again = w.launch(fn["add_to"], 0, struct.pack("<QI", cell.base, 1), (1, 1, 1), (1, 1, 1), 0)
        assert (again.status, again.fault) == (1, None)
    finally:
        w.close()


@pic
def test_a_reply_followed_by_more_bytes_is_a_failed_launch(monkeypatch):
    """A kernel that returns after writing a reply of its own: the real one follows it."""
    monkeypatch.setattr(worker, "IDLE_GRACE_SECONDS", 1.0)
    code = picfuncs.build()
    memory = sim_device.current().memory
    alloc = memory.malloc(len(code["raw_write"]), align=4096)
    alloc.storage[:] = np.frombuffer(code["raw_write"], np.uint8)
    forged = memory.malloc(16)
    forged.storage[:] = np.frombuffer(struct.pack("=IiII", worker.MSG_DONE, 0, 0, 0), np.uint8)
    w = KernelWorker(arena.device_arena(), arena.pinned_arena(), sandbox=True)
    try:
        out = w.launch(alloc.base, 0, struct.pack("<QQQ", worker.FD_RES, forged.base, 16), (1, 1, 1), (1, 1, 1), 0)
        assert (out.status, out.fault) == (-1, FORGED) and w.pid is None
    finally:
        w.close()


BLOCKS = b"""
extern "C" __global__ void mark(unsigned* out) {
  if (threadIdx.x == 0) out[blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)] = 1 + blockIdx.x;
}
"""


@pytest.mark.skipif(not X86_LINUX or toolchain.find_toolchain() is None,
                    reason="needs Linux and a C++ compiler for the sim")
def test_a_launch_can_run_a_range_of_its_blocks_in_linear_order():
    """The runner's block range (what spreading a launch over several workers needs)."""
    result = toolchain.compile_program([toolchain.SourceUnit("mark.hip", BLOCKS)])
    assert result.ok and result.native is not None, result.log
    image = result.native
    memory = sim_device.current().memory
    alloc = memory.malloc(image.memory_size, align=4096)
    alloc.storage[:image.memory_size] = np.frombuffer(image.relocated(alloc.base), np.uint8)
    out = memory.malloc(4 * 24)
    w = KernelWorker(arena.device_arena(), arena.pinned_arena(), sandbox=sandbox_support()[0])
    try:
        launch = w.launch(alloc.base + image.launch, alloc.base + image.kernels["mark"].entry,
                          struct.pack("<Q", out.base), (4, 3, 2), (8, 1, 1), 0, blocks=(5, 11))
        assert (launch.status, launch.fault) == (0, None)
        got = out.storage[:96].view(np.uint32)
        assert [i for i in range(24) if got[i]] == list(range(5, 11))
        assert [int(got[i]) for i in range(5, 11)] == [2, 3, 4, 1, 2, 3]   # blockIdx.x of blocks 5..10
    finally:
        w.close()
