"""A launch spread over several kernel workers (HRR_SIM_WORKERS) gives what one worker gives
for a program whose blocks do not race: the same bytes in device and registered memory, printf
output in block order, the fault of the lowest block, the same error; a timeout leaves no
worker behind."""
from __future__ import annotations

import ctypes
import os
import platform
import struct
import time

import numpy as np
import pytest

from hrr.backends.sim import device as sim_device
from hrr.backends.sim import hip, hiprtc
from hrr.backends.sim.native import abi, arena, elfimage, pool, toolchain
from hrr.backends.sim.native.pool import Settings, WorkerPool, split
from hrr.backends.sim.native.worker import sandbox_support
from hrr.errors import UsageError

X86_LINUX = platform.machine() == "x86_64" and hasattr(os, "memfd_create")
needs_workers = pytest.mark.skipif(not X86_LINUX or toolchain.find_toolchain() is None,
                                   reason="needs Linux and a C++ compiler for the sim")

SOURCE = rb"""
#include <hip/hip_cooperative_groups.h>
__device__ unsigned launches_seen;

/* every block: its own __shared__ and dynamic shared tiles, a barrier, neighbours' values */
extern "C" __global__ void shape(unsigned* out, unsigned salt) {
  __shared__ unsigned tile[256];
  extern __shared__ unsigned dyn[];
  unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned n = blockDim.x * blockDim.y * blockDim.z;
  unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  tile[t] = b * 1000u + t + salt;
  dyn[t] = t * 7u + b;
  __syncthreads();
  out[b * n + t] = tile[(t + 1) % n] ^ (dyn[(t + 3) % n] << 8);
  if (t == 0) printf("block %u (%u,%u,%u)\n", b, blockIdx.x, blockIdx.y, blockIdx.z);
}

/* each thread writes its block's __shared__ tile, then all spin before the barrier: blocks of
   other workers run meanwhile, and must not see (or move) this block's tile or its scheduler */
extern "C" __global__ void hold(unsigned* out, unsigned spin) {
  __shared__ unsigned tile[64];
  tile[threadIdx.x] = blockIdx.x * 64u + threadIdx.x;
  volatile unsigned long long x = 0;
  for (unsigned long long i = 0; i < spin; ++i) x += i;
  __syncthreads();
  out[blockIdx.x * 64u + threadIdx.x] = tile[63 - threadIdx.x];
}

/* the lower blocks take longest, so the ranges finish in the reverse of block order */
extern "C" __global__ void slow_low(unsigned* out, unsigned spin) {
  volatile unsigned long long x = 0;
  for (unsigned long long i = 0; i < (unsigned long long)(gridDim.x - blockIdx.x) * spin; ++i) x += i;
  if (threadIdx.x == 0) { out[blockIdx.x] = blockIdx.x + 1; printf("block %u\n", blockIdx.x); }
}

/* blocks `bad` and `bad2` touch unmapped addresses (0x1000 + 0x100 * block); `bad` spins first */
extern "C" __global__ void fault(unsigned* out, unsigned bad, unsigned bad2, unsigned spin) {
  if (blockIdx.x == bad) {
    volatile unsigned long long x = 0;
    for (unsigned long long i = 0; i < spin; ++i) x += i;
  }
  if (blockIdx.x == bad || blockIdx.x == bad2)
    *(volatile unsigned*)(unsigned long long)(0x1000 + 0x100 * blockIdx.x) = 1;
  out[blockIdx.x] = 1;
}

/* a __device__ global and device memory shared by every worker */
extern "C" __global__ void count(unsigned* total) {
  atomicAdd(&launches_seen, 1u);
  atomicAdd(total, threadIdx.x + 1);
}

extern "C" __global__ void grid_sync(unsigned* out) {
  out[blockIdx.x] = 1;
  cooperative_groups::this_grid().sync();
  out[blockIdx.x] = 2;
}

extern "C" __global__ void forever(unsigned* out) {
  volatile unsigned x = 0;
  for (;;) x = x + 1;
}

extern "C" __global__ void registered(unsigned* host, unsigned* dev, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { dev[i] = host[i]; host[i] = host[i] * 2u + 1u; }
}
"""


