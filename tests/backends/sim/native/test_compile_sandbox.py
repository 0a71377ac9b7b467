"""The compiler runs in a sandbox: a program's source (an archive's, so a stranger's) cannot make
the compiler read a host file into its image, however it spells the path, nor outrun its
time, memory and output limits. Each attack runs under each sandbox this Linux offers
(Landlock, a user + mount namespace); the payloads only read a canary file the test makes."""
from __future__ import annotations

import os
import socket
import sys
import time

import numpy as np
import pytest
from hrrtest import compiler_knows_embed
from nativerun import Loaded

from hrr.backends.sim.native import compilebox, policy, toolchain
from hrr.backends.sim.native.toolchain import SourceUnit, compile_program, find_toolchain

pytestmark = pytest.mark.skipif(find_toolchain() is None, reason="no C++ compiler for native kernels")

CANARY = b"hrr-canary-5b1e9c"
MODES = [m for m in compilebox.MODES]


@pytest.fixture(params=MODES)
def mode(request, monkeypatch, tmp_path):
    ok, why = compilebox._probe(request.param)
    if not ok:
        pytest.skip(f"{request.param} does not work here: {why}")
    monkeypatch.setattr(compilebox, "support", lambda: (request.param, "forced by the test"))
    monkeypatch.setenv("HRR_CACHE_DIR", str(tmp_path / "cache"))   # every attack compiles
    return request.param


@pytest.fixture
def canary(tmp_path):
    path = tmp_path / "outside" / "canary.txt"
    path.parent.mkdir()
    path.write_bytes(CANARY)
    return str(path)


def _up(path: str) -> str:
    """The canary's path as a '..' path from wherever the compile's folder is."""
    return "../" * 40 + path.lstrip("/")


def _not_leaked(result: toolchain.CompileResult) -> None:
    assert CANARY not in result.log.encode()
    if result.ok:
        assert result.image is not None and CANARY not in result.image


KERNEL = 'extern "C" __global__ void k(int *x) { x[0] = V; }\n'


@pytest.mark.parametrize("spelling", [
    '#define P "{abs}"\n#embed P\n',
    '#define P "{up}"\nstatic const char d[] = {{\n#embed P\n}};\n',
    '#define P "{up}"\n#include P\n',
    '%:define P "{abs}"\n%:include P\n',
    '# /* a comment */ include "{up}"\n',
    '#inc\\\nlude "{up}"\n',
    '#define P "{abs}"\n__asm__(".incbin " P);\n',
])
def test_the_compiler_cannot_read_a_host_file(mode, canary, spelling):
    """Not read: the compile fails (cannot open) or goes on without it (clang's #embed of a
    file it may not open embeds nothing)."""
    src = spelling.format(abs=canary, up=_up(canary)) + "#define V 1\n" + KERNEL
    result = compile_program([SourceUnit("evil.hip", src.encode())], [])
    _not_leaked(result)


def test_unconfined_the_same_source_would_put_the_file_in_the_image(monkeypatch, tmp_path, canary):
    """What the sandbox stops (so the test above can fail): without it the file is embedded."""
    if not compiler_knows_embed():
        pytest.skip("this compiler has no #embed (g++ before 15): the attack it would show does not exist here")
    monkeypatch.setattr(compilebox, "support", lambda: (None, "test"))
    monkeypatch.setattr(toolchain, "_outside", lambda *a, **k: False)   # nor the dependency check
    monkeypatch.setenv("HRR_CACHE_DIR", str(tmp_path / "cache"))
    src = f'#define P "{_up(canary)}"\nstatic const char d[] = {{\n#embed P\n, 0}};\n'
    src += '__device__ const char *keep = d;\n#define V 1\n' + KERNEL
    result = compile_program([SourceUnit("evil.hip", src.encode())], [])
    assert result.ok and CANARY in result.image


def test_embedding_stdin_reads_nothing_piped_into_hrr(mode, tmp_path, canary):
    """The compiler's standard input is /dev/null, whatever hrr's is."""
    src = '#define P </dev/stdin>\nstatic const char d[] = {\n%:embed P\n, 0};\n#define V 1\n' + KERNEL
    with open(canary, "rb") as piped:
        saved = os.dup(0)
        os.dup2(piped.fileno(), 0)
        try:
            result = compile_program([SourceUnit("stdin.hip", src.encode())], [])
        finally:
            os.dup2(saved, 0)
            os.close(saved)
    _not_leaked(result)


def test_an_option_cannot_define_its_way_past_the_asm_poisoning(mode, canary):
    src = 'ASM(".incbin \\"' + canary + '\\"");\n#define V 1\n' + KERNEL
    result = compile_program([SourceUnit("evil.hip", src.encode())], ["-DASM=__asm__"])
    assert not result.ok and "poisoned" in result.log
    _not_leaked(result)


