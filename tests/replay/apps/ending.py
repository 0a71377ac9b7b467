"""ending.py MODE: a program whose recording ends badly, for `hrr capture` tests.

none  -- killed (SIGKILL) before its first HIP call: no records, archive left open
segv  -- its first HIP call crashes the process (SIGSEGV inside hipModuleLoadData)
wait  -- four calls (one device-to-host copy), prints READY, then blocks until killed
"""
import os
import signal
import sys

import numpy as np
from hip import hip

mode = sys.argv[1]
if mode == "none":
    os.kill(os.getpid(), signal.SIGKILL)
elif mode == "segv":
    hip.hipModuleLoadData(8)  # an image "at address 8": the runtime reads it and faults
elif mode == "wait":
    assert hip.hipInit(0)[0] == 0
    err, d = hip.hipMalloc(64)
    assert hip.hipMemset(d, 7, 64)[0] == 0
    out = np.zeros(64, np.uint8)
    assert hip.hipMemcpy(out, d, 64, hip.hipMemcpyKind.hipMemcpyDeviceToHost)[0] == 0
    assert (out == 7).all()
    print("READY", flush=True)
    sys.stdin.read()  # until the test kills it
sys.exit(3)  # not reached in any mode
