"""Instructions per call, counted by valgrind's callgrind: figures the machine's load does
not move (BENCHMARKS.md), for comparing two trees side by side.

    python bench/instructions.py [--tree DIR] [WHAT ...]

WHAT is any of ``launch`` (capture's addition to a small sim launch, and the uncaptured
launch itself), ``call`` (one cheap call captured, then replayed) and ``append`` (the
archive writer's ``append_call`` alone); all three by default. ``floor`` (asked by name) sets
what capture adds to a cheap call and to a small launch beside what the least recorder
Python allows adds (``bench/floor.py``); ``replay`` splits a replayed small launch (its
backend launch a no-op) into reading, the engine's loop and the launch runner; ``pieces``
counts a captured launch's encoder, kernelParams read, pointer-word scan and append alone. ``--tree`` measures another
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
from typing import Any

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
    elif what.startswith("replay-"):
        replay_parts(bench, be, what, n)
    elif what.startswith("piece-"):
        launch_pieces(bench, be, what, n)
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


def replay_parts(bench: Any, be: Any, what: str, n: int) -> None:
    """``n`` small launches captured, then (``replay-read``) their records read as replay
    reads them, or replayed with the backend's launch a no-op (``replay-runner``), or with
    every launch record accepted untouched (``replay-engine``: the engine's loop alone)."""
    from hrr.archive import Limits, open_archive  # noqa: PLC0415
    from hrr.replay import engine  # noqa: PLC0415
    from hrr.replay.run import fewer_collections, replay_archive  # noqa: PLC0415
    cap = bench.Capture(be, None)
    launcher = bench.Launcher(cap.hip, be)
    launcher.run(n)
    launcher.close()
    cap.close()

    def no_launch(*args: Any) -> tuple:
        return (0,)
    no_launch.stands_for = be.hip.hipModuleLaunchKernel  # type: ignore[attr-defined]
    be.launch_kernargs = no_launch
    if what == "replay-read":
        with fewer_collections():
            sum(1 for _ in engine._raw_events(open_archive(cap.root, Limits()).processes[0]))
    elif what in ("replay-runner", "replay-engine"):
        if what == "replay-engine":
            engine.launch_runner = lambda *a, **k: (lambda v: True)
        replay_archive(cap.root, backend="sim", options=engine.ReplayOptions(strict=False), echo=lambda line: None)
    cap.remove()


def launch_pieces(bench: Any, be: Any, what: str, n: int) -> None:
    """One piece of a captured small launch, ``n`` times alone: ``piece-none`` (nothing),
    ``piece-encode`` (the launch encoder), ``piece-read`` (kernelParams to bytes),
    ``piece-scan`` (the pointer-word scan), ``piece-append`` (``append_call`` with the record)."""
    from hrr.hiptypes.kernargs import pack_kernel_args  # noqa: PLC0415
    cap = bench.Capture(be, None)
    launcher = bench.Launcher(cap.hip, be)
    launcher.run(20)
    wrapper = cap.hip.hipModuleLaunchKernel
    encode, num = wrapper.__globals__["_launch"], wrapper.__globals__["_num"]
    args = (launcher.fill, 1, 1, 1, 32, 1, 1, 0, launcher.stream, launcher.params, None)
    wire_launch, _, kernargs = encode(args)
    session, writer = cap.session, cap.session.writer
    _, layout, offsets = session.function_info(launcher.fill)
    wire = [int(launcher.fill), 1, 1, 1, 32, 1, 1, 0, int(launcher.stream), None, None]
    for _ in range(n):
        if what == "piece-encode":
            encode(args)
        elif what == "piece-read":
            pack_kernel_args(layout, launcher.params, None)
        elif what == "piece-scan":
            session.scan_pointers(offsets, kernargs)
        elif what == "piece-append":
            writer.append_call(num, wire, 0, [], {"launch": wire_launch})
    launcher.close()
    cap.close()


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
        elif what == "replay":
            read, loop, whole = (per_call(tree, f"replay-{w}") - per_call(tree, "replay-none")
                                 for w in ("read", "engine", "runner"))
            print(f"replayed small sim launch (its backend launch a no-op): reading {read:,.0f} instructions, "
                  f"the engine's loop {loop - read:,.0f}, the launch runner {whole - loop:,.0f}")
        elif what == "pieces":
            none = per_call(tree, "piece-none")
            print("a captured small sim launch's pieces, each alone: " + ", ".join(
                f"{w} {per_call(tree, f'piece-{w}') - none:,.0f}" for w in ("encode", "read", "scan", "append")))
        elif what == "call":
            print(f"cheap call captured, then replayed: {per_call(tree, 'call'):,.0f} instructions")
        elif what == "append":
            print(f"append_call: {per_call(tree, 'append'):,.0f} instructions")
        else:
            raise SystemExit(f"unknown figure {what!r}")


if __name__ == "__main__":
    main()
