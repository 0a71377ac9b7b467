"""The native kernel worker's client: ``KernelWorker`` starts a worker process (worker.c,
a static executable) and runs launches in it.

What the worker holds: device memory (at ``DEVICE_BASE``, read, write, execute: kernel
images live there), pinned memory (at its own addresses), the host windows the sim gives
it (registered host memory, at the program's addresses), a read-only services block and
its own static code and data. It is exec'd from a sealed memfd with an empty environment
and argv ``hrr-kernel-worker``: nothing of the program or of the user's environment is in
its memory, and every descriptor but its pipes is closed before a kernel runs.

Its life is bound to its client's: it asks for SIGKILL when its parent dies
(PR_SET_PDEATHSIG; started from one long-lived thread, since that signal follows the
thread that started it), runs in its own process group (a terminal's Ctrl-C goes to the
program, which stops the worker), is watched through a pidfd, reaped when it ends, and
killed at exit. A reply is never the only proof that a launch finished: a kernel could
write one on the pipe itself, so after each reply the client checks that the worker is
back in its loop, blocked reading its next command (``/proc/PID/syscall``), with nothing
more written; a worker still running is stopped and the launch fails.

Pipe protocol (native byte order; see worker.c). Setup (once): u32 magic, u32 version,
i64 parent pid, u64 sandbox, device base and size, pinned base and size, windows,
printf cap, max fibers, stack bytes, dynamic shared cap, private ranges; then per window u64
address, size, offset (into descriptor 7); then per private range u64 address, size, 0 (device
memory the worker maps as its own zeroed memory: a kernel image's runtime state and __shared__,
given when a launch may be spread over several workers, pool.py). Command: launch_fn, kernel (u64 each), grid[3],
block[3], dyn_shared, nargs (u32 each), block_begin, block_end (u64), then nargs kernarg
bytes (at most 4096). Replies: READY once (u32 magic, i32 1 sandboxed / 0 not / -errno,
8 bytes zero); per launch DONE (u32 magic, i32 status, u32 printf_len, u32 trap_len, then
those bytes); or FAULT (u32 magic, i32 signal, i32 si_code, u32 0, u64 address, u64
instruction pointer) when a signal ended it.
"""
from __future__ import annotations

import atexit
import fcntl
import functools
import hashlib
import os
import platform
import queue
import select
import shlex
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
import weakref
from importlib import resources
from typing import Any, Callable, Sequence

import attrs

from hrr.ccompilers import c_compilers
from hrr.backends.sim.native import abi, toolchain
from hrr.backends.sim.native.arena import DEVICE_BASE, Arena
from hrr.backends.sim.native.windows import HostWindows
from hrr.config import untraced_env

MAX_KERNARGS = 4096
PRINTF_CAP = 1 << 20   # the worker's printf buffer: one launch's output at most
MAX_FIBERS, STACK_BYTES, DYN_SHARED_CAP = 1024, 128 << 10, 64 << 10
_SETUP = struct.Struct("=IIq11Q")
_WINDOW = struct.Struct("=QQQ")
_COMMAND = struct.Struct("=QQ3I3IIIQQ")
_REPLY = struct.Struct("=IiII")
_FAULT_TAIL = struct.Struct("=QQ")
MSG_SETUP, MSG_READY, MSG_DONE, MSG_FAULT = 0x52524830, 0x52524831, 0x52524832, 0x52524833
SETUP_VERSION = 2
FD_CMD, FD_RES, FD_DEVICE, FD_PINNED, FD_WINDOWS, FD_EXEC = 3, 4, 5, 6, 7, 8
_SOURCE = "worker.c"
ARGV0 = "hrr-kernel-worker"
START_SECONDS = 60.0     # a worker that has not said READY by then is not coming
IDLE_GRACE_SECONDS = 5.0  # how long a worker that replied may take to be back at its read
# read(2)'s number, as /proc/PID/syscall shows a process blocked in it
_SYS_READ = {"x86_64": b"0", "aarch64": b"63"}.get(platform.machine().lower(), b"0")


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
    timed_out: bool = False   # stopped at the launch's time limit

    @property
    def bad_address(self) -> bool:
        """The kernel touched memory it cannot reach (what a GPU reports as an illegal address)."""
        return self.signo in (signal.SIGSEGV, signal.SIGBUS)


