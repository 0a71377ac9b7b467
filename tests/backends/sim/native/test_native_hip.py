"""A program's own HIP C++ kernels on the sim, through hip-python's API: hiprtc compiles
them for the CPU, hipModuleLoadData loads them, launches run them in the kernel worker."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from hrr.backends import sim
from hrr.hiptypes import kernelsource
from hrr.backends.sim import hip, hiprtc
from hrr.backends.sim.native import toolchain

OK = hip.hipError_t.hipSuccess
RTC_OK = hiprtc.hiprtcResult.HIPRTC_SUCCESS
H2D, D2H = hip.hipMemcpyKind.hipMemcpyHostToDevice, hip.hipMemcpyKind.hipMemcpyDeviceToHost

pytestmark = pytest.mark.skipif(toolchain.find_toolchain() is None, reason="no C++ compiler for the sim")

KERNELS = rb"""
#include <hip/hip_runtime.h>
struct Span { const unsigned* src; unsigned n; unsigned pad; };

extern "C" __global__ void block_sum(unsigned* out, const unsigned* in, unsigned n) {
  __shared__ unsigned part[1024];
  unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  part[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) part[t] += part[t + s];
    __syncthreads();
  }
  if (t == 0) atomicAdd(out, part[0]);
}

extern "C" __global__ void span_sum(unsigned* out, Span s) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < s.n) atomicAdd(out, s.src[i]);
}

extern "C" __global__ void scale(float factor, int n, float* x) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i == 0) printf("scale n=%d factor=%.2f\n", n, factor);
  if (i < n) x[i] = x[i] * factor;
}

extern "C" __global__ void poke(unsigned long long where) {
  *(volatile unsigned*)where = 1;
}

