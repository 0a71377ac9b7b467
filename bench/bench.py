"""hrr's benchmark: figures measured side by side in one run, never timed assertions.

    python bench/bench.py [--quick | --tiny] [--backend sim|cuda] [--only native|record|gpu] [--out FILE]

Each figure alternates its variants (uncaptured, captured, ...) round after round in one
process and takes the median of the rounds. It prints one line per figure and writes
``--out`` (default bench/results.json) with the issue-11 keys, each a number:

  call_overhead_us          added per cheap call (hipGetDevice) when captured, all plugins
  launch_overhead_us        added per small launch (no pinned argument), all plugins
  call_overhead_floor_us,   what the least recorder Python allows (bench/floor.py) adds to the
  launch_overhead_floor_us  same calls in the same rounds: the floor under the two keys above
  call_overhead_python_us,  the same two figures recorded through the Python record path
  launch_overhead_python_us (HRR_NATIVE_RECORD=0) in the same rounds; the two keys above
                            use the native path when it builds (the line printed names it)
  snapshot_unchanged_ratio  added per launch reading an unchanged pinned buffer (64 MiB)
                            / one xxh3-128 pass over as many bytes
  snapshot_changed_bytes    archive bytes added by one launch after 4 KiB of it changed
  archive_bytes_per_event   archive bytes per captured cheap call
  replay_events_per_s       events replayed per second from an archive of cheap calls
  native_launch_us          sim only: one launch of a one-thread HIP C++ kernel compiled for
                            the CPU (enqueue, the kernel worker's round trip, sync amortised)
  native_ns_per_thread      sim only: per thread of a 64 x 256 launch of a small C++ kernel
  native_ns_per_thread_sync sim only: the same for a block reduction with __syncthreads
  native_ns_per_thread_w1,  sim only: per thread of a 1024 x 256 axpy launch on 1, 2 and N
  _w2, _wN                  kernel workers (HRR_SIM_WORKERS; N = the CPUs here, meta's
                            native_workers_n), beyond one launch's cost
  native_compile_s          sim only: wall time to compile and link a new small program for the CPU
  native_cached_compile_ms  sim only: CPU time of compile_program when the image is cached
  h200_capture_ratio        --backend cuda only: captured / uncaptured, 100k small launches
  h200_replay_ratio         --backend cuda only: replay / the program's own run on a warm
                            context (replay resets the device and makes its context first)
  h200_replay_ratio_cold    --backend cuda only: replay / the program's run from a reset
                            device (the program is timed with the reset before it, so both
                            make the context again)
  replay_repeated_launches  --backend cuda only: launches that replay made again as the
                            checked launch before them (of the gpu launches)
  replay_launch_us          replay time per small launch (an archive of fill_u32 launches)

plus a ``meta`` map (machine, commit).
"""
from __future__ import annotations

import argparse
import ctypes
import functools
import gc
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable

import attrs
import numpy as np
import xxhash

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(1, os.path.dirname(os.path.abspath(__file__)))   # bench/floor.py, when loaded by path

from floor import MinimalRecorder  # noqa: E402
from hrr.archive import open_process_writer  # noqa: E402
from hrr.backends import load_backend  # noqa: E402
from hrr.capture.session import CaptureSession  # noqa: E402
from hrr.config import config  # noqa: E402
from hrr.replay.engine import ReplayOptions  # noqa: E402
from hrr.replay.run import replay_archive  # noqa: E402

CPU_KEYS = ("call_overhead_us", "launch_overhead_us", "call_overhead_python_us", "launch_overhead_python_us",
            "snapshot_unchanged_ratio", "snapshot_changed_bytes", "archive_bytes_per_event", "replay_events_per_s")
GPU_KEYS = ("h200_capture_ratio", "h200_replay_ratio", "h200_replay_ratio_cold", "replay_repeated_launches")
NATIVE_KEYS = ("native_launch_us", "native_ns_per_thread", "native_ns_per_thread_sync", "native_compile_s",
               "native_cached_compile_ms", "native_ns_per_thread_w1", "native_ns_per_thread_w2",
               "native_ns_per_thread_wN")
#: the launch the worker counts are measured on: 16 times the 64 x 256 one, so that each of
#: 16 workers gets at least HRR_SIM_WORKERS_MIN_THREADS' default (16384 threads)
SPREAD_GRID = 1024


