"""Round-trips a few bytes through device memory, spelled `from hip import hip`."""
from hip import hip

data = bytes(range(64))
err, dev = hip.hipMalloc(len(data))
assert err == hip.hipError_t.hipSuccess, err
hip.hipMemcpy(dev, data, len(data), hip.hipMemcpyKind.hipMemcpyHostToDevice)
back = bytearray(len(data))
hip.hipMemcpy(back, dev, len(data), hip.hipMemcpyKind.hipMemcpyDeviceToHost)
hip.hipFree(dev)
assert bytes(back) == data
print("style_hip: ok")
