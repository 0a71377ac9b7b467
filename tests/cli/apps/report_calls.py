"""report_calls.py MODE [N]: a loop of HIP calls (hipMemcpy host-to-device, hipMemset,
hipDeviceSynchronize) that writes, after each call has returned, the number of calls
returned so far to stdout with os.write (unbuffered), after a first line "pid <pid>".

MODE: "loop" runs until killed; "segv N" / "abort N" crash the process (a real
segfault, abort()) right after reporting the N-th call; "handler" installs the
program's own SIGTERM handler, which prints "app handler" and exits 0."""
import ctypes
import os
import signal
import sys

import numpy as np
from hip import hip

mode = sys.argv[1]
limit = int(sys.argv[2]) if len(sys.argv) > 2 else -1
if mode == "handler":
    def on_term(signum, frame):
        os.write(1, b"app handler\n")
        sys.exit(0)
    signal.signal(signal.SIGTERM, on_term)

err, dev = hip.hipMalloc(256)
assert err == 0, err
os.write(1, b"pid %d\n" % os.getpid())
H2D = hip.hipMemcpyKind.hipMemcpyHostToDevice
buf = np.zeros(256, np.uint8)
n = 0
while True:
    step = n % 3
    if step == 0:
        buf[:8] = np.frombuffer(n.to_bytes(8, "little"), np.uint8)
        err, = hip.hipMemcpy(dev, buf, 256, H2D)
    elif step == 1:
        err, = hip.hipMemset(dev, n & 0xFF, 256)
    else:
        err, = hip.hipDeviceSynchronize()
    assert err == 0, err
    n += 1
    os.write(1, b"%d\n" % n)
    if n == limit:
        if mode == "segv":
            ctypes.string_at(0)
        elif mode == "abort":
            os.abort()
