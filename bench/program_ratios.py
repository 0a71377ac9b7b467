"""A whole outside program timed three ways under hrr: run, capture, replay.

    python bench/program_ratios.py [--backend sim] [--rounds 5] [--warmup 1] [--python PY]
        [--content] [--strict] [--float-tolerance X] [--out FILE.json] -- PROGRAM [ARGS...]

Per round, each step a subprocess in PROGRAM's own folder, wall clock (``time.perf_counter``)
around it:

  run      hrr run --backend B -- PY PROGRAM ARGS            the program uncaptured on hrr's backend
  capture  hrr capture --backend B -o DIR -- PY PROGRAM ARGS  into a fresh DIR (``--content`` passes)
  replay   hrr replay --backend B DIR                        that round's archive (``--strict``,
                                                             ``--float-tolerance`` pass)

hrr is ``PY -m hrr.cli.main`` with this tree first on PYTHONPATH, so the hrr timed is the one
meta.commit names. These are whole processes: Python's start-up, the imports and the backend's
context creation are in all three; where the program compiles its kernels with hiprtc, replay
loads the recorded code object instead. The steps alternate in every round; the warm-up round(s)
first are not counted. Prints a line per round and a summary, and writes ``--out``: run_s,
capture_s, replay_s (medians), capture_ratio (capture / run), replay_ratio (replay / run) and
``meta``. A step that exits non-zero stops the benchmark (exit 1) with the step's name, its exit
code and the last lines of its stderr.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench  # noqa: E402

ROOT = os.path.realpath(bench.ROOT)
STEPS = ("run", "capture", "replay")
#: stderr lines a failed step's message quotes
TAIL = 15


class StepFailed(RuntimeError):
    """A step exited with a non-zero status."""


def timed_step(name: str, cmd: list[str], cwd: str, env: dict[str, str]) -> float:
    """Seconds ``cmd`` ran; StepFailed if it exited non-zero."""
    done: list[subprocess.CompletedProcess[bytes]] = []
    seconds = bench.timed(lambda: done.append(subprocess.run(cmd, cwd=cwd, env=env, capture_output=True)))
    if done[0].returncode != 0:
        tail = done[0].stderr.decode(errors="replace").rstrip().splitlines()[-TAIL:]
        raise StepFailed(f"step {name!r} exited with status {done[0].returncode}: {' '.join(cmd)}\n"
                         f"last lines of its stderr:\n" + "\n".join(f"  {ln}" for ln in tail))
    return seconds


def parse(argv: list[str]) -> argparse.Namespace:
    """Options before ``--``, PROGRAM and its arguments after it."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="sim")
    ap.add_argument("--rounds", type=int, default=5, help="rounds counted (default 5)")
    ap.add_argument("--warmup", type=int, default=1, help="rounds first, not counted (default 1)")
    ap.add_argument("--python", default=sys.executable, help="interpreter of hrr and the program")
    ap.add_argument("--content", action="store_true", help="capture with --content")
    ap.add_argument("--strict", action="store_true", help="replay with --strict")
    ap.add_argument("--float-tolerance", type=float, help="replay with --float-tolerance X")
    ap.add_argument("--out", help="write the figures to this JSON file")
    cut = argv.index("--") if "--" in argv else len(argv)
    args = ap.parse_args(argv[:cut])
    if not argv[cut + 1:]:
        ap.error("no program: put it and its arguments after --")
    if args.rounds < 1 or args.warmup < 0:
        ap.error("--rounds must be at least 1 and --warmup at least 0")
    args.program, args.args = os.path.abspath(argv[cut + 1]), argv[cut + 2:]
    return args


def run(argv: list[str] | None = None, say: Callable[[str], None] = print) -> dict[str, Any]:
    """Measure, print, write ``--out`` if given and return the figures."""
    args = parse(sys.argv[1:] if argv is None else argv)
    meta = bench.machine()   # the commit measured, read before the run
    py, cwd = args.python, os.path.dirname(args.program)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)}
    hrr, program = [py, "-m", "hrr.cli.main"], [py, args.program, *args.args]
    replay_opts = (["--strict"] if args.strict else []) + (
        ["--float-tolerance", str(args.float_tolerance)] if args.float_tolerance is not None else [])
    say(f"backend {args.backend}; {args.rounds} rounds after {args.warmup} warm-up; python {py}; "
        f"commit {meta['commit']}; {args.program}")
    got: dict[str, list[float]] = {s: [] for s in STEPS}
    scratch = tempfile.mkdtemp(prefix="hrr-progbench-")
    try:
        for r in range(args.warmup + args.rounds):
            archive = os.path.join(scratch, f"round-{r}")
            cmds = {"run": [*hrr, "run", "--backend", args.backend, "--", *program],
                    "capture": [*hrr, "capture", "--backend", args.backend, "-o", archive,
                                *(["--content"] if args.content else []), "--", *program],
                    "replay": [*hrr, "replay", "--backend", args.backend, *replay_opts, archive]}
            # one round of bench.alternate: each step once, in order, from a collected heap
            one = bench.alternate({s: functools.partial(timed_step, s, c, cwd, env) for s, c in cmds.items()}, 1)
            shutil.rmtree(archive, ignore_errors=True)
            counted = r >= args.warmup
            label = f"round {r - args.warmup + 1}/{args.rounds}" if counted else "warm-up (not counted)"
            say(f"{label}: " + ", ".join(f"{s} {one[s]:.3f} s" for s in STEPS))
            for s in STEPS:
                if counted:
                    got[s].append(one[s])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    med = {f"{s}_s": statistics.median(got[s]) for s in STEPS}
    out: dict[str, Any] = {**med, "capture_ratio": med["capture_s"] / med["run_s"],
                           "replay_ratio": med["replay_s"] / med["run_s"]}
    version = subprocess.run([py, "-c", "import platform; print(platform.python_version())"],
                             capture_output=True, text=True).stdout.strip()
    out["meta"] = {**meta, "python": py, "python_version": version, "backend": args.backend,
                   "rounds": args.rounds, "warmup": args.warmup, "program": args.program, "args": args.args,
                   "command": " ".join(["bench/program_ratios.py", *(sys.argv[1:] if argv is None else argv)])}
    say(f"medians of {args.rounds}: run {med['run_s']:.3f} s, capture {med['capture_s']:.3f} s "
        f"({out['capture_ratio']:.2f}x run), replay {med['replay_s']:.3f} s ({out['replay_ratio']:.2f}x run)")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=2, sort_keys=True)
            f.write("\n")
        say(f"wrote {args.out}")
    return out


def main() -> None:
    try:
        run()
    except StepFailed as exc:
        print(f"program_ratios: {exc}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
