"""Instructions per call, counted by valgrind's callgrind: figures the machine's load does
not move (BENCHMARKS.md), for comparing two trees side by side.

    python bench/instructions.py [--tree DIR] [WHAT ...]

WHAT is any of ``launch`` (capture's addition to a small sim launch, and the uncaptured
launch itself), ``call`` (one cheap call captured, then replayed) and ``append`` (the
archive writer's ``append_call`` alone); all three by default. ``floor`` (asked by name) sets
what capture adds to a cheap call and to a small launch beside what the least recorder
Python allows adds (``bench/floor.py``). ``--tree`` measures another
checkout of hrr (``git archive REV | tar -x -C DIR``, then ``ln -s plugins DIR/hrr_plugins``)
with this interpreter. Each figure is the main thread's instruction count of a run with
N2 calls less one with N1, over N2 - N1: start-up, imports and set-up cancel out.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
N1, N2 = 200, 2200


def workload(tree: str, what: str, n: int) -> None:
    """Run ``what`` ``n`` times in this process, with ``tree``'s hrr."""
    sys.path[:0] = [tree, os.path.join(tree, "bench")]
    import bench  # noqa: PLC0415 - the tree's own
    from hrr.backends import load_backend  # noqa: PLC0415
    be = load_backend("sim")
    be.reset_device()
    if what in ("launch-bare", "launch-captured", "launch-floor", "get-bare", "get-captured", "get-floor"):
        cap = bench.Capture(be, None)
        hip = {"bare": be.hip, "captured": cap.hip}.get(what.split("-")[1])
        if hip is None:
            from floor import MinimalRecorder  # noqa: PLC0415 - bench/floor.py (HERE is on the path)
            hip = MinimalRecorder(be.hip)
        if what.startswith("launch"):
            launcher = bench.Launcher(hip, be)
            launcher.run(50)
            launcher.run(n)
            launcher.close()
        else:
            bench.cheap_calls(hip, n)
        cap.close()
    elif what == "call":
        from hrr.replay.engine import ReplayOptions  # noqa: PLC0415
        from hrr.replay.run import replay_archive  # noqa: PLC0415
        cap = bench.Capture(be, None)
        bench.cheap_calls(cap.hip, n)
        cap.close()
        replay_archive(cap.root, backend="sim", options=ReplayOptions(strict=False), echo=lambda line: None)
        cap.remove()
    elif what == "append":
        from hrr.archive import open_process_writer  # noqa: PLC0415
        root = tempfile.mkdtemp(prefix="hrr-ir-")
        writer = open_process_writer(root, 1, {"backend": "sim"})
        num = writer.api_number("hipGetDevice")
        for _ in range(n):
            writer.append_call(num, [], 0, [0], {})
        writer.close()
        shutil.rmtree(root, ignore_errors=True)
    else:
        raise SystemExit(f"unknown workload {what!r}")


def count(tree: str, what: str, n: int) -> int:
    """The main thread's instructions for one run of ``what`` with ``n`` calls."""
    out = tempfile.mkdtemp(prefix="hrr-cg-")
    try:
        subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes",
                        f"--callgrind-out-file={out}/cg", sys.executable, __file__, "--run", what, str(n),
                        "--tree", tree], check=True, capture_output=True)
        with open(os.path.join(out, "cg-01")) as f:
            for line in f:
                if line.startswith(("summary:", "totals:")):
                    return int(line.split()[1])
        raise SystemExit("callgrind wrote no total")
    finally:
        shutil.rmtree(out, ignore_errors=True)


def per_call(tree: str, what: str) -> float:
    return (count(tree, what, N2) - count(tree, what, N1)) / (N2 - N1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", nargs="*", default=["launch", "call", "append"])
    ap.add_argument("--tree", default=os.path.dirname(HERE))
    ap.add_argument("--run", nargs=2, metavar=("WORKLOAD", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    tree = os.path.abspath(args.tree)
    if args.run:
        workload(tree, args.run[0], int(args.run[1]))
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    for what in args.what:
        if what == "launch":
            bare, captured = per_call(tree, "launch-bare"), per_call(tree, "launch-captured")
            print(f"small sim launch: uncaptured {bare:,.0f} instructions, capture adds {captured - bare:,.0f}")
        elif what == "floor":
            for name, label in (("get", "cheap call (hipGetDevice)"), ("launch", "small sim launch")):
                bare = per_call(tree, f"{name}-bare")
                captured, least = per_call(tree, f"{name}-captured") - bare, per_call(tree, f"{name}-floor") - bare
                print(f"{label}: capture adds {captured:,.0f} instructions, the least Python recorder "
                      f"(bench/floor.py) {least:,.0f}")
        elif what == "call":
            print(f"cheap call captured, then replayed: {per_call(tree, 'call'):,.0f} instructions")
        elif what == "append":
            print(f"append_call: {per_call(tree, 'append'):,.0f} instructions")
        else:
            raise SystemExit(f"unknown figure {what!r}")


if __name__ == "__main__":
    main()
