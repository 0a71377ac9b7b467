"""A program's own HIP C++ kernels: captured on the sim, replayed on the sim byte for byte,
the kernels compiled again from the archive's source and run in the sandbox; an archive's
kernels never run unsandboxed unless the user trusts it."""
from __future__ import annotations

import ctypes
import platform

import numpy as np
import pytest

from hrr.archive.limits import Limits
from hrr.backends.sim.native import policy, toolchain, worker
from hrrtest import archive_calls, capture, compiler_knows_embed, only, replay, text

pytestmark = pytest.mark.skipif(toolchain.find_toolchain() is None, reason="no C++ compiler for the sim")

SOURCE = rb"""
extern "C" __global__ void histogram(unsigned* bins, const unsigned char* data, unsigned n) {
  __shared__ unsigned local[16];
  if (threadIdx.x < 16) local[threadIdx.x] = 0;
  __syncthreads();
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&local[data[i] & 15], 1u);
  __syncthreads();
  if (threadIdx.x < 16) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}

extern "C" __global__ void escape(unsigned char* code, int* out) {
  /* inline asm is refused at compile time, so write the machine code of getpid() into
     device memory and call it: only the sandbox can stop this */
  const unsigned char getpid_x86_64[] = {0xb8, 39, 0, 0, 0, 0x0f, 0x05, 0xc3};  /* mov eax,39; syscall; ret */
  for (int i = 0; i < 8; i++) code[i] = getpid_x86_64[i];
  out[0] = ((int (*)())code)();
}
"""


