"""A parent that records a step, starts basic.py as a subprocess, and forks a child
that records its own step. Prints the pids it made: "PIDS parent=.. sub=.. fork=..".
"""
import os
import subprocess
import sys

from appkit import add_step, check, load_add
from hip import hip

check(hip.hipInit(0))
module, fn = load_add()
add_step(fn, 128, 1)

here = os.path.dirname(os.path.abspath(__file__))
sub = subprocess.Popen([sys.executable, os.path.join(here, "basic.py")])
assert sub.wait() == 0

pid = os.fork()
if pid == 0:
    try:
        add_step(fn, 64, 2)
        code = 0
    except BaseException as exc:  # noqa: BLE001
        print(f"fork child failed: {exc!r}", file=sys.stderr)
        code = 1
    sys.stdout.flush()
    # A forked child leaves through the normal path so that capture closes its archive.
    sys.exit(code)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0, status
add_step(fn, 32, 3)
print(f"PIDS parent={os.getpid()} sub={sub.pid} fork={pid}")
