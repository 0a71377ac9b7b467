"""The CPU compiler for hiprtc programs: hip-python's own kernels give numpy's answers, compile
errors come back as a log naming the program's files, and a program reads no host file."""
from __future__ import annotations

import ctypes
import os

import numpy as np
import pytest
from nativerun import Loaded, build

from hrr import imagecache
from hrr.backends.sim.native import toolchain
from hrr.backends.sim.native.elfimage import parse_image
from hrr.backends.sim.native.toolchain import SourceUnit, compile_program, find_toolchain

pytestmark = pytest.mark.skipif(find_toolchain() is None, reason="no C++ compiler for native kernels")

# hip-python's examples/0_Basic_Usage/hiprtc_launch_kernel_args.py (MIT licence), as it is.
SCALE_VECTOR = b"""\
extern "C" __global__ void scale_vector(float factor, int n, short unused1, int unused2, float unused3, float *x) {
  int tid = threadIdx.x + blockIdx.x * blockDim.x;
  if ( tid == 0 ) {
    printf("tid: %d, factor: %f, x*: %lu, n: %lu, unused1: %d, unused2: %d, unused3: %f\\n",tid,factor,x,n,(int) unused1,unused2,unused3);
  }
  if (tid < n) {
     x[tid] *= factor;
  }
}
"""  # noqa: E501

# hip-python's examples/2_Advanced/hip_jacobi.py (MIT licence), as it is.
JACOBI = rb"""
  // GPU Jacobi (Unoptimized)
  extern "C" __global__ void jacobi_gpu_unoptimized(float* x, float* A, float* b, int n)
  {
    int idx = blockIdx.x * blockDim.x + threadIdx.x; // every global thread handles one row

    float sigma = 0.0;
    for (int j=0; j<n; j++)
    {
      if (idx != j)
        sigma += A[idx*n + j] * x[j];
    }

    // Access on globale memory
    x[idx] = (b[idx] - sigma) / A[idx*n + idx];
    //printf("x[%d]=%f\n", idx,x[idx]);
  }

  // GPU Jacobi Optimized Version
  extern "C" __global__
  //__attribute__((amdgpu_flat_work_group_size(DEFAULT_BLOCK_SIZE, DEFAULT_BLOCK_SIZE)))
  //__attribute__((amdgpu_waves_per_eu(4)))
  //__launch_bounds__(DEFAULT_BLOCK_SIZE, 3)
  void jacobi_gpu(float* x, float* A, float* b, int n)
  {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;

    float sigma = 0.0;
    const int s_align = 64;

    for (int i=0; i<n; i+=s_align){
      float tmp[s_align];

      for(int j=0; j<s_align; j++)
        tmp[j] =  A[idx*n + i+j];

      for(int j=0; j<s_align; j++){
      if (idx != i+j)
        sigma += tmp[j] * x[i+j];
      }
    }

    // Access on global memory
    x[idx] = (b[idx] - sigma) / A[idx*n + idx];
    //printf("x[%d]=%f\n", idx,x[idx]);
  }
  """