@attrs.define
class Sizes:
    """How much each figure runs (rounds are alternated variant by variant)."""
    rounds: int
    calls: int
    launches: int
    snapshot_mb: float
    snapshot_launches: int
    changed_launches: int
    replay_events: int
    gpu_launches: int
    native_launches: int = 20


FULL = Sizes(rounds=7, calls=100_000, launches=20_000, snapshot_mb=64, snapshot_launches=5,
             changed_launches=9, replay_events=100_000, gpu_launches=100_000, native_launches=2_000)
QUICK = Sizes(rounds=5, calls=20_000, launches=3_000, snapshot_mb=64, snapshot_launches=2,
              changed_launches=5, replay_events=20_000, gpu_launches=10_000, native_launches=500)
TINY = Sizes(rounds=2, calls=200, launches=20, snapshot_mb=1, snapshot_launches=1,
             changed_launches=2, replay_events=200, gpu_launches=20, native_launches=5)


def timed(fn: Callable[[], Any]) -> float:
    """Seconds ``fn()`` took."""
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def alternate(variants: dict[str, Callable[[], float]], rounds: int) -> dict[str, float]:
    """Run every variant once per round, in turn, and return each one's median.

    Each run starts from a collected heap: a full collection costs as much as the heap is
    large (tens of ms here), and where one falls depends on how much every earlier run
    allocated, so without this it lands in whichever variant happens to come next."""
    got: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(rounds):
        for name, fn in variants.items():
            gc.collect()
            got[name].append(fn())
    return {name: statistics.median(v) for name, v in got.items()}


class Capture:
    """One capture session kept open across rounds, in its own temp directory."""

    def __init__(self, be: Any, plugins: list[str] | None, native: bool | None = None) -> None:
        self.root = tempfile.mkdtemp(prefix="hrr-bench-")
        cfg = attrs.evolve(config(), backend=be.NAME, content_mode="content")
        self.session = CaptureSession(be, cfg, self.root, plugins=plugins,
                                      writer_factory=functools.partial(open_process_writer, native=native))
        self.hip = self.session.hip
        self.recorder = self.session.writer.RECORDER

    @property
    def size(self) -> int:
        """Bytes the archive holds so far (events, blobs, code objects)."""
        return self.session.writer.bytes_written

    def close(self) -> None:
        self.session.close()

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


class Launcher:
    """A module, a stream and buffers set up once; ``run(n)`` makes n small launches and syncs."""

    def __init__(self, hip: Any, be: Any, pinned_bytes: int = 0) -> None:
        self.hip = hip
        self.mod = hip.hipModuleLoadData(be.builtin_code_object())[1]
        self.fill = hip.hipModuleGetFunction(self.mod, b"fill_u32")[1]
        self.copy = hip.hipModuleGetFunction(self.mod, b"copy_u8")[1]
        self.stream = hip.hipStreamCreate()[1]
        self.dev = hip.hipMalloc(64)[1]
        self.words = (ctypes.c_void_p(int(self.dev)), ctypes.c_uint32(1), ctypes.c_uint32(16))
        self.params = [ctypes.addressof(w) for w in self.words]
        self.pinned = hip.hipHostMalloc(pinned_bytes, 0)[1] if pinned_bytes else None
        self.host: Any = None
        if self.pinned is not None:
            view: Any = (ctypes.c_uint8 * pinned_bytes).from_address(int(self.pinned))
            self.host = np.frombuffer(view, np.uint8)
        self.nbytes = ctypes.c_uint64(64)

    def run(self, n: int) -> None:
        hip, s = self.hip, self.stream
        if self.pinned is None:
            for _ in range(n):
                hip.hipModuleLaunchKernel(self.fill, 1, 1, 1, 32, 1, 1, 0, s, self.params, None)
        else:   # reads 64 bytes of the pinned buffer: the snapshot is of the whole allocation
            for _ in range(n):
                hip.hipModuleLaunchKernel(self.copy, 1, 1, 1, 64, 1, 1, 0, s, None,
                                          (self.dev, self.pinned, self.nbytes))
        hip.hipStreamSynchronize(s)

    def close(self) -> None:
        hip = self.hip
        hip.hipStreamSynchronize(self.stream)
        hip.hipFree(self.dev)
        if self.pinned is not None:
            self.host = None
            hip.hipHostFree(self.pinned)
        hip.hipStreamDestroy(self.stream)
        hip.hipModuleUnload(self.mod)


