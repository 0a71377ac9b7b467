"""Where a replayed kernel launch's time goes on the cuda backend, unprofiled (a GPU run).

    python bench/replay_parts.py

Per launch: a replay of 50 000 small launches less a replay of none; reading the records
alone; the replay with the backend's launch taken out (the engine and the launch runner);
``launch_kernargs`` and cuda-bindings' ``cuLaunchKernel`` alone; and the program's own
``hipModuleLaunchKernel``. Medians of three runs (docs/gpu-results.md). The records are read
with the collector's young-generation threshold replay uses (``fewer_collections``): read
without it, they took about 2.5 us more each on the development machine.
"""
from __future__ import annotations

import os
import shutil
import statistics
import sys
import time
from typing import Any, Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import bench  # noqa: E402
from hrr.archive import Limits, open_archive  # noqa: E402
from hrr.backends import cuda, load_backend  # noqa: E402
from hrr.backends.cuda import modules  # noqa: E402
from hrr.replay.engine import ReplayOptions, _raw_events  # noqa: E402
from hrr.replay.run import fewer_collections, replay_archive  # noqa: E402

N = 50_000


def median_of_three(fn: Callable[[], float]) -> float:
    return statistics.median(fn() for _ in range(3))


def per_call(fn: Callable[[], Any], n: int = N) -> float:
    """Microseconds per call of ``fn`` over ``n`` calls."""
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n * 1e6


def main() -> None:
    be = load_backend("cuda")
    roots = {}
    for n in (0, N):
        cap = bench.Capture(be, None)
        launcher = bench.Launcher(cap.hip, be)
        launcher.run(n)
        launcher.close()
        cap.close()
        roots[n] = cap.root

    def replay(n: int) -> float:
        t = time.perf_counter()
        replay_archive(roots[n], backend="cuda", options=ReplayOptions(strict=False), echo=lambda line: None)
        return time.perf_counter() - t

    def read(n: int) -> float:
        proc = open_archive(roots[n], Limits()).processes[0]
        with fewer_collections():   # as replay reads them
            t = time.perf_counter()
            sum(1 for _ in _raw_events(proc))
            return time.perf_counter() - t

    def per_launch(fn: Callable[[int], float]) -> float:
        return (median_of_three(lambda: fn(N)) - median_of_three(lambda: fn(0))) / N * 1e6

    whole, reading = per_launch(replay), per_launch(read)
    real = cuda.launch_kernargs

    def no_launch(*args: Any) -> tuple:
        return (0,)
    no_launch.stands_for = cuda.hip.hipModuleLaunchKernel  # type: ignore[attr-defined]
    cuda.launch_kernargs = no_launch
    try:
        without_launch = per_launch(replay)
    finally:
        cuda.launch_kernargs = real
    launcher = bench.Launcher(be.hip, be)
    kernargs = int(launcher.dev).to_bytes(8, "little") + (1).to_bytes(4, "little") + (16).to_bytes(4, "little")
    direct = per_call(lambda: real(launcher.fill, (1, 1, 1), (32, 1, 1), 0, launcher.stream, kernargs))
    be.hip.hipStreamSynchronize(launcher.stream)
    drv, fh, stream = modules.S.drv, int(launcher.fill), int(launcher.stream)
    buf = modules._LaunchBuffer(len(kernargs))   # what launch_packed hands the driver
    buf.view[:len(kernargs)] = kernargs
    buf.size.value = len(kernargs)
    extra = buf.extra
    alone = per_call(lambda: drv.cuLaunchKernel(fh, 1, 1, 1, 32, 1, 1, 0, stream, None, extra))
    be.hip.hipStreamSynchronize(launcher.stream)
    program = per_call(lambda: be.hip.hipModuleLaunchKernel(launcher.fill, 1, 1, 1, 32, 1, 1, 0, launcher.stream,
                                                            launcher.params, None))
    be.hip.hipStreamSynchronize(launcher.stream)
    launcher.close()
    print(f"replay per launch {whole:.2f} us: reading {reading:.2f}, engine and launch runner "
          f"{without_launch - reading:.2f}, launch_kernargs {direct:.2f} (cuLaunchKernel alone {alone:.2f}); "
          f"the program's hipModuleLaunchKernel {program:.2f}")
    for root in roots.values():
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
