"""A parent that records a step and forks a child that loads its own module and records
its own step (nothing of the parent's HIP state is used in the child)."""
import os
import sys

from appkit import add_step, check, load_add
from hip import hip

check(hip.hipInit(0))
module, fn = load_add()
add_step(fn, 128, 1)
pid = os.fork()
if pid == 0:
    code = 0
    try:
        _, child_fn = load_add()
        add_step(child_fn, 64, 2)
    except BaseException as exc:  # noqa: BLE001
        print(f"fork child failed: {exc!r}", file=sys.stderr)
        code = 1
    sys.exit(code)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0, status
add_step(fn, 32, 3)
print(f"PIDS parent={os.getpid()} fork={pid}")
