"""The native kernel worker: a separate process that runs kernel images over the sim's
memory, and ``KernelWorker``, the sim's client for it.

The worker maps the device arena at ``DEVICE_BASE`` (read, write, execute: kernel images
live in device memory) and the pinned arena at ``PINNED_BASE``, so every pointer means
what it means in the sim; builds its services block (fiber stacks, printf buffer, libm's
addresses) before anything runs; installs fault handlers; and then, sandboxed, enters
seccomp strict mode (read, write, exit and sigreturn only) and serves launches from a
pipe with the loop in ``worker.c``. A kernel that faults, makes a system call or hangs
ends the worker, never the sim: the launch reports what happened and the next launch
starts a new worker. It is spawned (a new Python running ``main``), never forked from the
multi-threaded parent.

Pipe protocol (native byte order; see worker.c). Command: launch_fn, kernel (u64 each),
grid[3], block[3], dyn_shared, nargs (u32 each), then nargs kernarg bytes (at most 4096).
Replies: READY once (u32 magic, i32 sandboxed, 8 bytes zero); per launch DONE (u32 magic,
i32 status, u32 printf_len, u32 trap_len, then those bytes); or FAULT (u32 magic,
i32 signal, i32 si_code, u32 0, u64 address, u64 instruction pointer) when a signal ended it.
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import importlib.util
import os
import select
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from importlib import resources
from typing import Sequence

import attrs

from hrr.backends.sim.native import abi
from hrr.config import untraced_env
from hrr.backends.sim.native.arena import DEVICE_BASE, Arena, map_memory

MAX_KERNARGS = 4096
PRINTF_CAP = 1 << 20   # the worker's printf buffer: one launch's output at most
_COMMAND = struct.Struct("=QQ3I3III")
_REPLY = struct.Struct("=IiII")
_FAULT_TAIL = struct.Struct("=QQ")
MSG_READY, MSG_DONE, MSG_FAULT = 0x52524831, 0x52524832, 0x52524833
_SOURCE = "worker.c"

# The worker must stay one thread: seccomp strict mode and a fault's exit end only the
# thread that runs kernels, and another thread would keep the process (and its pipes) alive
# outside the sandbox. numpy's BLAS starts a pool on import unless told not to.
_ONE_THREAD = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                      "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "GOTO_NUM_THREADS")}
_PROT_RW, _PROT_RWX = 3, 7
_MAP_SHARED_FIXED = 0x01 | 0x4000 | 0x100000   # MAP_SHARED | MAP_NORESERVE | MAP_FIXED_NOREPLACE


class WorkerError(RuntimeError):
    """The worker cannot be built or started (no C compiler, not Linux...)."""


@attrs.frozen
class LaunchOutcome:
    """What one launch did: the image's status (abi.OK...), its printf output, and
    ``fault``: None, or in words what ended the worker (then status is -1)."""

    status: int
    printf: bytes
    fault: str | None = None
    trap: str = ""
    signo: int = 0      # the signal a fault handler reported (SIGSEGV...), 0 when none did

    @property
    def bad_address(self) -> bool:
        """The kernel touched memory it cannot reach (what a GPU reports as an illegal address)."""
        return self.signo in (signal.SIGSEGV, signal.SIGBUS)


# -- building worker.c ------------------------------------------------------------------------
def compilers() -> list[list[str]]:
    """C compiler command lines to try, in order: $HRR_SIM_CXX, ziglang, cc, gcc, clang."""
    found: list[list[str]] = []
    env = os.environ.get("HRR_SIM_CXX")
    if env:
        found.append(shlex.split(env))
    if importlib.util.find_spec("ziglang") is not None:
        found.append([sys.executable, "-m", "ziglang", "cc"])
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path:
            found.append([path])
    return found


_build_lock = threading.Lock()


@functools.lru_cache(maxsize=None)
def _built_library() -> str:
    native = resources.files(__package__)
    source = native.joinpath(_SOURCE).read_bytes()
    header = native.joinpath(abi.ABI_HEADER).read_bytes()
    logs = []
    for argv in compilers():
        key = hashlib.sha256(repr(argv).encode() + b"\0" + source + b"\0" + header).hexdigest()[:24]
        from hrr.backends.sim.native import toolchain   # here: the worker process never needs it
        cached = toolchain.cache_dir()   # the images' cache: one place for what hrr builds
        for folder in (str(cached) if cached is not None else None, None):
            try:
                if folder is None:
                    folder = tempfile.mkdtemp(prefix="hrr-worker-")
                os.makedirs(folder, exist_ok=True)
            except OSError:
                continue
            target = os.path.join(folder, f"worker-{key}.so")
            if os.path.exists(target):
                return target
            with tempfile.TemporaryDirectory(prefix="hrr-worker-src-") as tmp:
                for name, data in ((_SOURCE, source), (abi.ABI_HEADER, header)):
                    with open(os.path.join(tmp, name), "wb") as f:
                        f.write(data)
                out = os.path.join(tmp, "worker.so")
                try:
                    done = subprocess.run([*argv, "-x", "c", "-O2", "-fPIC", "-shared", "-I", tmp, "-o", out,
                                           os.path.join(tmp, _SOURCE)], capture_output=True, text=True,
                                          timeout=300, env=untraced_env())
                except (OSError, subprocess.SubprocessError) as exc:
                    logs.append(f"{shlex.join(argv)}: {exc}")
                    break
                if done.returncode != 0:
                    logs.append(f"{shlex.join(argv)}: {done.stderr.strip()[-2000:]}")
                    break
                try:   # atomically: another process may be building the same file
                    staged = target + f".{os.getpid()}.tmp"
                    shutil.copyfile(out, staged)
                    os.replace(staged, target)
                    return target
                except OSError:
                    continue   # unwritable cache: build again into a private folder
    raise WorkerError("cannot build the kernel worker (no working C compiler): " + (" | ".join(logs) or
                                                                                    "none found"))


def worker_library() -> str:
    """The path of worker.c built as a shared library (compiled once, cached)."""
    with _build_lock:
        return _built_library()


# -- the sandbox probe ---------------------------------------------------------------------------
_PROBE = ("import ctypes, sys\n"
          "lib = ctypes.CDLL(sys.argv[1])\n"
          "rc = lib.hrr_worker_run(0, 1, ctypes.c_uint64(0), 1, -1)\n"
          "sys.stderr.write('prctl failed: %d' % -rc)\n")


@functools.lru_cache(maxsize=None)
def sandbox_support() -> tuple[bool, str]:
    """Whether kernels can run under seccomp strict mode here, and why not."""
    if not sys.platform.startswith("linux"):
        return False, f"seccomp is Linux's ({sys.platform} has none)"
    try:
        lib = worker_library()
    except WorkerError as exc:
        return False, str(exc)
    # The loop enters strict mode, says READY, finds the command pipe closed and exits.
    done = subprocess.run([sys.executable, "-I", "-c", _PROBE, lib], stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=60)
    if done.returncode == 0 and done.stdout[:4] == struct.pack("=I", MSG_READY):
        return True, "seccomp strict mode works"
    code = done.stderr.decode(errors="replace").rsplit("prctl failed: ", 1)[-1].strip()
    reason = os.strerror(int(code)) if code.isdigit() else f"exit status {done.returncode}"
    return False, f"prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) fails here: {reason}"


# -- the client ------------------------------------------------------------------------------------
_SIGNAL_WORDS = {signal.SIGSEGV: "illegal address", signal.SIGBUS: "bus error at"}
_FPE_CODES = {1: "integer division by zero", 2: "integer overflow", 3: "float division by zero"}


def _signal_name(signo: int) -> str:
    try:
        return signal.Signals(signo).name
    except ValueError:
        return f"signal {signo}"


def describe_fault(signo: int, code: int, addr: int, ip: int) -> str:
    """A fault the worker reported, in words ("illegal address 0x10 (SIGSEGV)")."""
    name = _signal_name(signo)
    if signo in (signal.SIGSEGV, signal.SIGBUS):
        return f"{_SIGNAL_WORDS[signal.Signals(signo)]} 0x{addr:x} ({name})"
    if signo == signal.SIGFPE:
        return f"arithmetic exception ({_FPE_CODES.get(code, 'code %d' % code)}) at 0x{ip:x} ({name})"
    if signo == signal.SIGILL:
        return f"illegal instruction at 0x{ip:x} ({name})"
    return f"{name} at 0x{ip:x}"


_workers: "weakref.WeakSet[KernelWorker]" = weakref.WeakSet()


class KernelWorker:
    """The sim's handle on its kernel worker: started on the first launch, restarted on
    the launch after one that ended it. One launch at a time (thread-safe)."""

    def __init__(self, device_arena: Arena, pinned_arena: Arena | None, sandbox: bool = True) -> None:
        self.device_arena, self.pinned_arena, self.sandbox = device_arena, pinned_arena, sandbox
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._cmd = self._res = -1
        _workers.add(self)

    @property
    def pid(self) -> int | None:
        """The running worker's process id (None when none runs)."""
        return self._proc.pid if self._proc is not None else None

    @property
    def pinned_shared(self) -> bool:
        """Whether kernels see pinned host memory (its arena is at the same address there)."""
        return self.pinned_arena is not None and self.pinned_arena.shareable and self.pinned_arena.fixed

    def _start(self) -> None:
        if not self.device_arena.shareable:
            raise WorkerError(f"device memory cannot be shared with a kernel worker: {self.device_arena.not_shared}")
        lib = worker_library()
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        fds = [self.device_arena.fd, cmd_r, res_w]
        pinned = ["-1", "0", "0"]
        if self.pinned_shared:
            assert self.pinned_arena is not None
            fds.append(self.pinned_arena.fd)
            pinned = [str(self.pinned_arena.fd), str(self.pinned_arena.address), str(self.pinned_arena.size)]
        argv = [sys.executable, "-c", _BOOT, lib, str(self.device_arena.fd), str(self.device_arena.size),
                *pinned, str(cmd_r), str(res_w), "1" if self.sandbox else "0"]
        try:
            proc = subprocess.Popen(argv, pass_fds=fds, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, env=_worker_env())
        finally:
            os.close(cmd_r)
            os.close(res_w)
        self._proc, self._cmd, self._res = proc, cmd_w, res_r
        head = self._read(_REPLY.size, None)
        if head is None or _REPLY.unpack(head)[0] != MSG_READY:
            why = self._stop()
            raise WorkerError(f"the kernel worker did not start: {why}")

    def _read(self, n: int, deadline: float | None) -> bytes | None:
        """``n`` bytes from the worker, or None at EOF (it died) or past ``deadline``."""
        chunks, got = [], 0
        while got < n:
            if deadline is not None:
                left = deadline - _now()
                if left <= 0 or not select.select([self._res], [], [], left)[0]:
                    return None
            chunk = os.read(self._res, n - got)
            if not chunk:
                return None
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def _stop(self) -> str:
        """End the worker (if alive), release its pipes, and say how it ended."""
        proc, self._proc = self._proc, None
        for fd in (self._cmd, self._res):
            if fd >= 0:
                os.close(fd)
        self._cmd = self._res = -1
        if proc is None:
            return "no worker"
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
        return self._ending(proc.returncode, err)

    def _ending(self, code: int, err: str) -> str:
        if code == -signal.SIGKILL and self.sandbox:
            return "the sandbox stopped the kernel: it made a system call (killed by SIGKILL)"
        tail = f": {err.splitlines()[-1]}" if err else ""
        if code < 0:
            return f"the kernel worker was killed by {_signal_name(-code)}{tail}"
        return f"the kernel worker exited with status {code}{tail}"

    def launch(self, launch_fn: int, kernel: int, kernargs: bytes, grid: Sequence[int], block: Sequence[int],
               dyn_shared: int, timeout: float | None = None) -> LaunchOutcome:
        """Run ``launch_fn`` (an image's ``__hrr_launch``, a device address) for ``kernel``
        over grid x block; ``timeout`` (seconds) stops a kernel that runs longer."""
        if len(kernargs) > MAX_KERNARGS:
            raise ValueError(f"{len(kernargs)} bytes of kernel arguments (at most {MAX_KERNARGS})")
        command = _COMMAND.pack(launch_fn, kernel, *grid, *block, dyn_shared, len(kernargs)) + bytes(kernargs)
        with self._lock:
            if self._proc is not None and self._proc.poll() is not None:
                self._stop()   # it died between launches (killed from outside): not this kernel's doing
            if self._proc is None:
                self._start()
            try:
                return self._exchange(command, timeout)
            except BaseException:
                # interrupted (KeyboardInterrupt...) mid-launch: the worker's reply would be
                # taken for the next launch's, so this worker goes
                self._stop()
                raise

    def _exchange(self, command: bytes, timeout: float | None) -> LaunchOutcome:
        """Send one launch and read its reply (the lock held)."""
        deadline = None if timeout is None else _now() + timeout
        try:
            _write_all(self._cmd, command)
        except OSError:
            return LaunchOutcome(-1, b"", self._stop())
        head = self._read(_REPLY.size, deadline)
        if head is None:
            return self._died(deadline, timeout)
        magic, status, printf_len, trap_len = _REPLY.unpack(head)
        if magic == MSG_FAULT:
            tail = self._read(_FAULT_TAIL.size, deadline) or bytes(_FAULT_TAIL.size)
            addr, ip = _FAULT_TAIL.unpack(tail)
            self._stop()
            return LaunchOutcome(-1, b"", describe_fault(status, printf_len, addr, ip), signo=status)
        if magic != MSG_DONE or printf_len > PRINTF_CAP or trap_len > 255:
            why = self._stop()   # a reply no worker.c writes: the kernel wrote to the pipe
            return LaunchOutcome(-1, b"", f"the kernel worker broke its protocol ({why})")
        body = self._read(printf_len + trap_len, deadline)
        if body is None:
            return self._died(deadline, timeout)
        return LaunchOutcome(status, body[:printf_len], None, body[printf_len:].decode(errors="replace"))

    def _died(self, deadline: float | None, timeout: float | None) -> LaunchOutcome:
        if deadline is not None and _now() >= deadline:
            self._stop()
            return LaunchOutcome(-1, b"", f"the kernel did not finish within {timeout} s (the worker was stopped)")
        return LaunchOutcome(-1, b"", self._stop())

    def close(self) -> None:
        """Stop the worker (a later launch starts a new one)."""
        with self._lock:
            self._stop()

    def __del__(self) -> None:
        # An int fd is not closed by the collector: without this a dropped client would
        # leave its worker waiting for commands until this process exits.
        try:
            self._stop()
        except Exception:  # noqa: BLE001 - nothing to report to at collection time
            pass

    def _forget_after_fork(self) -> None:
        """In a forked child: the worker is the parent's; drop our ends without touching it."""
        self._lock = threading.Lock()
        for fd in (self._cmd, self._res):
            if fd >= 0:
                os.close(fd)
        self._cmd = self._res = -1
        if self._proc is not None and self._proc.stderr:
            self._proc.stderr.close()
        self._proc = None


