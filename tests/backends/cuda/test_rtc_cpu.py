"""The cuda backend's hiprtc without a GPU: options as hiprtc users write them (translated
or dropped with a line in the program log, never a failure), -fgpu-rdc bitcode, name
expressions (NVRTC runs here), and the link API's calls into the driver's JIT linker
(checked against a fake driver: names, arguments, order)."""
from __future__ import annotations

import ctypes

import pytest

from hrr import hiptypes as ht
from hrr.hiptypes import kernelsource
from hrr.backends.cuda import _runtime
from hrr.backends.cuda import hiprtc_api as rtc
from hrr.backends.cuda.hiprtc_api import translate

R = ht.hiprtcResult


def _nvrtc_available() -> bool:
    try:
        from cuda.bindings import nvrtc
        return int(nvrtc.nvrtcVersion()[0]) == 0
    except Exception:  # noqa: BLE001
        return False


needs_nvrtc = pytest.mark.skipif(not _nvrtc_available(), reason="NVRTC (cuda extra) not installed")

# (hiprtc option(s) as a program writes them, NVRTC's options, the options dropped)
OPTIONS = [
    ([b"--offload-arch=gfx90a"], [b"--gpu-architecture=sm_90"], ["--offload-arch=gfx90a"]),
    ([b"--offload-arch=gfx942:sramecc+:xnack-"], [b"--gpu-architecture=sm_90"],
     ["--offload-arch=gfx942:sramecc+:xnack-"]),
    (["--offload-arch=sm_80"], [b"--gpu-architecture=sm_80"], []),
    ([b"--offload-arch", b"sm_90a"], [b"--gpu-architecture=sm_90a"], []),
    ([b"-arch=compute_90"], [b"--gpu-architecture=sm_90"], []),
    ([b"-fgpu-rdc"], [b"--relocatable-device-code=true", b"--gpu-architecture=sm_90"], []),
    ([b"-fno-gpu-rdc"], [b"--relocatable-device-code=false", b"--gpu-architecture=sm_90"], []),
    ([b"-O3", b"-O0", b"-Os"], [b"--gpu-architecture=sm_90"], ["-O3", "-O0", "-Os"]),
    ([b"-ffast-math"], [b"--use_fast_math", b"--gpu-architecture=sm_90"], []),
    ([b"-std=c++17", "--std=gnu++14", b"-std=c++2a"],
     [b"-std=c++17", b"--std=c++14", b"-std=c++20", b"--gpu-architecture=sm_90"], []),
    ([b"-std=c++23"], [b"--gpu-architecture=sm_90"], ["-std=c++23"]),
    ([b"-DN=4", b"-D", b"M", b"-UX", b"-I/inc", b"-I", b"/other"],
     [b"-DN=4", b"-DM", b"-UX", b"-I/inc", b"-I/other", b"--gpu-architecture=sm_90"], []),
    ([b"-Wall", b"-Werror", b"-w"], [b"-w", b"--gpu-architecture=sm_90"], ["-Wall", "-Werror"]),
    ([b"-mcumode", b"-mwavefrontsize64", b"-munsafe-fp-atomics", b"--amdgpu-target=gfx90a"],
     [b"--gpu-architecture=sm_90"],
     ["-mcumode", "-mwavefrontsize64", "-munsafe-fp-atomics", "--amdgpu-target=gfx90a"]),
    ([b"-fgpu-flush-denormals-to-zero", b"-ffp-contract=off"],
     [b"--ftz=true", b"--fmad=false", b"--gpu-architecture=sm_90"], []),
    ([b"-g", b"-gline-tables-only"], [b"-G", b"-lineinfo", b"--gpu-architecture=sm_90"], []),
    ([b"-x", b"hip", b"-fPIC", b"--save-temps", b"--hip-version=6.2"], [b"--gpu-architecture=sm_90"],
     ["-xhip", "-fPIC", "--save-temps", "--hip-version=6.2"]),
    ([b"-lineinfo", b"--maxrregcount=32", b"-default-device"],
     [b"-lineinfo", b"--maxrregcount=32", b"-default-device", b"--gpu-architecture=sm_90"], []),
]


@pytest.mark.parametrize("given,nvrtc,dropped", OPTIONS, ids=[repr(o[0])[:40] for o in OPTIONS])
def test_hiprtc_options_are_translated_or_dropped_with_a_note(given, nvrtc, dropped):
    out, notes, _ = translate(given, "sm_90")
    assert out == nvrtc
    assert [n.split("'")[1] for n in notes] == dropped
    assert all(n.startswith("hrr: option ") and n.endswith("\n") for n in notes)


def test_rdc_is_known_from_the_translated_options():
    assert translate([b"-fgpu-rdc"], "sm_90")[2] is True
    assert translate([b"-fgpu-rdc", b"-fno-gpu-rdc"], "sm_90")[2] is False
    assert translate([], "sm_90")[2] is False


