"""The forms a cuda-python program hands HIP through hip-python's interop layer, each run
by hrr in this venv (no interop installed): nvrtc's option names, ``nvrtcGetPTX`` into a
``bytes``, ``cuModuleLoadData(ptx.ctypes.data)`` (an image by address, recorded by reading
it), ``cuLaunchKernel(..., params.ctypes.data, 0)`` (kernelParams by address, a NULL extra
as 0) and enum members of the interop's own classes (``cudaMemcpyKind``)."""
from __future__ import annotations

import ctypes
import enum
import struct
import sys

import numpy as np
import pytest

from hrr import hiptypes as ht
from hrr.hiptypes import kernelsource
from hrr.hiptypes.codefile import image_at
from hrr.hiptypes.kernargs import KernelLayout, LaunchArgsError, pack_kernel_args
from hrr.backends.sim import builtin_code_object
from hrr.backends.sim.native.toolchain import _translate_options, find_toolchain
from hrrtest import archive_calls, capture, only, replay, text

SAXPY = b"""\
extern "C" __global__
void saxpy(float a, const float *x, const float *y, float *out, size_t n)
{
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    for (; i < n; i += (size_t)blockDim.x * gridDim.x)
        out[i] = a * x[i] + y[i];
}
"""


def _interop_kind(members: type) -> type:
    """An enum class as the interop makes one: its own class (hip-python's ``*__Base``
    where installed), hip-python's member names beside CUDA's, the same values."""
    base = getattr(ht._real[0], "_hipMemcpyKind__Base", enum.IntEnum) if ht._real else enum.IntEnum
    return base("cudaMemcpyKind", {"cudaMemcpyHostToDevice": int(members.hipMemcpyHostToDevice),
                                   "cudaMemcpyDeviceToHost": int(members.hipMemcpyDeviceToHost)})


def _cuda_python_app(hip, hiprtc, _backend):
    """saxpy, in cuda-python's idioms, on hrr's hip (what the interop calls are)."""
    def ok(result):
        err, *outs = result
        assert int(err) == 0, result
        return outs[0] if len(outs) == 1 else None

    kind = _interop_kind(hip.hipMemcpyKind)
    prog = ok(hiprtc.hiprtcCreateProgram(SAXPY, b"saxpy.cu", 0, [], []))
    opts = [b"--fmad=false", b"--gpu-architecture=compute_90", b"-default-device"]
    ok(hiprtc.hiprtcCompileProgram(prog, len(opts), opts))
    ptx = b" " * ok(hiprtc.hiprtcGetCodeSize(prog))
    ok(hiprtc.hiprtcGetCode(prog, ptx))          # C writes into the bytes, as in cuda-python
    ptx = np.char.array(ptx)
    module = ok(hip.hipModuleLoadData(ptx.ctypes.data))
    kernel = ok(hip.hipModuleGetFunction(module, b"saxpy"))
    n = 1000
    hx, hy = np.arange(n, dtype=np.float32), np.full(n, 0.25, dtype=np.float32)
    dx, dy, dout = (ok(hip.hipMalloc(n * 4)) for _ in range(3))
    ok(hip.hipMemcpy(dx, hx, n * 4, kind.cudaMemcpyHostToDevice))
    ok(hip.hipMemcpy(dy, hy, n * 4, kind.cudaMemcpyHostToDevice))
    args = [np.array([1.5], dtype=np.float32), *(np.array([int(p)], dtype=np.uint64) for p in (dx, dy, dout)),
            np.array([n], dtype=np.uint64)]
    params = np.array([a.ctypes.data for a in args], dtype=np.uint64)
    ok(hip.hipModuleLaunchKernel(kernel, 4, 1, 1, 64, 1, 1, 0, None, params.ctypes.data, 0))
    out = np.empty(n, dtype=np.float32)
    ok(hip.hipMemcpy(out, dout, n * 4, kind.cudaMemcpyDeviceToHost))
    return out, np.float32(1.5) * hx + hy