def cheap_calls(hip: Any, n: int) -> None:
    get = hip.hipGetDevice
    for _ in range(n):
        get()


def bench_calls(be: Any, sz: Sizes, out: dict[str, float], say: Callable[[str], None]) -> None:
    """call_overhead_us (and its Python path's figure) and archive_bytes_per_event."""
    caps = {"batched": Capture(be, None), "python": Capture(be, None, native=False)}
    sizes: dict[str, list[float]] = {"batched": [], "python": []}
    floor = MinimalRecorder(be.hip)

    def captured(name: str) -> float:
        cap = caps[name]
        before = cap.size
        t = timed(lambda: cheap_calls(cap.hip, sz.calls))
        sizes[name].append((cap.size - before) / sz.calls)
        return t

    med = alternate({"bare": lambda: timed(lambda: cheap_calls(be.hip, sz.calls)),
                     "batched": lambda: captured("batched"),
                     "python": lambda: captured("python"),
                     "floor": lambda: timed(lambda: cheap_calls(floor, sz.calls))}, sz.rounds)
    recorder = caps["batched"].recorder
    for cap in caps.values():
        cap.close()
        cap.remove()
    floor.close()
    per = {k: v / sz.calls * 1e6 for k, v in med.items()}
    out["call_overhead_us"] = per["batched"] - per["bare"]
    out["call_overhead_python_us"] = per["python"] - per["bare"]
    out["call_overhead_floor_us"] = per["floor"] - per["bare"]
    out["archive_bytes_per_event"] = statistics.median(sizes["batched"])
    say(f"cheap call (hipGetDevice x{sz.calls}, all plugins, median of {sz.rounds}): uncaptured "
        f"{per['bare']:.2f} us; captured ({recorder} record path) {per['batched']:.2f} us "
        f"(+{out['call_overhead_us']:.2f}), {out['archive_bytes_per_event']:.1f} B/event; "
        f"the Python record path +{out['call_overhead_python_us']:.2f}; "
        f"the least a Python recorder adds (bench/floor.py) +{out['call_overhead_floor_us']:.2f}")


def bench_launches(be: Any, sz: Sizes, out: dict[str, float], say: Callable[[str], None]) -> None:
    """launch_overhead_us: small launches with no pinned argument, all plugins."""
    cap, python = Capture(be, None), Capture(be, None, native=False)
    floor = MinimalRecorder(be.hip)
    launchers = {"bare": Launcher(be.hip, be), "captured": Launcher(cap.hip, be),
                 "python": Launcher(python.hip, be), "floor": Launcher(floor, be)}
    for launcher in launchers.values():
        launcher.run(5)
    med = alternate({name: functools.partial(lambda ln: timed(lambda: ln.run(sz.launches)), launcher)
                     for name, launcher in launchers.items()}, sz.rounds)
    for launcher in launchers.values():
        launcher.close()
    recorder = cap.recorder
    for c in (cap, python):
        c.close()
        c.remove()
    floor.close()
    per = {k: v / sz.launches * 1e6 for k, v in med.items()}
    out["launch_overhead_us"] = per["captured"] - per["bare"]
    out["launch_overhead_python_us"] = per["python"] - per["bare"]
    out["launch_overhead_floor_us"] = per["floor"] - per["bare"]
    say(f"small launch (fill_u32 x{sz.launches}, all plugins, median of {sz.rounds}): uncaptured "
        f"{per['bare']:.2f} us, captured ({recorder} record path) {per['captured']:.2f} us "
        f"(+{out['launch_overhead_us']:.2f}); the Python record path +{out['launch_overhead_python_us']:.2f}; "
        f"the least a Python recorder adds (bench/floor.py) +{out['launch_overhead_floor_us']:.2f}")