def _app(hip, hiprtc, be, kernel=b"histogram"):
    def ok(r):
        assert int(r[0]) == 0, r
        return r[1] if len(r) == 2 else r[1:]
    prog = ok(hiprtc.hiprtcCreateProgram(SOURCE, b"hist.hip", 0, [], []))
    assert int(hiprtc.hiprtcCompileProgram(prog, 1, [b"--offload-arch=gfx942"])[0]) == 0
    code = bytearray(ok(hiprtc.hiprtcGetCodeSize(prog)))
    hiprtc.hiprtcGetCode(prog, code)
    module = ok(hip.hipModuleLoadData(code))
    fn = ok(hip.hipModuleGetFunction(module, kernel))
    if kernel == b"escape":
        code_buf, out = ok(hip.hipMalloc(64)), ok(hip.hipMalloc(4))
        hip.hipModuleLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, None, (code_buf, out))
        return hip.hipDeviceSynchronize()[0]
    data = np.random.default_rng(7).integers(0, 256, 10_000, dtype=np.uint8)
    d_data, d_bins = ok(hip.hipMalloc(data.nbytes)), ok(hip.hipMalloc(64))
    hip.hipMemcpy(d_data, data, data.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice)
    hip.hipMemset(d_bins, 0, 64)
    hip.hipModuleLaunchKernel(fn, 4, 1, 1, 128, 1, 1, 0, None, None, (d_bins, d_data, ctypes.c_uint32(data.size)))
    bins = np.zeros(16, np.uint32)
    hip.hipMemcpy(bins, d_bins, 64, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
    assert (bins == np.bincount(data & 15, minlength=16)).all()
    return bins


def test_native_kernels_round_trip_byte_exact(tmp_path):
    capture(tmp_path, _app)
    loads = [rec for rec in archive_calls(tmp_path) if rec[2] == "hipModuleLoadData"]
    assert len(loads) == 1
    result = replay(tmp_path, backend="sim")
    assert result.exit_code == 0, text(result)
    proc = only(result)
    assert proc.checks_passed >= 1 and proc.checks_failed == 0 and proc.refusals == (), text(result)


def test_without_the_sandbox_an_archives_kernels_need_trust(tmp_path, monkeypatch):
    capture(tmp_path, _app)
    monkeypatch.setattr(worker, "sandbox_support", lambda: (False, "seccomp is not available (test)"))
    refused = replay(tmp_path, backend="sim")
    assert refused.exit_code != 0
    assert "--trust-kernels" in text(refused) and "seccomp is not available (test)" in text(refused)
    trusted = replay(tmp_path, backend="sim", trust_kernels=True)
    assert trusted.exit_code == 0, text(trusted)


def test_the_users_own_kernels_run_without_the_sandbox_where_it_is_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(worker, "sandbox_support", lambda: (False, "seccomp is not available (test)"))
    assert (capture(tmp_path, _app) > 0).any()
    with policy.archive_kernels(trusted=False):
        with pytest.raises(policy.KernelsRefused):
            policy.use_sandbox(worker.sandbox_support())


@pytest.mark.skipif(not worker.sandbox_support()[0] or platform.machine() != "x86_64",
                    reason="needs the seccomp sandbox and x86-64 machine code")
def test_a_kernel_making_a_system_call_is_stopped_at_capture_and_at_replay(tmp_path):
    err = capture(tmp_path, lambda hip, rtc, be: _app(hip, rtc, be, kernel=b"escape"))
    assert err != 0   # the sandbox killed the worker: the launch failed, the program was told
    result = replay(tmp_path, backend="sim")
    assert result.exit_code == 0, text(result)   # the same error, reproduced
    assert only(result).reproduced_errors >= 1


PINNED_SOURCE = rb"""
extern "C" __global__ void gather(unsigned* out, const unsigned* pinned, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = pinned[i] * 3u + 1u;
}
"""


def _pinned_app(hip, hiprtc, be):
    def ok(r):
        assert int(r[0]) == 0, r
        return r[1] if len(r) == 2 else r[1:]
    prog = ok(hiprtc.hiprtcCreateProgram(PINNED_SOURCE, b"gather.hip", 0, [], []))
    assert int(hiprtc.hiprtcCompileProgram(prog, 0, [])[0]) == 0
    code = bytearray(ok(hiprtc.hiprtcGetCodeSize(prog)))
    hiprtc.hiprtcGetCode(prog, code)
    fn = ok(hip.hipModuleGetFunction(ok(hip.hipModuleLoadData(code)), b"gather"))
    n = 1024
    pinned = ok(hip.hipHostMalloc(4 * n, 0))
    host = np.ctypeslib.as_array((ctypes.c_uint32 * n).from_address(int(pinned)))
    out = ok(hip.hipMalloc(4 * n))
    results = []
    for round_ in range(3):   # the kernel reads pinned memory that no HIP call carries
        host[:] = np.arange(n, dtype=np.uint32) * (round_ + 1)
        hip.hipModuleLaunchKernel(fn, 4, 1, 1, 256, 1, 1, 0, None, None, (out, pinned, ctypes.c_uint32(n)))
        hip.hipDeviceSynchronize()
        got = np.zeros(n, np.uint32)
        hip.hipMemcpy(got, out, 4 * n, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
        assert (got == host * 3 + 1).all()
        results.append(got)
    return results


def test_a_native_kernel_reading_pinned_memory_replays_with_the_snapshots(tmp_path):
    capture(tmp_path, _pinned_app, plugins=["pinned_snapshot"])
    result = replay(tmp_path, backend="sim", plugins=["pinned_snapshot"])
    assert result.exit_code == 0, text(result)
    assert only(result).checks_passed == 3, text(result)
    assert "Pinned host snapshots: 3 restored, 0 refused" in text(result)


BIG_IMAGE = (b'__device__ char big[96 << 20];\n'
             b'extern "C" __global__ void touch(char *x) { big[1] = 1; x[0] = big[1]; }\n')


def _big_app(hip, hiprtc, be):
    prog = hiprtc.hiprtcCreateProgram(BIG_IMAGE, b"big.hip", 0, [], [])[1]
    assert int(hiprtc.hiprtcCompileProgram(prog, 0, [])[0]) == 0
    code = bytearray(hiprtc.hiprtcGetCodeSize(prog)[1])
    hiprtc.hiprtcGetCode(prog, code)
    err, module = hip.hipModuleLoadData(code)
    assert int(err) == 0
    hip.hipModuleUnload(module)


def test_a_native_image_is_charged_to_the_host_budget(tmp_path, monkeypatch):
    """A small source whose image needs 96 MiB of device memory: under --max-host-bytes of
    32 MiB hipModuleLoadData fails (the replay says why); with room it replays."""
    monkeypatch.setenv("HRR_CACHE_DIR", str(tmp_path / "cache"))
    capture(tmp_path / "a", _big_app)
    refused = replay(tmp_path / "a", backend="sim", limits=Limits(max_host_bytes=32 << 20))
    assert refused.exit_code != 0
    assert "over --max-host-bytes" in text(refused) and "native image" in text(refused)
    assert replay(tmp_path / "a", backend="sim", limits=Limits(max_host_bytes=256 << 20)).exit_code == 0


BAD_HEADER_NAMES = [(".",), ("a", "a/b"), ("x" * 300,), ("/".join(["d"] * 3000),), ("a//b",), ("../up.h",)]


@pytest.mark.parametrize("names", BAD_HEADER_NAMES, ids=["dot", "file-and-folder", "300-chars", "3000-deep",
                                                         "empty-part", "dotdot"])
def test_bad_header_names_are_a_hip_error_at_capture(tmp_path, names):
    def app(hip, hiprtc, be):
        return hiprtc.hiprtcCreateProgram(b"__global__ void k() {}", b"k.hip", len(names),
                                          [b"#define X 1\n"] * len(names), [n.encode() for n in names])[0]
    err = capture(tmp_path, app)
    assert getattr(err, "name", "") == "HIPRTC_ERROR_INVALID_INPUT"


@pytest.mark.parametrize("names", BAD_HEADER_NAMES, ids=["dot", "file-and-folder", "300-chars", "3000-deep",
                                                         "empty-part", "dotdot"])
def test_bad_header_names_in_an_archive_are_a_bad_record(tmp_path, names, monkeypatch):
    """An archive whose kernel source names headers that cannot be files (edited after
    capture): the load is refused as a bad record, never an exception out of replay."""
    from hrr.hiptypes import kernelsource
    capture(tmp_path, _app)
    code = next(p for p in tmp_path.rglob("*") if p.is_file() and kernelsource.is_kernel_source(p.read_bytes()[:8]))
    ks = kernelsource.decode(code.read_bytes())
    unit = kernelsource.SourceUnit(ks.units[0].name, ks.units[0].source, tuple((n, b"") for n in names))
    bad = kernelsource.encode(kernelsource.KernelSource((unit,), ks.options))
    monkeypatch.setattr("hrr.archive.reader.ProcessArchive.read_code_object", lambda self, name: bad)
    result = replay(tmp_path, backend="sim")
    assert result.exit_code == 1, text(result)
    assert "header name" in text(result), text(result)


PRINTER = (b'static const unsigned char d[] = {\'o\', \'k\', 0};\n'
           b'extern "C" __global__ void k(int *x) { printf("printed: %s\\n", (const char *)d); x[0] = 1; }\n')


def _printer_app(hip, hiprtc, be):
    prog = hiprtc.hiprtcCreateProgram(PRINTER, b"p.hip", 0, [], [])[1]
    assert int(hiprtc.hiprtcCompileProgram(prog, 0, [])[0]) == 0
    code = bytearray(hiprtc.hiprtcGetCodeSize(prog)[1])
    hiprtc.hiprtcGetCode(prog, code)
    module = hip.hipModuleLoadData(code)[1]
    fn = hip.hipModuleGetFunction(module, b"k")[1]
    out = hip.hipMalloc(4)[1]
    hip.hipModuleLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, None, (out,))
    assert int(hip.hipDeviceSynchronize()[0]) == 0


def _attack_archive(root, canary: str, source: str, options=()) -> None:
    """The printer's archive with its kernel source swapped for ``source`` (as a stranger
    would edit an archive), stored under its new name."""
    import random
    import sys
    from pathlib import Path
    from hrr.hiptypes import kernelsource
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "fuzz"))
    import mutate

    def swap(data: bytes) -> bytes:
        ks = kernelsource.decode(data)
        unit = kernelsource.SourceUnit(ks.units[0].name, source.replace("CANARY", canary).encode())
        return kernelsource.encode(kernelsource.KernelSource((unit,), tuple(options)))
    mutate.Mutator(random.Random(0), str(root), str(root))._restore_store("code", swap)


