"""fork() while another thread is inside a sim HIP call: the child never hangs, and the
sim's hipDeviceReset empties the device."""
from __future__ import annotations

import ctypes
import threading

from forkcheck import HeldLock, run_child

from hrr.archive import forking
from hrr.backends import sim
from hrr.backends.sim import device as sim_device
from hrr.backends.sim import hip, streams

OK = hip.hipError_t.hipSuccess


def _child_uses_the_device() -> int:
    err, p = hip.hipMalloc(64)
    if err != OK:
        return 3
    if hip.hipMemset(p, 7, 64) != (OK,) or hip.hipFree(p) != (OK,):
        return 4
    return 0 if hip.hipDeviceSynchronize() == (OK,) else 5


def test_fork_while_another_thread_holds_the_device_lock():
    with HeldLock(sim_device.current().lock):
        code = run_child(_child_uses_the_device)
    assert code == 0, "the child hung on the device lock" if code is None else code


def test_child_keeps_the_parents_handles():
    """The sim is process memory: the child inherits a consistent copy of the device."""
    err, p = hip.hipMalloc(16)
    assert err == OK and hip.hipMemset(p, 9, 16) == (OK,)
    err, s = hip.hipStreamCreate()
    assert err == OK

    def body() -> int:
        out = bytearray(16)
        ok = hip.hipMemcpy(out, p, 16, hip.hipMemcpyKind.hipMemcpyDeviceToHost) == (OK,)
        return 0 if ok and out == b"\x09" * 16 and hip.hipStreamSynchronize(s) == (OK,) else 3

    assert run_child(body) == 0


def test_fork_while_another_thread_waits_on_a_stalled_stream(monkeypatch):
    """A thread polling a stuck stream (condition wait, device lock released) at fork: the
    child's scheduler forgets it, so the child's own stuck wait is reported at once."""
    err, hip_flag = hip.hipHostMalloc(4, 0)
    assert err == OK
    err, module = hip.hipModuleLoadData(sim.builtin_code_object())
    err, wait_fn = hip.hipModuleGetFunction(module, b"wait_flag")
    err, s = hip.hipStreamCreate()
    args = [ctypes.c_void_p(int(hip_flag)), ctypes.c_uint32(1)]
    assert hip.hipModuleLaunchKernel(wait_fn, 1, 1, 1, 1, 1, 1, 0, s,
                                     [ctypes.addressof(a) for a in args], None) == (OK,)
    monkeypatch.setattr(streams, "STALL_TIMEOUT_S", 60.0)   # the waiter polls until released
    sched = sim_device.current().scheduler
    waiting = threading.Event()
    keep_alive = threading.Event()
    helper = threading.Thread(target=keep_alive.wait, daemon=False)  # a thread that could release
    helper.start()
    waiter = threading.Thread(target=lambda: (waiting.set(), hip.hipStreamSynchronize(s)))
    waiter.start()
    assert waiting.wait(30)
    for _ in range(3000):                      # until it polls with the lock released
        if sched.waiting_threads:
            break
        threading.Event().wait(0.01)
    assert sched.waiting_threads == 1

    def body() -> int:
        if sched.waiting_threads != 0:
            return 6
        err = hip.hipStreamSynchronize(s)[0]   # no other thread here: a stall, reported
        return 0 if err == hip.hipError_t.hipErrorLaunchTimeOut else 3

    try:
        assert run_child(body) == 0
    finally:
        ctypes.c_uint32.from_address(int(hip_flag)).value = 1   # release the parent's stream
        keep_alive.set()
        waiter.join(30)
        helper.join(30)


def test_device_lock_is_taken_at_backend_rank():
    ranks = [rank for rank, lock in forking.fork_locks() if isinstance(lock, sim_device._ForkGuard)]
    assert ranks == [forking.RANK_BACKEND]


def test_device_reset_destroys_everything_and_never_reuses_addresses():
    err, d = hip.hipMalloc(256)
    err, h = hip.hipHostMalloc(64, 0)
    err, s = hip.hipStreamCreate()
    err, e = hip.hipEventCreate()
    err, m = hip.hipModuleLoadData(sim.builtin_code_object())
    assert hip.hipDeviceReset() == (OK,)
    bad = hip.hipError_t.hipErrorInvalidHandle
    assert hip.hipStreamSynchronize(s) == (bad,)
    assert hip.hipEventRecord(e, None) == (bad,)
    assert hip.hipModuleGetFunction(m, b"fill_u32") == (bad, None)
    assert hip.hipFree(d) == (hip.hipError_t.hipErrorInvalidValue,)
    assert hip.hipHostFree(h) == (hip.hipError_t.hipErrorInvalidValue,)
    assert hip.hipMemGetInfo()[1] == hip.hipMemGetInfo()[2]     # all device memory free
    err, d2 = hip.hipMalloc(256)
    assert err == OK and int(d2) > int(d)                      # never handed out twice
    assert hip.hipDeviceSynchronize() == (OK,)