def bench_snapshots(be: Any, sz: Sizes, out: dict[str, float], say: Callable[[str], None]) -> None:
    """snapshot_unchanged_ratio and snapshot_changed_bytes (pinned_snapshot plugin only)."""
    nbytes = int(sz.snapshot_mb * (1 << 20))
    cap = Capture(be, ["pinned_snapshot"])
    bare, captured = Launcher(be.hip, be, nbytes), Launcher(cap.hip, be, nbytes)
    assert bare.host is not None and captured.host is not None
    # Random bytes written into every page: a fresh allocation's untouched pages all read
    # the kernel's one zero page, which hashes far faster than memory.
    buf: Any = np.random.default_rng(0).integers(0, 255, nbytes, dtype=np.uint8)
    bare.host[:] = buf
    captured.host[:] = buf
    bare.run(1)
    captured.run(1)           # the first snapshot of the buffer stores it whole
    pinned = captured.host    # the reference: one pass over the very buffer snapshotted
    n = sz.snapshot_launches
    med = alternate({"bare": lambda: timed(lambda: bare.run(n)),
                     "captured": lambda: timed(lambda: captured.run(n)),
                     "hash": lambda: timed(lambda: xxhash.xxh3_128_digest(pinned))}, sz.rounds)
    added = (med["captured"] - med["bare"]) / n
    out["snapshot_unchanged_ratio"] = added / med["hash"]
    say(f"unchanged {sz.snapshot_mb:g} MiB pinned buffer per launch (median of {sz.rounds}): "
        f"+{added * 1e3:.3f} ms; one xxh3-128 pass {med['hash'] * 1e3:.3f} ms; "
        f"ratio {out['snapshot_unchanged_ratio']:.2f}")
    grew = []
    for i in range(sz.changed_launches):
        at = (i * 7919 * 4096) % max(nbytes - 4096, 1)
        captured.host[at:at + 4096] ^= 0xFF          # 4 KiB changed
        before = cap.size
        captured.run(1)
        grew.append(cap.size - before)
    out["snapshot_changed_bytes"] = statistics.median(grew)
    say(f"one launch after 4 KiB of {sz.snapshot_mb:g} MiB changed: archive +{out['snapshot_changed_bytes']:.0f} "
        f"bytes (median of {sz.changed_launches})")
    bare.close()
    captured.close()
    cap.close()
    cap.remove()


def bench_replay(be: Any, sz: Sizes, out: dict[str, float], say: Callable[[str], None], backend: str) -> None:
    """replay_events_per_s: an archive of cheap calls replayed, median of the rounds."""
    cap = Capture(be, None)
    cheap_calls(cap.hip, sz.replay_events)
    cap.close()
    lines: list[str] = []
    med = alternate({"replay": lambda: timed(lambda: replay_archive(
        cap.root, backend=backend, options=ReplayOptions(strict=False), echo=lines.append))}, sz.rounds)
    cap.remove()
    out["replay_events_per_s"] = sz.replay_events / med["replay"]
    say(f"replay of {sz.replay_events} cheap calls (median of {sz.rounds}): {med['replay']:.3f} s, "
        f"{out['replay_events_per_s']:.0f} events/s")
    cap = Capture(be, None)
    launcher = Launcher(cap.hip, be)
    launcher.run(sz.launches)
    launcher.close()
    cap.close()
    med = alternate({"replay": lambda: timed(lambda: replay_archive(
        cap.root, backend=backend, options=ReplayOptions(strict=False), echo=lines.append))}, sz.rounds)
    cap.remove()
    out["replay_launch_us"] = med["replay"] / sz.launches * 1e6
    say(f"replay of {sz.launches} small launches (median of {sz.rounds}): {out['replay_launch_us']:.2f} us each, "
        f"the archive's set-up included")


def bench_gpu(be: Any, sz: Sizes, out: dict[str, float], say: Callable[[str], None], backend: str) -> None:
    """h200_capture_ratio and h200_replay_ratio: whole small-launch programs, uncaptured,
    captured (all plugins) and replayed, alternated."""
    roots: list[str] = []
    repeated: list[int] = []

    def program(hip: Any) -> None:
        launcher = Launcher(hip, be)
        launcher.run(sz.gpu_launches)
        launcher.close()

    def captured() -> float:
        cap = Capture(be, None)
        t = timed(lambda: program(cap.hip))
        cap.close()
        roots.append(cap.root)
        return t

    def replayed() -> float:
        root = roots[-1]
        results: list[Any] = []
        t = timed(lambda: results.append(replay_archive(root, backend=backend, options=ReplayOptions(strict=False),
                                                        echo=lambda line: None)))
        repeated.append(sum(p.repeated_launches for p in results[0].processes))
        shutil.rmtree(root, ignore_errors=True)
        return t

    def fresh() -> float:
        """The program from a reset device, as replay starts (the reset and the context
        made again are in both): the run a new process of the program would make."""
        return timed(lambda: (be.reset_device(), program(be.hip)))

    program(be.hip)   # warm-up: code object build, context
    med = alternate({"bare": lambda: timed(lambda: program(be.hip)), "captured": captured,
                     "fresh": fresh, "replay": replayed}, sz.rounds)
    out["h200_capture_ratio"] = med["captured"] / med["bare"]
    out["h200_replay_ratio"] = med["replay"] / med["bare"]
    out["h200_replay_ratio_cold"] = med["replay"] / med["fresh"]
    out["replay_repeated_launches"] = float(repeated[-1]) if repeated else 0.0
    say(f"{sz.gpu_launches} small launches on {backend}: uncaptured {med['bare']:.3f} s, captured "
        f"{med['captured']:.3f} s (x{out['h200_capture_ratio']:.2f}); from a reset device "
        f"{med['fresh']:.3f} s, replay (which resets the device first) {med['replay']:.3f} s "
        f"(x{out['h200_replay_ratio_cold']:.2f}; x{out['h200_replay_ratio']:.2f} of the warm run); "
        f"{out['replay_repeated_launches']:.0f} launches made again from a checked one")