# -- building worker.c ------------------------------------------------------------------------
def compilers() -> list[list[str]]:
    """C compiler command lines to try for the static worker, in order: $HRR_SIM_CXX, cc,
    gcc, clang (each with glibc's static libraries), ziglang (musl, built on first use)."""
    return c_compilers("HRR_SIM_CXX", "musl")


def _own_file(path: str) -> bytes | None:
    """The bytes of ``path`` if it is a regular file (not a link) owned by this user and
    writable by no one else, in a folder of the same kind; None otherwise."""
    try:
        folder = os.stat(os.path.dirname(path), follow_symlinks=False)
        if folder.st_uid != os.geteuid() or folder.st_mode & 0o022:
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
            return None
        data = f.read(64 << 20)
    return data if data[:4] == b"\x7fELF" else None


def _keep(folder: str, name: str, data: bytes) -> None:
    """Write ``data`` as folder/name atomically (mode 0700); nothing when the folder is not usable."""
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-worker-")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o700)
        os.replace(tmp, os.path.join(folder, name))
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


@functools.lru_cache(maxsize=None)
def _built_executable() -> bytes:
    native = resources.files(__package__)
    source = native.joinpath(_SOURCE).read_bytes()
    header = native.joinpath(abi.ABI_HEADER).read_bytes()
    cache = toolchain.cache_dir()
    logs = []
    for argv in compilers():
        key = hashlib.sha256(repr(argv).encode() + b"\0" + source + b"\0" + header).hexdigest()[:24]
        name = f"worker-{key}.bin"
        if cache is not None:
            data = _own_file(os.path.join(cache, name))
            if data is not None:
                return data
        with tempfile.TemporaryDirectory(prefix="hrr-worker-src-") as tmp:
            for file, text in ((_SOURCE, source), (abi.ABI_HEADER, header)):
                with open(os.path.join(tmp, file), "wb") as f:
                    f.write(text)
            out = os.path.join(tmp, "worker")
            try:
                done = subprocess.run([*argv, "-x", "c", "-O2", "-static", "-fno-builtin", "-I", tmp, "-o", out,
                                       os.path.join(tmp, _SOURCE), "-lm"], capture_output=True, text=True,
                                      timeout=600, env=untraced_env())
            except (OSError, subprocess.SubprocessError) as exc:
                logs.append(f"{shlex.join(argv)}: {exc}")
                continue
            if done.returncode != 0:
                logs.append(f"{shlex.join(argv)}: {done.stderr.strip()[-2000:]}")
                continue
            with open(out, "rb") as f:
                data = f.read()
        if cache is not None:
            _keep(str(cache), name, data)
        return data
    raise WorkerError("cannot build the kernel worker (no C compiler that links statically): "
                      + (" | ".join(logs) or "none found"))


_exe_lock = threading.Lock()
_exe_fd = -1
_MFD_CLOEXEC, _MFD_ALLOW_SEALING, _MFD_EXEC = 0x1, 0x2, 0x10
_SEALS = 0x1 | 0x2 | 0x4 | 0x8   # F_SEAL_SEAL, SHRINK, GROW, WRITE


def worker_executable() -> int:
    """A sealed memfd holding the worker executable (built once, kept in the cache)."""
    global _exe_fd
    with _exe_lock:
        if _exe_fd >= 0:
            return _exe_fd
        if not hasattr(os, "memfd_create"):
            raise WorkerError(f"the kernel worker needs Linux ({sys.platform} has no memfd)")
        data = _built_executable()
        try:
            fd = os.memfd_create(ARGV0, _MFD_CLOEXEC | _MFD_ALLOW_SEALING | _MFD_EXEC)
        except OSError:
            fd = os.memfd_create(ARGV0, _MFD_CLOEXEC | _MFD_ALLOW_SEALING)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _SEALS)
        _exe_fd = fd
        return fd


