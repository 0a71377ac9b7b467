"""cuda backend tests that run anywhere (no GPU needed): import, the clean no-driver
error, NVRTC compilation of the built-in kernels, their layouts, the error table."""
from __future__ import annotations

import types

import pytest

from hrr import hiptypes as ht
from hrr.hiptypes import kernelsource
from hrr.hiptypes.kernargs import POINTER, STRUCT, VALUE
from hrr.errors import BackendError

from hrr.backends.cuda._runtime import gpu_unavailable_reason


def _nvrtc_available() -> bool:
    try:
        from cuda.bindings import nvrtc
        err, _, _ = nvrtc.nvrtcVersion()
        return int(err) == 0
    except Exception:  # noqa: BLE001
        return False


needs_nvrtc = pytest.mark.skipif(not _nvrtc_available(), reason="NVRTC (cuda extra) not installed")


def test_import_and_surface():
    from hrr.backends import cuda
    assert cuda.NAME == "cuda"
    assert isinstance(cuda.hip, types.ModuleType) and isinstance(cuda.hiprtc, types.ModuleType)
    for name in cuda.SUPPORTED_APIS:
        assert callable(getattr(cuda.hip, name)), name
    for name in cuda.SUPPORTED_HIPRTC_APIS:
        assert callable(getattr(cuda.hiprtc, name)), name
    assert cuda.hip.hipError_t is ht.hipError_t
    assert cuda.hip.hipMemcpyKind is ht.hipMemcpyKind
    assert cuda.hip.hipStreamCaptureMode is ht.hipStreamCaptureMode
    assert cuda.hip.dim3 is ht.dim3
    assert cuda.hip.HIP_LAUNCH_PARAM_END == 3
    assert cuda.hip.hipHostMallocMapped == 2
    from hrr.api.catalogue import rows   # every hip row, once (the count grows with the catalogue)
    assert len(set(cuda.SUPPORTED_APIS)) == len(cuda.SUPPORTED_APIS) == sum(r.module == "hip" for r in rows())


def test_registry_loads_cuda():
    from hrr.backends import load_backend
    mod = load_backend("cuda")
    assert mod.NAME == "cuda" and callable(mod.kernel_layout)


@pytest.mark.skipif(gpu_unavailable_reason() is None, reason="a GPU is present here")
def test_no_driver_returns_the_hip_error_a_real_runtime_would():
    """Without a driver every call returns hipErrorNoDevice (or hipErrorInsufficientDriver)
    and as many None outputs as hip-python's result has: never an exception into the app."""
    from hrr.api.catalogue import CATALOGUE
    from hrr.backends import cuda
    from hrr.backends.cuda import _runtime
    if _runtime.driver_present():
        pytest.skip("libcuda.so.1 is present (GPU-less driver install)")
    E = cuda.hip.hipError_t
    for name, args in (("hipMalloc", (16,)), ("hipGetDeviceCount", ()), ("hipStreamCreate", ()),
                       ("hipInit", (0,)), ("hipMemcpy", (0, 0, 0, 1))):
        result = getattr(cuda.hip, name)(*args)
        assert result[0] in (E.hipErrorNoDevice, E.hipErrorInsufficientDriver), (name, result)
        assert len(result) == 1 + len(CATALOGUE[name].outs), (name, result)
        assert all(v is None for v in result[1:]), (name, result)
    with pytest.raises(BackendError) as info:   # the reason stays available to hrr itself
        _runtime.require_driver()
    assert info.value.hint


def test_error_functions_need_no_driver():
    from hrr.backends.cuda import hip
    err, name = hip.hipGetErrorName(ht.hipError_t.hipErrorInvalidValue)
    assert err == ht.hipError_t.hipSuccess and str(name) == "hipErrorInvalidValue"
    err, text = hip.hipGetErrorString(ht.hipError_t.hipErrorInvalidValue)
    assert err == 0 and isinstance(text, ht.CStr) and str(text)


