"""A launch the GPU rejected when it was recorded (a block or grid of 0: invalid
configuration) replays and fails the same way; it is not a malformed record."""
from __future__ import annotations

import ctypes

import pytest

from hrrtest import capture, only, replay, text


@pytest.mark.parametrize("grid,block", [((1, 1, 1), (0, 1, 1)), ((0, 1, 1), (1, 1, 1))])
def test_a_launch_that_failed_when_recorded_fails_again(tmp_path, grid, block):
    def app(hip, hiprtc, be):
        mod = hip.hipModuleLoadData(be.builtin_code_object())[1]
        fn = hip.hipModuleGetFunction(mod, b"fill_u32")[1]
        d = hip.hipMalloc(16)[1]
        args = [ctypes.c_void_p(int(d)), ctypes.c_uint32(7), ctypes.c_uint32(4)]
        params = (ctypes.c_void_p * 3)(*[ctypes.addressof(a) for a in args])
        err = hip.hipModuleLaunchKernel(fn, *grid, *block, 0, None, params, None)[0]
        return int(err)

    assert capture(tmp_path, app) != 0
    result = replay(tmp_path, strict=True)
    assert result.exit_code == 0, text(result)
    assert only(result).reproduced_errors == 1, text(result)
