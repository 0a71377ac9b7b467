"""The kernel worker runs launch functions that live in device memory, over the sim's own
memory, and reports faults in words without taking the sim down."""
from __future__ import annotations

import ctypes
import os
import platform
import select
import struct
import threading

import numpy as np
import pytest
import picfuncs
from forkcheck import run_child

from hrr.backends.sim import device as sim_device
from hrr.backends.sim import hip
from hrr.backends.sim.native import abi
from hrr.backends.sim.native.worker import MAX_KERNARGS, KernelWorker, LaunchOutcome, sandbox_support

OK = hip.hipError_t.hipSuccess
pytestmark = pytest.mark.skipif(platform.machine() != "x86_64" or not hasattr(os, "memfd_create"),
                                reason="the test's launch functions are x86_64 Linux code")


@pytest.fixture(scope="module")
def code() -> dict[str, bytes]:
    return picfuncs.build()


@pytest.fixture(scope="module")
def shared_worker():
    """One worker for the module (the arenas are the process's, whatever device is current)."""
    from hrr.backends.sim.native import arena
    w = KernelWorker(arena.device_arena(), arena.pinned_arena(), sandbox=sandbox_support()[0])
    yield w
    w.close()


class Loaded:
    def __init__(self, code: dict[str, bytes], worker: KernelWorker) -> None:
        self.memory = sim_device.current().memory
        self.worker = worker
        self.fn: dict[str, int] = {}
        for name, text in code.items():
            alloc = self.memory.malloc(len(text), align=4096)
            alloc.storage[:] = np.frombuffer(text, np.uint8)
            self.fn[name] = alloc.base

    def run(self, name: str, args: bytes = b"", grid=(1, 1, 1), block=(1, 1, 1), dyn: int = 0,
            kernel: int = 0, **kw) -> LaunchOutcome:
        return self.worker.launch(self.fn[name], kernel, args, grid, block, dyn, **kw)

    def device_u32(self, n: int) -> tuple[int, np.ndarray]:
        alloc = self.memory.malloc(4 * n)
        return alloc.base, alloc.storage[:4 * n].view(np.uint32)


@pytest.fixture
def loaded(code, shared_worker) -> Loaded:
    return Loaded(code, shared_worker)


def test_a_write_lands_in_device_memory_the_sim_sees(loaded):
    addr, view = loaded.device_u32(3)
    out = loaded.run("write_shape", struct.pack("<Q", addr), grid=(5, 1, 1), block=(64, 1, 1), dyn=123,
                     kernel=0xABCDEF)
    assert out == LaunchOutcome(0, b"", None, "")
    assert list(view) == [5064, 0xABCDEF, 123]
    got = np.zeros(3, np.uint32)
    assert hip.hipMemcpy(got, addr, 12, hip.hipMemcpyKind.hipMemcpyDeviceToHost) == (OK,)
    assert list(got) == [5064, 0xABCDEF, 123]


def test_the_status_and_reads_of_memory_the_sim_wrote(loaded):
    addr, view = loaded.device_u32(1)
    view[0] = 40
    assert loaded.run("add_to", struct.pack("<QI", addr, 2)).status == 40
    assert view[0] == 42


def test_pinned_memory_is_shared_at_the_same_address(loaded):
    assert loaded.worker.pinned_shared
    err, h = hip.hipHostMalloc(4, 0)
    assert err == OK
    cell = ctypes.c_uint32.from_address(int(h))
    cell.value = 1000
    assert loaded.run("add_to", struct.pack("<QI", int(h), 5)).status == 1000
    assert cell.value == 1005


def test_an_illegal_address_is_reported_and_the_next_launch_works(loaded):
    first = loaded.worker.pid
    out = loaded.run("store_at", struct.pack("<Q", 0x10))
    assert out.status == -1 and out.fault == "illegal address 0x10 (SIGSEGV)"
    assert out.bad_address and not loaded.run("divide", struct.pack("<i", 0)).bad_address
    assert loaded.worker.pid is None
    addr, view = loaded.device_u32(1)
    assert loaded.run("add_to", struct.pack("<QI", addr, 3)).fault is None and view[0] == 3
    assert loaded.worker.pid not in (None, first)


def test_writes_outside_device_allocations_fault_too(loaded):
    """Host memory of the sim's own process is not in the worker: no allocation there."""
    buf = np.zeros(4, np.uint32)
    out = loaded.run("store_at", struct.pack("<Q", buf.ctypes.data))
    assert out.fault == f"illegal address 0x{buf.ctypes.data:x} (SIGSEGV)" and buf[0] == 0