def _worker_env() -> dict[str, str]:
    """The parent's environment, single-threaded BLAS, and hrr importable from where this
    process imported it (its sys.path may have been changed at run time)."""
    import hrr
    root = os.path.dirname(os.path.dirname(os.path.abspath(hrr.__file__)))
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    # untraced: under hrr capture the worker must not record itself as one of the program's processes
    return {**untraced_env(), **_ONE_THREAD, "PYTHONPATH": path}


def _now() -> float:
    return time.monotonic()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _forget_all_after_fork() -> None:
    for worker in list(_workers):
        worker._forget_after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_all_after_fork)


# -- the worker process ------------------------------------------------------------------------
# ``python -m hrr.backends.sim.native.worker`` would first import the whole sim (its package
# builds the hip module: most of a second). The worker needs only this package, so it
# starts with the sim package registered as a bare namespace.
_BOOT = ("import os, sys, types\n"
         "import hrr.backends\n"
         "sim = types.ModuleType('hrr.backends.sim')\n"
         "sim.__path__ = [os.path.join(os.path.dirname(hrr.backends.__file__), 'sim')]\n"
         "sys.modules['hrr.backends.sim'] = sim\n"
         "from hrr.backends.sim.native.worker import main\n"
         "sys.exit(main(sys.argv[1:]))\n")