@pytest.fixture(autouse=True)
def kernel_cache(tmp_path_factory, monkeypatch):
    # One cache for the session's tests (the runtime object is compiled once), never ~/.cache.
    monkeypatch.setenv("HRR_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "hrr-kernels"))


def test_find_toolchain_is_frozen_and_identified():
    tc = find_toolchain()
    assert tc is not None and tc.argv and tc.ident and tc.kind
    with pytest.raises(AttributeError):
        tc.kind = "other"  # type: ignore[misc]


def test_scale_vector_gives_numpys_answer_and_its_printf_line():
    prog = build(SCALE_VECTOR, ["--offload-arch=gfx90a"], name="scale_vector")
    layout = prog.image.kernels["scale_vector"].layout
    assert [(p.offset, p.size, p.kind) for p in layout.params] == [
        (0, 4, "value"), (4, 4, "value"), (8, 2, "value"), (12, 4, "value"), (16, 4, "value"), (24, 8, "pointer")]
    x = np.random.default_rng(1).random(100, dtype=np.float32)
    want = x * np.float32(1.23)
    rc = prog.launch("scale_vector", [ctypes.c_float(1.23), ctypes.c_int(100), ctypes.c_short(5), ctypes.c_int(2),
                                      ctypes.c_float(5.6), x], grid=(4, 1, 1), block=(32, 1, 1))
    assert rc == 0
    np.testing.assert_array_equal(x, want)
    assert prog.services.take_printf().decode() == (
        f"tid: 0, factor: 1.230000, x*: {x.ctypes.data}, n: 100, unused1: 5, unused2: 2, unused3: 5.600000\n")


@pytest.mark.parametrize("kernel", ["jacobi_gpu", "jacobi_gpu_unoptimized"])
def test_jacobi_kernels_match_numpy(kernel):
    prog = build(JACOBI, ["--offload-arch=gfx90a"], name="program")
    n, iters = 128, 20
    rng = np.random.default_rng(0)
    a = (rng.random((n, n), dtype=np.float32) / n).astype(np.float32)
    np.fill_diagonal(a, 1.0)
    b = (rng.random(n, dtype=np.float32) / n).astype(np.float32)
    x = np.zeros(n, dtype=np.float32)
    for _ in range(iters):
        assert prog.launch(kernel, [x, a, b, ctypes.c_int(n)], grid=(n // 64, 1, 1), block=(64, 1, 1)) == 0
    # the kernels update x in place (Gauss-Seidel-like within a launch): replay that order in numpy
    want = np.zeros(n, dtype=np.float64)
    for _ in range(iters):
        for i in range(n):
            want[i] = (b[i] - (a[i] @ want - a[i, i] * want[i])) / a[i, i]
    np.testing.assert_allclose(x, want, rtol=1e-5, atol=1e-7)
    assert np.linalg.norm(a @ x - b) < 1e-5


def test_compile_error_log_names_the_program_not_temp_paths():
    result = compile_program([SourceUnit("broken.hip", b'extern "C" __global__ void k(int *x) {\n  x[0] = y;\n}\n')],
                             ["--offload-arch=gfx90a"])
    assert not result.ok and result.image is None
    assert "broken.hip:2:" in result.log and "error:" in result.log and "x[0] = y;" in result.log
    assert "hrr-cc-" not in result.log and "/tmp" not in result.log


def test_unknown_options_are_noted_not_fatal():
    result = compile_program([SourceUnit("k.hip", b'extern "C" __global__ void k(int *x) { x[0] = VALUE; }')],
                             ["--offload-arch=gfx942", "-DVALUE=7", "-O3", "-std=c++17", "-fgpu-rdc", "-g",
                              "--frobnicate"])
    assert result.ok, result.log
    assert "'--frobnicate' ignored" in result.log
    assert "offload-arch" not in result.log
    assert compile_program([SourceUnit("k.hip", b'extern "C" __global__ void k(int *x) { x[0] = VALUE; }')],
                           ["--offload-arch=gfx942", "-DVALUE=7", "-O3", "-std=c++17", "-fgpu-rdc", "-g",
                            "--frobnicate"]).log == result.log   # the same from the cache
    prog = Loaded(result.image)
    x = np.zeros(1, dtype=np.int32)
    assert prog.launch("k", [x]) == 0 and x[0] == 7


def test_program_headers_and_relative_include_paths():
    src = b'#include "consts.h"\n#include <inc/more.h>\nextern "C" __global__ void k(int *x) { x[0] = A + B; }\n'
    headers = (("consts.h", b"#define A 40\n"), ("inc/more.h", b"#define B 2\n"))
    prog = build(src, ["-Iinc", "-I/usr/include"], headers=headers)
    x = np.zeros(1, dtype=np.int32)
    assert prog.launch("k", [x]) == 0 and x[0] == 42


@pytest.mark.parametrize("include", ['"/etc/passwd"', "</etc/passwd>", '"../../../../etc/passwd"',
                                     '"sub/../../x.h"'])
def test_include_of_host_files_is_refused(include):
    src = f'#include {include}\nextern "C" __global__ void k(int *x) {{ x[0] = 1; }}\n'.encode()
    result = compile_program([SourceUnit("evil.hip", src)], [])
    assert not result.ok
    assert "evil.hip:1: error:" in result.log and "refused" in result.log
    assert "root:" not in result.log


def test_include_through_a_macro_is_refused_without_quoting_the_file():
    src = b'#define P "/etc/passwd"\n#include P\nextern "C" __global__ void k(int *x) { x[0] = 1; }\n'
    result = compile_program([SourceUnit("evil.hip", src)], [])
    assert not result.ok   # the compiler's sandbox cannot open it (test_compile_sandbox.py has more)
    assert "root" not in result.log


def test_a_header_that_includes_a_host_file_is_refused():
    src = b'#include "h.h"\nextern "C" __global__ void k(int *x) { x[0] = 1; }\n'
    result = compile_program([SourceUnit("p.hip", src, (("h.h", b'#include "/etc/hostname"\n'),))], [])
    assert not result.ok and "h.h:1: error:" in result.log


def test_inline_assembly_is_refused():
    src = b'asm(".incbin \\"/etc/passwd\\"");\nextern "C" __global__ void k(int *x) { x[0] = 1; }\n'
    result = compile_program([SourceUnit("asm.hip", src)], [])
    assert not result.ok and "poisoned" in result.log


def test_an_undefined_function_fails_the_link():
    src = (b'extern "C" __device__ float mystery(float);\n'
           b'extern "C" __global__ void k(float *x) { x[0] = mystery(x[0]); }\n')
    result = compile_program([SourceUnit("u.hip", src)], [])
    assert not result.ok
    assert "undefined" in result.log and "mystery" in result.log


def test_global_constructors_are_refused():
    src = b'volatile int seed = 3;\nint g = seed + 1;\n'
    src += b'extern "C" __global__ void k(int *x) { x[0] = g; }\n'
    result = compile_program([SourceUnit("ctor.hip", src)], [])
    assert not result.ok and "constructors" in result.log


def test_relocatable_units_compile_separately_and_link_into_one_image():
    helper = SourceUnit("helper.hip", b'__device__ float twice(float v) { return 2 * v; }\n')
    kernel = SourceUnit("kernel.hip", b'__device__ float twice(float v);\n'
                                      b'extern "C" __global__ void k(float *x) {\n'
                                      b'  x[threadIdx.x] = twice(x[threadIdx.x]);\n}\n')
    checked = compile_program([helper, kernel], ["-fgpu-rdc"], relocatable=True)
    assert checked.ok and checked.image is None
    bad = compile_program([SourceUnit("bad.hip", b"__device__ int f( {")], ["-fgpu-rdc"], relocatable=True)
    assert not bad.ok and "bad.hip:1:" in bad.log
    linked = compile_program([helper, kernel], ["-fgpu-rdc"])
    assert linked.ok, linked.log
    prog = Loaded(linked.image)
    x = np.arange(4, dtype=np.float32)
    assert prog.launch("k", [x], block=(4, 1, 1)) == 0
    np.testing.assert_array_equal(x, [0, 2, 4, 6])


def test_cache_reuses_images_and_recompiles_a_corrupt_one(tmp_path, monkeypatch):
    monkeypatch.setenv("HRR_CACHE_DIR", str(tmp_path))
    unit = SourceUnit("c.hip", b'extern "C" __global__ void k(int *x) { x[0] = 5; }\n')
    first = compile_program([unit], [])
    assert first.ok
    images = [p for p in tmp_path.glob("*.img") if first.image in p.read_bytes()]
    assert len(images) == 1
    images[0].write_bytes(images[0].read_bytes()[:-1] + b"X")   # damaged: its digest no longer matches
    again = compile_program([unit], [])
    assert again.ok and again.image is not None
    assert again.image in images[0].read_bytes()
    assert parse_image(again.image).kernels == parse_image(first.image).kernels


def test_unwritable_cache_still_compiles(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("HRR_CACHE_DIR", str(blocker / "kernels"))
    assert toolchain.cache_dir() is None
    result = compile_program([SourceUnit("c.hip", b'extern "C" __global__ void k(int *x) { x[0] = 5; }\n')], [])
    assert result.ok, result.log


def test_no_compiler_is_a_compile_error(monkeypatch, tmp_path):
    monkeypatch.setenv("HRR_SIM_CXX", str(tmp_path / "no-such-compiler"))
    assert find_toolchain() is None
    result = compile_program([SourceUnit("c.hip", b"")], [])
    assert not result.ok and "no C++ compiler" in result.log


def test_hrr_sim_cxx_chooses_the_compiler(monkeypatch):
    default = find_toolchain()
    assert default is not None
    monkeypatch.setenv("HRR_SIM_CXX", " ".join(default.argv))
    chosen = find_toolchain()
    assert chosen is not None and chosen.kind == "env" and chosen.argv == default.argv
    assert os.environ["HRR_SIM_CXX"] in chosen.ident


def test_unoptimised_builds_link_without_sanitizer_runtimes():
    # zig's debug mode turns on UBSan, whose handlers an image cannot link
    prog = build(b'extern "C" __global__ void k(int *x) { x[threadIdx.x] = (int)threadIdx.x * 2; }', ["-O0"])
    x = np.zeros(8, dtype=np.int32)
    assert prog.launch("k", [x], block=(8, 1, 1)) == 0
    assert x.tolist() == list(range(0, 16, 2))


def test_files_in_the_working_directory_are_not_read(tmp_path, monkeypatch):
    # -include looks in the compiler's working directory first
    (tmp_path / "hrr_device.h").write_text("#error not hrr's header\n")
    (tmp_path / "cstdint").write_text("#error not hrr's stub\n")
    monkeypatch.chdir(tmp_path)
    prog = build(b'#include <cstdint>\nextern "C" __global__ void k(int *x) { x[0] = 3; }', ["-DFRESH_KEY_1"])
    x = np.zeros(1, dtype=np.int32)
    assert prog.launch("k", [x]) == 0 and x[0] == 3


def test_source_bytes_that_are_not_utf8_go_through_unchanged():
    prog = build(b'extern "C" __global__ void k() { printf("caf\xe9 \xff\\n"); }')
    assert prog.launch("k", []) == 0
    assert prog.services.take_printf() == b"caf\xe9 \xff\n"


def test_kernel_discovery_across_scopes_and_attributes():
    prog = build(b"""
extern "C" {
__global__ void a(int *x) { x[0] = 1; }
}
namespace {
__global__ void b(int *x) { x[0] = 2; }
}
static __global__ void c(int *x) { x[0] = 3; }
__global__ void d(int *x);
__global__ void d(int *x) { x[0] = 4; }
struct S { int v; __device__ int get() const { return v; } };
__global__ void __launch_bounds__(256, 2) e(S s, int *__restrict__ x) { x[0] = s.get(); }
__global__ __attribute__((noinline)) void f(int *x, int y = 3) { x[0] = y; }
#if 0
__global__ void hidden(int *x) { x[0] = 9; }
#endif
// __global__ void commented(int *x) {}
const char *text = "__global__ void in_a_string(int *x) {}";
""")
    assert set(prog.image.kernels) == {"a", "_ZN12_GLOBAL__N_11bEPi", "_ZL1cPi", "_Z1dPi", "_Z1e1SPi", "_Z1fPii"}
    x = np.zeros(1, dtype=np.int32)
    for name, args, want in (("a", [x], 1), ("_ZL1cPi", [x], 3), ("_Z1e1SPi", [ctypes.c_int(5), x], 5),
                             ("_Z1fPii", [x, ctypes.c_int(6)], 6)):
        assert prog.launch(name, args) == 0 and x[0] == want


# hip-python's examples/0_Basic_Usage/hiprtc_launch_kernel_no_args.py and
# 2_Advanced/hiprtc_linking_device_functions.py (MIT licence), their sources as they are.
PRINT_TID = b"""\
extern "C" __global__ void print_tid() {
  printf("tid: %d\\n", (int) threadIdx.x);
}
"""
DEVICE_FUN = b"""\
__device__ void foo() {
    printf("tid: %d\\n", (int) threadIdx.x);
}
"""
KERNEL = b"""\
__device__ void foo(); // prototype

extern "C" __global__ void print_tid() {
    foo();
}
"""


def test_hip_python_print_tid_and_linked_device_function():
    alone = build(PRINT_TID, ["--offload-arch=gfx90a"], name="print_tid")
    assert alone.launch("print_tid", [], block=(32, 1, 1)) == 0
    want = "".join(f"tid: {i}\n" for i in range(32)).encode()
    assert alone.services.take_printf() == want
    units = [SourceUnit("kernel", KERNEL), SourceUnit("device_fun", DEVICE_FUN)]
    assert compile_program(units, ["--offload-arch=gfx90a", "-fgpu-rdc"], relocatable=True).ok
    linked = compile_program(units, [])
    assert linked.ok, linked.log
    prog = Loaded(linked.image)
    assert prog.launch("print_tid", [], block=(32, 1, 1)) == 0
    assert prog.services.take_printf() == want


def test_a_damaged_cached_runtime_object_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("HRR_CACHE_DIR", str(tmp_path))
    unit = SourceUnit("c.hip", b'extern "C" __global__ void k(int *x) { x[0] = 5; }\n')
    first = compile_program([unit], [])
    assert first.ok
    (image,) = [p for p in tmp_path.glob("*.img") if first.image in p.read_bytes()]
    (runtime,) = [p for p in tmp_path.glob("*.img") if p != image]
    runtime.write_bytes(runtime.read_bytes()[:200] + b"\x7fELF damaged")
    image.unlink()
    result = compile_program([unit], [])
    assert result.ok, result.log
    assert imagecache.get(runtime.name[:-4], 1 << 30)[:4] == b"\x7fELF" and runtime.stat().st_size > 1000


def test_kernels_made_by_macros_are_found_by_the_compiler():
    tc = find_toolchain()
    if not ("zig" in tc.ident or "clang" in tc.ident):
        pytest.skip("only clang builds mark kernels (g++ refuses templates in a named section)")
    src = b"""
#define KERNEL extern "C" __global__ void
#define SCALE_KERNEL(name, f) KERNEL name(float *x) { x[threadIdx.x] *= f; }
KERNEL by_macro(int *x) { x[threadIdx.x] = 7; }
SCALE_KERNEL(twice, 2.0f)
#define CPP_KERNEL(name) __global__ void name(int *x) { x[0] = 1; }
CPP_KERNEL(cpp_made)
"""
    result = compile_program([SourceUnit("m.hip", src)], [])
    assert result.ok, result.log
    prog = Loaded(result.image)
    x = np.zeros(2, dtype=np.int32)
    assert prog.launch("by_macro", [x], block=(2, 1, 1)) == 0 and x.tolist() == [7, 7]
    f = np.ones(2, dtype=np.float32)
    assert prog.launch("twice", [f], block=(2, 1, 1)) == 0 and f.tolist() == [2.0, 2.0]
    assert prog.image.unlaunchable == ("_Z8cpp_madePi",)
    assert "kernel '_Z8cpp_madePi' cannot be launched" in result.log
    assert compile_program([SourceUnit("m.hip", src)], []).log == result.log   # the same from the cache


@pytest.mark.parametrize("names", [(".",), ("a", "a/b"), ("x" * 300,), ("/".join(["d"] * 3000),)])
def test_header_names_that_cannot_be_files_are_a_compile_error(names):
    unit = SourceUnit("k.hip", b'extern "C" __global__ void k(int *x) { x[0] = 1; }\n', tuple((n, b"") for n in names))
    result = compile_program([unit], [])
    assert not result.ok and "error: header name" in result.log