def test_error_table_sanity():
    from hrr.backends.cuda import CUDA_TO_HIP_NAME, to_hip
    for cu, name in CUDA_TO_HIP_NAME.items():
        member = ht.hipError_t[name]
        assert to_hip(cu) is member
    # HIP took CUDA's numbers: every value HIP shares keeps its member
    for cu in (0, 1, 2, 100, 101, 200, 400, 500, 600, 700, 712, 713, 719, 801, 900, 901, 999):
        assert int(to_hip(cu)) == cu
    assert to_hip(222) == ht.hipError_t.hipErrorInvalidKernelFile  # unsupported PTX
    assert to_hip(12345) == ht.hipError_t.hipErrorUnknown
    try:
        from cuda.bindings import driver, runtime
    except Exception:  # noqa: BLE001
        return
    assert to_hip(driver.CUresult.CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) == \
        ht.hipError_t.hipErrorHostMemoryAlreadyRegistered
    assert to_hip(runtime.cudaError_t.cudaErrorStreamCaptureInvalidated) == \
        ht.hipError_t.hipErrorStreamCaptureInvalidated
    assert to_hip(runtime.cudaError_t.cudaErrorMemoryAllocation) == ht.hipError_t.hipErrorOutOfMemory
    # every CUresult name maps somewhere valid
    for member in driver.CUresult:
        assert isinstance(to_hip(member), ht.hipError_t)


def test_builtin_layouts_match_abi_and_sim():
    from hrr.backends.cuda import BUILTIN_LAYOUTS, BUILTIN_KERNELS
    assert set(BUILTIN_KERNELS) == {"fill_u32", "copy_u8", "add_u32", "sum_u32",
                                    "struct_sum_u32", "wait_flag", "set_flag"}
    fill = BUILTIN_LAYOUTS["fill_u32"]
    assert [(p.offset, p.size, p.kind) for p in fill.params] == [(0, 8, POINTER), (8, 4, VALUE), (12, 4, VALUE)]
    ss = BUILTIN_LAYOUTS["struct_sum_u32"]
    assert [(p.offset, p.size, p.kind) for p in ss.params] == [(0, 8, POINTER), (8, 16, STRUCT)]
    assert BUILTIN_LAYOUTS["copy_u8"].size == 24 and BUILTIN_LAYOUTS["add_u32"].size == 28
    try:
        from hrr.backends.sim import builtin_kernels as simk
    except Exception:  # noqa: BLE001 - the sim backend is optional here
        return
    lib = getattr(simk, "LIBRARY", None)
    kernels = getattr(lib, "kernels", None)
    if not kernels:
        return
    items = kernels.items() if isinstance(kernels, dict) else ((k.name, k) for k in kernels)
    for name, kdef in items:
        if name in BUILTIN_LAYOUTS:
            assert [(p.offset, p.size, p.kind) for p in kdef.layout.params] == \
                [(p.offset, p.size, p.kind) for p in BUILTIN_LAYOUTS[name].params], name


@needs_nvrtc
def test_builtin_source_compiles_to_sm90_cubin():
    from hrr.backends.cuda import builtin_code_object, builtin_source
    src = builtin_source()
    for name in (b"fill_u32", b"copy_u8", b"add_u32", b"sum_u32", b"struct_sum_u32",
                 b"wait_flag", b"set_flag"):
        assert b'extern "C" __global__ void ' + name in src
    code = builtin_code_object("sm_90")
    assert code[:4] == b"\x7fELF"
    assert builtin_code_object("sm_90") is code  # cached per arch
    for name in (b"fill_u32", b"struct_sum_u32", b"wait_flag"):
        assert name in code  # symbol names in the cubin
    assert builtin_code_object("sm_80")[:4] == b"\x7fELF"


