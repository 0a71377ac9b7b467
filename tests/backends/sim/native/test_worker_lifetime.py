"""No kernel worker outlives the command that started it, and a kernel cannot keep one
running: under ``hrr run``, a kernel that writes its own completion reply and spins is a
failed launch; an endless kernel stops at ``--kernel-timeout`` and on Ctrl-C, with a clear
message; a program killed outright takes its worker with it (PR_SET_PDEATHSIG)."""
from __future__ import annotations

import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hrr.backends.sim.native import toolchain
from hrr.backends.sim.native.worker import FORGED, sandbox_support

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "cli"))
from cli_helpers import describe, hrr  # noqa: E402

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64" or toolchain.find_toolchain() is None
                                or not sandbox_support()[0],
                                reason="x86_64 machine code, a C++ compiler for the sim and seccomp")

APP = r'''
import ctypes, os, sys
import numpy as np
from hip import hip, hiprtc
from hrr.backends import sim
from hrr.backends.sim import device

SOURCE = b"""
extern "C" __global__ void spin(volatile unsigned* flag) { while (*flag == 0) {} }
extern "C" __global__ void call(const unsigned char* code) { ((void (*)())code)(); }
extern "C" __global__ void one(unsigned* p) { *p = 1; }
"""
# x86_64: write(4, {DONE, 0, 0, 0}, 16) -- a completion reply on the worker's reply pipe -- then spin
FORGE = bytes.fromhex("4883ec10" "c7042432485252" "c744240400000000" "48c744240800000000"
                      "b801000000" "bf04000000" "4889e6" "ba10000000" "0f05" "ebfe")

def ok(r):
    assert int(r[0]) == 0, r
    return r[1] if len(r) == 2 else None

prog = ok(hiprtc.hiprtcCreateProgram(SOURCE, b"k.hip", 0, [], []))
assert int(hiprtc.hiprtcCompileProgram(prog, 1, [b"--offload-arch=gfx942"])[0]) == 0
code = bytearray(ok(hiprtc.hiprtcGetCodeSize(prog)))
hiprtc.hiprtcGetCode(prog, code)
mod = ok(hip.hipModuleLoadData(code))
fn = {n: ok(hip.hipModuleGetFunction(mod, n.encode())) for n in ("spin", "call", "one")}
flag = ok(hip.hipMalloc(64))
ok(hip.hipMemset(flag, 0, 64))
ok(hip.hipModuleLaunchKernel(fn["one"], 1, 1, 1, 1, 1, 1, 0, None, None, (flag,)))
ok(hip.hipDeviceSynchronize())
ok(hip.hipMemset(flag, 0, 64))
pid = next(w.pid for w in device.current().native_workers.values() if w.pid)
print("program", os.getpid(), "worker", pid, flush=True)
if sys.argv[1] == "forge":
    text = ok(hip.hipMalloc(len(FORGE)))
    buf = np.frombuffer(FORGE, np.uint8)
    ok(hip.hipMemcpy(text, buf, len(FORGE), hip.hipMemcpyKind.hipMemcpyHostToDevice))
    ok(hip.hipModuleLaunchKernel(fn["call"], 1, 1, 1, 1, 1, 1, 0, None, None, (text,)))
else:
    ok(hip.hipModuleLaunchKernel(fn["spin"], 1, 1, 1, 1, 1, 1, 0, None, None, (flag,)))
print("launched", flush=True)
err = hip.hipDeviceSynchronize()[0]
print("sync", err.name, flush=True)
print("detail", sim.last_error_detail(), flush=True)
'''


def _ended(pid: int, within: float = 20.0) -> bool:
    """Whether process ``pid`` is gone (or a zombie: it runs no more) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return True
        except (FileNotFoundError, ProcessLookupError):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def _pids(stdout: str) -> tuple[int, int]:
    line = next(ln for ln in stdout.splitlines() if ln.startswith("program "))
    fields = line.split()
    return int(fields[1]), int(fields[3])


@pytest.fixture
def app(tmp_path: Path) -> Path:
    path = tmp_path / "app.py"
    path.write_text(APP)
    return path


def test_a_kernel_that_forges_its_completion_and_spins_fails_and_leaves_no_worker(app):
    ran = hrr("run", "--backend", "sim", "--", "python", app, "forge", timeout=300, check=0)
    assert "sync hipErrorLaunchFailure" in ran.stdout and FORGED in ran.stdout, describe(ran)
    _, worker = _pids(ran.stdout)
    assert _ended(worker, within=0), describe(ran)


def test_an_endless_kernel_stops_at_the_kernel_timeout(app):
    started = time.monotonic()
    ran = hrr("run", "--backend", "sim", "--kernel-timeout", "1.5", "--", "python", app, "spin", timeout=300,
              check=0)
    assert "sync hipErrorLaunchTimeOut" in ran.stdout, describe(ran)
    assert "did not finish within 1.5 s" in ran.stderr and "HRR_SIM_KERNEL_TIMEOUT" in ran.stderr, describe(ran)
    assert time.monotonic() - started < 120
    assert _ended(_pids(ran.stdout)[1], within=0)


def test_a_bad_kernel_timeout_is_a_usage_error(app):
    ran = hrr("run", "--kernel-timeout", "-1", "--", "python", app, "spin", timeout=60)
    assert ran.returncode == 64 and "--kernel-timeout must be a positive number" in ran.stderr, describe(ran)


def _start(app: Path) -> tuple[subprocess.Popen, int, int]:
    """``hrr run`` of the spinning program in a session of its own (as a terminal's foreground
    job), once its kernel runs: the process, the program's pid and its worker's."""
    env = {k: v for k, v in os.environ.items() if k != "HRR_MODE"}
    proc = subprocess.Popen([sys.executable, "-m", "hrr.cli.main", "run", "--backend", "sim", "--", "python",
                             str(app), "spin"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first.startswith("program "), first + proc.communicate(timeout=300)[1]
    assert proc.stdout.readline() == "launched\n"
    time.sleep(0.5)   # the kernel is running
    program, worker = _pids(first)
    return proc, program, worker


def test_ctrl_c_stops_an_endless_kernel_with_a_clear_message(app):
    proc, _, worker = _start(app)
    os.killpg(proc.pid, signal.SIGINT)    # what a terminal's Ctrl-C does
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "hrr: interrupted (Ctrl-C): the sim's kernel spin was stopped after" in err, err
    assert _ended(worker, within=0)


def test_a_program_killed_outright_takes_its_worker_with_it(app):
    proc, program, worker = _start(app)
    os.kill(program, signal.SIGKILL)      # no atexit, no finally: only the kernel can end the worker
    proc.communicate(timeout=60)
    assert _ended(worker), "the kernel worker outlived its program"
