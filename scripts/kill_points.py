"""Measure what a SIGKILL at a random instant loses: calls that returned to the program
but are missing from the archive (issue 8, "Nothing lost").

    .venv/bin/python scripts/kill_points.py [--kills 20] [--seed 8] [--signal KILL]

Each run captures a loop of HIP calls (hipMemcpy host-to-device with a fresh 256-byte
payload, hipMemset, hipDeviceSynchronize) under `hrr capture`; the program writes the
number of calls that have returned to its stdout (a pipe) after each one, with os.write. The script
kills the program at a random time 0.2-1.5 s into the loop, reads what it reported, and
counts the loop's calls the archive holds (read as left, before any repair).
"""
from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

APP = r"""
import os, sys
import numpy as np
from hip import hip
fd = 1   # stdout: a pipe to the script
err, d = hip.hipMalloc(256)
os.write(fd, b"pid %d\n" % os.getpid())
H2D = hip.hipMemcpyKind.hipMemcpyHostToDevice
buf = np.zeros(256, np.uint8)
n = 0
while True:
    buf[:8] = np.frombuffer(n.to_bytes(8, "little"), np.uint8)
    hip.hipMemcpy(d, buf, 256, H2D); n += 1; os.write(fd, b"%d\n" % n)
    hip.hipMemset(d, n & 0xFF, 256); n += 1; os.write(fd, b"%d\n" % n)
    hip.hipDeviceSynchronize(); n += 1; os.write(fd, b"%d\n" % n)
"""
LOOP_APIS = {"hipMemcpy", "hipMemset", "hipDeviceSynchronize"}


def one_kill(workdir: str, delay: float, signum: int) -> tuple[int, int]:
    """(calls the program reported as returned, loop calls found in the archive)."""
    from hrr.archive import Record, open_archive

    root = os.path.join(workdir, "archive")
    app = os.path.join(workdir, "app.py")
    with open(app, "w") as f:
        f.write(APP)
    proc = subprocess.Popen([sys.executable, "-m", "hrr.cli.main", "capture", "-o", root, "--plugins", "privacy",
                             "--content", "--", sys.executable, app],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    reader = proc.stdout
    pid = int(reader.readline().split()[1])
    # Read the program's count while it runs: a pipe left unread fills (64 KiB, some 12,800
    # counts) and the program then blocks in write(), so every kill would land at that same
    # call, never inside one.
    last = [0]

    def drain() -> None:
        for line in reader:    # everything the program wrote, up to its death
            last[0] = int(line)
    drainer = threading.Thread(target=drain, daemon=True)
    drainer.start()
    time.sleep(delay)
    os.kill(pid, signum)
    drainer.join()
    reported = last[0]
    reader.close()
    proc.wait()
    with open_archive(root) as archive:
        (p,) = archive.processes
        present = sum(1 for r in p.events() if isinstance(r, Record) and r.value[2] in LOOP_APIS)
    return reported, present


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--signal", default="KILL", help="signal name without SIG (default KILL)")
    args = parser.parse_args()
    signum = getattr(signal, f"SIG{args.signal}")
    rng = random.Random(args.seed)
    lost = []
    for i in range(args.kills):
        delay = rng.uniform(0.2, 1.5)
        with tempfile.TemporaryDirectory(prefix="hrr-kill-") as tmp:
            reported, present = one_kill(tmp, delay, signum)
        lost.append(max(0, reported - present))
        print(f"kill {i + 1:2d} at {delay:.3f}s: {reported} calls returned, {present} in the archive, "
              f"{lost[-1]} lost", flush=True)
    print(f"SIG{args.signal} x {args.kills}: calls lost per kill: median {statistics.median(lost)}, "
          f"max {max(lost)}, total {sum(lost)}")


if __name__ == "__main__":
    main()
