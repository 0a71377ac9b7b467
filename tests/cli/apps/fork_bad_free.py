"""A parent that uses the device, then forks N children (argv[1], default 20) that each
call hipFree on a pointer no allocation has and exit. On a GPU a child of a process that
had initialised the runtime gets hipErrorNotInitialized from every call; on the sim it
has its own copy of the device and gets hipErrorInvalidValue. Prints each child's error."""
import os
import sys

from hip import hip

n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
err, p = hip.hipMalloc(64)
assert err == 0, err
pids = []
for i in range(n):
    pid = os.fork()
    if pid == 0:
        (child_err,) = hip.hipFree(0x1234_5678 + 64 * i)
        print(f"child {os.getpid()}: {child_err.name}", flush=True)
        sys.exit(0)
    pids.append(pid)
for pid in pids:
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, status
assert hip.hipFree(p)[0] == 0
print(f"PIDS parent={os.getpid()} children={len(pids)}")
