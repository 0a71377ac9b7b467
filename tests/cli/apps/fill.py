"""fill.py SIZE COUNT [--die] [--sigxfsz-default]: COUNT host-to-device copies of SIZE
distinct bytes, each read back and checked (so the archive's blobs grow by about SIZE per
step), then one kernel-free hipMemset per step. Writes "step <n>" after each step and
"fill: ok" at the end; with --die the process then SIGKILLs itself instead of exiting.
--sigxfsz-default: the program puts SIGXFSZ back to its default action (death), which
Python itself ignores."""
import os
import signal
import sys

if "--sigxfsz-default" in sys.argv:
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)

import numpy as np
from hip import hip

size, count = int(sys.argv[1]), int(sys.argv[2])
H2D, D2H = hip.hipMemcpyKind.hipMemcpyHostToDevice, hip.hipMemcpyKind.hipMemcpyDeviceToHost
err, dev = hip.hipMalloc(size)
assert err == 0, err
rng = np.random.default_rng(9)
for n in range(count):
    src = rng.integers(0, 256, size, dtype=np.uint8)
    out = np.zeros(size, np.uint8)
    err, = hip.hipMemcpy(dev, src, size, H2D)
    assert err == 0, f"hipMemcpy H2D returned {err!r}"
    err, = hip.hipMemcpy(out, dev, size, D2H)
    assert err == 0, f"hipMemcpy D2H returned {err!r}"
    assert (out == src).all(), "wrong bytes back"
    assert hip.hipMemset(dev, n & 0xFF, 16)[0] == 0
    os.write(1, b"step %d\n" % n)
assert hip.hipFree(dev)[0] == 0
print("fill: ok", flush=True)
if "--die" in sys.argv:
    os.kill(os.getpid(), signal.SIGKILL)
