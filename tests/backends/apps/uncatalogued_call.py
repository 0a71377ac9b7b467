"""A hip-python program that makes one catalogued call, then one hrr does not know."""
from hip import hip

err, ptr = hip.hipMalloc(64)
assert err == hip.hipError_t.hipSuccess, err
assert not hasattr(hip, "hipFooBar")          # hasattr keeps working
assert getattr(hip, "hipFooBar", None) is None
print("before the unknown call", flush=True)
hip.hipFooBar(ptr)
print("not reached")
