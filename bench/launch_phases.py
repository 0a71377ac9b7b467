"""Small sim launches, uncaptured and captured, alternated: the launch loop and the sync
timed apart, in CPU time of the thread or wall time, with the garbage collector on or off.
A diagnosis, not a figure of bench.py (BENCHMARKS.md says what it showed).

    python bench/launch_phases.py [--tree DIR] [--clock thread_time|perf_counter] [--no-gc] [--rounds N]

``--tree`` measures another checkout of hrr (``git archive REV | tar -x -C DIR``, then
``ln -s plugins DIR/hrr_plugins``) with this interpreter and that tree's bench.py.
"""
from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
N = 3000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", default=os.path.dirname(HERE))
    ap.add_argument("--clock", default="thread_time", choices=("thread_time", "perf_counter"))
    ap.add_argument("--no-gc", action="store_true")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    tree = os.path.abspath(args.tree)
    sys.path[:0] = [tree, os.path.join(tree, "bench")]
    spec = importlib.util.spec_from_file_location("tree_bench", os.path.join(tree, "bench", "bench.py"))
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    from hrr.backends import load_backend  # noqa: PLC0415 - the tree's own
    be = load_backend("sim")
    if args.no_gc:
        gc.disable()
    clock = getattr(time, args.clock)
    cap = bench.Capture(be, None)
    launchers = {"uncaptured": bench.Launcher(be.hip, be), "captured": bench.Launcher(cap.hip, be)}
    for launcher in launchers.values():
        launcher.run(5)
    got: dict[str, list[tuple[float, float]]] = {k: [] for k in launchers}
    for _ in range(args.rounds):
        for name, ln in launchers.items():
            hip, s = ln.hip, ln.stream
            t0 = clock()
            for _ in range(N):
                hip.hipModuleLaunchKernel(ln.fill, 1, 1, 1, 32, 1, 1, 0, s, ln.params, None)
            t1 = clock()
            hip.hipStreamSynchronize(s)
            got[name].append(((t1 - t0) / N * 1e6, (clock() - t1) / N * 1e6))
    for name, runs in got.items():
        loop, sync = sorted(r[0] for r in runs), sorted(r[1] for r in runs)
        print(f"{name}: launch loop min {loop[0]:.2f} median {loop[len(loop) // 2]:.2f} us; "
              f"sync min {sync[0]:.2f} us (per launch)")
    total = {name: min(a + b for a, b in runs) for name, runs in got.items()}
    print(f"added per launch (min of loop + sync): {total['captured'] - total['uncaptured']:.2f} us")
    for ln in launchers.values():
        ln.close()
    cap.close()
    cap.remove()


if __name__ == "__main__":
    main()
