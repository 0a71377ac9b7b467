"""Kernel libraries, code objects, every launch form, the built-in kernels, hiprtc."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from hrr.backends import sim
from hrr.hiptypes.kernargs import POINTER, STRUCT, VALUE, KernelLayout, ParamSpec
from hrr.backends.sim import hip, hiprtc
from hrr.hiptypes.simcode import encode_code_object

E = hip.hipError_t
OK = E.hipSuccess
SHAPES = [((1, 1, 1), (1, 1, 1)), ((7, 3, 1), (33, 2, 1)), ((1000, 1, 1), (1024, 1, 1))]


class Struct(ctypes.Structure):
    _fields_ = [("src", ctypes.c_void_p), ("n", ctypes.c_uint32), ("pad", ctypes.c_uint32)]


@pytest.mark.parametrize("grid,block", SHAPES)
def test_builtin_kernels_whole_result_any_shape(kernels, helpers, grid, block):
    n = 1000
    a = helpers.device_u32(np.arange(n))
    b = helpers.device_u32(np.full(n, 0xFFFFFFFF))  # wraps
    dst = helpers.device_u32(np.zeros(n))
    total = helpers.device_u32(np.zeros(4))
    shape = dict(grid=grid, block=block)
    kernels.launch("add_u32", int(dst), int(a), int(b), ctypes.c_uint32(n), **shape)
    kernels.launch("sum_u32", int(total), int(a), ctypes.c_uint32(n), **shape)
    s = Struct(int(a), n, 0)
    kernels.launch("struct_sum_u32", int(total) + 4, s, **shape)
    kernels.launch("fill_u32", int(total) + 8, ctypes.c_uint32(9), ctypes.c_uint32(1), **shape)
    kernels.launch("set_flag", int(total) + 12, ctypes.c_uint32(4), **shape)
    assert (helpers.read_u32(dst, n) == (np.arange(n, dtype=np.uint64) + 0xFFFFFFFF) % 2**32).all()
    assert list(helpers.read_u32(total, 4)) == [n * (n - 1) // 2, n * (n - 1) // 2, 9, 4]


def test_sum_is_mod_2_32_and_copy_u8_any_side(kernels, helpers):
    big = helpers.device_u32(np.full(3, 0xFFFFFFFF))
    out = helpers.device_u32(np.zeros(1))
    kernels.launch("sum_u32", int(out), int(big), ctypes.c_uint32(3), grid=(4, 1, 1))
    assert helpers.read_u32(out, 1)[0] == (3 * 0xFFFFFFFF) % 2**32
    ptr, host = helpers.pinned_u32(4)
    host[:] = [1, 2, 3, 4]
    _, d = hip.hipMalloc(16)
    kernels.launch("copy_u8", int(d), int(ptr), ctypes.c_uint64(16), grid=(2, 2, 1))
    ptr2, host2 = helpers.pinned_u32(4)
    kernels.launch("copy_u8", int(ptr2), int(d), ctypes.c_uint64(16))
    hip.hipDeviceSynchronize()
    assert list(host2) == [1, 2, 3, 4]


def _fill_args(dst: int):
    return dst, 6, 4


def test_every_launch_form(kernels, helpers):
    f = kernels.fn("fill_u32")
    ptr, host = helpers.pinned_u32(4)
    d, value, n = _fill_args(int(ptr))
    keep = [ctypes.c_void_p(d), ctypes.c_uint32(value), ctypes.c_uint32(n)]
    launches = {
        "kernelParams list": dict(kernelParams=[ctypes.addressof(keep[0]), keep[1], keep[2]],
                                  extra=None),
        "void* array": dict(kernelParams=(ctypes.c_void_p * 3)(*[ctypes.addressof(k) for k in keep]),
                            extra=None),
        "extra tuple": dict(kernelParams=None, extra=(ptr, ctypes.c_uint32(value), ctypes.c_uint32(n))),
    }
    raw = (ctypes.c_uint64 * 2)(d, value | (n << 32))
    size = ctypes.c_size_t(16)
    launches["extra raw"] = dict(kernelParams=None, extra=[
        hip.HIP_LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(raw),
        hip.HIP_LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(size), hip.HIP_LAUNCH_PARAM_END])
    for name, form in launches.items():
        host[:] = 0
        err, = hip.hipModuleLaunchKernel(f, 2, 1, 1, 32, 1, 1, 0, None, **form)
        assert err == OK, name
        hip.hipDeviceSynchronize()
        assert list(host) == [6] * 4, name
    host[:] = 0
    err, = hip.hipLaunchKernel(int(f), hip.dim3(x=2), hip.dim3(x=16),
                               [ctypes.addressof(keep[0]), keep[1], keep[2]], 0, None)
    assert err == OK
    hip.hipDeviceSynchronize()
    assert list(host) == [6] * 4


def test_struct_by_value_through_extra_tuple(kernels, helpers):
    src = helpers.device_u32([5, 6, 7])
    out, host = helpers.pinned_u32(1)
    err, = hip.hipModuleLaunchKernel(kernels.fn("struct_sum_u32"), 1, 1, 1, 1, 1, 1, 0, None,
                                     None, (out, Struct(int(src), 3, 0)))
    assert err == OK
    hip.hipDeviceSynchronize()
    assert host[0] == 18


def test_bad_launches_and_handles(kernels):
    f = kernels.fn("set_flag")
    assert hip.hipModuleLaunchKernel(hip.ihipModuleSymbol_t(0x999), 1, 1, 1, 1, 1, 1, 0, None,
                                     [], None) == (E.hipErrorInvalidHandle,)
    assert hip.hipLaunchKernel(0x999, hip.dim3(), hip.dim3(), [], 0, None) == \
        (E.hipErrorInvalidDeviceFunction,)
    assert hip.hipModuleLaunchKernel(f, 0, 1, 1, 1, 1, 1, 0, None, kernels.params(0, ctypes.c_uint32(0)),
                                     None) == (E.hipErrorInvalidConfiguration,)
    assert hip.hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, None, None) == (E.hipErrorInvalidValue,)
    assert hip.hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, 0xBAD, kernels.params(0, ctypes.c_uint32(0)),
                                     None) == (E.hipErrorInvalidHandle,)
    assert hip.hipModuleGetFunction(kernels.module, b"nope") == (E.hipErrorNotFound, None)
    assert hip.hipModuleUnload(kernels.module) == (OK,)
    assert hip.hipModuleUnload(kernels.module) == (E.hipErrorInvalidHandle,)
    assert hip.hipModuleGetFunction(kernels.module, b"set_flag") == (E.hipErrorInvalidHandle, None)
    assert hip.hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, kernels.params(0, ctypes.c_uint32(0)),
                                     None) == (E.hipErrorInvalidHandle,)


def test_code_objects_name_installed_libraries():
    assert hip.hipModuleLoadData(encode_code_object("not_installed", "1.0", ["k"])) == \
        (E.hipErrorNoBinaryForGpu, None)
    assert hip.hipModuleLoadData(encode_code_object("builtin", "1.0", ["no_such_kernel"])) == \
        (E.hipErrorNoBinaryForGpu, None)
    assert hip.hipModuleLoadData(b"\x7fELF" + bytes(64)) == (E.hipErrorInvalidImage, None)
    co = sim.builtin_code_object()
    buf = ctypes.create_string_buffer(co, len(co))
    err, m = hip.hipModuleLoadData(hip.Pointer(ctypes.addressof(buf)))
    assert err == OK
    err, f = hip.hipModuleGetFunction(m, "sum_u32")
    assert sim.kernel_layout(f) == KernelLayout((ParamSpec(0, 8, POINTER, "dst"),
                                                 ParamSpec(8, 8, POINTER, "src"),
                                                 ParamSpec(16, 4, VALUE, "n")))
    err, f = hip.hipModuleGetFunction(m, b"struct_sum_u32")
    assert sim.kernel_layout(int(f)).params[1] == ParamSpec(8, 16, STRUCT, "s")


def test_registered_library_is_loadable():
    def negate(ctx):
        arr = ctx.array(ctx.ptr(0), np.uint32, ctx.u32(8))
        arr[:] = ~arr
    lib = sim.KernelLibrary("extra_lib", "2.1", {"negate": sim.KernelDef(
        "negate", KernelLayout((ParamSpec(0, 8, POINTER), ParamSpec(8, 4, VALUE))), negate)})
    sim.register_library(lib)
    try:
        err, m = hip.hipModuleLoadData(lib.code_object())
        assert err == OK
        assert hip.hipModuleLoadData(encode_code_object("extra_lib", "3.0", ["negate"]))[0] == \
            E.hipErrorNoBinaryForGpu
    finally:
        sim.unregister_library("extra_lib")
    assert hip.hipModuleLoadData(lib.code_object())[0] == E.hipErrorNoBinaryForGpu


SOURCE = b'''
struct Slice { const unsigned* src; unsigned n; unsigned pad; };
extern "C" __global__ void sum_u32(unsigned* dst, const unsigned* src, unsigned n) { }
extern "C" __global__ void struct_sum_u32(unsigned* dst, Slice s) { }
'''


def _compile(source: bytes):
    err, prog = hiprtc.hiprtcCreateProgram(source, b"prog.cu", 0, [], [])
    assert err == hiprtc.hiprtcResult.HIPRTC_SUCCESS
    result, = hiprtc.hiprtcCompileProgram(prog, 1, [b"--offload-arch=gfx942"])
    err, log_size = hiprtc.hiprtcGetProgramLogSize(prog)
    log = bytearray(log_size)
    hiprtc.hiprtcGetProgramLog(prog, log)
    return prog, result, bytes(log).rstrip(b"\0").decode()


def test_hiprtc_compiles_source_of_installed_kernels():
    prog, result, log = _compile(SOURCE)
    assert result == hiprtc.hiprtcResult.HIPRTC_SUCCESS and log == ""
    err, size = hiprtc.hiprtcGetCodeSize(prog)
    code = bytearray(size)
    assert hiprtc.hiprtcGetCode(prog, code) == (hiprtc.hiprtcResult.HIPRTC_SUCCESS,)
    assert hiprtc.hiprtcDestroyProgram(prog) == (hiprtc.hiprtcResult.HIPRTC_SUCCESS,)
    err, m = hip.hipModuleLoadData(code)
    assert err == OK
    assert hip.hipModuleGetFunction(m, b"struct_sum_u32")[0] == OK
    assert hip.hipModuleGetFunction(m, b"fill_u32") == (E.hipErrorNotFound, None)  # not in source


def test_hiprtc_error_paths(monkeypatch):
    # without a C++ compiler the sim can only pick installed kernels by name and arity
    from hrr.backends.sim import rtc
    monkeypatch.setattr(rtc, "native_compiler", lambda: False)
    prog, result, log = _compile(b'extern "C" __global__ void mystery(int* x) {}\n'
                                 b'extern "C" __global__ void sum_u32(unsigned* d) {}')
    assert result == hiprtc.hiprtcResult.HIPRTC_ERROR_COMPILATION
    assert "mystery" in log and "sum_u32 takes 3 parameters" in log
    assert hiprtc.hiprtcGetCodeSize(prog) == (hiprtc.hiprtcResult.HIPRTC_ERROR_INVALID_PROGRAM, None)
    hiprtc.hiprtcDestroyProgram(prog)
    assert hiprtc.hiprtcDestroyProgram(prog) == (hiprtc.hiprtcResult.HIPRTC_ERROR_INVALID_PROGRAM,)
    assert hiprtc.hiprtcVersion()[0] == hiprtc.hiprtcResult.HIPRTC_SUCCESS
    err, text = hiprtc.hiprtcGetErrorString(hiprtc.hiprtcResult.HIPRTC_ERROR_COMPILATION)
    assert str(text) == "HIPRTC_ERROR_COMPILATION"


def test_module_surface_matches_hip_python():
    for name in ("hipMalloc", "hipModuleLaunchKernel", "hipGraphInstantiate", "dim3",
                 "hipError_t", "hipMemcpyHostToDevice", "HIP_LAUNCH_PARAM_END", "hipStreamNonBlocking"):
        assert hasattr(hip, name), name
    assert set(sim.SUPPORTED_APIS) <= set(dir(hip))
    assert "hipStreamWaitValue32" in sim.SUPPORTED_APIS and "hipMemcpyDtoHAsync" in sim.SUPPORTED_APIS
    assert hasattr(hiprtc, "hiprtcCompileProgram") and sim.NAME == "sim"


def test_hiprtc_destroy_program_takes_a_reference_to_the_program():
    # hip-python's examples call hiprtcDestroyProgram(prog.createRef()): the C parameter
    # is hiprtcProgram*, and the reference's int() is where the handle's value lies
    prog, result, _ = _compile(SOURCE)
    ref = prog.createRef()
    assert ctypes.c_void_p.from_address(int(ref)).value == int(prog)
    assert hiprtc.hiprtcDestroyProgram(ref) == (hiprtc.hiprtcResult.HIPRTC_SUCCESS,)
    assert hiprtc.hiprtcDestroyProgram(prog.createRef()) == (hiprtc.hiprtcResult.HIPRTC_ERROR_INVALID_PROGRAM,)
