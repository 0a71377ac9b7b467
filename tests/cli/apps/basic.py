"""basic.py [EXIT_CODE] [--loop] [--bare-raise]: one add_u32 step, then exit with EXIT_CODE
(through sys.exit, or with --bare-raise a bare `raise SystemExit(EXIT_CODE)`).

--loop: keep launching and copying forever, printing READY (flushed) after a few steps;
for the SIGKILL test."""
import sys

from appkit import add_step, check, load_add
from hip import hip

check(hip.hipInit(0))
module, fn = load_add()
if "--loop" in sys.argv:
    i = 0
    while True:
        add_step(fn, 64, i)
        i += 1
        if i == 5:
            print("READY", flush=True)
add_step(fn, 256, 7)
check(hip.hipModuleUnload(module))
print("basic: ok")
codes = [a for a in sys.argv[1:] if not a.startswith("--")]
if "--bare-raise" in sys.argv:
    raise SystemExit(int(codes[0]) if codes else 0)   # not through sys.exit: hrr's parent sees it
sys.exit(int(codes[0]) if codes else 0)