@pytest.mark.skipif(find_toolchain() is None, reason="no C++ compiler for the sim's hiprtc here")
def test_a_cuda_python_style_program_is_recorded_and_replays_strict(tmp_path):
    out, expected = capture(tmp_path, _cuda_python_app)
    assert np.array_equal(out, expected)
    calls = {rec[2]: rec for rec in archive_calls(tmp_path)}
    assert "hipModuleLaunchKernel" in calls
    assert isinstance(calls["hipModuleLoadData"][3][0], str)   # the image, read at its address and stored
    result = replay(tmp_path)
    assert result.exit_code == 0, text(result)
    proc = only(result)
    assert proc.refusals == () and proc.checks_passed == 1, text(result)


def test_an_image_at_an_address_is_read_as_long_as_its_format_says():
    sim = builtin_code_object()
    source = kernelsource.encode(kernelsource.KernelSource(
        (kernelsource.SourceUnit("k.cu", b"extern \"C\" __global__ void k() {}", ()),), ()))
    elf = bytearray(256)     # a 64-bit little-endian ELF: sections end at 64 + 3 * 64
    elf[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<QQ", elf, 32, 0, 64)          # e_phoff, e_shoff
    struct.pack_into("<HHHH", elf, 54, 56, 0, 64, 3)  # e_phentsize, e_phnum, e_shentsize, e_shnum
    fatbin = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 8) + b"payload!" + b"trailing"
    for image, size in ((sim, len(sim)), (source, len(source)), (bytes(elf), 256), (fatbin, 24)):
        buf = ctypes.create_string_buffer(image + b"\xff" * 32)
        assert image_at(ctypes.addressof(buf)) == image[:size]
    for unknown in (b"// PTX text\n.version 8.0\n", kernelsource.MAGIC + struct.pack("<I", 0xFFFFFFFF)):
        buf = ctypes.create_string_buffer(unknown + bytes(16))
        assert image_at(ctypes.addressof(buf)) is None   # no length of its own, or an impossible one
    assert image_at(0) is None


def test_a_null_extra_or_kernel_params_given_as_zero_is_absent():
    layout = KernelLayout.from_wire([[0, 4, "value", "v"], [8, 8, "pointer", "p"]])
    value, ptr = ctypes.c_uint32(7), ctypes.c_uint64(0x1000)
    params = (ctypes.c_void_p * 2)(ctypes.addressof(value), ctypes.addressof(ptr))
    want = struct.pack("<I4xQ", 7, 0x1000)
    for extra in (0, ctypes.c_void_p(), None):
        assert pack_kernel_args(layout, ctypes.addressof(params), extra) == want
    raw = (ctypes.c_void_p * 5)(1, ctypes.addressof(ctypes.create_string_buffer(want, 16)), 2,
                                ctypes.addressof(ctypes.c_size_t(16)), 3)
    with pytest.raises(LaunchArgsError, match="not both"):
        pack_kernel_args(layout, ctypes.addressof(params), raw)
    with pytest.raises(LaunchArgsError, match="neither"):
        pack_kernel_args(layout, 0, 0)


def test_nvrtc_options_become_the_cpu_compilers_or_are_accepted():
    flags, macros, notes = _translate_options(["--fmad=false", "-use_fast_math", "--gpu-architecture=compute_90",
                                       "-arch=sm_80", "-default-device", "-lineinfo", "-rdc=true",
                                       "--ptxas-options=-v", "--maxrregcount=32", "--not-an-option"], "")
    assert "-ffp-contract=off" in flags and "-ffast-math" in flags
    assert notes == ["note: option '--not-an-option' ignored by hrr's CPU compiler"]
    assert macros == []


def test_the_cuda_backends_hiprtc_writes_into_a_read_only_buffer_too():
    hiprtc_api = pytest.importorskip("hrr.backends.cuda.hiprtc_api", reason="the cuda extra is not installed")
    out = b" " * 6
    hiprtc_api._write_into(out, b"cubin\0")
    assert out == b"cubin\0"


