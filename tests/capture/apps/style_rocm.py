"""The same program, spelled as hip-python 10 writes it: `from rocm.bindings import hip`."""
from rocm.bindings import hip, hiprtc  # noqa: F401 - hiprtc imported as a real app would

data = bytes(range(64))
err, dev = hip.hipMalloc(len(data))
assert err == hip.hipError_t.hipSuccess, err
hip.hipMemcpy(dev, data, len(data), hip.hipMemcpyKind.hipMemcpyHostToDevice)
back = bytearray(len(data))
hip.hipMemcpy(back, dev, len(data), hip.hipMemcpyKind.hipMemcpyDeviceToHost)
hip.hipFree(dev)
assert bytes(back) == data
print("style_rocm: ok")