class Image:
    """SOURCE compiled and placed in the sim's device memory (this test's fresh device)."""

    def __init__(self, native: elfimage.NativeImage) -> None:
        self.native = native
        memory = sim_device.current().memory
        alloc = memory.malloc(self.native.memory_size, align=4096)
        alloc.storage[:self.native.memory_size] = np.frombuffer(self.native.relocated(alloc.base), np.uint8)
        self.base = alloc.base
        assert self.native.private is not None
        self.private = [(alloc.base + self.native.private[0], self.native.private[1] - self.native.private[0])]

    def pool(self, workers: int, min_threads: int = 1) -> WorkerPool:
        return WorkerPool(arena.device_arena(), arena.pinned_arena(), sandbox=sandbox_support()[0],
                          private=lambda: self.private, setup=Settings(workers, min_threads))

    def launch(self, p: WorkerPool, kernel: str, args: bytes, grid, block, dyn_shared: int = 0,
               timeout: float | None = None):
        return p.launch(self.base + self.native.launch, self.base + self.native.kernels[kernel].entry, args,
                        grid, block, dyn_shared, timeout=timeout)


@pytest.fixture(scope="module")
def compiled() -> elfimage.NativeImage:
    if not X86_LINUX or toolchain.find_toolchain() is None:
        pytest.skip("needs Linux and a C++ compiler for the sim")
    result = toolchain.compile_program([toolchain.SourceUnit("pool.hip", SOURCE)])
    assert result.ok and result.native is not None, result.log
    return result.native


@pytest.fixture
def image(compiled) -> Image:
    return Image(compiled)


def _device(nbytes: int):
    alloc = sim_device.current().memory.malloc(nbytes)
    alloc.storage[:nbytes] = 0
    return alloc


def _run(image: Image, workers: int, kernel: str, make_args, grid, block, nbytes: int, dyn_shared: int = 0):
    """(outcome, output bytes, the worker processes that ran) of one launch on a fresh pool."""
    out = _device(nbytes)
    p = image.pool(workers)
    try:
        outcome = image.launch(p, kernel, make_args(out.base), grid, block, dyn_shared)
        return outcome, bytes(out.storage[:nbytes]), len(p.pids)
    finally:
        p.close()


SHAPES = [((7, 1, 1), (64, 1, 1)),     # uneven: 3 + 2 + 2 blocks
          ((2, 1, 1), (32, 1, 1)),     # fewer blocks than workers
          ((3, 2, 1), (8, 4, 1)),      # 2D
          ((2, 3, 2), (4, 2, 4))]      # 3D


@needs_workers
@pytest.mark.parametrize("grid,block", SHAPES)
def test_byte_identical_for_one_two_and_three_workers(image, grid, block):
    threads = block[0] * block[1] * block[2]
    blocks = grid[0] * grid[1] * grid[2]
    nbytes = 4 * threads * blocks
    runs = [_run(image, w, "shape", lambda o: struct.pack("<QI", o, 0x5A5A), grid, block, nbytes, 4 * threads)
            for w in (1, 2, 3)]
    for outcome, data, _ in runs:
        assert (outcome.status, outcome.fault) == (abi.OK, None), outcome
        assert data == runs[0][1]
        assert outcome.printf == runs[0][0].printf
    assert runs[0][0].printf.decode().splitlines() == [
        f"block {b} ({b % grid[0]},{b // grid[0] % grid[1]},{b // grid[0] // grid[1]})" for b in range(blocks)]
    assert [n for _, _, n in runs] == [1, min(2, blocks), min(3, blocks)]   # the launch was spread