PRINTF_KERNEL = b"""
extern "C" __global__ void print_tid() { printf("tid: %d\\n", (int) threadIdx.x); }
"""


@needs_nvrtc
@pytest.mark.parametrize("arch", [b"gfx90a", "gfx942", b"sm_90", "sm_90"])
def test_the_examples_compile_flags_compile_and_say_what_was_dropped(arch):
    """hip-python's examples: b"--offload-arch=" + gcnArchName (bytes, 7.x) or str (10.x),
    -fgpu-rdc, and a printf kernel."""
    from hrr.backends.cuda import hiprtc
    err, prog = hiprtc.hiprtcCreateProgram(PRINTF_KERNEL, b"print_tid", 0, [], [])
    prefix = b"--offload-arch=" if isinstance(arch, bytes) else "--offload-arch="
    flags = [prefix + arch, b"-fgpu-rdc", "-O3", b"-Wall"]
    assert hiprtc.hiprtcCompileProgram(prog, len(flags), flags) == (R.HIPRTC_SUCCESS,)
    err, n = hiprtc.hiprtcGetProgramLogSize(prog)
    log = bytearray(n)
    assert hiprtc.hiprtcGetProgramLog(prog, log) == (R.HIPRTC_SUCCESS,)
    text = log.decode(errors="replace")
    assert "hrr: option '-O3' dropped" in text and "hrr: option '-Wall' dropped" in text
    amd = "gfx" in (arch.decode() if isinstance(arch, bytes) else arch)
    assert ("hrr: option '--offload-arch=gfx" in text) == amd
    err, size = hiprtc.hiprtcGetBitcodeSize(prog)
    assert err == R.HIPRTC_SUCCESS and size > 0
    bitcode = bytearray(size)
    assert hiprtc.hiprtcGetBitcode(prog, bitcode) == (R.HIPRTC_SUCCESS,)
    # a relocatable cubin (what the driver's linker takes), with the program's source beside it
    wrapped = kernelsource.decode(bytes(bitcode))
    assert wrapped.native_kind == "cubin-relocatable" and wrapped.native[:4] == b"\x7fELF"
    assert wrapped.units[0].source == PRINTF_KERNEL
    assert hiprtc.hiprtcDestroyProgram(prog.createRef()) == (R.HIPRTC_SUCCESS,)


@needs_nvrtc
def test_bitcode_needs_fgpu_rdc_and_name_expressions_lower():
    from hrr.backends.cuda import hiprtc
    src = b"template <typename T> __global__ void scale(T* x, T f) { x[threadIdx.x] *= f; }"
    err, prog = hiprtc.hiprtcCreateProgram(src, b"scale.cu", 0, [], [])
    assert hiprtc.hiprtcAddNameExpression(prog, b"scale<float>") == (R.HIPRTC_SUCCESS,)
    assert hiprtc.hiprtcCompileProgram(prog, 0, []) == (R.HIPRTC_SUCCESS,)
    err, lowered = hiprtc.hiprtcGetLoweredName(prog, "scale<float>")
    assert err == R.HIPRTC_SUCCESS and str(lowered) == "_Z5scaleIfEvPT_S0_"
    assert hiprtc.hiprtcGetLoweredName(prog, b"scale<int>")[0] == R.HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID
    assert hiprtc.hiprtcGetBitcodeSize(prog) == (R.HIPRTC_ERROR_INVALID_PROGRAM, 0)
    assert hiprtc.hiprtcGetBitcode(prog, bytearray(8)) == (R.HIPRTC_ERROR_INVALID_PROGRAM,)
    assert hiprtc.hiprtcDestroyProgram(prog) == (R.HIPRTC_SUCCESS,)


class FakeDriver:
    """Stands in for cuda.bindings.driver's linker calls: records each (name, args)."""

    def __init__(self) -> None:
        from cuda.bindings import driver
        self.CUjit_option, self.CUjitInputType = driver.CUjit_option, driver.CUjitInputType
        self.log: list = []
        self.results: dict = {}
        self.image = ctypes.create_string_buffer(b"\x7fELF linked image", 17)

    def __getattr__(self, fn: str):
        def call(*args):
            if not fn.startswith(("cuCtx", "cuDevice")):
                self.log.append((fn, args))
            if fn == "cuLinkCreate":
                args[2][-2][:12] = b"error: none\0"   # the driver writes its error log there
            if fn == "cuLinkComplete":
                return self.results.get(fn, (0, ctypes.addressof(self.image), 17))
            return self.results.get(fn, (0, 0x99))
        return call


@pytest.fixture
def fake_driver(monkeypatch):
    pytest.importorskip("cuda.bindings.driver")
    drv = FakeDriver()
    monkeypatch.setattr(_runtime.STATE, "ready", True)
    monkeypatch.setattr(_runtime.STATE, "drv", drv)
    monkeypatch.setattr(_runtime._tls, "ctx", _runtime.STATE.generation, raising=False)
    return drv


