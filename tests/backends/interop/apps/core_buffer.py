"""A cuda-python program on ``cuda.core``'s objects (Device, Stream, DeviceMemoryResource,
Buffer), the part of cuda.core that hip-python 10.x's interop layer offers: a stream-ordered
allocation filled and read back through the runtime API on the Device's own stream. Exits
non-zero on a wrong result."""
import sys

import numpy as np
from cuda.bindings import runtime
from cuda.core import Device, DeviceMemoryResource

dev = Device(0)
dev.set_current()
stream = dev.create_stream()
handle = int(stream.handle)
mr = DeviceMemoryResource(dev.device_id)
buf = mr.allocate(4096, stream)

host = np.arange(1024, dtype=np.uint32) * 3
back = np.zeros_like(host)
kind = runtime.cudaMemcpyKind
err, = runtime.cudaMemcpyAsync(int(buf.handle), host, host.nbytes, kind.cudaMemcpyHostToDevice, handle)
assert int(err) == 0, err
err, = runtime.cudaMemsetAsync(int(buf.handle) + 1024, 0, 1024, handle)
assert int(err) == 0, err
err, = runtime.cudaMemcpyAsync(back, int(buf.handle), back.nbytes, kind.cudaMemcpyDeviceToHost, handle)
assert int(err) == 0, err
stream.sync()
expected = host.copy()
expected[256:512] = 0
ok = np.array_equal(back, expected)
print(f"cuda.core buffer of {buf.size} bytes: {'ok' if ok else 'WRONG'}")
buf.close(stream)
stream.close()
dev.sync()
sys.exit(0 if ok else 1)
