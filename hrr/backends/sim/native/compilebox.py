"""The compiler's sandbox: every compile of a program's HIP C++ runs in a process that can
open only the toolchain's folders (read and execute) and the compile's own scratch folder
(read and write), with no network and bounded CPU time, memory and output.

A short bootstrap (``python -I -S -c``, nothing of the program loaded) sets the limits,
confines itself and then execs the compiler, so the compiler and everything it starts
(``zig clang``, ``cc1plus``, the assembler, the linker) inherit the confinement:

- resource limits: CPU seconds (``RLIMIT_CPU``), address space (``RLIMIT_AS``), the size of
  every file written, the log included (``RLIMIT_FSIZE``), no core files;
- no new privileges, and a seccomp filter that fails ``socket()`` (no network of any kind);
- the file system, by the first of these that works here:
  ``landlock`` (Linux 5.13 and later, unprivileged): opening anything outside the allowed
  folders fails; TCP bind/connect and signals outside the sandbox refused where the
  kernel's Landlock has them;
  ``namespace``: an unprivileged user + mount + network namespace whose root is an empty
  tmpfs holding only read-only binds of the toolchain's folders and the scratch folder;
  neither: no sandbox (``support()`` says why; policy.py decides whether to compile anyway).

The compiler runs in its own process group, killed whole when it outlives its time; its log
goes to a file in the scratch folder, of which only the head and tail are read back.
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
from typing import Sequence

import attrs

#: How much of a compiler's log is kept (head and tail).
LOG_HEAD = 48 * 1024
LOG_TAIL = 16 * 1024

MODES = ("landlock", "namespace")

_BOOT = r'''
import ctypes, json, os, resource as R, struct, sys
spec = json.loads(sys.argv[1]); argv = sys.argv[2:]
libc = ctypes.CDLL(None, use_errno=True)
def fail(what):
    os.write(2, ("hrr-sandbox: " + what + ": " + os.strerror(ctypes.get_errno()) + "\n").encode())
    os._exit(125)
def limit(which, n):
    soft, hard = R.getrlimit(which)
    n = n if hard == R.RLIM_INFINITY else min(n, hard)
    R.setrlimit(which, (n, hard if which == R.RLIMIT_CPU and hard != R.RLIM_INFINITY else n))
limit(R.RLIMIT_CORE, 0)
limit(R.RLIMIT_CPU, spec["cpu"])
limit(R.RLIMIT_AS, spec["mem"])
limit(R.RLIMIT_FSIZE, spec["fsize"])
sc = libc.syscall
sc.restype = ctypes.c_long
if libc.prctl(38, 1, 0, 0, 0) != 0:
    fail("prctl(PR_SET_NO_NEW_PRIVS)")
mode = spec["mode"]
if mode == "landlock":
    abi = sc(ctypes.c_long(444), None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi < 1:
        fail("landlock_create_ruleset")
    fs = (1 << 13) - 1 | (1 << 13 if abi >= 2 else 0) | (1 << 14 if abi >= 3 else 0) | (1 << 15 if abi >= 5 else 0)
    attr = struct.pack("=QQQ", fs, 3 if abi >= 4 else 0, 3 if abi >= 6 else 0)[:8 if abi < 4 else 16 if abi < 6 else 24]
    abuf = ctypes.create_string_buffer(attr, len(attr))
    rs = sc(ctypes.c_long(444), abuf, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if rs < 0:
        fail("landlock_create_ruleset")
    file_rights = 1 | 2 | 4 | (1 << 14 if abi >= 3 else 0)
    for path, write in spec["paths"]:
        try:
            pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
        rights = fs if write else (1 | 4 | 8)
        if not os.path.isdir(path):
            rights &= file_rights
        rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, pfd), 12)
        if sc(ctypes.c_long(445), ctypes.c_int(rs), ctypes.c_int(1), rule, ctypes.c_uint32(0)) != 0:
            fail("landlock_add_rule " + path)
        os.close(pfd)
    if sc(ctypes.c_long(446), ctypes.c_int(rs), ctypes.c_uint32(0)) != 0:
        fail("landlock_restrict_self")
    os.close(rs)
elif mode == "namespace":
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(0x10000000 | 0x00020000 | 0x40000000 | 0x08000000 | 0x20000000) != 0:
        fail("unshare(user, mount, network, ipc, pid)")
    maps = (("setgroups", "deny"), ("uid_map", "%d %d 1" % (uid or 65534, uid)),
            ("gid_map", "%d %d 1" % (gid or 65534, gid)))
    for name, text in maps:
        with open("/proc/self/" + name, "w") as f:
            f.write(text)
    child = os.fork()
    if child:
        _, status = os.waitpid(child, 0)
        if os.WIFSIGNALED(status):
            import signal
            signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
            os.kill(os.getpid(), os.WTERMSIG(status))
        os._exit(os.waitstatus_to_exitcode(status))
    root = spec["root"]
    def mount(src, dst, fstype, flags, data):
        enc = lambda t: t.encode() if t else None
        if libc.mount(enc(src), enc(dst), enc(fstype), ctypes.c_ulong(flags), enc(data)) != 0:
            fail("mount " + dst)
    mount(None, "/", None, 0x4000 | 0x40000, None)
    mount("tmpfs", root, "tmpfs", 2 | 4 | 8, "size=1m,mode=755")
    for path, write in spec["paths"]:
        if not os.path.exists(path):
            continue
        dst = root + path
        if os.path.isdir(path):
            os.makedirs(dst, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            open(dst, "w").close()
        mount(path, dst, None, 0x1000 | 0x4000, None)
        st = os.statvfs(path).f_flag
        kept = (st & (2 | 4 | 8 | 1024 | 2048)) | (0x200000 if st & 4096 else 0)
        mount(None, dst, None, 0x1000 | 0x20 | kept | (0 if write else 1), None)
    os.makedirs(root + "/proc", exist_ok=True)
    mount("proc", root + "/proc", "proc", 2 | 4 | 8, None)
    mount(None, root, None, 0x20 | 1 | 2 | 4 | 8, None)
    os.chdir(root)
    if sc(ctypes.c_long(155 if os.uname().machine == "x86_64" else 41), b".", b".") != 0:
        fail("pivot_root")
    if libc.umount2(b".", 2) != 0:
        fail("umount2")
    os.chdir("/")
elif mode != "limits":
    fail("unknown sandbox " + mode)
machine = os.uname().machine
arch, nr = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198)}.get(machine, (0, -1))
if nr >= 0:
    ins = [(0x20, 0, 0, 4), (0x15, 0, 3, arch), (0x20, 0, 0, 0), (0x15, 0, 1, nr),
           (0x06, 0, 0, 0x00050000 | 13), (0x06, 0, 0, 0x7FFF0000)]
    prog = ctypes.create_string_buffer(b"".join(struct.pack("=HBBI", *i) for i in ins))
    fprog = struct.pack("=HxxxxxxQ", len(ins), ctypes.addressof(prog))
    if libc.prctl(22, 2, ctypes.create_string_buffer(fprog, len(fprog)), 0, 0) != 0:
        fail("seccomp filter")
if spec.get("probe"):
    try:
        open(spec["probe"]).close()
    except OSError:
        os._exit(0)
    os._exit(3)
os.chdir(spec["cwd"])
os.execve(argv[0], argv, spec["env"])
'''


@attrs.frozen
class Box:
    """What one sandboxed compile may use."""

    read: tuple[str, ...]        #: folders (or files) it may read and execute
    write: tuple[str, ...]       #: folders it may read and write (the scratch folder)
    seconds: float               #: wall-clock and CPU time
    memory: int                  #: address space of each process, bytes
    output: int                  #: the largest file it may write, bytes


@attrs.frozen
class Outcome:
    """How a sandboxed command ended."""

    returncode: int
    log: str
    timed_out: bool = False
    #: why it ended, in words, when a limit or a signal ended it ('' otherwise)
    stopped: str = ""


@functools.lru_cache(maxsize=None)
def support() -> tuple[str | None, str]:
    """The sandbox that works here (``landlock``, ``namespace``) and in words what it is, or
    ``(None, why none works)``. Probed once per process: a sandboxed bootstrap that tries to
    open a file outside what it may open."""
    if not sys.platform.startswith("linux"):
        return None, f"the compiler sandbox needs Linux ({sys.platform} has neither Landlock nor namespaces)"
    why = []
    for mode in MODES:
        ok, detail = _probe(mode)
        if ok:
            return mode, detail
        why.append(f"{mode}: {detail}")
    return None, "neither Landlock nor an unprivileged user namespace works here (" + "; ".join(why) + ")"


def _probe(mode: str) -> tuple[bool, str]:
    import tempfile   # only here: the probe runs once per process
    with tempfile.TemporaryDirectory(prefix="hrr-probe-") as tmp:
        outside = os.path.join(tmp, "outside")
        inside = os.path.join(tmp, "inside")
        os.mkdir(inside)
        with open(outside, "w") as f:
            f.write("canary")
        os.mkdir(_root_for(inside))
        spec = _spec(mode, Box((), (inside,), 30, 1 << 30, 1 << 20), inside, {}, root=_root_for(inside))
        spec["probe"] = outside
        try:
            done = subprocess.run([sys.executable, "-I", "-S", "-c", _BOOT, json.dumps(spec), "true"],
                                  capture_output=True, timeout=60, stdin=subprocess.DEVNULL, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            return False, str(exc)
    err = done.stderr.decode(errors="replace").strip().splitlines()
    if done.returncode == 0:
        return True, {"landlock": "Landlock", "namespace": "a user + mount namespace"}[mode]
    if done.returncode == 3:
        return False, "a file outside the sandbox stayed readable"
    return False, (err[-1].removeprefix("hrr-sandbox: ") if err else f"exit status {done.returncode}")


def _root_for(work: str) -> str:
    """The empty folder a namespace sandbox mounts its root on (beside the scratch folder)."""
    return os.path.join(os.path.dirname(work.rstrip("/")) or "/", ".root")


def _spec(mode: str, box: Box, cwd: str, env: dict[str, str], *, root: str) -> dict:
    paths = [(p, False) for p in box.read] + [(p, True) for p in box.write] + [("/dev/null", True)]
    return {"mode": mode, "paths": paths, "cpu": max(1, int(box.seconds) + 1), "mem": int(box.memory),
            "fsize": int(box.output), "cwd": cwd, "env": env, "root": root}


def run(argv: Sequence[str], box: Box, *, cwd: str, env: dict[str, str], mode: str | None,
        log_path: str) -> Outcome:
    """Run ``argv`` confined by ``box`` (``mode`` None: limits only, no confinement) in its own
    process group; its output goes to ``log_path``, of which the head and tail come back."""
    argv = [shutil.which(argv[0], path=env.get("PATH")) or argv[0], *argv[1:]]
    root = _root_for(cwd)
    if mode == "namespace":
        os.makedirs(root, exist_ok=True)
    spec = _spec(mode or "limits", box, cwd, env, root=root)
    timed_out = False
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", _BOOT, json.dumps(spec), *argv],
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=cwd, env=env,
                                start_new_session=True)
        try:
            proc.wait(timeout=box.seconds)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            _kill_group(proc)
    text = _read_log(log_path)
    code = proc.returncode
    stopped = ""
    if timed_out:
        stopped = f"the compiler did not finish within {box.seconds:g} s and was stopped"
    elif code == -signal.SIGXCPU or code == -signal.SIGKILL:
        stopped = f"the compiler used up its {box.seconds:g} s of CPU time and was stopped"
    elif code == -signal.SIGXFSZ or (code != 0 and "File too large" in text):
        stopped = f"the compiler wrote a file larger than {box.output} bytes and was stopped"
    elif code != 0 and any(m in text.lower() for m in ("out of memory", "bad_alloc", "virtual memory exhausted",
                                                       "cannot allocate memory")):   # clang's words, then g++'s
        stopped = f"the compiler ran out of memory (its limit is {box.memory} bytes)"
    elif code < 0:
        stopped = f"the compiler ended on {_signal_name(-code)} (its memory limit is {box.memory} bytes)"
    elif code == 125 and "hrr-sandbox: " in text:
        stopped = "the compiler's sandbox could not be set up: " + text.rsplit("hrr-sandbox: ", 1)[-1].strip()
    return Outcome(code if code is not None else -1, text, timed_out, stopped)


def _kill_group(proc: subprocess.Popen) -> None:
    """End the command and everything it started (its process group), and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _signal_name(signo: int) -> str:
    try:
        return signal.Signals(signo).name
    except ValueError:
        return f"signal {signo}"


def _read_log(path: str) -> str:
    """The log's head and tail (what lies between is counted, not read)."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size <= LOG_HEAD + LOG_TAIL:
            return f.read().decode(errors="replace")
        head = f.read(LOG_HEAD)
        f.seek(size - LOG_TAIL)
        tail = f.read(LOG_TAIL)
    head = head[:head.rfind(b"\n") + 1]   # whole lines only: a cut path would read as another path
    tail = tail[tail.find(b"\n") + 1:]
    cut = size - len(head) - len(tail)
    return (head.decode(errors="replace") + f"[... {cut} bytes of the compiler's log left out ...]\n"
            + tail.decode(errors="replace"))