@needs_workers
def test_blocks_running_at_once_on_several_workers_keep_their_own_shared_memory(image):
    """Fails where the workers share the image's private pages (__shared__, the scheduler)."""
    outcome, data, workers = _run(image, 3, "hold", lambda o: struct.pack("<QI", o, 20_000), (6, 1, 1),
                                  (64, 1, 1), 4 * 64 * 6)
    assert workers == 3 and (outcome.status, outcome.fault) == (abi.OK, None), outcome
    want = [b * 64 + 63 - t for b in range(6) for t in range(64)]
    assert np.frombuffer(data, np.uint32).tolist() == want


@needs_workers
def test_printf_is_in_block_order_not_in_the_order_the_workers_finish(image):
    outcome, data, workers = _run(image, 3, "slow_low", lambda o: struct.pack("<QI", o, 200_000), (6, 1, 1),
                                  (1, 1, 1), 24)
    assert workers == 3 and outcome.status == abi.OK
    assert outcome.printf.decode().splitlines() == [f"block {b}" for b in range(6)]
    assert np.frombuffer(data, np.uint32).tolist() == [1, 2, 3, 4, 5, 6]


@needs_workers
def test_a_fault_is_the_lowest_blocks_even_when_a_higher_one_faults_first(image):
    """Blocks 4 (middle range, after a spin) and 7 (last range, at once) fault; one worker
    reports block 4's, so do three."""
    args = lambda o: struct.pack("<QIII", o, 4, 7, 20_000_000)   # noqa: E731
    one, _, _ = _run(image, 1, "fault", args, (9, 1, 1), (1, 1, 1), 36)
    three, data, _ = _run(image, 3, "fault", args, (9, 1, 1), (1, 1, 1), 36)
    assert one.fault == three.fault == "illegal address 0x1400 (SIGSEGV)"
    assert three.bad_address and three.printf == b""
    assert np.frombuffer(data, np.uint32)[:4].tolist() == [1, 1, 1, 1]   # the blocks before it all ran


@needs_workers
def test_a_grid_wide_sync_fails_the_same_way_on_any_number_of_workers(image):
    runs = [_run(image, w, "grid_sync", lambda o: struct.pack("<Q", o), (4, 1, 1), (1, 1, 1), 16)
            for w in (1, 2)]
    for outcome, _, _ in runs:
        assert outcome.status == abi.E_TRAP and "grid_group::sync()" in outcome.trap
    assert runs[0][0].trap == runs[1][0].trap


@needs_workers
def test_device_globals_and_atomics_are_shared_by_the_workers(image):
    """A __device__ global lies outside the private pages: every worker's atomics reach it."""
    name = "launches_seen"
    address = image.base + image.native.globals[name][0]
    memory = sim_device.current().memory
    view = memory.resolve_for_kernel(address, 4).view(np.uint32)
    view[0] = 0
    outcome, data, workers = _run(image, 3, "count", lambda o: struct.pack("<Q", o), (9, 1, 1), (16, 1, 1), 4)
    assert outcome.status == abi.OK and workers == 3
    assert int(view[0]) == 9 * 16
    assert struct.unpack("<I", data)[0] == 9 * (16 * 17 // 2)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except OSError:
        return False


@needs_workers
def test_a_timeout_stops_every_worker_and_leaves_no_process(image):
    out = _device(4)
    p = image.pool(3)
    try:
        image.launch(p, "shape", struct.pack("<QI", out.base, 0), (3, 1, 1), (1, 1, 1), 4)
        pids = p.pids
        assert len(pids) == 3
        outcome = image.launch(p, "forever", struct.pack("<Q", out.base), (3, 1, 1), (1, 1, 1), timeout=0.5)
        assert outcome.timed_out and "did not finish within 0.5 s" in (outcome.fault or "")
        assert p.pids == []
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(pid) for pid in pids)
    finally:
        p.close()