def test_integer_division_by_zero(loaded):
    out = loaded.run("divide", struct.pack("<i", 0))
    assert out.fault is not None and out.fault.startswith("arithmetic exception (integer division by zero) at 0x")
    assert loaded.run("divide", struct.pack("<i", 2)).status == 3


def test_printf_bytes_and_the_trap_message_come_back(loaded):
    out = loaded.run("say", grid=(4, 1, 1))
    assert (out.status, out.printf, out.trap, out.fault) == (abi.E_TRAP, b"hi 4\n", "no!", None)
    assert loaded.run("say", grid=(2, 1, 1)).printf == b"hi 2\n"    # reset between launches


def test_a_kernel_that_never_ends_is_stopped_at_the_timeout(loaded):
    out = loaded.run("spin", timeout=0.5)
    assert out.status == -1 and out.fault == "the kernel did not finish within 0.5 s (the worker was stopped)"
    addr, view = loaded.device_u32(1)
    assert loaded.run("add_to", struct.pack("<QI", addr, 1)).status == 0 and view[0] == 1


def test_kernel_arguments_are_bounded(loaded):
    with pytest.raises(ValueError):
        loaded.run("add_to", bytes(MAX_KERNARGS + 1))


def test_launches_from_several_threads_run_one_at_a_time(loaded):
    addr, view = loaded.device_u32(1)
    results: list[int] = []

    def body() -> None:
        for _ in range(20):
            results.append(loaded.run("add_to", struct.pack("<QI", addr, 1)).status)
    threads = [threading.Thread(target=body) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert view[0] == 80 and sorted(results) == list(range(80))


def test_a_forked_child_runs_its_own_worker_on_its_own_memory(loaded):
    addr, view = loaded.device_u32(1)
    view[0] = 10
    assert loaded.run("add_to", struct.pack("<QI", addr, 1)).status == 10
    parent_pid = loaded.worker.pid

    def body() -> int:
        out = loaded.run("add_to", struct.pack("<QI", addr, 100))
        if out.status != 11 or view[0] != 111:
            return 3
        return 0 if loaded.worker.pid not in (None, parent_pid) else 4

    assert run_child(body) == 0
    assert view[0] == 11                                      # the child wrote its own copy
    assert loaded.worker.pid == parent_pid                    # the parent's worker is untouched
    assert loaded.run("add_to", struct.pack("<QI", addr, 1)).status == 11 and view[0] == 12


def test_a_worker_killed_between_launches_is_replaced_quietly(loaded):
    addr, view = loaded.device_u32(1)
    assert loaded.run("add_to", struct.pack("<QI", addr, 1)).fault is None
    pid = loaded.worker.pid
    ended = os.pidfd_open(pid)
    os.kill(pid, 9)
    assert select.select([ended], [], [], 60)[0]  # dead before the next launch
    os.close(ended)
    out = loaded.run("add_to", struct.pack("<QI", addr, 1))
    assert (out.status, out.fault) == (1, None) and view[0] == 2 and loaded.worker.pid != pid


def test_a_dropped_client_ends_its_worker(code):
    from hrr.backends.sim.native import arena
    w = KernelWorker(arena.device_arena(), arena.pinned_arena(), sandbox=False)
    fn = Loaded(code, w)
    assert fn.run("divide", struct.pack("<i", 1)).status == 7
    ended = os.pidfd_open(w.pid)
    del w, fn
    assert select.select([ended], [], [], 60)[0]  # ended with its client (bounded: never hang)
    os.close(ended)


def test_an_interrupted_launch_does_not_leave_its_reply_for_the_next(loaded, monkeypatch):
    addr, view = loaded.device_u32(1)
    assert loaded.run("add_to", struct.pack("<QI", addr, 1)).status == 0
    real_read = KernelWorker._read

    def interrupted(self, n, deadline):
        monkeypatch.setattr(KernelWorker, "_read", real_read)
        while view[0] != 2:                     # the kernel ran; its reply waits in the pipe
            os.sched_yield()
        raise KeyboardInterrupt
    monkeypatch.setattr(KernelWorker, "_read", interrupted)
    with pytest.raises(KeyboardInterrupt):
        loaded.run("add_to", struct.pack("<QI", addr, 1))
    out = loaded.run("add_to", struct.pack("<QI", addr, 1))
    assert (out.status, out.fault, int(view[0])) == (2, None, 3)
