"""hiprtc's link API and hip-python's example flags on an NVIDIA GPU (skipped without one):
the linking example's logic end to end, device printf, and a failed link's log."""
from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import numpy as np
import pytest

from hrr import hiptypes as ht

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "roundtrip"))
from rtc_app import KERNEL, N, compile_rdc, exercise_rtc  # noqa: E402

pytestmark = pytest.mark.gpu
R = ht.hiprtcResult


def test_rtc_linking_example_logic_on_the_gpu(hip, hiprtc):
    """Two -fgpu-rdc programs (a kernel and the device function it calls), linked by the
    driver's linker, loaded and launched: every element is the device function's value."""
    out = exercise_rtc(hip, hiprtc)
    assert (out["filled"] == 7).all() and out["filled"].shape == (N,)
    assert out["lowered"] == "fill_u32"
    arch = hip.hipGetDeviceProperties(0)[1].gcnArchName
    assert str(arch).startswith("sm_")


def test_rtc_printf_kernel_with_the_examples_flags(hip, hiprtc, capfd):
    """hip-python's hiprtc_launch_kernel_no_args: --offload-arch=<gcnArchName> (bytes as 7.x
    gives it), a printf kernel, launched with no arguments."""
    src = b'extern "C" __global__ void print_tid() { printf("tid: %d\\n", (int) threadIdx.x); }'
    err, prog = hiprtc.hiprtcCreateProgram(src, b"print_tid", 0, [], [])
    arch = hip.hipGetDeviceProperties(0)[1].gcnArchName
    flags = [b"--offload-arch=" + (arch if isinstance(arch, bytes) else arch.encode()), b"-O3"]
    assert hiprtc.hiprtcCompileProgram(prog, len(flags), flags) == (R.HIPRTC_SUCCESS,)
    code = bytearray(hiprtc.hiprtcGetCodeSize(prog)[1])
    assert hiprtc.hiprtcGetCode(prog, code) == (R.HIPRTC_SUCCESS,)
    assert hiprtc.hiprtcDestroyProgram(prog.createRef()) == (R.HIPRTC_SUCCESS,)
    err, module = hip.hipModuleLoadData(code)
    assert err == 0
    err, kernel = hip.hipModuleGetFunction(module, b"print_tid")
    assert err == 0
    assert hip.hipModuleLaunchKernel(kernel, 1, 1, 1, 4, 1, 1, 0, None, None, None)[0] == 0
    assert hip.hipDeviceSynchronize()[0] == 0
    printed = capfd.readouterr().out
    assert all(f"tid: {i}" in printed for i in range(4)), printed
    assert hip.hipModuleUnload(module)[0] == 0


def test_rtc_unresolved_symbol_is_a_linking_error_with_the_drivers_log(hip, hiprtc):
    arch = hip.hipGetDeviceProperties(0)[1].gcnArchName
    _, bitcode, _ = compile_rdc(hiprtc, KERNEL, b"kernel", arch)
    log = ctypes.create_string_buffer(4096)
    opts = [ht.hipJitOption.hipJitOptionErrorLogBuffer, ht.hipJitOption.hipJitOptionErrorLogBufferSizeBytes]
    err, state = hiprtc.hiprtcLinkCreate(2, opts, [ctypes.addressof(log), 4096])
    assert err == R.HIPRTC_SUCCESS
    kind = hiprtc.hiprtcJITInputType.HIPRTC_JIT_INPUT_LLVM_BITCODE
    assert hiprtc.hiprtcLinkAddData(state, kind, bitcode, len(bitcode), b"kernel", 0, None, None)[0] == 0
    assert hiprtc.hiprtcLinkComplete(state) == (R.HIPRTC_ERROR_LINKING, None, None)
    assert b"pick" in log.value, log.value
    assert hiprtc.hiprtcLinkDestroy(state) == (R.HIPRTC_SUCCESS,)
    assert np is not None
