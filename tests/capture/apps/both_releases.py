"""One program that reaches both hip-python releases installed side by side: 7.x through
`from hip import hip` (the struct passed in, bytes arch, 7.x's own enum classes) and 10.x
through `from rocm.bindings import hip` (the struct returned, str arch)."""
import inspect

from hip import hip as hip7
from rocm.bindings import hip as hip10


def check(hip, result):
    """hip-python's examples' idiom: an error is a member of the module's own hipError_t."""
    err, *outs = result
    assert isinstance(err, hip.hipError_t), type(err)
    if err != hip.hipError_t.hipSuccess:
        raise RuntimeError(str(err))
    return outs[0] if len(outs) == 1 else (outs or None)


assert hip7 is not hip10
assert list(inspect.signature(hip7.hipGetDeviceProperties).parameters) == ["prop", "deviceId"]
assert list(inspect.signature(hip10.hipGetDeviceProperties).parameters) == ["deviceId"]
props7 = hip7.hipDeviceProp_t()
check(hip7, hip7.hipGetDeviceProperties(props7, 0))
props10 = check(hip10, hip10.hipGetDeviceProperties(0))
option7 = b"--offload-arch=" + props7.gcnArchName
option10 = "--offload-arch=" + props10.gcnArchName
assert option7.decode() == option10 and props7.totalGlobalMem == props10.totalGlobalMem > 0

for hip in (hip7, hip10):
    data = bytes(range(64))
    dev = check(hip, hip.hipMalloc(len(data)))
    check(hip, hip.hipMemcpy(dev, data, len(data), hip.hipMemcpyKind.hipMemcpyHostToDevice))
    back = bytearray(len(data))
    check(hip, hip.hipMemcpy(back, dev, len(data), hip.hipMemcpyKind.hipMemcpyDeviceToHost))
    check(hip, hip.hipFree(dev))
    assert bytes(back) == data
print("both_releases: ok", option7.decode())