def test_the_cuda_backend_refuses_the_interop_in_place_of_nvidias_bindings(monkeypatch):
    """hip-python-interop installs cuda.bindings too: in an environment holding it, the cuda
    backend names it instead of calling CUDA names that are HIP calls (hrr's own, under hrr)."""
    bindings = pytest.importorskip("cuda.bindings", reason="the cuda extra is not installed")
    from hrr.backends.cuda import _runtime
    from hrr.errors import BackendError

    for name in ("driver", "runtime", "nvrtc"):
        fake = type(sys)(f"cuda.bindings.{name}")
        fake.HIP_PYTHON = True   # what the interop's modules set
        monkeypatch.setitem(sys.modules, f"cuda.bindings.{name}", fake)
        monkeypatch.setattr(bindings, name, fake, raising=False)
    assert "hip-python's interop layer" in _runtime.gpu_unavailable_reason()
    for load in (_runtime.bindings, _runtime.nvrtc_module):
        with pytest.raises(BackendError, match="interop layer") as caught:
            load()
        assert "--backend sim" in caught.value.hint


def test_a_sim_captured_program_source_compiles_on_the_cuda_backend_at_load():
    """Record on the sim (where the interop can run), replay on an NVIDIA GPU: the sim's code
    object is the program's source and options, which the cuda backend compiles with NVRTC
    when it is loaded (NVRTC needs no GPU: checked here on its cubin)."""
    modules = pytest.importorskip("hrr.backends.cuda.modules", reason="the cuda extra is not installed")
    nvrtc = pytest.importorskip("cuda.bindings.nvrtc", reason="the cuda extra is not installed")
    if int(nvrtc.nvrtcVersion()[0]) != 0:
        pytest.skip("NVRTC is not installed")
    unit = kernelsource.SourceUnit("saxpy.cu", SAXPY, ())
    sim_image = kernelsource.encode(kernelsource.KernelSource((unit,), ("--fmad=false", "-default-device")))
    cubin = modules._unwrap(sim_image)
    assert cubin is not None and cubin.startswith(b"\x7fELF") and b"saxpy" in cubin
    broken = kernelsource.encode(kernelsource.KernelSource((kernelsource.SourceUnit("x.cu", b"this is not C++"),)))
    assert modules._unwrap(broken) is None   # hipModuleLoadData then answers hipErrorInvalidImage


def _space_byte() -> int:
    # a 1-byte slice is CPython's shared object for that byte: what every b" " in the process is
    return b"x y"[1:2][0]


def test_an_empty_log_into_a_one_byte_bytes_leaves_every_b_space_alone():
    # b" " * 1 is the interpreter's one b" ": an empty log's NUL written there turned every
    # b" " the process decoded afterwards (hrr's own msgpack reads too) into b"\0"
    ht.write_into_read_only(b" " * 1, b"\0")
    assert _space_byte() == 0x20
    out = b" " * 3
    ht.write_into_read_only(out, b"ab\0")
    assert out == b"ab\0"


def test_the_cuda_backends_hiprtc_fills_its_own_buffers_not_shared_bytes():
    hiprtc_api = pytest.importorskip("hrr.backends.cuda.hiprtc_api", reason="the cuda extra is not installed")
    try:
        from cuda.bindings import nvrtc  # noqa: F401
    except ImportError:
        pytest.skip("NVRTC is not installed (the cuda extra)")
    prog = hiprtc_api.hiprtcCreateProgram(b'extern "C" __global__ void k() {}', b"k.cu", 0, [], [])[1]
    assert int(hiprtc_api.hiprtcCompileProgram(prog, 0, [])[0]) == 0
    n = hiprtc_api.hiprtcGetProgramLogSize(prog)[1]
    log = bytearray(n)
    assert int(hiprtc_api.hiprtcGetProgramLog(prog, log)[0]) == 0
    assert _space_byte() == 0x20   # NVRTC's empty log (one NUL) went into hrr's own buffer
    hiprtc_api.hiprtcDestroyProgram(prog)
