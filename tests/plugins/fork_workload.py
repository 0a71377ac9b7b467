"""Run as a script: fork repeatedly while another thread snapshots a 32 MiB pinned
allocation; every child takes the tracking lock (a failing hipFree) and exits.
Prints one line per child: "<pid> <exit status> <seconds>"."""
from __future__ import annotations

import os
import sys
import threading
import time

import attrs
import numpy as np

from hrr.backends import load_backend
from hrr.capture.session import CaptureSession
from hrr.config import config

root, forks = sys.argv[1], int(sys.argv[2])
be = load_backend("sim")
cfg = attrs.evolve(config(), backend="sim", content_mode="content")
session = CaptureSession(be, cfg, root, plugins=["pinned_snapshot"])
os.register_at_fork(after_in_child=session.after_fork_in_child)
hip = session.hip
SIZE = 32 * 1024 * 1024
err, p = hip.hipHostMalloc(SIZE, 0)
assert err == 0
buf = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_uint8 * SIZE).from_address(int(p)))
buf[:] = np.random.default_rng(5).integers(0, 256, SIZE, dtype=np.uint8)
plugin = session.ctx.shared["pinned_snapshot"]
stop = threading.Event()
snapshots = 0


def snapper():
    global snapshots
    i = 0
    while not stop.is_set():
        buf[(i * 4099) % SIZE] ^= 1
        plugin.snapshot(session.ctx, [int(p) + 64], 0, None)
        snapshots += 1
        i += 1


t = threading.Thread(target=snapper)
t.start()
while snapshots == 0:
    time.sleep(0.001)
for _ in range(forks):
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        # The tracking lock is taken by the free watcher before the (failing) call.
        err = hip.hipFree(0xDEAD0000)[0]
        os._exit(0 if int(err) != 0 else 3)
    status = None
    while time.monotonic() - t0 < 10:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = os.waitstatus_to_exitcode(st)
            break
        time.sleep(0.005)
    if status is None:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    print(pid, status, round(time.monotonic() - t0, 3), flush=True)
    time.sleep(0.01)
stop.set()
t.join()
session.close()
print("parent", os.getpid(), snapshots, flush=True)
