"""``ProcessWriter.append_call`` alone, through the native and the Python record paths.

    python bench/append_call.py [--calls 50000] [--rounds 5]

Appends a cheap call's record (``hipGetDevice``) and a small launch's (``extra.launch`` as
capture writes it for ``fill_u32``) in a loop and prints the best round's µs per call for
each path: what the writer costs, without the wrapper, the encoders or the backend.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from hrr.archive import open_process_writer  # noqa: E402

KERNARGS = bytes(5) + b"@" + bytes(2) + b"\x01" + bytes(3) + b"\x10" + bytes(3)
LAUNCH = ["fill_u32", [1, 1, 1], [32, 1, 1], KERNARGS, [[0, 1 << 46, 0]]]


def per_call(native: bool, what: str, calls: int, rounds: int) -> tuple[float, str]:
    """The best round's µs per append_call, and the path that recorded."""
    root = tempfile.mkdtemp(prefix="hrr-bench-append-")
    try:
        w = open_process_writer(root, 1, {"backend": "sim"}, max_bytes=None, warn_bytes=None, native=native)
        if what == "call":
            args: tuple = (w.api_number("hipGetDevice"), [], 0, [0], {})
        else:
            args = (w.api_number("hipModuleLaunchKernel"), [1234567, 1, 1, 1, 32, 1, 1, 0, 7654321, None, None],
                    0, [], {"launch": LAUNCH})
        append, best = w.append_call, float("inf")
        for _ in range(rounds):
            t0 = time.perf_counter()
            for _ in range(calls):
                append(*args)
            best = min(best, time.perf_counter() - t0)
        w.close()
        return best / calls * 1e6, w.RECORDER
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=50_000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    for what in ("call", "launch"):
        for native in (True, False):
            us, path = per_call(native, what, args.calls, args.rounds)
            print(f"append_call, a {'cheap call' if what == 'call' else 'small launch'}'s record, {path} path: "
                  f"{us:.3f} us (best of {args.rounds} rounds of {args.calls})")


if __name__ == "__main__":
    main()
