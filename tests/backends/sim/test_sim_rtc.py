"""The sim's hiprtc: -fgpu-rdc programs, the link API (symbols resolved across inputs,
errors a GPU's linker gives), name expressions, and the errors of each call."""
from __future__ import annotations

import ctypes

import pytest

from hrr import hiptypes as ht
from hrr.backends.sim import hip, hiprtc, reset_device, rtc
from hrr.backends.sim.rtc import decode_rdc, device_symbols

R = ht.hiprtcResult
BC = ht.hipJitInputType.hipJitInputLLVMBitcode
KERNEL = b"""
__device__ unsigned int pick(unsigned int v);
extern "C" __global__ void fill_u32(unsigned int* d, unsigned int v, unsigned int n) { d[0] = pick(v); }
"""
PICK = b"__device__ unsigned int pick(unsigned int v) { return v; }"


@pytest.fixture(autouse=True)
def fresh():
    reset_device()
    yield
    reset_device()


def program(src: bytes, *flags) -> object:
    err, prog = hiprtc.hiprtcCreateProgram(src, b"p", 0, [], [])
    assert err == R.HIPRTC_SUCCESS
    assert hiprtc.hiprtcCompileProgram(prog, len(flags), list(flags)) == (R.HIPRTC_SUCCESS,)
    return prog


def bitcode(src: bytes) -> bytearray:
    prog = program(src, b"-fgpu-rdc")
    err, n = hiprtc.hiprtcGetBitcodeSize(prog)
    buf = bytearray(n)
    assert err == 0 and hiprtc.hiprtcGetBitcode(prog, buf) == (R.HIPRTC_SUCCESS,)
    return buf


def link(*inputs: bytes, log_size: int = 512) -> tuple:
    log = ctypes.create_string_buffer(log_size)
    opts = [ht.hipJitOption.hipJitOptionErrorLogBuffer, ht.hipJitOption.hipJitOptionErrorLogBufferSizeBytes]
    err, state = hiprtc.hiprtcLinkCreate(2, opts, [ctypes.addressof(log), log_size])
    assert err == R.HIPRTC_SUCCESS
    for i, data in enumerate(inputs):
        assert hiprtc.hiprtcLinkAddData(state, BC, data, len(data), f"in{i}".encode(), 0, None, None)[0] == 0
    result = hiprtc.hiprtcLinkComplete(state)
    assert hiprtc.hiprtcLinkDestroy(state) == (R.HIPRTC_SUCCESS,)
    return result, log.value.decode()


def test_device_symbols_defined_and_needed():
    assert device_symbols(KERNEL.decode()) == (set(), {"pick"})
    assert device_symbols(PICK.decode()) == ({"pick"}, set())
    unused = "__device__ int helper(int);\nextern \"C\" __global__ void k(int* x) { x[0] = 1; }"
    assert device_symbols(unused) == (set(), set())   # declared, never called: not needed


def test_rdc_bitcode_lists_kernels_and_symbols():
    head = decode_rdc(bytes(bitcode(KERNEL)))
    assert head is not None and head["kernels"] == {"fill_u32": 3} and head["needs"] == ["pick"]


def test_a_linked_program_loads_and_runs():
    (err, image, size), log = link(bitcode(KERNEL), bitcode(PICK))
    assert err == R.HIPRTC_SUCCESS and size == len(image) and log == ""
    err, module = hip.hipModuleLoadData(image)
    assert err == 0 and hip.hipModuleGetFunction(module, b"fill_u32")[0] == 0


def test_a_linked_program_runs_its_own_code_not_an_installed_kernel_of_that_name():
    # KERNEL's fill_u32 writes pick(v) to d[0] only; the built-in fill_u32 would fill n words
    (err, image, size), _ = link(bitcode(KERNEL), bitcode(PICK))
    assert err == R.HIPRTC_SUCCESS and bytes(image[:8]) == b"\x7fHRRCXX\x01"
    module = hip.hipModuleLoadData(image)[1]
    fn = hip.hipModuleGetFunction(module, b"fill_u32")[1]
    d = hip.hipMalloc(16)[1]
    assert hip.hipMemset(d, 0, 16)[0] == 0
    assert hip.hipModuleLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, None,
                                     (d, ctypes.c_uint32(9), ctypes.c_uint32(4)))[0] == 0
    out = (ctypes.c_uint32 * 4)()
    assert hip.hipMemcpy(out, d, 16, hip.hipMemcpyKind.hipMemcpyDeviceToHost)[0] == 0
    assert list(out) == [9, 0, 0, 0]


@pytest.mark.parametrize("inputs,message", [
    ((KERNEL,), "undefined reference to 'pick' in 'in0'"),
    ((KERNEL, PICK, PICK), "multiple definition of 'pick' in 'in1' and 'in2'"),
    ((PICK,), 'defines no extern "C" __global__ kernels'),
    pytest.param((KERNEL.replace(b"fill_u32", b"not_installed"), PICK),
                 "no installed sim kernel library provides not_installed", id="no compiler, no library"),
])
def test_linking_errors_are_hiprtc_error_linking_with_a_log(inputs, message, monkeypatch):
    if "no installed" in message:   # without a C++ compiler only installed kernels can be linked
        monkeypatch.setattr(rtc, "native_compiler", lambda: False)
    result, log = link(*(bitcode(src) for src in inputs))
    assert result == (R.HIPRTC_ERROR_LINKING, None, None)
    assert message in log


