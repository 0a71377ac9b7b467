"""Time-to-stop and peak memory of a template bomb compiled by the sim's native toolchain.

    python bench/compile_bomb.py [SECONDS]

SECONDS replaces the compile's time limit (default: the toolchain's own). Prints how long the
compile took to stop, whether it succeeded, the peak RSS of the compiler's processes (sampled
every 0.2 s) and the end of the compile log. docs/threat-model.md quotes its output.
"""
from __future__ import annotations

import os
import sys
import threading
import time

from hrr.backends.sim.native import toolchain

BOMB = b"""
template <int N, long M> struct B { static constexpr long v = B<N - 1, 2 * M>::v + B<N - 1, 2 * M + 1>::v; };
template <long M> struct B<0, M> { static constexpr long v = 1; };
constexpr long V = B<40, 0>::v;
extern "C" __global__ void k(int *x) { x[0] = V; }
"""


def _compiler_rss_kib() -> int:
    total = 0
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"hrr-cc-" not in f.read():
                    continue
            with open(f"/proc/{pid}/status") as f:
                total += sum(int(line.split()[1]) for line in f if line.startswith("VmRSS"))
        except (OSError, ValueError):
            continue
    return total


def main() -> None:
    if len(sys.argv) > 1 and hasattr(toolchain, "COMPILE_SECONDS"):
        toolchain.COMPILE_SECONDS = float(sys.argv[1])
    peak = [0]
    start = time.monotonic()

    def watch() -> None:
        while True:
            peak[0] = max(peak[0], _compiler_rss_kib())
            time.sleep(0.2)
    threading.Thread(target=watch, daemon=True).start()
    result = toolchain.compile_program([toolchain.SourceUnit("bomb.hip", BOMB)], [])
    print(f"stopped after {time.monotonic() - start:.1f} s, ok={result.ok}, "
          f"peak compiler RSS {peak[0] // 1024} MB")
    print(result.log[-300:])


if __name__ == "__main__":
    main()