@pytest.mark.parametrize("option", ["-DX=1\n#include \"/etc/hostname\"", "-DX(=1", "-D1X=2", "-DX=a\\",
                                    "-UX=1"])
def test_macro_options_only_in_the_forms_hiprtc_takes(mode, option):
    result = compile_program([SourceUnit("k.hip", b"#define V 1\n" + KERNEL.encode())], [option])
    assert result.ok, result.log
    assert "ignored: not a macro definition" in result.log


def test_macro_options_still_define_and_undefine(mode):
    src = b"#ifdef GONE\n#error gone\n#endif\n" + KERNEL.encode()
    result = compile_program([SourceUnit("k.hip", src)], ["-DV=41+1", "--define-macro=GONE", "-UGONE", "-DF(a)=a"])
    assert result.ok, result.log
    x = np.zeros(1, dtype=np.int32)
    assert Loaded(result.image).launch("k", [x]) == 0 and x[0] == 42


@pytest.mark.parametrize("probe", ['#if __has_include(P)\n#define V 1\n#else\n#define V 2\n#endif\n',
                                   '#pragma GCC dependency P\n#define V 1\n'])
def test_probing_for_a_host_file_tells_the_kernel_nothing(mode, canary, probe):
    """The kernel never sees whether the file exists: in a namespace it does not; under
    Landlock a file it may not open stops the compile (the replaying user sees a compile
    error, the kernel does not run)."""
    src = f'#define P "{canary}"\n{probe}{KERNEL}'
    result = compile_program([SourceUnit("probe.hip", src.encode())], [])
    if "dependency" in probe:
        assert not result.ok   # as for a file that does not exist
    elif result.ok:
        x = np.zeros(1, dtype=np.int32)
        assert Loaded(result.image).launch("k", [x]) == 0 and x[0] == 2   # not there
    else:
        assert mode == "landlock"


def test_a_crashing_compiler_leaves_nothing_in_tmpdir(mode, tmp_path, monkeypatch):
    if find_toolchain().kind not in ("zig", "clang"):
        pytest.skip("the crash pragma is clang's")
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setattr("tempfile.tempdir", None)
    src = b"#pragma clang __debug crash\n#define V 1\n" + KERNEL.encode()
    result = compile_program([SourceUnit("crash.hip", src)], [])
    assert not result.ok
    assert list(tmpdir.iterdir()) == []


def _compiler_processes(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


#: 2^40 distinct instantiations: grows without end, well under every depth limit
TEMPLATE_BOMB = b"""
template <int N, long M> struct B { static constexpr long v = B<N - 1, 2 * M>::v + B<N - 1, 2 * M + 1>::v; };
template <long M> struct B<0, M> { static constexpr long v = 1; };
constexpr long V = B<40, 0>::v;
""" + KERNEL.encode()


def test_a_constexpr_bomb_stops_in_bounded_time(mode, tmp_path, monkeypatch):
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setattr("tempfile.tempdir", None)
    monkeypatch.setattr(toolchain, "COMPILE_SECONDS", 3.0)
    start = time.monotonic()
    result = compile_program([SourceUnit("bomb.hip", TEMPLATE_BOMB)], [])
    elapsed = time.monotonic() - start
    assert not result.ok
    assert elapsed < 30
    assert _compiler_processes(str(tmpdir)) == []
    assert list(tmpdir.iterdir()) == []


def test_replay_seconds_bound_a_compile(mode, monkeypatch):
    with policy.archive_kernels(False, seconds_left=lambda: 2.0):
        start = time.monotonic()
        result = compile_program([SourceUnit("bomb.hip", TEMPLATE_BOMB)], [])
    assert not result.ok and time.monotonic() - start < 30
    assert "2 s" in result.log and "stopped" in result.log


class _Budget:
    def __init__(self, cap: int) -> None:
        self.cap, self.used = cap, 0

    def charge(self, n: int, what: str) -> int:
        self.used += n
        return n

    def release(self, n: int) -> None:
        self.used -= n


def test_a_memory_bomb_stops_at_the_host_budget(mode):
    with policy.archive_kernels(False, budget=_Budget(300 << 20)):
        start = time.monotonic()
        result = compile_program([SourceUnit("mem.hip", TEMPLATE_BOMB)], [])
    assert not result.ok and time.monotonic() - start < 120
    assert "the compiler ran out of memory" in result.log or "its memory limit is" in result.log


def test_a_huge_image_is_refused_by_the_host_budget(mode):
    src = b"__device__ char big[200 << 20] = {1};\n#define V 1\n" + KERNEL.encode()
    with policy.archive_kernels(False, budget=_Budget(100 << 20)):
        result = compile_program([SourceUnit("big.hip", src)], [])
    assert not result.ok and "larger than" in result.log


def test_the_compiler_log_is_bounded(mode):
    line = b'#pragma message("a long line of noise ' + b"x" * 300 + b'")\n'
    src = b"#define V 1\n" + KERNEL.encode() + line * 20000
    result = compile_program([SourceUnit("noisy.hip", src)], [])
    assert result.ok
    assert len(result.log) < compilebox.LOG_HEAD + compilebox.LOG_TAIL + 1000
    assert "left out" in result.log


def test_an_archive_kernel_compile_is_refused_without_a_sandbox(monkeypatch, tmp_path):
    monkeypatch.setattr(compilebox, "support", lambda: (None, "no Landlock, no user namespace (test)"))
    monkeypatch.setenv("HRR_CACHE_DIR", str(tmp_path / "cache"))
    unit = SourceUnit("k.hip", b"#define V 1\n" + KERNEL.encode())
    with policy.archive_kernels(False):
        refused = compile_program([unit], [])
    assert not refused.ok and "no compiler sandbox works here" in refused.log and "(test)" in refused.log
    with policy.archive_kernels(True):
        assert compile_program([unit], []).ok
    assert compile_program([unit], ["-DW=1"]).ok   # a program's own kernels compile anyway


def test_dependency_paths_are_normalised():
    text = "/w/u0/../../../etc/hostname /w/h/x.h"
    assert "/etc/hostname" in toolchain._normalised(text, "/w")
    assert toolchain._outside(toolchain._normalised(text, "/w"), ["/w"])
    assert not toolchain._outside(toolchain._normalised("/w/u0/../h/x.h", "/w"), ["/w"])


# ---- the sandbox itself, with a Python program in it ----------------------------------------

_PROGRAM = """
import os, socket, sys
out = []
try:
    open(sys.argv[1]).read(); out.append("read")
except OSError: out.append("noread")
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM); out.append("socket")
except OSError: out.append("nosocket")
open("written", "w").write("ok"); out.append("wrote")
print(" ".join(out))
"""


def _python_box(work: str, seconds: float = 30, output: int = 1 << 20) -> compilebox.Box:
    roots = tuple(dict.fromkeys([sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable)),
                                 "/usr/lib", "/lib", "/lib64", "/usr/lib64", "/etc/ld.so.cache"]))
    return compilebox.Box(roots, (work,), seconds, 2 << 30, output)


