"""A hip-python program that makes one catalogued call, then one of hip-python's that hrr
does not implement (its name is the first argument)."""
import sys

from hip import hip

name = sys.argv[1]
err, ptr = hip.hipMalloc(64)
assert err == hip.hipError_t.hipSuccess, err
assert hasattr(hip, name) and callable(getattr(hip, name))   # the name is there, as in hip-python
assert not hasattr(hip, "hipMallocc")                        # a name hip-python lacks is not
assert getattr(hip, "hipMallocc", None) is None
print("before the unknown call", flush=True)
getattr(hip, name)(ptr)
print("not reached")