NATIVE_SOURCE = b"""
extern "C" __global__ void bump(unsigned* x) { if (threadIdx.x == 0 && blockIdx.x == 0) x[0] += 1u; }
extern "C" __global__ void axpy(float* y, const float* x, float a, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void block_sum(float* out, const float* x) {
  __shared__ float part[256];
  unsigned t = threadIdx.x;
  part[t] = x[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (unsigned s = 128; s > 0; s >>= 1) {
    if (t < s) part[t] += part[t + s];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = part[0];
}
"""


def _load_native_module(be: Any) -> Any:
    """NATIVE_SOURCE compiled through the backend's hiprtc and loaded as a module."""
    rtc = be.hiprtc
    prog = rtc.hiprtcCreateProgram(NATIVE_SOURCE, b"bench.hip", 0, [], [])[1]
    assert int(rtc.hiprtcCompileProgram(prog, 0, [])[0]) == 0
    code = bytearray(rtc.hiprtcGetCodeSize(prog)[1])
    rtc.hiprtcGetCode(prog, code)
    return be.hip.hipModuleLoadData(code)[1]


def bench_native(be: Any, sz: Sizes, out: dict[str, float], say: Callable[[str], None]) -> None:
    """native_launch_us and native_ns_per_thread: a program's own C++ kernels on the sim."""
    from hrr.backends.sim.native import toolchain
    if toolchain.find_toolchain() is None:
        say("native kernels: no C++ compiler here, not measured")
        return
    hip, module = be.hip, _load_native_module(be)
    bump, axpy, block_sum = (hip.hipModuleGetFunction(module, name)[1] for name in (b"bump", b"axpy", b"block_sum"))
    n = 64 * 256
    counter, x, y = hip.hipMalloc(4)[1], hip.hipMalloc(4 * n)[1], hip.hipMalloc(4 * n)[1]
    args = (x, y, ctypes.c_float(2.0), ctypes.c_uint32(n))

    def one_thread() -> float:
        t = time.perf_counter()
        for _ in range(sz.native_launches):
            hip.hipModuleLaunchKernel(bump, 1, 1, 1, 1, 1, 1, 0, None, None, (counter,))
        hip.hipDeviceSynchronize()
        return (time.perf_counter() - t) / sz.native_launches

    def many_threads() -> float:
        launches = max(1, sz.native_launches // 20)
        t = time.perf_counter()
        for _ in range(launches):
            hip.hipModuleLaunchKernel(axpy, 64, 1, 1, 256, 1, 1, 0, None, None, args)
        hip.hipDeviceSynchronize()
        return (time.perf_counter() - t) / launches

    def synced() -> float:
        launches = max(1, sz.native_launches // 20)
        t = time.perf_counter()
        for _ in range(launches):
            hip.hipModuleLaunchKernel(block_sum, 64, 1, 1, 256, 1, 1, 0, None, None, (y, x))
        hip.hipDeviceSynchronize()
        return (time.perf_counter() - t) / launches

    programs = iter(range(1 << 30))
    cache = tempfile.mkdtemp(prefix="hrr-bench-cc-")
    saved = os.environ.get("HRR_CACHE_DIR")

    def compile_new() -> float:   # a program never compiled before (its own cache folder)
        os.environ["HRR_CACHE_DIR"] = cache
        try:
            unit = toolchain.SourceUnit("b.hip", NATIVE_SOURCE + b"// %d\n" % next(programs))
            t = time.perf_counter()
            assert toolchain.compile_program([unit]).ok
            return time.perf_counter() - t
        finally:
            if saved is None:
                del os.environ["HRR_CACHE_DIR"]
            else:
                os.environ["HRR_CACHE_DIR"] = saved

    def compile_cached() -> float:
        unit = toolchain.SourceUnit("bench.hip", NATIVE_SOURCE)
        t = time.process_time()
        assert toolchain.compile_program([unit]).ok
        return time.process_time() - t

    one_thread()   # warm-up: the worker starts
    compile_new()  # warm-up: the runtime object is built once per cache folder
    compile_cached()
    med = alternate({"one": one_thread, "many": many_threads, "sync": synced, "compile": compile_new,
                     "cached": compile_cached}, sz.rounds)
    shutil.rmtree(cache, ignore_errors=True)
    out["native_launch_us"] = med["one"] * 1e6
    out["native_ns_per_thread"] = max(med["many"] - med["one"], 0.0) / n * 1e9
    out["native_ns_per_thread_sync"] = max(med["sync"] - med["one"], 0.0) / n * 1e9
    out["native_compile_s"] = med["compile"]
    out["native_cached_compile_ms"] = med["cached"] * 1e3
    hip.hipModuleUnload(module)
    for d in (counter, x, y):
        hip.hipFree(d)
    say(f"native C++ kernels on the sim (median of {sz.rounds}): {out['native_launch_us']:.1f} us per launch, "
        f"{out['native_ns_per_thread']:.1f} ns per thread beyond it (64 x 256 axpy), "
        f"{out['native_ns_per_thread_sync']:.1f} ns with __syncthreads (block reduction); a new program compiles "
        f"in {out['native_compile_s']:.2f} s, a cached one in {out['native_cached_compile_ms']:.2f} ms CPU")
    bench_native_workers(be, sz, out, say)


def bench_native_workers(be: Any, sz: Sizes, out: dict[str, float], say: Callable[[str], None]) -> None:
    """native_ns_per_thread_w1/_w2/_wN: one SPREAD_GRID x 256 axpy launch on 1, 2 and N workers."""
    from hrr.backends.sim import device as sim_device
    from hrr.backends.sim.native import module as native_module
    from hrr.backends.sim.native import pool
    hip, module = be.hip, _load_native_module(be)
    bump, axpy = (hip.hipModuleGetFunction(module, name)[1] for name in (b"bump", b"axpy"))
    n = SPREAD_GRID * 256
    counter, x, y = hip.hipMalloc(4)[1], hip.hipMalloc(4 * n)[1], hip.hipMalloc(4 * n)[1]
    args = (x, y, ctypes.c_float(2.0), ctypes.c_uint32(n))
    dev = sim_device.current()
    wide = pool.available_cpus()
    launches = max(1, sz.native_launches // 25)

    def on(workers: int) -> Callable[[], float]:
        def timed_run() -> float:
            native_module.use_workers(dev, pool.Settings(workers))
            hip.hipModuleLaunchKernel(axpy, SPREAD_GRID, 1, 1, 256, 1, 1, 0, None, None, args)   # workers start
            hip.hipModuleLaunchKernel(bump, 1, 1, 1, 1, 1, 1, 0, None, None, (counter,))
            hip.hipDeviceSynchronize()
            t = time.perf_counter()
            for _ in range(launches):
                hip.hipModuleLaunchKernel(bump, 1, 1, 1, 1, 1, 1, 0, None, None, (counter,))
            hip.hipDeviceSynchronize()
            one = (time.perf_counter() - t) / launches
            t = time.perf_counter()
            for _ in range(launches):
                hip.hipModuleLaunchKernel(axpy, SPREAD_GRID, 1, 1, 256, 1, 1, 0, None, None, args)
            hip.hipDeviceSynchronize()
            return max((time.perf_counter() - t) / launches - one, 0.0) / n * 1e9
        return timed_run

    try:
        med = alternate({"w1": on(1), "w2": on(2), "wN": on(wide)}, sz.rounds)
    finally:
        native_module.use_workers(dev, None)
    for key, value in med.items():
        out[f"native_ns_per_thread_{key}"] = value
    out["native_workers_n"] = wide
    hip.hipModuleUnload(module)
    for d in (counter, x, y):
        hip.hipFree(d)
    say(f"native C++ kernels on several workers (median of {sz.rounds}, {SPREAD_GRID} x 256 axpy): "
        f"{med['w1']:.1f} ns per thread on 1 worker, {med['w2']:.1f} on 2, {med['wN']:.1f} on {wide} (N, the "
        f"CPUs here): {med['w1'] / max(med['w2'], 1e-9):.2f}x and {med['w1'] / max(med['wN'], 1e-9):.2f}x")


TREE_COMMIT = "TREE_COMMIT"   # a copy's commit, written where the copy was made
_COMMIT = re.compile(r"[0-9a-f]{7,40}")


def _git(root: str, *args: str) -> str:
    """``git -C root ARGS``'s output, stripped ('' when git fails or is missing)."""
    try:
        proc = subprocess.run(["git", "-C", root, *args], capture_output=True, text=True, check=False)
    except OSError:
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


def tree_commit(root: str) -> str:
    """The commit of the tree measured. Git's answer only when ``root`` is the top of its
    own work tree and no tracked file differs from that commit: a copy of the tree inside
    another repository, or one laid over an older commit's git metadata (a device machine's
    copy), would name a commit that is not the tree. Else the ``TREE_COMMIT`` file that
    such a copy carries (``git rev-parse --short HEAD > TREE_COMMIT`` where it was copied
    from), else git's answer with "-dirty" where it had one, else "unknown"."""
    top = _git(root, "rev-parse", "--show-toplevel")
    head = ""
    if top and os.path.realpath(top) == os.path.realpath(root):
        head = _git(root, "rev-parse", "--short", "HEAD")
        if _COMMIT.fullmatch(head) and not _git(root, "status", "--porcelain", "--untracked-files=no"):
            return head
    try:
        with open(os.path.join(root, TREE_COMMIT)) as f:
            stamped = f.read(100).strip()
    except OSError:
        stamped = ""
    if _COMMIT.fullmatch(stamped):
        return stamped
    return f"{head}-dirty" if _COMMIT.fullmatch(head) else "unknown"


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu": model or platform.processor(), "python": platform.python_version(),
            "commit": tree_commit(ROOT), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def run(argv: list[str] | None = None, say: Callable[[str], None] = print) -> dict[str, Any]:
    """Parse ``argv``, measure every figure, write the results file and return its content."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="fewer rounds and calls (a few minutes on 2 cores)")
    mode.add_argument("--tiny", action="store_true", help="the code path only, in seconds (CI)")
    ap.add_argument("--backend", default="sim")
    ap.add_argument("--rounds", type=int, help="override the mode's number of rounds")
    ap.add_argument("--only", choices=("native", "record", "gpu"),
                    help="only the native_* keys (sim), the record keys (call_ and launch_overhead_*), "
                         "or the GPU program keys (h200_*, --backend cuda)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results.json"))
    args = ap.parse_args(argv)
    sz = attrs.evolve(TINY if args.tiny else QUICK if args.quick else FULL)
    if args.rounds:
        sz.rounds = args.rounds
    be = load_backend(args.backend)
    if hasattr(be, "reset_device"):
        be.reset_device()
    mode_name = "tiny" if args.tiny else "quick" if args.quick else "full"
    meta = machine()   # the commit measured, read before the run
    say(f"backend {args.backend}; mode {mode_name}; python {sys.version.split()[0]}; commit {meta['commit']}")
    out: dict[str, Any] = {}
    if args.only == "gpu" and args.backend != "cuda":
        ap.error("--only gpu needs --backend cuda")
    if args.only in (None, "record"):
        bench_calls(be, sz, out, say)
        bench_launches(be, sz, out, say)
    if args.only is None:
        bench_snapshots(be, sz, out, say)
        bench_replay(be, sz, out, say, args.backend)
    if args.backend == "sim" and args.only in (None, "native"):
        bench_native(be, sz, out, say)
    if args.backend == "cuda" and args.only in (None, "gpu"):
        bench_gpu(be, sz, out, say, args.backend)
    if "native_workers_n" in out:   # what N of native_ns_per_thread_wN was here
        meta["native_workers_n"] = int(out.pop("native_workers_n"))
    out = {k: float(v) for k, v in out.items()}
    out["meta"] = {**meta, "backend": args.backend, "mode": mode_name,
                   "command": " ".join(["bench/bench.py", *(argv if argv is not None else sys.argv[1:])])}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2, sort_keys=True)
        f.write("\n")
    say(f"wrote {args.out}")
    return out


if __name__ == "__main__":
    run()
