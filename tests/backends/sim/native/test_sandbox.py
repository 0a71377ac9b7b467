"""The sandboxed worker runs kernels in seccomp strict mode: a kernel that makes any system
call is killed and reported, and the worker comes back for the next launch."""
from __future__ import annotations

import os
import platform
import struct

import numpy as np
import picfuncs
import pytest

from hrr.backends.sim import device as sim_device
from hrr.backends.sim.native import arena
from hrr.backends.sim.native.worker import FD_RES, KernelWorker, sandbox_support

SUPPORTED, WHY = sandbox_support()
KILLED = "the sandbox stopped the kernel: it made a system call (killed by SIGKILL)"
pytestmark = [pytest.mark.skipif(platform.machine() != "x86_64" or not hasattr(os, "memfd_create"),
                                 reason="the test's launch functions are x86_64 Linux code"),
              pytest.mark.skipif(not SUPPORTED, reason=WHY)]


@pytest.fixture(scope="module")
def code() -> dict[str, bytes]:
    return picfuncs.build()


def _worker(sandbox: bool) -> KernelWorker:
    return KernelWorker(arena.device_arena(), arena.pinned_arena(), sandbox=sandbox)


@pytest.fixture(scope="module")
def jailed():
    w = _worker(True)
    yield w
    w.close()


@pytest.fixture(scope="module")
def free():
    w = _worker(False)
    yield w
    w.close()


def _load(code: dict[str, bytes]) -> dict[str, int]:
    memory = sim_device.current().memory
    fn = {}
    for name, text in code.items():
        alloc = memory.malloc(len(text), align=4096)
        alloc.storage[:] = np.frombuffer(text, np.uint8)
        fn[name] = alloc.base
    return fn


def _seccomp_mode(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return int(next(line for line in f if line.startswith("Seccomp:")).split()[1])


def _passwd_arg() -> tuple[bytes, int]:
    """kernargs holding the address of "/etc/passwd" in device memory."""
    alloc = sim_device.current().memory.malloc(16)
    alloc.storage[:12] = np.frombuffer(b"/etc/passwd\0", np.uint8)
    return struct.pack("<Q", alloc.base), alloc.base


def test_sandbox_support_says_yes_on_this_linux():
    assert SUPPORTED and WHY == "seccomp strict mode works"


def test_the_worker_runs_in_strict_mode(code, jailed, free):
    fn = _load(code)
    alloc = sim_device.current().memory.malloc(4)
    for w in (jailed, free):
        assert w.launch(fn["add_to"], 0, struct.pack("<QI", alloc.base, 1), (1, 1, 1), (1, 1, 1), 0).fault is None
    assert _seccomp_mode(jailed.pid) == 1 and _seccomp_mode(free.pid) == 0   # SECCOMP_MODE_STRICT
    # one thread: strict mode binds only the thread that enters it
    assert len(os.listdir(f"/proc/{jailed.pid}/task")) == 1


def test_a_raw_system_call_is_killed_and_reported(code, jailed, free):
    fn = _load(code)
    assert free.launch(fn["raw_getpid"], 0, b"", (1, 1, 1), (1, 1, 1), 0).status == 7   # allowed unsandboxed
    out = jailed.launch(fn["raw_getpid"], 0, b"", (1, 1, 1), (1, 1, 1), 0)
    assert (out.status, out.fault) == (-1, KILLED)
    alloc = sim_device.current().memory.malloc(4)
    again = jailed.launch(fn["add_to"], 0, struct.pack("<QI", alloc.base, 9), (1, 1, 1), (1, 1, 1), 0)
    assert again.fault is None and alloc.storage[:4].view(np.uint32)[0] == 9
    assert _seccomp_mode(jailed.pid) == 1                                    # the new worker too


def test_opening_a_file_is_killed(code, jailed, free):
    fn = _load(code)
    args, _ = _passwd_arg()
    fd = free.launch(fn["raw_open"], 0, args, (1, 1, 1), (1, 1, 1), 0).status
    assert fd >= 0                                    # the unsandboxed worker could read it
    out = jailed.launch(fn["raw_open"], 0, args, (1, 1, 1), (1, 1, 1), 0)
    assert (out.status, out.fault) == (-1, KILLED)


def test_faults_are_still_reported_in_the_sandbox(code, jailed):
    fn = _load(code)
    out = jailed.launch(fn["store_at"], 0, struct.pack("<Q", 8), (1, 1, 1), (1, 1, 1), 0)
    assert out.fault == "illegal address 0x8 (SIGSEGV)"
    out = jailed.launch(fn["divide"], 0, struct.pack("<i", 0), (1, 1, 1), (1, 1, 1), 0)
    assert out.fault is not None and "integer division by zero" in out.fault


def test_what_a_kernel_may_still_write_cannot_hang_or_fool_the_client(code, jailed):
    fn = _load(code)
    memory = sim_device.current().memory
    big = memory.malloc(256 << 10)
    # stderr is /dev/null in the loop: 256 KiB there would fill a pipe nobody reads
    out = jailed.launch(fn["raw_write"], 0, struct.pack("<QQQ", 2, big.base, 256 << 10), (1, 1, 1), (1, 1, 1), 0,
                        timeout=60)
    assert (out.status, out.fault) == (256 << 10, None)
    # a forged reply on the result pipe announcing 2 GiB of printf output
    forged = memory.malloc(16)
    forged.storage[:] = np.frombuffer(struct.pack("=IiII", 0x52524832, 0, 0x7FFF_FFFF, 0), np.uint8)
    out = jailed.launch(fn["raw_write"], 0, struct.pack("<QQQ", FD_RES, forged.base, 16), (1, 1, 1),
                        (1, 1, 1), 0, timeout=60)
    assert out.status == -1 and out.fault is not None and out.fault.startswith("the kernel worker broke its protocol")
