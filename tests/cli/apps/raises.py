"""raises.py: one add_u32 step, then an uncaught ValueError (for the manifest's ``ended``)."""
from appkit import add_step, check, load_add
from hip import hip

check(hip.hipInit(0))
module, fn = load_add()
add_step(fn, 64, 1)
raise ValueError("the secret 42")