@needs_nvrtc
def test_hiprtc_compiles_hip_source_without_gpu():
    from hrr.backends.cuda import hiprtc
    src = b'#include <hip/hip_runtime.h>\nextern "C" __global__ void scale(float* x, float a, int n)' \
          b'{ int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x; if (i < n) x[i] *= a; }\n'
    err, prog = hiprtc.hiprtcCreateProgram(src, b"scale.hip", 0, [], [])
    assert err == ht.hiprtcResult.HIPRTC_SUCCESS
    (err,) = hiprtc.hiprtcCompileProgram(prog, 3, [b"--offload-arch=gfx90a", b"-O3", b"-DFOO=1"])
    assert err == ht.hiprtcResult.HIPRTC_SUCCESS
    err, n = hiprtc.hiprtcGetCodeSize(prog)
    assert err == 0 and n > 0
    code = bytearray(n)
    assert hiprtc.hiprtcGetCode(prog, code) == (ht.hiprtcResult.HIPRTC_SUCCESS,)
    # the cubin, inside a kernel source code object that also carries the program's source
    # and options (so the sim can replay it)
    wrapped = kernelsource.decode(bytes(code))
    assert wrapped.native_kind == "cubin" and wrapped.native[:4] == b"\x7fELF"
    assert wrapped.units[0].source == src and wrapped.units[0].name == "scale.hip"
    assert wrapped.options == ("--offload-arch=gfx90a", "-O3", "-DFOO=1")
    err, logn = hiprtc.hiprtcGetProgramLogSize(prog)
    assert err == 0
    log = bytearray(logn)
    assert hiprtc.hiprtcGetProgramLog(prog, log)[0] == 0
    assert hiprtc.hiprtcDestroyProgram(prog) == (ht.hiprtcResult.HIPRTC_SUCCESS,)
    err, major, minor = hiprtc.hiprtcVersion()
    assert err == 0 and major >= 12


@needs_nvrtc
def test_hiprtc_compile_error_and_log():
    from hrr.backends.cuda import hiprtc
    err, prog = hiprtc.hiprtcCreateProgram(b"this is not C++", b"bad.cu", 0, [], [])
    (err,) = hiprtc.hiprtcCompileProgram(prog, 0, [])
    assert err == ht.hiprtcResult.HIPRTC_ERROR_COMPILATION
    _, n = hiprtc.hiprtcGetProgramLogSize(prog)
    log = bytearray(n)
    hiprtc.hiprtcGetProgramLog(prog, log)
    assert b"error" in bytes(log)
    err, text = hiprtc.hiprtcGetErrorString(ht.hiprtcResult.HIPRTC_ERROR_COMPILATION)
    assert str(text) == "HIPRTC_ERROR_COMPILATION"
    hiprtc.hiprtcDestroyProgram(prog)


def test_option_translation():
    from hrr.backends.cuda.hiprtc_api import translate_options
    out = translate_options([b"--offload-arch=gfx942", b"-O3", b"-DX=1", b"-std=c++17",
                             b"-ffast-math"], "sm_90")
    assert out == [b"-DX=1", b"-std=c++17", b"--use_fast_math", b"--gpu-architecture=sm_90"]
    assert translate_options([b"--gpu-architecture=compute_90"], "sm_90") == [b"--gpu-architecture=sm_90"]


def test_a_real_image_does_not_load_the_sim_and_the_sims_builtin_object_is_translated():
    """Loading a program's own image (a cubin, PTX) never imports the sim backend (its
    start-up is a tenth of a second); the sim's built-in code object still becomes ours."""
    import subprocess
    import sys
    probe = (
        "import sys\n"
        "from hrr.backends.cuda import modules\n"
        "cubin = b'\\x7fELF' + bytes(60)\n"
        "assert modules._translate_foreign_image(cubin) is cubin\n"
        "assert modules._translate_foreign_image(b'.version 8.0\\n') == b'.version 8.0\\n'\n"
        "assert 'hrr.backends.sim' not in sys.modules, 'the sim was imported'\n"
        "from hrr.backends import sim\n"
        "from hrr.backends.cuda.builtin import builtin_code_object\n"
        "assert modules._translate_foreign_image(bytes(sim.builtin_code_object())) == builtin_code_object()\n"
        "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
