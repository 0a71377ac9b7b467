"""Count hung children: fork N times while another thread is always busy in sim HIP calls.

usage: python tests/capture/fork_hang_count.py N plain|capture [ARCHIVE]
(``plain``: the backend directly, as under ``hrr run``; ``capture``: recorded, with the
pinned_snapshot plugin). A child that has not exited after $FT seconds (default 5) counts
as hung and is killed. Prints "<mode>: H of N forks hung"."""
import os
import sys
import threading
import time

import attrs
from hrr.backends import load_backend
n, mode = int(sys.argv[1]), sys.argv[2]
be = load_backend("sim")
if mode == "capture":
    from hrr.capture.session import CaptureSession
    from hrr.config import config
    cfg = attrs.evolve(config(), backend="sim", content_mode="content")
    s = CaptureSession(be, cfg, sys.argv[3], plugins=["pinned_snapshot"])
    os.register_at_fork(after_in_child=s.after_fork_in_child)
    hip = s.hip
else:
    hip = be.hip
stop = threading.Event()


def busy():
    while not stop.is_set():
        err, p = hip.hipMalloc(64)
        hip.hipMemset(p, 1, 64)
        hip.hipFree(p)


t = threading.Thread(target=busy, daemon=True)
t.start()
hung = 0
for _ in range(n):
    pid = os.fork()
    if pid == 0:
        err, p = hip.hipMalloc(16)
        hip.hipFree(p)
        os._exit(0 if int(err) == 0 else 3)
    t0 = time.monotonic()
    st = None
    while time.monotonic() - t0 < float(os.environ.get("FT", "5")):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            st = os.waitstatus_to_exitcode(status)
            break
        time.sleep(0.002)
    if st is None:
        hung += 1
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    elif st != 0:
        print("child exit", st)
stop.set()
print(f"{mode}: {hung} of {n} forks hung")
