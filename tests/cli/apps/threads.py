"""Two threads, each with its own stream, making HIP calls concurrently."""
import threading

from appkit import add_step, check, load_add
from hip import hip

check(hip.hipInit(0))
module, fn = load_add()
errors = []
barrier = threading.Barrier(2)


def work(seed):
    try:
        stream = check(hip.hipStreamCreate())
        barrier.wait()
        for i in range(5):
            add_step(fn, 64, seed + i, stream)
        check(hip.hipStreamDestroy(stream))
    except BaseException as exc:  # noqa: BLE001
        errors.append(exc)


ts = [threading.Thread(target=work, args=(s,)) for s in (10, 20)]
for t in ts:
    t.start()
for t in ts:
    t.join()
assert not errors, errors
print("threads: ok")