def test_a_sandboxed_process_opens_only_its_folder_and_has_no_network(mode, tmp_path, canary):
    work = tmp_path / "w"
    work.mkdir()
    out = compilebox.run([sys.executable, "-I", "-S", "-c", _PROGRAM, canary], _python_box(str(work)),
                         cwd=str(work), env={}, mode=mode, log_path=str(tmp_path / "log"))
    assert out.returncode == 0, out.log
    assert out.log.split() == ["noread", "nosocket", "wrote"]
    assert (work / "written").read_text() == "ok"


def test_an_unconfined_process_could_do_all_that(tmp_path, canary):
    work = tmp_path / "w"
    work.mkdir()
    out = compilebox.run([sys.executable, "-I", "-S", "-c", _PROGRAM, canary], _python_box(str(work)),
                         cwd=str(work), env={}, mode=None, log_path=str(tmp_path / "log"))
    assert out.log.split() == ["read", "nosocket", "wrote"]   # limits and the socket filter only


def test_a_process_that_outlives_its_time_is_killed_with_its_children(mode, tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    marker = f"sleeper-{os.getpid()}-{time.monotonic_ns()}"
    child = ("import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', "
             f"'{marker}']); time.sleep(60)")
    start = time.monotonic()
    out = compilebox.run([sys.executable, "-I", "-S", "-c", child], _python_box(str(work), seconds=2),
                         cwd=str(work), env={}, mode=mode, log_path=str(tmp_path / "log"))
    assert out.timed_out and "did not finish within 2 s" in out.stopped
    assert time.monotonic() - start < 15
    time.sleep(0.2)
    assert _compiler_processes(marker) == []


def test_a_file_larger_than_the_output_limit_stops_the_process(mode, tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    prog = "open('big', 'wb').write(b'x' * (8 << 20))"
    out = compilebox.run([sys.executable, "-I", "-S", "-c", prog], _python_box(str(work), output=1 << 20),
                         cwd=str(work), env={}, mode=mode, log_path=str(tmp_path / "log"))
    assert out.returncode != 0 and (work / "big").stat().st_size <= 1 << 20


def test_support_names_what_it_found():
    mode, what = compilebox.support()
    assert (mode in compilebox.MODES and what) or (mode is None and "neither" in what)


def test_a_socket_is_refused_even_for_a_local_address(mode, tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    prog = (f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2); print('connected')\n"
            "except OSError as e: print('refused')")
    out = compilebox.run([sys.executable, "-I", "-S", "-c", prog], _python_box(str(work)),
                         cwd=str(work), env={}, mode=mode, log_path=str(tmp_path / "log"))
    server.close()
    assert out.log.strip() == "refused"