EMBED_ATTACK = ('#define P "CANARY"\nstatic const unsigned char d[] = {\n#embed P suffix(,)\n0};\n'
                'extern "C" __global__ void k(int *x) { printf("printed: %s\\n", (const char *)d); x[0] = 1; }\n')
INCBIN_ATTACK = ('ASM(".section .rodata\\n.globl leak\\nleak: .incbin \\"CANARY\\"\\n.byte 0\\n.text");\n'
                 'extern "C" const char leak[];\n'
                 'extern "C" __global__ void k(int *x) { printf("printed: %s\\n", leak); x[0] = 1; }\n')


@pytest.mark.parametrize("attack", ["embed", "incbin"])
def test_replaying_an_attack_archive_prints_no_host_file(tmp_path, monkeypatch, capfd, attack):
    if attack == "embed" and not compiler_knows_embed():
        pytest.skip("this compiler has no #embed (g++ before 15): the attack and its control do not exist here")
    monkeypatch.setenv("HRR_CACHE_DIR", str(tmp_path / "cache"))
    canary = tmp_path / "canary.txt"
    canary.write_bytes(b"hrr-canary-0d4f " * 4)
    capture(tmp_path / "a", _printer_app)
    source, options = (EMBED_ATTACK, ()) if attack == "embed" else (INCBIN_ATTACK, ("-DASM=__asm__",))
    _attack_archive(tmp_path / "a", str(canary), source, options)
    capfd.readouterr()
    replay(tmp_path / "a", backend="sim")
    assert "hrr-canary" not in capfd.readouterr().out
    if attack == "embed":   # what the sandbox stops: unconfined and unchecked, the file is printed
        from hrr.backends.sim.native import compilebox
        monkeypatch.setattr(compilebox, "support", lambda: (None, "test"))
        monkeypatch.setattr(toolchain, "_outside", lambda *a, **k: False)
        monkeypatch.setenv("HRR_CACHE_DIR", str(tmp_path / "cache2"))
        replay(tmp_path / "a", backend="sim", trust_kernels=True)
        assert "hrr-canary" in capfd.readouterr().out