def test_the_private_pages_hold_the_runtime_state_and_shared_memory_not_the_globals(image):
    private = image.native.private
    assert private is not None and private[0] % 4096 == 0 and private[1] % 4096 == 0
    assert "launches_seen" in image.native.globals
    assert not private[0] <= image.native.globals["launches_seen"][0] < private[1]
    assert not any("hrr_shared" in name for name in image.native.globals)   # __shared__ is no global
    data = image.native.data
    shoff, shnum = struct.unpack_from("<Q", data, 40)[0], struct.unpack_from("<H", data, 60)[0]
    symbols = elfimage._symbols(elfimage._Reader(data), shoff, shnum)
    inside = {n for n, (v, _s, _k, _b) in symbols.items() if private[0] <= v < private[1]}
    assert {"threadIdx", "blockIdx", "blockDim", "gridDim"} <= inside
    assert any(n.startswith("_ZZ5shapeE4tile") for n in inside)   # shape's __shared__ tile


def test_split_gives_contiguous_ranges_as_even_as_blocks_allow():
    assert split(7, 64, 3, 1) == [(0, 3), (3, 5), (5, 7)]
    assert split(2, 64, 3, 1) == [(0, 1), (1, 2)]
    assert split(64, 256, 4, 1) == [(0, 16), (16, 32), (32, 48), (48, 64)]
    assert split(1, 1024, 8, 1) == [(0, 1)]


def test_a_small_launch_stays_on_one_worker():
    assert split(64, 256, 8, 16384) == [(0, 64)]               # 16384 threads: one worker's worth
    assert split(64, 256, 8, 8192) == [(0, 32), (32, 64)]      # two workers' worth
    assert len(split(4096, 256, 8, 16384)) == 8


@pytest.mark.parametrize("text,want", [(None, 1), ("", 1), ("1", 1), (" 3 ", 3), ("auto", "cpus"), ("0", "cpus")])
def test_hrr_sim_workers_values(text, want):
    assert pool.parse_workers(text) == (min(pool.available_cpus(), pool.MAX_WORKERS) if want == "cpus" else want)


@pytest.mark.parametrize("text", ["two", "-1", "1.5", "257"])
def test_a_bad_hrr_sim_workers_is_refused_with_what_to_set(text):
    with pytest.raises(UsageError) as err:
        pool.parse_workers(text)
    assert f"HRR_SIM_WORKERS={text!r}" in str(err.value) and "0 or auto" in str(err.value)


@pytest.mark.parametrize("text", ["0", "x", "-5"])
def test_a_bad_min_threads_is_refused(text):
    with pytest.raises(UsageError, match="HRR_SIM_WORKERS_MIN_THREADS"):
        pool.parse_min_threads(text)


# -- through the HIP API -----------------------------------------------------------------------
@pytest.fixture
def workers(monkeypatch):
    """Set the device's kernel workers: ``workers(n)`` (every launch split, however small)."""
    dev = sim_device.current()

    def drop() -> None:
        for p in dev.native_workers.values():
            p.close()
        dev.native_workers.clear()

    def use(n: int) -> None:
        drop()
        monkeypatch.setattr(pool, "settings", lambda: Settings(n, 1))
    yield use
    drop()


def ok(result):
    assert int(result[0]) == 0, result
    return result[1] if len(result) == 2 else None


def _function(name: bytes):
    prog = ok(hiprtc.hiprtcCreateProgram(SOURCE, b"pool.hip", 0, [], []))
    assert int(hiprtc.hiprtcCompileProgram(prog, 1, [b"--offload-arch=gfx942"])[0]) == 0
    code = bytearray(ok(hiprtc.hiprtcGetCodeSize(prog)))
    hiprtc.hiprtcGetCode(prog, code)
    return ok(hip.hipModuleGetFunction(ok(hip.hipModuleLoadData(bytes(code))), name))