# -- starting a worker ---------------------------------------------------------------------------
class _Spawner:
    """Starts processes from one thread that lives as long as this process: the kernel
    sends PR_SET_PDEATHSIG when the *thread* that started a process ends, so a worker
    started from a short-lived thread would be killed with it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def run(self, job: Callable[[], int]) -> int:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="hrr-worker-spawner", daemon=True)
                self._thread.start()
        box: list[Any] = []
        done = threading.Event()
        self._jobs.put((job, box, done))
        done.wait()
        if isinstance(box[0], BaseException):
            raise box[0]
        return box[0]

    def _serve(self) -> None:
        while True:
            job, box, done = self._jobs.get()
            try:
                box.append(job())
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                box.append(exc)
            done.set()


_spawner = _Spawner()
_CLEAN_SIGNALS = tuple(getattr(signal, n) for n in ("SIGPIPE", "SIGINT", "SIGQUIT", "SIGTERM", "SIGHUP", "SIGXFSZ",
                                                    "SIGUSR1", "SIGUSR2") if hasattr(signal, n))


def _spawn(fds: dict[int, int]) -> int:
    """posix_spawn the worker with ``fds`` (target number -> descriptor, all >= 10), an empty
    environment, default signal actions, no blocked signal, in a process group of its own."""
    actions: list[tuple] = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)]
    actions += [(os.POSIX_SPAWN_DUP2, src, target) for target, src in sorted(fds.items())]
    return os.posix_spawn(f"/proc/self/fd/{FD_EXEC}", [ARGV0], {}, file_actions=actions, setpgroup=0,
                          setsigmask=(), setsigdef=_CLEAN_SIGNALS)


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


FORGED = "the kernel worker replied but did not go back to its loop: a kernel wrote the reply itself (it was stopped)"

_workers: "weakref.WeakSet[KernelWorker]" = weakref.WeakSet()


class KernelWorker:
    """The sim's handle on its kernel worker: started on the first launch, restarted on
    the launch after one that ended it. One launch at a time (thread-safe)."""

    def __init__(self, device_arena: Arena | None, pinned_arena: Arena | None, sandbox: bool = True,
                 registered: Callable[[], list[tuple[int, int]]] | None = None,
                 windows: HostWindows | None = None) -> None:
        """``registered``: the program's registered host ranges now, (address, bytes) each.
        ``windows``: host windows shared with other workers (pool.py, which keeps them up to
        date and copies around a launch); by default the worker's own."""
        self.device_arena, self.pinned_arena, self.sandbox = device_arena, pinned_arena, sandbox
        self._registered = registered
        self._windows = windows if windows is not None else HostWindows()
        #: device ranges this worker maps as its own memory (set by its pool before a launch)
        self.private: tuple[tuple[int, int], ...] = ()
        self._started_with: tuple[int, tuple[tuple[int, int], ...]] | None = None
        self._lock = threading.Lock()
        self._kill_lock = threading.Lock()   # the pidfd is not closed while another thread signals it
        self._pid: int | None = None
        self._pidfd = self._cmd = self._res = self._err = self._syscall = -1
        _workers.add(self)

    @property
    def pid(self) -> int | None:
        """The running worker's process id (None when none runs)."""
        return self._pid

    @property
    def pinned_shared(self) -> bool:
        """Whether kernels see pinned host memory (its arena is at the same address there)."""
        return self.pinned_arena is not None and self.pinned_arena.shareable and self.pinned_arena.fixed

    def _start(self) -> None:
        dev = self.device_arena
        if dev is not None and not dev.shareable:
            raise WorkerError(f"device memory cannot be shared with a kernel worker: {dev.not_shared}")
        exe = worker_executable()
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        err_r, err_w = os.pipe()
        wanted = {FD_CMD: cmd_r, FD_RES: res_w, 2: err_w, FD_EXEC: exe}
        if dev is not None:
            wanted[FD_DEVICE] = dev.fd
        pinned = self.pinned_arena if self.pinned_shared else None
        if pinned is not None:
            wanted[FD_PINNED] = pinned.fd
        windows = self._windows.windows
        if windows:
            wanted[FD_WINDOWS] = self._windows.fd
        high: dict[int, int] = {}
        try:   # above every target number, so that no dup2 in the child overwrites a source
            for target, fd in wanted.items():
                high[target] = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
            pid = _spawner.run(lambda: _spawn(high))
        except OSError as exc:
            for fd in (cmd_w, res_r, err_r):
                os.close(fd)
            raise WorkerError(f"cannot start the kernel worker: {exc}") from None
        finally:
            for fd in (*high.values(), cmd_r, res_w, err_w):
                os.close(fd)
        self._pid, self._cmd, self._res, self._err = pid, cmd_w, res_r, err_r
        self._pidfd = os.pidfd_open(pid)
        try:
            self._syscall = os.open(f"/proc/{pid}/syscall", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self._syscall = -1   # then the process state says whether it waits
        setup = _SETUP.pack(MSG_SETUP, SETUP_VERSION, os.getpid(), 1 if self.sandbox else 0,
                            DEVICE_BASE, dev.size if dev is not None else 0,
                            pinned.address if pinned is not None else 0, pinned.size if pinned is not None else 0,
                            len(windows), PRINTF_CAP, MAX_FIBERS, STACK_BYTES, DYN_SHARED_CAP, len(self.private))
        setup += b"".join(_WINDOW.pack(*w) for w in windows)
        setup += b"".join(_WINDOW.pack(a, n, 0) for a, n in self.private)
        self._started_with = (self._windows.generation, self.private)
        try:
            _write_all(self._cmd, setup)
        except OSError:
            pass   # it ended already: its reason is on its stderr
        head = self._read(_REPLY.size, _now() + START_SECONDS)
        magic, status = _REPLY.unpack(head)[:2] if head is not None else (0, 0)
        if magic != MSG_READY or status < 0:
            why = self._stop()
            if magic == MSG_READY:
                why = f"prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) fails here: {os.strerror(-status)}"
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

    def _exited(self) -> bool:
        return self._pidfd >= 0 and bool(select.select([self._pidfd], [], [], 0)[0])

    def _stop(self) -> str:
        """End the worker (if alive), reap it, release its descriptors, and say how it ended."""
        pid, self._pid = self._pid, None
        for fd in (self._cmd, self._res, self._syscall):
            if fd >= 0:
                os.close(fd)
        self._cmd = self._res = self._syscall = -1
        with self._kill_lock:
            pidfd, err_fd, self._pidfd, self._err = self._pidfd, self._err, -1, -1
        if pid is None:
            return "no worker"
        code = 0
        try:
            if not self._exited_fd(pidfd):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        except ChildProcessError:   # reaped already (the program ignores SIGCHLD)
            code = 0
        finally:
            os.close(pidfd)
        err = _drain(err_fd)
        return self._ending(code, err)

    @staticmethod
    def _exited_fd(pidfd: int) -> bool:
        return bool(select.select([pidfd], [], [], 0)[0])

    def _ending(self, code: int, err: str) -> str:
        if code == -signal.SIGKILL and self.sandbox:
            return "the sandbox stopped the kernel: it made a system call (killed by SIGKILL)"
        tail = f": {err.splitlines()[-1]}" if err else ""
        if code < 0:
            return f"the kernel worker was killed by {_signal_name(-code)}{tail}"
        return f"the kernel worker exited with status {code}{tail}"

    def launch(self, launch_fn: int, kernel: int, kernargs: bytes, grid: Sequence[int], block: Sequence[int],
               dyn_shared: int, timeout: float | None = None, blocks: tuple[int, int] = (0, 0)) -> LaunchOutcome:
        """Run ``launch_fn`` (an image's ``__hrr_launch``, a device address) for ``kernel``
        over grid x block (only the blocks [begin, end) of ``blocks`` when end > 0);
        ``timeout`` (seconds) stops a kernel that runs longer."""
        command = launch_command(launch_fn, kernel, kernargs, grid, block, dyn_shared, blocks)
        with self._lock:
            self._windows.update(self._registered() if self._registered is not None else [])
            self._windows.copy_in()
            try:
                return self._run(command, None if timeout is None else _now() + timeout, timeout)
            finally:
                self._windows.copy_out()

    def run(self, command: bytes, deadline: float | None, timeout: float | None) -> LaunchOutcome:
        """Run one ``launch_command`` (starting the worker first if it is not running, or
        again if its windows or private ranges changed since it started), the registered
        bytes copied in already; ``deadline`` (monotonic) stops a kernel that runs longer."""
        with self._lock:
            return self._run(command, deadline, timeout)

    def _run(self, command: bytes, deadline: float | None, timeout: float | None) -> LaunchOutcome:
        if self._pid is not None and self._exited():
            self._stop()   # it died between launches (killed from outside): not this kernel's doing
        if self._pid is not None and self._started_with != (self._windows.generation, self.private):
            self._stop()   # a worker maps its windows and private ranges when it starts
        if self._pid is None:
            self._start()
        try:
            return self._exchange(command, deadline, timeout)
        except BaseException:
            # interrupted (KeyboardInterrupt...) mid-launch: the worker's reply would be
            # taken for the next launch's, so this worker goes
            self._stop()
            raise

    def use_windows(self, windows: HostWindows) -> None:
        """Share ``windows`` (its pool's) from the next launch on."""
        self._windows = windows

    def kill(self) -> None:
        """Stop a running kernel from another thread (its launch then ends as a died worker)."""
        with self._kill_lock:
            if self._pidfd >= 0:
                try:
                    signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
                except OSError:
                    pass

    def _exchange(self, command: bytes, deadline: float | None, timeout: float | None) -> LaunchOutcome:
        """Send one launch and read its reply."""
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
        if not self._back_in_loop():
            self._stop()
            return LaunchOutcome(-1, b"", FORGED)
        return LaunchOutcome(status, body[:printf_len], None, body[printf_len:].decode(errors="replace"))

    def _waiting(self) -> bool:
        """Whether the worker is now blocked reading its command pipe (read(2) on FD_CMD),
        or, where /proc/PID/syscall cannot be read, sleeping."""
        try:
            if self._syscall >= 0:
                fields = os.pread(self._syscall, 128, 0).split()
                return len(fields) > 1 and fields[0] == _SYS_READ and int(fields[1], 16) == FD_CMD
            with open(f"/proc/{self._pid}/stat", "rb") as f:
                return f.read(512).rsplit(b")", 1)[-1].split()[0] == b"S"
        except (OSError, ValueError, IndexError):
            return False

    def _back_in_loop(self) -> bool:
        """After a reply: the worker waits for its next command and wrote nothing more. A
        kernel that wrote a reply itself and went on running fails this within the grace."""
        limit, pause = _now() + IDLE_GRACE_SECONDS, 0.0
        while True:
            if self._waiting():
                return _unread(self._res) == 0
            if _now() > limit or self._exited():
                return False
            if pause:
                time.sleep(pause)
            else:
                os.sched_yield()
            pause = min(max(pause * 2, 20e-6), 5e-3)

    def _died(self, deadline: float | None, timeout: float | None) -> LaunchOutcome:
        if deadline is not None and _now() >= deadline:
            self._stop()
            return LaunchOutcome(-1, b"", f"the kernel did not finish within {timeout:g} s (the worker was stopped)",
                                 timed_out=True)
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
        self._kill_lock = threading.Lock()
        self._started_with = None
        for fd in (self._cmd, self._res, self._err, self._pidfd, self._syscall):
            if fd >= 0:
                os.close(fd)
        self._cmd = self._res = self._err = self._pidfd = self._syscall = -1
        self._pid = None
        self._windows = HostWindows()   # the parent's memfd is the parent's: lay out our own


def launch_command(launch_fn: int, kernel: int, kernargs: bytes, grid: Sequence[int], block: Sequence[int],
                   dyn_shared: int, blocks: tuple[int, int] = (0, 0)) -> bytes:
    """A launch's command for the worker (ValueError when the kernel arguments are too long)."""
    if len(kernargs) > MAX_KERNARGS:
        raise ValueError(f"{len(kernargs)} bytes of kernel arguments (at most {MAX_KERNARGS})")
    return _COMMAND.pack(launch_fn, kernel, *grid, *block, dyn_shared, len(kernargs), *blocks) + bytes(kernargs)


# -- the sandbox probe ---------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def sandbox_support() -> tuple[bool, str]:
    """Whether kernels can run under seccomp strict mode here, and why not."""
    if not sys.platform.startswith("linux"):
        return False, f"seccomp is Linux's ({sys.platform} has none)"
    probe = KernelWorker(None, None, sandbox=True)
    try:
        probe._start()
    except WorkerError as exc:
        return False, str(exc)
    finally:
        probe.close()
    return True, "seccomp strict mode works"


def _now() -> float:
    return time.monotonic()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _unread(fd: int) -> int:
    """Bytes waiting in the pipe ``fd``."""
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]


def _drain(fd: int) -> str:
    """What the worker wrote on its stderr (it has ended), as text; closes ``fd``."""
    if fd < 0:
        return ""
    chunks: list[bytes] = []
    try:
        os.set_blocking(fd, False)
        while sum(map(len, chunks)) < 1 << 16:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:
        pass
    finally:
        os.close(fd)
    return b"".join(chunks).decode(errors="replace").strip()


def close_all() -> None:
    """Stop every worker of this process (at exit: none outlives the program)."""
    for worker in list(_workers):
        try:
            worker.close()
        except Exception:  # noqa: BLE001 - at exit, the next one still goes
            pass


def _forget_all_after_fork() -> None:
    global _spawner
    _spawner = _Spawner()   # the parent's thread is not in the child
    for worker in list(_workers):
        worker._forget_after_fork()


atexit.register(close_all)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_all_after_fork)
