"""A stream program in the shape of hip-python's basic stream example, in the rocm.bindings
style: an array.array goes to the device and back on a created stream, zeroed on the way."""
import array

from rocm.bindings import hip


def check(result):
    err, *outs = result
    if isinstance(err, hip.hipError_t) and err != hip.hipError_t.hipSuccess:
        raise RuntimeError(str(err))
    return outs[0] if len(outs) == 1 else outs


host = array.array("i", [(i * 7) % 10 + 1 for i in range(100)])
nbytes = host.itemsize * len(host)
dev = check(hip.hipMalloc(nbytes))
stream = check(hip.hipStreamCreate())
check(hip.hipMemcpyAsync(dev, host, nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice, stream))
check(hip.hipMemsetAsync(dev, 0, nbytes, stream))
check(hip.hipMemcpyAsync(host, dev, nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost, stream))
check(hip.hipStreamSynchronize(stream))
check(hip.hipStreamDestroy(stream))
check(hip.hipFree(dev))
bad = [i for i, v in enumerate(host) if v != 0]
if bad:
    raise ValueError(f"element {bad[0]} is {host[bad[0]]}, expected 0")
print("stream_rocm: ok")