@needs_workers
def test_registered_memory_written_by_blocks_on_different_workers(workers):
    results = []
    for n_workers in (1, 3):
        workers(n_workers)
        fn = _function(b"registered")
        n = 3 * 64 + 5
        host = np.arange(n, dtype=np.uint32) * 3
        dev = ok(hip.hipMalloc(4 * n))
        ok(hip.hipHostRegister(host, host.nbytes, 0))
        try:
            params = (ctypes.c_void_p(host.ctypes.data), dev, ctypes.c_uint32(n))
            ok(hip.hipModuleLaunchKernel(fn, 4, 1, 1, 64, 1, 1, 0, None, None, params))
            ok(hip.hipDeviceSynchronize())
            got = np.zeros(n, np.uint32)
            ok(hip.hipMemcpy(got, dev, 4 * n, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
        finally:
            ok(hip.hipHostUnregister(host))
        assert (got == np.arange(n, dtype=np.uint32) * 3).all()
        assert (host == np.arange(n, dtype=np.uint32) * 6 + 1).all()   # every block's writes came back
        pids = [p.pids for p in sim_device.current().native_workers.values()]
        assert [len(x) for x in pids] == [n_workers], pids
        results.append((bytes(host), bytes(got)))
    assert results[0] == results[1]


def _app(hip_, hiprtc_, be):
    """Three kernels of SOURCE over 12 blocks; every result copied back (what replay checks)."""
    def ok_(r):
        assert int(r[0]) == 0, r
        return r[1] if len(r) == 2 else r[1:]
    prog = ok_(hiprtc_.hiprtcCreateProgram(SOURCE, b"pool.hip", 0, [], []))
    assert int(hiprtc_.hiprtcCompileProgram(prog, 1, [b"--offload-arch=gfx942"])[0]) == 0
    code = bytearray(ok_(hiprtc_.hiprtcGetCodeSize(prog)))
    hiprtc_.hiprtcGetCode(prog, code)
    module = ok_(hip_.hipModuleLoadData(code))
    out = ok_(hip_.hipMalloc(4 * 64 * 12))
    got = []
    for name, params in ((b"shape", lambda: (out, ctypes.c_uint32(3))),
                         (b"hold", lambda: (out, ctypes.c_uint32(100))),
                         (b"count", lambda: (out,))):
        hip_.hipMemset(out, 0, 4 * 64 * 12)
        fn = ok_(hip_.hipModuleGetFunction(module, name))
        ok_(hip_.hipModuleLaunchKernel(fn, 4, 3, 1, 64, 1, 1, 4 * 64, None, None, params()))
        data = np.zeros(64 * 12, np.uint32)
        hip_.hipMemcpy(data, out, data.nbytes, hip_.hipMemcpyKind.hipMemcpyDeviceToHost)
        got.append(data)
    return got


@needs_workers
@pytest.mark.parametrize("captured_with,replayed_with", [(1, 2), (2, 1)])
def test_an_archive_replays_strictly_on_another_number_of_workers(tmp_path, workers, captured_with, replayed_with):
    from hrrtest import capture, only, replay, text

    workers(captured_with)
    recorded = capture(tmp_path, _app)
    assert max(len(p.pids) for p in sim_device.current().native_workers.values()) == captured_with
    workers(replayed_with)
    result = replay(tmp_path, backend="sim")
    assert result.exit_code == 0, text(result)
    proc = only(result)
    assert proc.checks_passed == 3 and proc.checks_failed == 0 and proc.refusals == (), text(result)
    assert max(len(p.pids) for p in sim_device.current().native_workers.values()) == replayed_with
    assert [a.tolist() for a in recorded] == [a.tolist() for a in _app(hip, hiprtc, None)]


@pytest.mark.parametrize("command", [("run", "--"), ("capture", "-o", "{tmp}/a", "--"), ("replay", "{tmp}/none")])
def test_a_bad_hrr_sim_workers_stops_the_cli_before_anything_runs(tmp_path, command):
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "cli"))
    from cli_helpers import describe, hrr

    marker = tmp_path / "ran"
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    if args[-1] == "--":
        args += [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]
    ran = hrr(*args, env={"HRR_SIM_WORKERS": "lots"})
    assert ran.returncode == 64, describe(ran)
    assert "HRR_SIM_WORKERS='lots' is not a number of kernel workers" in ran.stderr, describe(ran)
    assert "Traceback" not in ran.stderr and not marker.exists()