def main(argv: Sequence[str]) -> int:
    """The worker: map the arenas, make the services block, serve launches (never returns
    when the loop starts; returns an exit status when it cannot)."""
    lib_path, dev_fd, dev_size, pin_fd, pin_addr, pin_size, cmd_fd, res_fd, sandbox = argv
    map_memory(DEVICE_BASE, int(dev_size), _PROT_RWX, _MAP_SHARED_FIXED, int(dev_fd))
    os.close(int(dev_fd))
    if int(pin_fd) >= 0:
        map_memory(int(pin_addr), int(pin_size), _PROT_RW, _MAP_SHARED_FIXED, int(pin_fd))
        os.close(int(pin_fd))
    services = abi.make_services(printf_cap=PRINTF_CAP)
    lib = ctypes.CDLL(lib_path)
    threads = len(os.listdir("/proc/self/task"))
    if threads != 1:
        print(f"hrr kernel worker: {threads} threads run here; kernels need a single-threaded worker",
              file=sys.stderr)
        return 5
    rc = lib.hrr_worker_install_faults(int(res_fd))
    if rc != 0:
        print(f"hrr kernel worker: cannot install fault handlers: {os.strerror(-rc)}", file=sys.stderr)
        return 3
    stderr = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    rc = lib.hrr_worker_run(int(cmd_fd), int(res_fd), ctypes.c_uint64(services.address), int(sandbox), null)
    os.write(stderr, f"hrr kernel worker: cannot enter the sandbox (seccomp strict mode): "
                     f"{os.strerror(-rc)}\n".encode())
    return 4


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
