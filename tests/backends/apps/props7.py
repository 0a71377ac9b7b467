"""A hip-python 7.x program: it makes the struct, the call fills it, the arch is bytes."""
from hip import hip


def check(result):
    err, *outs = result
    if err != hip.hipError_t.hipSuccess:
        raise RuntimeError(str(err))
    return outs[0] if len(outs) == 1 else (outs or None)


props = hip.hipDeviceProp_t()
check(hip.hipGetDeviceProperties(props, 0))
option = b"--offload-arch=" + props.gcnArchName
assert props.totalGlobalMem > 0 and props.maxThreadsDim[0] > 0, props.totalGlobalMem
dev = check(hip.hipMalloc(32))
attributes = hip.hipPointerAttribute_t()
check(hip.hipPointerGetAttributes(attributes, dev))
assert attributes.type == hip.hipMemoryType.hipMemoryTypeDevice and int(attributes.devicePointer) == int(dev)
check(hip.hipFree(dev))
print("props7: ok", option.decode())