__device__ unsigned counter;
extern "C" __global__ void bump() { atomicAdd(&counter, 1u); }
"""


def ok(result):
    assert result[0] in (OK, RTC_OK), result
    rest = result[1:]
    return rest[0] if len(rest) == 1 else (rest or None)


def compile_module(source: bytes = KERNELS, options: list[bytes] | None = None):
    prog = ok(hiprtc.hiprtcCreateProgram(source, b"kernels.hip", 0, [], []))
    opts = options if options is not None else [b"--offload-arch=gfx942", b"-O3"]
    err, = hiprtc.hiprtcCompileProgram(prog, len(opts), opts)
    if err != RTC_OK:
        n = ok(hiprtc.hiprtcGetProgramLogSize(prog))
        log = bytearray(n)
        ok(hiprtc.hiprtcGetProgramLog(prog, log))
        return None, log.decode(errors="replace")
    code = bytearray(ok(hiprtc.hiprtcGetCodeSize(prog)))
    ok(hiprtc.hiprtcGetCode(prog, code))
    ok(hiprtc.hiprtcDestroyProgram(prog.createRef()))
    return ok(hip.hipModuleLoadData(code)), bytes(code)


def upload(array: np.ndarray):
    d = ok(hip.hipMalloc(array.nbytes))
    ok(hip.hipMemcpy(d, array, array.nbytes, H2D))
    return d


def download(d, like: np.ndarray) -> np.ndarray:
    out = np.empty_like(like)
    ok(hip.hipMemcpy(out, d, out.nbytes, D2H))
    return out


def test_the_code_object_is_the_source_never_compiled_code():
    module, code = compile_module()
    assert module is not None
    ks = kernelsource.decode(code)
    assert ks.units[0].source == KERNELS and ks.native == b"" and "-O3" in ks.options


@pytest.mark.parametrize("block", [64, 256, 1024])
def test_shared_memory_reduction_with_syncthreads(block):
    module, _ = compile_module()
    values = np.arange(5000, dtype=np.uint32)
    d_in, d_out = upload(values), upload(np.zeros(1, np.uint32))
    fn = ok(hip.hipModuleGetFunction(module, b"block_sum"))
    grid = (len(values) + block - 1) // block
    ok(hip.hipModuleLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, None, None,
                                 (d_out, d_in, ctypes.c_uint32(len(values)))))
    assert download(d_out, np.zeros(1, np.uint32))[0] == values.sum() % (1 << 32)


def test_struct_by_value_and_atomics():
    module, _ = compile_module()
    values = np.arange(1, 301, dtype=np.uint32)
    d_in, d_out = upload(values), upload(np.zeros(1, np.uint32))
    fn = ok(hip.hipModuleGetFunction(module, b"span_sum"))

    class Span(ctypes.Structure):
        _fields_ = [("src", ctypes.c_void_p), ("n", ctypes.c_uint32), ("pad", ctypes.c_uint32)]
    out_ptr, span = ctypes.c_void_p(int(d_out)), Span(int(d_in), len(values), 0)
    params = (ctypes.c_void_p * 2)(ctypes.addressof(out_ptr), ctypes.addressof(span))
    ok(hip.hipModuleLaunchKernel(fn, 3, 1, 1, 128, 1, 1, 0, None, params, None))
    assert download(d_out, np.zeros(1, np.uint32))[0] == values.sum()


def test_extra_tuple_arguments_and_printf(capfd):
    module, _ = compile_module()
    x = np.linspace(0, 1, 100, dtype=np.float32)
    d = upload(x)
    fn = ok(hip.hipModuleGetFunction(module, b"scale"))
    ok(hip.hipModuleLaunchKernel(fn, 4, 1, 1, 32, 1, 1, 0, None, None,
                                 (ctypes.c_float(2.5), ctypes.c_int(100), d)))
    np.testing.assert_array_equal(download(d, x), x * np.float32(2.5))
    assert "scale n=100 factor=2.50\n" in capfd.readouterr().out


def test_a_kernel_reads_and_writes_pinned_host_memory():
    module, _ = compile_module()
    pinned = ok(hip.hipHostMalloc(400, 0))
    host = np.ctypeslib.as_array((ctypes.c_float * 100).from_address(int(pinned)))
    host[:] = np.arange(100, dtype=np.float32)
    fn = ok(hip.hipModuleGetFunction(module, b"scale"))
    ok(hip.hipModuleLaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, None, None,
                                 (ctypes.c_float(3.0), ctypes.c_int(100), pinned)))
    ok(hip.hipDeviceSynchronize())
    np.testing.assert_array_equal(host, np.arange(100, dtype=np.float32) * 3)


def test_device_global_through_hipModuleGetGlobal():
    module, _ = compile_module()
    addr, size = ok(hip.hipModuleGetGlobal(module, b"counter"))
    assert size == 4
    ok(hip.hipMemcpy(addr, np.array([40], np.uint32), 4, H2D))
    fn = ok(hip.hipModuleGetFunction(module, b"bump"))
    ok(hip.hipModuleLaunchKernel(fn, 1, 1, 1, 2, 1, 1, 0, None, None, None))
    assert download(addr, np.zeros(1, np.uint32))[0] == 42


def test_an_illegal_address_is_the_launch_error_and_the_device_goes_on():
    module, _ = compile_module()
    fn = ok(hip.hipModuleGetFunction(module, b"poke"))
    ok(hip.hipModuleLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, None, (ctypes.c_uint64(0x10),)))
    err = hip.hipDeviceSynchronize()[0]
    assert err == hip.hipError_t.hipErrorIllegalAddress
    assert "illegal address" in sim.last_error_detail()
    sim.reset_device()
    module, _ = compile_module()   # a fresh device runs kernels again
    values = np.arange(10, dtype=np.uint32)
    d_in, d_out = upload(values), upload(np.zeros(1, np.uint32))
    fn = ok(hip.hipModuleGetFunction(module, b"block_sum"))
    ok(hip.hipModuleLaunchKernel(fn, 1, 1, 1, 16, 1, 1, 0, None, None, (d_out, d_in, ctypes.c_uint32(10))))
    assert download(d_out, np.zeros(1, np.uint32))[0] == 45


def test_a_compile_error_is_hiprtc_error_compilation_with_the_log():
    module, log = compile_module(b'extern "C" __global__ void broken(int* x) { x[0] = undeclared; }')
    assert module is None
    assert "undeclared" in log and "kernels.hip" in log


def test_an_include_outside_the_program_is_refused():
    module, log = compile_module(b'#include "/etc/passwd"\nextern "C" __global__ void k() {}')
    assert module is None and "/etc/passwd" in log


def test_a_template_kernel_through_name_expressions_and_lowered_names():
    source = b"template <typename T> __global__ void twice(T* x, int n) {\n" \
             b"  int i = threadIdx.x; if (i < n) x[i] = x[i] + x[i];\n}\n"
    prog = ok(hiprtc.hiprtcCreateProgram(source, b"t.hip", 0, [], []))
    ok(hiprtc.hiprtcAddNameExpression(prog, b"twice<float>"))
    ok(hiprtc.hiprtcCompileProgram(prog, 0, []))
    lowered = bytes(ok(hiprtc.hiprtcGetLoweredName(prog, b"twice<float>"))).rstrip(b"\0")
    assert lowered.startswith(b"_Z") and b"twice" in lowered
    code = bytearray(ok(hiprtc.hiprtcGetCodeSize(prog)))
    ok(hiprtc.hiprtcGetCode(prog, code))
    module = ok(hip.hipModuleLoadData(code))     # loads (compiles again) with the same instances
    fn = ok(hip.hipModuleGetFunction(module, lowered))
    x = np.arange(8, dtype=np.float32)
    d = upload(x)
    ok(hip.hipModuleLaunchKernel(fn, 1, 1, 1, 8, 1, 1, 0, None, None, (d, ctypes.c_int(8))))
    np.testing.assert_array_equal(download(d, x), x * 2)


def test_a_kernel_calling_system_does_not_link(tmp_path):
    # an image links no library: a call into libc (system, fopen...) stays unresolved, so
    # the module never loads and the kernel never runs, whichever linker (lld, ld) said so
    marker = tmp_path / "pwned"
    source = b'extern "C" int system(const char*);\n' \
             b'extern "C" __global__ void evil(int* x) { x[0] = system("touch ' + str(marker).encode() + b'"); }'
    module, log = compile_module(source)
    assert module is None
    assert "system" in log and "undefined" in log.lower()
    assert not marker.exists()


def test_native_kernels_captured_into_a_graph_run_at_each_graph_launch():
    source = b'extern "C" __global__ void inc(unsigned* x, unsigned n) {\n' \
             b'  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += i;\n}'
    module, _ = compile_module(source)
    fn = ok(hip.hipModuleGetFunction(module, b"inc"))
    d = upload(np.zeros(1024, np.uint32))
    s = ok(hip.hipStreamCreate())
    ok(hip.hipStreamBeginCapture(s, hip.hipStreamCaptureMode.hipStreamCaptureModeGlobal))
    for _ in range(3):
        ok(hip.hipModuleLaunchKernel(fn, 4, 1, 1, 256, 1, 1, 0, s, None, (d, ctypes.c_uint32(1024))))
    graph = ok(hip.hipStreamEndCapture(s))
    assert np.all(download(d, np.zeros(1024, np.uint32)) == 0)   # captured, not run
    exe = hip.hipGraphInstantiate(graph, 0)[1]
    for _ in range(2):
        ok(hip.hipGraphLaunch(exe, s))
    ok(hip.hipStreamSynchronize(s))
    np.testing.assert_array_equal(download(d, np.zeros(1024, np.uint32)), np.arange(1024, dtype=np.uint32) * 6)


def test_a_forked_child_runs_native_kernels_on_its_own_memory():
    from forkcheck import run_child
    source = b'extern "C" __global__ void add(unsigned* x, unsigned v) { x[threadIdx.x] += v; }'
    module, _ = compile_module(source)
    fn = ok(hip.hipModuleGetFunction(module, b"add"))
    d = upload(np.zeros(4, np.uint32))

    def launch(v: int) -> np.ndarray:
        ok(hip.hipModuleLaunchKernel(fn, 1, 1, 1, 4, 1, 1, 0, None, None, (d, ctypes.c_uint32(v))))
        return download(d, np.zeros(4, np.uint32))

    assert (launch(1) == 1).all()   # the parent's worker has started

    def child() -> int:
        return 0 if (launch(10) == 11).all() else 1
    assert run_child(child) == 0
    assert (launch(1) == 2).all()   # the child wrote its own copy; the parent's worker goes on