def test_an_input_the_sim_cannot_read_fails_the_link_and_says_so():
    ir = b"; ModuleID = 'llvm-ir-buffer'\ndefine hidden void @_Z8scale_opPff(ptr %0, float %1) { ret void }\n"
    result, log = link(bitcode(KERNEL), ir)
    assert result[0] == R.HIPRTC_ERROR_LINKING and "'in1' is not relocatable sim code" in log
    (result, log) = link(log_size=8)
    assert result[0] == R.HIPRTC_ERROR_LINKING and log == "error: "   # the log is cut to its buffer


def test_without_fgpu_rdc_there_is_no_bitcode_and_an_undefined_call_fails_to_compile():
    prog = program(PICK.replace(b"__device__ unsigned int pick", b'extern "C" __global__ void fill_u32')
                   .replace(b"unsigned int v) { return v; }", b"unsigned* d, unsigned v, unsigned n) {}"))
    assert hiprtc.hiprtcGetBitcodeSize(prog) == (R.HIPRTC_ERROR_INVALID_PROGRAM, None)
    assert hiprtc.hiprtcGetBitcode(prog, bytearray(4)) == (R.HIPRTC_ERROR_INVALID_PROGRAM,)
    err, prog = hiprtc.hiprtcCreateProgram(KERNEL, b"k", 0, [], [])
    assert hiprtc.hiprtcCompileProgram(prog, 0, []) == (R.HIPRTC_ERROR_COMPILATION,)
    n = hiprtc.hiprtcGetProgramLogSize(prog)[1]
    log = bytearray(n)
    hiprtc.hiprtcGetProgramLog(prog, log)
    assert b"undefined device function 'pick'" in log
    rdc = program(KERNEL, b"-fgpu-rdc")
    assert hiprtc.hiprtcGetCodeSize(rdc) == (R.HIPRTC_ERROR_INVALID_PROGRAM, None)


def test_name_expressions():
    err, prog = hiprtc.hiprtcCreateProgram(KERNEL.replace(b"pick(v)", b"v"), b"k", 0, [], [])
    assert hiprtc.hiprtcGetLoweredName(prog, b"fill_u32") == (R.HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION, None)
    assert hiprtc.hiprtcAddNameExpression(prog, b"&fill_u32") == (R.HIPRTC_SUCCESS,)
    assert hiprtc.hiprtcAddNameExpression(prog, None) == (R.HIPRTC_ERROR_INVALID_INPUT,)
    assert hiprtc.hiprtcCompileProgram(prog, 0, []) == (R.HIPRTC_SUCCESS,)
    assert hiprtc.hiprtcAddNameExpression(prog, b"x") == (R.HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION,)
    err, lowered = hiprtc.hiprtcGetLoweredName(prog, "&fill_u32")
    assert err == R.HIPRTC_SUCCESS and str(lowered) == "fill_u32"
    assert hiprtc.hiprtcGetLoweredName(prog, b"fill_u32")[0] == R.HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID


def test_link_api_errors(tmp_path):
    assert hiprtc.hiprtcLinkAddData(ht.ihiprtcLinkState(0x1234), BC, b"x", 1, b"x", 0, None, None) == \
        (R.HIPRTC_ERROR_INVALID_INPUT,)
    assert hiprtc.hiprtcLinkComplete(None) == (R.HIPRTC_ERROR_INVALID_INPUT, None, None)
    err, state = hiprtc.hiprtcLinkCreate(0, None, None)
    assert hiprtc.hiprtcLinkAddData(state, BC, None, 4, b"x", 0, None, None) == (R.HIPRTC_ERROR_INVALID_INPUT,)
    assert hiprtc.hiprtcLinkAddData(state, BC, b"ab", 4, b"x", 0, None, None) == (R.HIPRTC_ERROR_INVALID_INPUT,)
    assert hiprtc.hiprtcLinkAddFile(state, BC, str(tmp_path / "missing.o"), 0, None, None) == \
        (R.HIPRTC_ERROR_INVALID_INPUT,)
    (tmp_path / "k.o").write_bytes(bitcode(KERNEL))
    (tmp_path / "p.o").write_bytes(bitcode(PICK))
    for name in ("k.o", "p.o"):
        assert hiprtc.hiprtcLinkAddFile(state, BC, str(tmp_path / name).encode(), 0, None, None) == \
            (R.HIPRTC_SUCCESS,)
    assert hiprtc.hiprtcLinkComplete(state)[0] == R.HIPRTC_SUCCESS
    assert hiprtc.hiprtcLinkDestroy(state) == (R.HIPRTC_SUCCESS,)
    assert hiprtc.hiprtcLinkDestroy(state) == (R.HIPRTC_ERROR_INVALID_INPUT,)
    assert hiprtc.hiprtcLinkCreate(1, ["not an option"], [0]) == (R.HIPRTC_ERROR_INVALID_OPTION, None)


def test_destroy_program_takes_the_handle_or_a_reference_to_it():
    prog = program(KERNEL.replace(b"pick(v)", b"v"))
    assert hiprtc.hiprtcDestroyProgram(prog.createRef()) == (R.HIPRTC_SUCCESS,)
    assert hiprtc.hiprtcDestroyProgram(prog) == (R.HIPRTC_ERROR_INVALID_PROGRAM,)
    ref = program(KERNEL.replace(b"pick(v)", b"v")).createRef()
    assert ctypes.c_uint64.from_address(int(ref)).value == int(ref.target)   # a real hiprtcProgram*


def test_the_examples_legacy_input_type_names():
    kinds = hiprtc.hiprtcJITInputType
    assert kinds.HIPRTC_JIT_INPUT_LLVM_BITCODE is kinds.hipJitInputLLVMBitcode
    assert int(kinds.HIPRTC_JIT_INPUT_CUBIN) == 0 and "HIPRTC_JIT_INPUT_CUBIN" not in kinds.__members__
