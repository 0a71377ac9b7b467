"""The HIP device environment of native kernels (hrr_device.h + hrr_runtime.c), run in-process:
barriers, shared memory, atomics, by-value structs, printf, math, traps, C++ kernels."""
from __future__ import annotations

import ctypes
import math
import struct

import numpy as np
import pytest
from nativerun import build

from hrr.backends.sim.native import abi
from hrr.backends.sim.native.toolchain import find_toolchain

pytestmark = pytest.mark.skipif(find_toolchain() is None, reason="no C++ compiler for native kernels")


@pytest.fixture(autouse=True)
def kernel_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("HRR_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "hrr-kernels"))


REDUCE = """
#include <hip/hip_runtime.h>
template <int N> __device__ float tree(float *s, unsigned t) {
  for (unsigned stride = N / 2; stride > 0; stride /= 2) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  return s[0];
}
extern "C" __global__ void __launch_bounds__(1024) reduce256(const float *in, float *out) {
  __shared__ float s[256];
  unsigned t = threadIdx.x;
  s[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  float total = tree<256>(s, t);
  if (t == 0) out[blockIdx.x] = total;
}
extern "C" __global__ void reduce1024(const float *in, float *out) {
  __shared__ float s[1024];
  unsigned t = threadIdx.x;
  s[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  float total = tree<1024>(s, t);
  if (t == 0) out[blockIdx.x] = total;
}
"""


@pytest.mark.parametrize("block", [256, 1024])
def test_block_reduction_with_shared_memory_and_barriers(block):
    prog = build(REDUCE)
    blocks = 3
    data = np.arange(block * blocks, dtype=np.float32) % 7
    out = np.zeros(blocks, dtype=np.float32)
    assert prog.launch(f"reduce{block}", [data, out], grid=(blocks, 1, 1), block=(block, 1, 1)) == abi.OK
    np.testing.assert_array_equal(out, data.reshape(blocks, block).sum(axis=1))


def test_threads_that_finished_do_not_hold_a_barrier():
    prog = build("""
extern "C" __global__ void k(int *out) {
  __shared__ int seen;
  if (threadIdx.x == 0) seen = 0;
  __syncthreads();
  if (threadIdx.x >= 4) return;          // these leave before the next barrier
  atomicAdd(&seen, 1);
  __syncthreads();
  out[threadIdx.x] = seen;
}
""")
    out = np.full(8, -1, dtype=np.int32)
    assert prog.launch("k", [out], block=(8, 1, 1)) == abi.OK
    assert out.tolist() == [4, 4, 4, 4, -1, -1, -1, -1]


def test_coordinates_in_three_dimensions_and_syncthreads_count():
    prog = build("""
extern "C" __global__ void k(unsigned *out, int *counts) {
  unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned n = blockDim.x * blockDim.y * blockDim.z;
  out[b * n + t] = (blockIdx.z << 24) | (blockIdx.y << 20) | (blockIdx.x << 16) |
                   (threadIdx.z << 8) | (threadIdx.y << 4) | threadIdx.x;
  int c = __syncthreads_count(threadIdx.x == 0);
  int d = __syncthreads_count(1);
  if (t == 0) { counts[2 * b] = c; counts[2 * b + 1] = d; }
}
""")
    grid, block = (2, 3, 2), (4, 2, 3)
    n, nb = 24, 12
    out = np.zeros(n * nb, dtype=np.uint32)
    counts = np.zeros(2 * nb, dtype=np.int32)
    assert prog.launch("k", [out, counts], grid=grid, block=block) == abi.OK
    want = [(bz << 24) | (by << 20) | (bx << 16) | (tz << 8) | (ty << 4) | tx
            for bz in range(2) for by in range(3) for bx in range(2)
            for tz in range(3) for ty in range(2) for tx in range(4)]
    assert out.tolist() == want
    assert counts.tolist() == [6, 24] * nb


def test_atomics():
    prog = build("""
extern "C" __global__ void k(int *i, unsigned *u, unsigned long long *ull, float *f, double *d) {
  atomicAdd(&i[0], 2); atomicSub(&i[1], 1); atomicMax(&i[2], (int)threadIdx.x); atomicMin(&i[3], -(int)threadIdx.x);
  atomicAnd(&i[4], ~(1 << threadIdx.x)); atomicOr(&i[5], 1 << threadIdx.x); atomicXor(&i[6], 1);
  atomicCAS(&i[7], (int)threadIdx.x, (int)threadIdx.x + 1);
  atomicInc(&u[0], 4u); atomicDec(&u[1], 100u); atomicExch(&u[2], threadIdx.x);
  atomicAdd(&ull[0], 1ull << 40); atomicMax(&ull[1], (unsigned long long)threadIdx.x * 3);
  atomicAdd(&f[0], 0.5f); atomicExch(&f[1], 2.5f); atomicMax(&f[2], (float)threadIdx.x);
  atomicAdd(&d[0], 0.25);
}
""")
    i = np.array([0, 0, -5, 5, -1, 0, 0, 0], dtype=np.int32)
    u = np.array([0, 0, 0], dtype=np.uint32)
    ull = np.zeros(2, dtype=np.uint64)
    f = np.zeros(3, dtype=np.float32)
    d = np.zeros(1, dtype=np.float64)
    assert prog.launch("k", [i, u, ull, f, d], block=(10, 1, 1)) == abi.OK
    assert i.tolist() == [20, -10, 9, -9, -1 & ~0x3FF, 0x3FF, 0, 10]
    assert u.tolist() == [10 % 5, 0xFFFFFFFF & (100 - 9), 9]  # inc wraps at 4; dec wraps from 0 to 100
    assert ull.tolist() == [10 << 40, 27]
    assert f.tolist() == [5.0, 2.5, 9.0] and d.tolist() == [2.5]


def test_struct_by_value_and_layout_kinds():
    prog = build("""
struct Params { double scale; float *data; int n; char tag; };
enum Mode { ADD = 1, MUL = 2 };
extern "C" __global__ void k(char c, Params p, Mode m, float4 bias) {
  int t = threadIdx.x;
  if (t < p.n) p.data[t] = (m == MUL ? p.data[t] * (float)p.scale : p.data[t] + (float)p.scale) + bias.w + (p.tag - c);
}
""")
    layout = prog.image.kernels["k"].layout
    assert [(p.offset, p.size, p.kind) for p in layout.params] == [
        (0, 1, "value"), (8, 24, "struct"), (32, 4, "value"), (48, 16, "struct")]
    data = np.arange(6, dtype=np.float32)
    params = struct.pack("<dQiB3x", 1.5, data.ctypes.data, 4, ord("b"))
    assert prog.launch("k", [b"a", params, ctypes.c_int(2), struct.pack("<4f", 0, 0, 0, 10)], block=(6, 1, 1)) == 0
    assert data.tolist() == [11.0, 12.5, 14.0, 15.5, 4.0, 5.0]


PRINTF_CASES = [
    ("%d|%5d|%-5d|%05d|%+d|% d", (42, 42, 42, 42, 42, 42)),
    ("%i %u %x %X %o %#x %#X", (-7, 4000000000, 255, 255, 8, 255, 171)),
    ("%ld %lld %lu %llx %hd %hhu %zu", (-(1 << 40), -(1 << 62), 1 << 63, 1 << 60, 70000, 300, 12345)),
    ("%c%c|%s|%.3s|%8s|%-8s|", (ord("h"), ord("i"), "text", "abcdef", "r", "l")),
    ("%f %.2f %10.3f %-10.1f| %e %.3E %g %g %g %G", (3.14159, 2.675, -1.5, 2.25, 12345.678, 0.000123, 100000.0,
                                                    1e6, 0.0001, 1.5e-5)),
    ("%g %g %g %#g %.0f %.0e %f %f", (0.5, 123456789.0, 1.0 / 3, 1.0, 2.5, 15000.0, 0.0, -0.0)),
    ("%5.1f%% %f %f %f %e", (99.44, float("inf"), float("-inf"), float("nan"), 1e-300)),
    ("%.10f %.15g %.17g %f", (1.0 / 3, 0.1, 0.1, 1e20)),
    ("%*d|%-*d|%.*f", (6, 1, 4, 2, 3, math.pi)),
]

_C_TYPES = {"d": "int", "i": "int", "u": "unsigned", "x": "unsigned", "X": "unsigned", "o": "unsigned",
            "c": "int", "s": "const char *", "f": "double", "e": "double", "E": "double", "g": "double",
            "G": "double"}


def _c_literal(value, conv: str, length: str) -> str:
    if conv == "s":
        return '"' + value + '"'
    if conv in "feEgG":
        if math.isnan(value):
            return "__builtin_nan(\"\")"
        if math.isinf(value):
            return "(-__builtin_inf())" if value < 0 else "__builtin_inf()"
        return repr(float(value)) if value != 0 or math.copysign(1, value) > 0 else "-0.0"
    ctype = {"l": "long", "ll": "long long", "h": "int", "hh": "int", "z": "unsigned long"}.get(length)
    unsigned = conv in "uxXo" and not length
    return f"({ctype or ('unsigned' if unsigned else 'int')}){value}{'ULL' if value >= 1 << 63 else 'LL'}"


def test_printf_formats_like_c():
    import re
    lines, calls = [], []
    for fmt, args in PRINTF_CASES:
        specs = re.findall(r"%[-+ #0]*(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|z)?([diuxXocsfeEgG%])", fmt)
        literals, it = [], iter(args)
        for width, prec, length, conv in specs:
            if conv == "%":
                continue
            if width == "*":
                literals.append(str(next(it)))
            if prec == "*":
                literals.append(str(next(it)))
            literals.append(_c_literal(next(it), conv, length))
        calls.append(f'  printf("{fmt}\\n", {", ".join(literals)});')
        lines.append(re.sub(r"(hh|h|ll|l|z)(?=[diuxXo])", "", fmt) % args)
    src = 'extern "C" __global__ void k() {\n' + "\n".join(calls) + "\n}\n"
    prog = build(src)
    assert prog.launch("k", []) == abi.OK
    got = prog.services.take_printf().decode().splitlines()
    want = []
    for (fmt, _args), line in zip(PRINTF_CASES, lines, strict=True):
        # C's %hd/%hhu print the argument converted to short/unsigned char; Python's % does not
        if "%hd" in fmt:
            line = line.replace("70000", str(np.int16(70000 - 65536)))
            line = line.replace(" 300 ", " 44 ")
        want.append(line)
    assert got == want


def test_printf_output_accumulates_per_launch_and_is_truncated_at_capacity():
    prog = build('extern "C" __global__ void k() { printf("thread %u of block %u\\n", threadIdx.x, blockIdx.x); }')
    assert prog.launch("k", [], grid=(2, 1, 1), block=(2, 1, 1)) == abi.OK
    assert prog.services.take_printf() == (b"thread 0 of block 0\nthread 1 of block 0\n"
                                           b"thread 0 of block 1\nthread 1 of block 1\n")
    prog.services.services.printf_cap = 25
    assert prog.launch("k", [], grid=(2, 1, 1), block=(2, 1, 1)) == abi.OK
    assert prog.services.take_printf() == b"thread 0 of block 0\nthrea"


def test_math_functions_through_the_services_table():
    prog = build("""
#include <cmath>
extern "C" __global__ void k(const float *x, float *f, double *d) {
  int t = threadIdx.x;
  float v = x[t];
  f[8 * t + 0] = sinf(v); f[8 * t + 1] = expf(v); f[8 * t + 2] = sqrtf(v); f[8 * t + 3] = powf(v, 1.5f);
  f[8 * t + 4] = std::floor(v * 3.0f); f[8 * t + 5] = fmaxf(v, 1.0f); f[8 * t + 6] = rsqrtf(v);
  f[8 * t + 7] = log2(v);
  d[4 * t + 0] = atan2((double)v, 2.0); d[4 * t + 1] = fma((double)v, 3.0, 1.0);
  d[4 * t + 2] = fabs(-(double)v) + copysign(1.0, -1.0); d[4 * t + 3] = tgamma((double)v);
}
""")
    x = np.array([0.5, 1.25, 2.0, 3.75], dtype=np.float32)
    f = np.zeros(32, dtype=np.float32)
    d = np.zeros(16, dtype=np.float64)
    assert prog.launch("k", [x, f, d], block=(4, 1, 1)) == abi.OK
    xv = x.astype(np.float64)
    want_f = np.stack([np.sin(x), np.exp(x), np.sqrt(x), np.power(x, np.float32(1.5)), np.floor(x * np.float32(3)),
                       np.maximum(x, 1), 1 / np.sqrt(x), np.log2(x)], axis=1).ravel()
    np.testing.assert_allclose(f, want_f, rtol=2e-7)
    want_d = np.stack([np.arctan2(xv, 2.0), xv * 3 + 1, xv - 1, [math.gamma(v) for v in xv]], axis=1).ravel()
    np.testing.assert_allclose(d, want_d, rtol=1e-13)


def test_dynamic_shared_memory_both_spellings():
    prog = build("""
extern "C" __global__ void ext(const int *in, int *out) {
  extern __shared__ __align__(16) int buf[];
  buf[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = buf[blockDim.x - 1 - threadIdx.x];
}
extern "C" __global__ void macro(const double *in, double *out) {
  HIP_DYNAMIC_SHARED(double, buf)
  buf[threadIdx.x] = in[threadIdx.x] * 2;
  __syncthreads();
  out[threadIdx.x] = buf[(threadIdx.x + 1) % blockDim.x];
}
""")
    ints = np.arange(16, dtype=np.int32)
    out = np.zeros(16, dtype=np.int32)
    assert prog.launch("ext", [ints, out], block=(16, 1, 1), dyn_shared=64) == abi.OK
    assert out.tolist() == ints[::-1].tolist()
    dbl = np.arange(8, dtype=np.float64)
    dout = np.zeros(8, dtype=np.float64)
    assert prog.launch("macro", [dbl, dout], block=(8, 1, 1), dyn_shared=64) == abi.OK
    assert dout.tolist() == (np.roll(dbl, -1) * 2).tolist()


def test_cpp_kernels_are_found_by_their_mangled_names():
    prog = build("""
namespace ops {
__global__ void scale(float *x, float f) { x[threadIdx.x] *= f; }
__global__ void scale(double *x, double f) { x[threadIdx.x] *= f; }
}
__global__ void fill(int *x, int v) { x[threadIdx.x] = v; }
""")
    assert {"_ZN3ops5scaleEPff", "_ZN3ops5scaleEPdd", "_Z4fillPii"} <= set(prog.image.kernels)
    x = np.ones(4, dtype=np.float32)
    assert prog.launch("_ZN3ops5scaleEPff", [x, ctypes.c_float(3)], block=(4, 1, 1)) == abi.OK
    assert x.tolist() == [3.0] * 4
    y = np.zeros(2, dtype=np.int32)
    assert prog.launch("_Z4fillPii", [y, ctypes.c_int(9)], block=(2, 1, 1)) == abi.OK
    assert y.tolist() == [9, 9]


def test_assert_and_trap_stop_the_launch_with_a_message():
    prog = build("""
extern "C" __global__ void checked(int *x) {
  assert(x[threadIdx.x] >= 0);
  x[threadIdx.x] += 1;
}
extern "C" __global__ void trapping(int *x) { if (blockIdx.x == 1) __trap(); x[blockIdx.x] = 1; }
""", name="checks.hip")
    x = np.array([0, 1, -1, 5], dtype=np.int32)
    assert prog.launch("checked", [x], block=(4, 1, 1)) == abi.E_TRAP
    assert prog.services.trap_message() == "checks.hip:3: checked: Assertion `x[threadIdx.x] >= 0' failed."
    assert x.tolist() == [1, 2, -1, 5]  # threads 0 and 1 ran to their end before thread 2 failed
    y = np.zeros(3, dtype=np.int32)
    assert prog.launch("trapping", [y], grid=(3, 1, 1)) == abi.E_TRAP
    assert prog.services.trap_message() == "__trap() called"
    assert y.tolist() == [1, 0, 0]
    x[2] = 2
    assert prog.launch("checked", [x], block=(4, 1, 1)) == abi.OK  # the image works after a trap
    assert x.tolist() == [2, 3, 3, 6]


def test_launch_shape_limits():
    prog = build('extern "C" __global__ void k(int *x) { x[0] = 1; }')
    x = np.zeros(1, dtype=np.int32)
    assert prog.launch("k", [x], block=(1025, 1, 1)) == abi.E_SHAPE
    assert prog.launch("k", [x], dyn_shared=(64 << 10) + 1) == abi.E_SHAPE
    assert prog.launch("k", [x], grid=(0, 1, 1)) == abi.OK and x[0] == 0
    prog.services.services.abi_version = 99
    assert prog.launch("k", [x]) == abi.E_ABI


def test_warp_shuffles_and_votes():
    prog = build("""
extern "C" __global__ void k(const float *in, float *sums, int *ints, unsigned long long *votes) {
  unsigned t = threadIdx.x;
  float v = in[t];
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down(v, offset);
  if (__lane_id() == 0) sums[t / warpSize] = v;
  ints[4 * t + 0] = __shfl((int)t * 10, 3);
  ints[4 * t + 1] = __shfl_up((int)t, 1);
  ints[4 * t + 2] = __shfl_xor((int)t, 1);
  ints[4 * t + 3] = __shfl_sync(0xffffffffu, (int)t, 5, 8);
  unsigned long long b = __ballot(t % 3 == 0);
  unsigned long long active = __activemask();
  int all = __all(t < 100), all_low = __all(t < 10);
  if (t == 0 || t == 64) {
    votes[t / 64 * 4] = b; votes[t / 64 * 4 + 1] = active; votes[t / 64 * 4 + 2] = all;
    votes[t / 64 * 4 + 3] = all_low + 2 * __activemask();  // only this lane is in the branch
  }
}
""")
    n = 100  # one full warp, one of 36 threads
    data = np.arange(n, dtype=np.float32)
    sums = np.zeros(2, dtype=np.float32)
    ints = np.zeros(4 * n, dtype=np.int32)
    votes = np.zeros(8, dtype=np.uint64)
    assert prog.launch("k", [data, sums, ints, votes], block=(n, 1, 1)) == abi.OK
    assert sums[0] == data[:64].sum()  # (the partial warp's sum reads lanes that do not exist)
    t = np.arange(n)
    base = t & ~63
    assert ints[0::4].tolist() == ((base + 3) * 10).tolist()
    assert ints[1::4].tolist() == np.where(t % 64 == 0, t, t - 1).tolist()
    assert ints[2::4].tolist() == np.where((t ^ 1) < n, t ^ 1, t).tolist()
    assert ints[3::4].tolist() == np.where((t & ~7) + 5 < n, (t & ~7) + 5, t).tolist()  # absent lane: own value
    ballot0 = sum(1 << i for i in range(64) if i % 3 == 0)
    ballot1 = sum(1 << (i - 64) for i in range(64, n) if i % 3 == 0)
    assert votes.tolist() == [ballot0, (1 << 64) - 1, 1, 2, ballot1, (1 << 36) - 1, 1, 2]


def test_a_warp_split_between_a_warp_operation_and_a_barrier_is_reported():
    prog = build("""
extern "C" __global__ void k(int *x) {
  if (threadIdx.x == 0) __syncthreads(); else x[threadIdx.x] = __shfl((int)threadIdx.x, 0);
}
""")
    x = np.zeros(4, dtype=np.int32)
    assert prog.launch("k", [x], block=(4, 1, 1)) == abi.E_BARRIER
    assert "warp operation" in prog.services.trap_message()


TEMPLATES = """
namespace ops {
template <typename T, int N> __global__ void fill(T *x, T v) { for (int i = 0; i < N; ++i) x[threadIdx.x * N + i] = v; }
}
template <typename T> __global__ void twice(T *x) { x[threadIdx.x] *= 2; }
template __global__ void twice<int>(int *);
"""


def test_template_kernels_by_explicit_instantiation_and_name_expression(tmp_path, monkeypatch):
    from hrr.backends.sim.native.toolchain import SourceUnit, compile_program
    from nativerun import Loaded
    exprs = ("ops::fill<float, 2>", "&twice<double>")
    result = compile_program([SourceUnit("t.hip", TEMPLATES.encode())], [], name_expressions=exprs)
    assert result.ok, result.log
    assert result.lowered == {"ops::fill<float, 2>": "_ZN3ops4fillIfLi2EEEvPT_S1_", "&twice<double>": "_Z5twiceIdEvPT_"}
    prog = Loaded(result.image)
    assert {"_Z5twiceIiEvPT_", "_Z5twiceIdEvPT_", "_ZN3ops4fillIfLi2EEEvPT_S1_"} <= set(prog.image.kernels)
    x = np.zeros(6, dtype=np.float32)
    assert prog.launch("_ZN3ops4fillIfLi2EEEvPT_S1_", [x, ctypes.c_float(1.5)], block=(3, 1, 1)) == abi.OK
    assert x.tolist() == [1.5] * 6
    i = np.arange(3, dtype=np.int32)
    assert prog.launch("_Z5twiceIiEvPT_", [i], block=(3, 1, 1)) == abi.OK and i.tolist() == [0, 2, 4]
    again = compile_program([SourceUnit("t.hip", TEMPLATES.encode())], [], name_expressions=exprs)
    assert again.lowered == result.lowered   # from the cache
    bad = compile_program([SourceUnit("t.hip", TEMPLATES.encode())], [], name_expressions=("nope<int>",))
    assert not bad.ok and "<name expression 0>" in bad.log


def test_standard_headers_kernels_use():
    prog = build("""
#include <hip/hip_runtime.h>
#include <limits>
#include <type_traits>
#include <cstdint>
template <class T> __device__ T lowest() { return std::numeric_limits<T>::lowest(); }
extern "C" __global__ void k(float *f, int64_t *i) {
  static_assert(std::is_same<std::remove_cv<const int>::type, int>::value, "traits");
  static_assert(std::is_floating_point<float>::value && !std::is_integral<float>::value, "traits");
  f[0] = lowest<float>(); f[1] = std::numeric_limits<float>::epsilon(); f[2] = std::numeric_limits<float>::infinity();
  i[0] = std::numeric_limits<int>::min(); i[1] = std::numeric_limits<uint32_t>::max(); i[2] = INT64_MAX;
}
""", ["-std=c++11"])
    f = np.zeros(3, dtype=np.float32)
    i = np.zeros(3, dtype=np.int64)
    assert prog.launch("k", [f, i]) == abi.OK
    assert f.tolist() == [float(np.finfo(np.float32).min), float(np.finfo(np.float32).eps), math.inf]
    assert i.tolist() == [-(1 << 31), (1 << 32) - 1, (1 << 63) - 1]


def test_printf_knows_its_arguments_types():
    prog = build(r"""
enum class Color : unsigned char { red = 200 };
extern "C" __global__ void k(int neg, const float *p) {
  printf("%ld %lu %lld|%d %u|%s|%c|%f %f|%d|%x\n", neg, 7, neg, (unsigned char)255, (short)-2, "str", 'q',
         1.5f, 2, Color::red, (unsigned short)0xffff);
  int (*c_printf)(const char *, ...) = printf;   // a call through the C declaration: va_list
  c_printf("%d %s %.1f %p\n", -3, "va", 0.25, (const void *)p);
  printf("%d %d\n", 1);                          // a missing argument prints 0, reads nothing
  struct P { int a; } s = {42};
  printf("%d %d\n", true, s);                    // a struct: its first bytes
}
""")
    p = np.zeros(1, dtype=np.float32)
    assert prog.launch("k", [ctypes.c_int(-1), p]) == abi.OK
    assert prog.services.take_printf().decode().splitlines() == [
        "-1 7 -1|255 4294967294|str|q|1.500000 2.000000|200|ffff",
        f"-3 va 0.2 {hex(p.ctypes.data)}",
        "1 0",
        "1 42",
    ]


def test_a_stack_overflow_is_reported_not_silent():
    prog = build("""
extern "C" __global__ void k(int *x, int n) {
  volatile char big[200000];                 // more than a fiber's 128 KiB stack
  for (int i = 0; i < n; ++i) big[i] = (char)i;
  x[threadIdx.x] = big[n - 1];
}
""")
    x = np.zeros(2, dtype=np.int32)
    assert prog.launch("k", [x, ctypes.c_int(200000)], block=(2, 1, 1)) == abi.E_TRAP
    assert "overflowed its stack" in prog.services.trap_message()


def test_math_written_out_in_the_header():
    prog = build("""
extern "C" __global__ void k(double *d, float *f, unsigned *u) {
  d[0] = ldexp(3.0, -1030); d[1] = ldexp(1.5, 1000); d[2] = fmin(__builtin_nan(""), 2.0); d[3] = fmax(-1.0, 4.0);
  double ip; d[4] = modf(-2.75, &ip); d[5] = ip; d[6] = fma(0.1, 10.0, -1.0); d[7] = scalbn(1.0, -1074);
  f[0] = ldexpf(1.0f, -140); f[1] = __saturatef(1.5f); f[2] = fminf(2.0f, -0.5f); f[3] = rsqrtf(4.0f);
  u[0] = __popc(0xF0F0u); u[1] = __brev(1u); u[2] = (unsigned)__clz(1); u[3] = (unsigned)__ffs(8);
}
""")
    d = np.zeros(8)
    f = np.zeros(4, dtype=np.float32)
    u = np.zeros(4, dtype=np.uint32)
    assert prog.launch("k", [d, f, u]) == abi.OK
    assert d.tolist() == [math.ldexp(3.0, -1030), math.ldexp(1.5, 1000), 2.0, 4.0, -0.75, -2.0,
                          5.551115123125783e-17, 5e-324]
    assert f.tolist() == [float(np.ldexp(np.float32(1), -140)), 1.0, -0.5, 0.5]
    assert u.tolist() == [8, 1 << 31, 31, 4]


def test_printf_floats_are_exact_at_every_precision():
    # glibc prints a double's exact decimal value rounded to nearest, ties to even; so must we
    import random
    prog = build("""
extern "C" __global__ void k(const double *v, const char *fmts, int nf, int stride, int n) {
  for (int i = 0; i < n; ++i) for (int j = 0; j < nf; ++j) printf(fmts + j * stride, v[i]);
}
""")
    rng = random.Random(7)
    values = [0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.5, 2.5, 0.125, 1e22, 9.9999999]
    for _ in range(400):
        scale = rng.choice([rng.uniform(-30, 30), rng.uniform(-300, 300), rng.uniform(-5, 5)])
        value = rng.random() * 10 ** scale * rng.choice([1, -1])
        values.append(round(value, rng.randint(0, 6)) if rng.random() < 0.2 else value)
    fmts = ["%f", "%.3f", "%.0f", "%e", "%.10e", "%g", "%.12g", "%.17g", "%.1e", "%#.3g", "%.20f", "%.25e", "%G"]
    stride = 8
    table = np.frombuffer(b"".join(f.encode().ljust(stride, b"\0") for f in fmts), dtype=np.uint8).copy()
    prog.services = abi.make_services(printf_cap=16 << 20)
    v = np.array(values)
    assert prog.launch("k", [v, table, ctypes.c_int(len(fmts)), ctypes.c_int(stride), ctypes.c_int(len(v))]) == 0
    got = prog.services.take_printf().decode()
    assert got == "".join(f % x for x in values for f in fmts)


def test_math_overloads_follow_cmath():
    prog = build("""
#include <cmath>
extern "C" __global__ void k(double *d, float *f) {
  int i = 2;
  d[0] = sqrt(i); d[1] = pow(i, 10); d[2] = std::pow(2.0f, 0.5); d[3] = atan2(1, 1.0f);
  f[0] = sqrt(2.0f); f[1] = std::exp(1.0f); f[2] = pow(2.0f, 0.5f);
  static_assert(sizeof(pow(2.0f, 3)) == sizeof(double), "pow(float, int) is double");
  static_assert(sizeof(sin(1.0f)) == sizeof(float), "sin(float) is float");
}
""")
    d = np.zeros(4)
    f = np.zeros(3, dtype=np.float32)
    assert prog.launch("k", [d, f]) == abi.OK
    assert d.tolist() == [math.sqrt(2), 1024.0, math.sqrt(2), math.pi / 4]
    assert f.tolist() == [np.sqrt(np.float32(2)), np.float32(math.e), np.float32(math.sqrt(2))]


def test_half_precision_conversions_and_arithmetic():
    prog = build("""
#include <hip/hip_fp16.h>
extern "C" __global__ void k(const float *in, unsigned short *bits, float *back, __half *sums, half scale) {
  unsigned t = threadIdx.x;
  __half h = __float2half(in[t]);
  bits[t] = __half_as_ushort(h);
  back[t] = __half2float(__ushort_as_half((unsigned short)t * 97u));
  if (t == 0) {
    __half a = 1.5f, b = 0.25f;
    sums[0] = __hadd(a, b); sums[1] = __hmul(a, scale); sums[2] = a * b + scale; sums[3] = __hfma(a, b, scale);
    printf("%.3f\\n", a);
  }
}
""")
    rng = np.random.default_rng(3)
    special = [0.0, -0.0, 65504.0, 65519.99, 65520.0, 1e-8, 2.0 ** -25, 2.0 ** -24, 3 * 2.0 ** -26, np.inf, -np.inf,
               np.nan, 1.0009765625, 1.00048828125, 1.00146484375]
    count = 1024 - len(special)
    randoms = rng.standard_normal(count) * 10.0 ** rng.integers(-8, 5, count)
    values = np.concatenate([np.array(special, dtype=np.float32), randoms.astype(np.float32)])
    bits = np.zeros(1024, dtype=np.uint16)
    back = np.zeros(1024, dtype=np.float32)
    sums = np.zeros(4, dtype=np.float16)
    assert prog.launch("k", [values, bits, back, sums, np.float16(2.0).tobytes()], block=(1024, 1, 1)) == abi.OK
    with np.errstate(over="ignore"):
        want = values.astype(np.float16).view(np.uint16)
    nan = np.isnan(values)
    assert (bits[~nan] == want[~nan]).all() and ((bits[nan] & 0x7C00) == 0x7C00).all()
    from_bits = (np.arange(1024, dtype=np.uint32) * 97 & 0xFFFF).astype(np.uint16).view(np.float16).astype(np.float32)
    assert np.array_equal(back, from_bits, equal_nan=True)
    assert sums.tolist() == [1.75, 3.0, 2.375, 2.375]
    assert prog.services.take_printf() == b"1.500\n"


def test_cooperative_groups_block_and_tiles():
    prog = build("""
#include <hip/hip_cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void k(const int *in, int *block_sums, int *tile_sums, unsigned *ranks) {
  cg::thread_block block = cg::this_thread_block();
  __shared__ int total;
  if (block.thread_rank() == 0) total = 0;
  block.sync();
  atomicAdd(&total, in[cg::this_grid().thread_rank()]);
  cg::sync(block);
  cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
  int v = in[cg::this_grid().thread_rank()];
  for (int offset = 8; offset > 0; offset /= 2) v += tile.shfl_down(v, offset);
  if (tile.thread_rank() == 0) tile_sums[blockIdx.x * 8 + tile.meta_group_rank()] = v;
  unsigned low = (unsigned)tile.ballot(tile.thread_rank() < 2);
  ranks[cg::this_grid().thread_rank()] = tile.thread_rank() | (tile.all(1) << 8) | (low << 16);
  if (block.thread_rank() == 0) block_sums[blockIdx.x] = total;
}
""")
    data = np.arange(256, dtype=np.int32)
    block_sums = np.zeros(2, dtype=np.int32)
    tile_sums = np.zeros(16, dtype=np.int32)
    ranks = np.zeros(256, dtype=np.uint32)
    assert prog.launch("k", [data, block_sums, tile_sums, ranks], grid=(2, 1, 1), block=(128, 1, 1)) == abi.OK
    assert block_sums.tolist() == [data[:128].sum(), data[128:].sum()]
    assert tile_sums.tolist() == data.reshape(16, 16).sum(axis=1).tolist()
    assert ranks.tolist() == [(i % 16) | (1 << 8) | (3 << 16) for i in range(256)]
