"""hip-python's hiprtc extensions under capture: ``hiprtcLinkCreate2`` (JIT options by name)
is recorded as the ``hiprtcLinkCreate`` it makes, with its options, and replays as the link
API does (a no-op: the linked image is recorded where hipModuleLoadData loads it)."""
from __future__ import annotations

import ctypes
import warnings

import numpy as np

from hrrtest import archive_calls, capture, only, replay, text
from rtc_app import DEVICE_FN, KERNEL, compile_rdc


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return fn(*args, **kwargs)


def test_link_create2_gives_the_link_its_error_log():
    """On the sim: a link whose symbol is undefined writes why into the log buffer that
    hiprtcLinkCreate2 was given by name."""
    from hrr.backends.sim import hip, hiprtc
    _, bitcode, _ = compile_rdc(hiprtc, KERNEL, b"kernel", hip.hipGetDeviceProperties(0)[1].gcnArchName)
    log = ctypes.create_string_buffer(512)
    err, state = _quiet(hiprtc.ext.hiprtcLinkCreate2, hipJitOptionErrorLogBuffer=log,
                        HIPRTC_JIT_ERROR_LOG_BUFFER_SIZE_BYTES=512)
    assert err == 0
    kind = hiprtc.hipJitInputType.hipJitInputLLVMBitcode
    assert hiprtc.hiprtcLinkAddData(state, kind, bitcode, len(bitcode), b"kernel", 0, None, None)[0] == 0
    assert hiprtc.hiprtcLinkComplete(state)[0] == hiprtc.hiprtcResult.HIPRTC_ERROR_LINKING
    assert b"undefined reference to 'pick'" in log.value
    assert hiprtc.hiprtcLinkDestroy(state)[0] == 0


def test_link_create2_is_recorded_as_link_create_and_replays(tmp_path):
    def app(hip, hiprtc, be):
        arch = hip.hipGetDeviceProperties(0)[1].gcnArchName
        _, kernel_bc, _ = compile_rdc(hiprtc, KERNEL, b"kernel", arch)
        _, device_bc, _ = compile_rdc(hiprtc, DEVICE_FN, b"device_fn", arch)
        err, state = _quiet(hiprtc.ext.hiprtcLinkCreate2, hipJitOptionOptimizationLevel=3,
                            HIPRTC_JIT_GENERATE_DEBUG_INFO=0)
        assert int(err) == 0
        kind = hiprtc.hipJitInputType.hipJitInputLLVMBitcode
        for name, bc in ((b"kernel", kernel_bc), (b"device_fn", device_bc)):
            assert hiprtc.hiprtcLinkAddData(state, kind, bc, len(bc), name, 0, None, None)[0] == 0
        err, image, size = hiprtc.hiprtcLinkComplete(state)
        assert int(err) == 0
        module = hip.hipModuleLoadData(image)[1]
        hiprtc.hiprtcLinkDestroy(state)
        fill = hip.hipModuleGetFunction(module, b"fill_u32")[1]
        d = hip.hipMalloc(64)[1]
        args = (ctypes.c_void_p(int(d)), ctypes.c_uint32(7), ctypes.c_uint32(16))
        hip.hipModuleLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, None, [ctypes.addressof(a) for a in args], None)
        out = np.zeros(16, np.uint32)
        hip.hipMemcpyDtoH(out, d, 64)
        return out
    out = capture(tmp_path, app)
    assert (out == 7).all()
    (create,) = [rec for rec in archive_calls(tmp_path) if rec[2] == "hiprtcLinkCreate"]
    assert create[3] == [2, "hipJitOptionOptimizationLevel hipJitOptionGenerateDebugInfo", "3 0"]
    result = replay(tmp_path)
    assert result.exit_code == 0, text(result)
    assert only(result).checks_passed == 1 and only(result).refusals == (), text(result)
