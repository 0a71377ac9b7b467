"""What capture adds to one call, counted and timed in CPU time (issue 11's capture figures).

    python bench/capture_calls.py [--rounds 7] [--plugins a,b] [-v]

For a cheap call (hipGetDevice) and a small launch (fill_u32, no pinned argument) on the
sim, uncaptured and captured (every installed plugin unless --plugins): the Python-level
functions and C functions entered per call beyond the uncaptured call's (sys.setprofile),
and the added time per call as the median of alternated rounds of ``time.process_time``
(CPU time: steadier than wall time on a loaded machine). ``-v`` lists the functions.
Prints only; bench/bench.py writes bench/results.json.
"""
from __future__ import annotations

import argparse
import collections
import os
import shutil
import statistics
import sys
import time
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from bench import Capture, Launcher  # noqa: E402

from hrr.backends import load_backend  # noqa: E402


def entered(fn: Callable[[], Any], n: int = 10) -> collections.Counter:
    """(kind, function) -> times entered per call of ``fn``."""
    seen: collections.Counter = collections.Counter()

    def prof(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            co = frame.f_code
            seen[("py", f"{co.co_name} ({os.path.basename(co.co_filename)}:{co.co_firstlineno})")] += 1
        elif event == "c_call":
            seen[("c", getattr(arg, "__qualname__", repr(arg)))] += 1
    sys.setprofile(prof)
    try:
        for _ in range(n):
            fn()
    finally:
        sys.setprofile(None)
    return collections.Counter({k: v / n for k, v in seen.items()})


def cpu_per_call(fn: Callable[[], Any], n: int, after: Callable[[], Any] = lambda: None) -> float:
    t0 = time.process_time()
    for _ in range(n):
        fn()
    after()
    return (time.process_time() - t0) / n * 1e6


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--plugins", help="comma list (default: every installed plugin)")
    ap.add_argument("-v", action="store_true", help="list the functions entered")
    args = ap.parse_args(argv)
    be = load_backend("sim")
    be.reset_device()
    cap = Capture(be, [p for p in args.plugins.split(",") if p] if args.plugins is not None else None)
    bare_l, cap_l = Launcher(be.hip, be), Launcher(cap.hip, be)
    bare_l.run(3)
    cap_l.run(3)

    def launch(ln: Launcher) -> Callable[[], Any]:
        return lambda: ln.hip.hipModuleLaunchKernel(ln.fill, 1, 1, 1, 32, 1, 1, 0, ln.stream, ln.params, None)

    cases = [("cheap call", be.hip.hipGetDevice, cap.hip.hipGetDevice, 20000, lambda: None, lambda: None),
             ("small launch", launch(bare_l), launch(cap_l), 3000,
              lambda: be.hip.hipStreamSynchronize(bare_l.stream), lambda: cap.hip.hipStreamSynchronize(cap_l.stream))]
    for label, bare, captured, n, sync_bare, sync_cap in cases:
        diff = entered(captured)
        diff.subtract(entered(bare))
        py = sum(v for k, v in diff.items() if k[0] == "py")
        c = sum(v for k, v in diff.items() if k[0] == "c")
        print(f"{label}: +{py:.1f} Python functions, +{c:.1f} C functions entered per call")
        if args.v:
            for (kind, name), v in sorted(diff.items(), key=lambda kv: -kv[1]):
                if v:
                    print(f"    {v:+5.1f} {kind} {name}")
        got: dict[str, list[float]] = {"bare": [], "captured": []}
        for _ in range(args.rounds):
            got["bare"].append(cpu_per_call(bare, n, sync_bare))
            got["captured"].append(cpu_per_call(captured, n, sync_cap))
        b, k = statistics.median(got["bare"]), statistics.median(got["captured"])
        print(f"{label}: uncaptured {b:.2f} us, captured {k:.2f} us, +{k - b:.2f} us per call "
              f"(CPU time, median of {args.rounds} alternated rounds of {n})")
    bare_l.close()
    cap_l.close()
    cap.close()
    shutil.rmtree(cap.root, ignore_errors=True)


if __name__ == "__main__":
    main()
