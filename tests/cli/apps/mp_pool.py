"""mp_pool.py METHOD END: a multiprocessing Pool of 2 workers (start method METHOD) runs 8
tasks that each make 4 HIP calls and check the result. END "terminate" leaves the pool by
`with` (idle workers get SIGTERM), "join" by close() + join() (workers return from
Process._bootstrap and leave through os._exit). Prints "CALLS <json {pid: calls}>",
"WORKERS <pids>" and "MAIN <pid>"."""
import json
import multiprocessing
import os
import sys
from collections import Counter

import numpy as np


def work(i):
    from hip import hip
    h2d, d2h = hip.hipMemcpyKind.hipMemcpyHostToDevice, hip.hipMemcpyKind.hipMemcpyDeviceToHost
    err, dev = hip.hipMalloc(64)
    assert err == 0, err
    src, out = np.full(16, i, np.uint32), np.zeros(16, np.uint32)
    assert hip.hipMemcpy(dev, src, 64, h2d)[0] == 0
    assert hip.hipMemcpy(out, dev, 64, d2h)[0] == 0
    assert hip.hipFree(dev)[0] == 0
    assert (out == i).all()
    return os.getpid(), 4


if __name__ == "__main__":
    method, end = sys.argv[1], sys.argv[2]
    ctx = multiprocessing.get_context(method)
    calls = Counter()
    if end == "terminate":
        with ctx.Pool(2) as pool:
            workers = [p.pid for p in pool._pool]
            results = pool.map(work, range(8))
    else:
        pool = ctx.Pool(2)
        workers = [p.pid for p in pool._pool]
        results = pool.map(work, range(8))
        pool.close()
        pool.join()
    for pid, n in results:
        calls[pid] += n
    print("CALLS " + json.dumps(calls))
    print("WORKERS " + " ".join(map(str, workers)))
    print(f"MAIN {os.getpid()}")