def test_the_link_api_makes_the_drivers_linker_calls(fake_driver, tmp_path):
    drv = fake_driver
    opt, K = drv.CUjit_option, drv.CUjitInputType
    err, state = rtc.hiprtcLinkCreate(2, [ht.hipJitOption.hipJitOptionOptimizationLevel,
                                          ht.hipJitOption.hipJitOptionFastCompile], [3, 1])
    assert err == R.HIPRTC_SUCCESS and type(state) is ht.ihiprtcLinkState
    (name, (n, opts, vals)), = drv.log
    assert name == "cuLinkCreate" and n == 3 == len(opts) == len(vals)
    # the numeric option CUDA shares is passed; one CUDA has no equal is not; the error log is hrr's
    assert opts == [opt.CU_JIT_OPTIMIZATION_LEVEL, opt.CU_JIT_ERROR_LOG_BUFFER, opt.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]
    assert vals[0] == 3 and isinstance(vals[1], bytearray) and vals[2] == len(vals[1])
    cubin = b"\x7fELF relocatable"
    kind = ht.hipJitInputType.HIPRTC_JIT_INPUT_LLVM_BITCODE
    added = rtc.hiprtcLinkAddData(state, kind, bytearray(cubin), len(cubin), b"kernel", 0, None, None)
    assert added == (R.HIPRTC_SUCCESS,)
    ptx = b".version 8.0\n.target sm_90\n\0"
    assert rtc.hiprtcLinkAddData(state, ht.hipJitInputType.hipJitInputPtx, ptx, len(ptx), "p", 0, None, None)[0] == 0
    path = tmp_path / "dev.o"
    path.write_bytes(cubin)
    assert rtc.hiprtcLinkAddFile(state, kind, str(path), 0, None, None) == (R.HIPRTC_SUCCESS,)
    err, image, size = rtc.hiprtcLinkComplete(state)
    assert (err, image, size) == (R.HIPRTC_SUCCESS, b"\x7fELF linked image", 17)
    assert rtc.hiprtcLinkDestroy(state) == (R.HIPRTC_SUCCESS,)
    assert [(fn, args) for fn, args in drv.log[1:]] == [
        ("cuLinkAddData", (0x99, K.CU_JIT_INPUT_CUBIN, cubin, len(cubin), b"kernel", 0, None, None)),
        ("cuLinkAddData", (0x99, K.CU_JIT_INPUT_PTX, ptx, len(ptx), b"p", 0, None, None)),
        ("cuLinkAddFile", (0x99, K.CU_JIT_INPUT_CUBIN, str(path).encode(), 0, None, None)),
        ("cuLinkComplete", (0x99,)),
        ("cuLinkDestroy", (0x99,)),
    ]
    assert rtc.hiprtcLinkDestroy(state) == (R.HIPRTC_ERROR_INVALID_INPUT,)


def test_a_failed_link_is_a_linking_error_and_fills_the_apps_error_log(fake_driver):
    drv = fake_driver
    drv.results["cuLinkComplete"] = (218, None, 0)     # CUDA_ERROR_INVALID_PTX, say
    log = ctypes.create_string_buffer(64)
    opts = [ht.hipJitOption.hipJitOptionErrorLogBuffer, ht.hipJitOption.hipJitOptionErrorLogBufferSizeBytes]
    err, state = rtc.hiprtcLinkCreate(2, opts, [ctypes.addressof(log), 64])
    assert err == R.HIPRTC_SUCCESS
    assert rtc.hiprtcLinkComplete(state) == (R.HIPRTC_ERROR_LINKING, None, None)
    assert log.value == b"error: none"
    drv.results["cuLinkAddData"] = (200,)              # CUDA_ERROR_INVALID_IMAGE
    assert rtc.hiprtcLinkAddData(state, 0, b"junk", 4, b"j", 0, None, None) == (R.HIPRTC_ERROR_INVALID_INPUT,)
    assert rtc.hiprtcLinkAddData(state, 0, None, 0, b"j", 0, None, None) == (R.HIPRTC_ERROR_INVALID_INPUT,)
    assert rtc.hiprtcLinkAddFile(state, 0, b"/no/such/file", 0, None, None) == (R.HIPRTC_ERROR_INVALID_INPUT,)
    rtc.hiprtcLinkDestroy(state)


def test_without_a_driver_the_link_api_fails_cleanly(monkeypatch):
    if _runtime.driver_present():
        pytest.skip("libcuda.so.1 is present")
    monkeypatch.setattr(_runtime.STATE, "ready", False)
    assert rtc.hiprtcLinkCreate(0, None, None) == (R.HIPRTC_ERROR_INTERNAL_ERROR, None)
    assert rtc.hiprtcLinkComplete(ht.ihiprtcLinkState(0x1234)) == (R.HIPRTC_ERROR_INVALID_INPUT, None, None)
