"""Scalar arguments given as numpy numbers are recorded as their values:
an archive that holds None for a size cannot be replayed."""
from __future__ import annotations

import numpy as np

from hrrtest import archive_calls, capture, replay, text


def test_numpy_and_ctypes_scalars_are_recorded_as_numbers(tmp_path):
    def app(hip, hiprtc, be):
        d = hip.hipMalloc(np.uint64(64))[1]
        assert hip.hipMemset(d, np.uint8(3), np.uint32(64))[0] == 0
        out = np.zeros(64, np.uint8)
        assert hip.hipMemcpy(out, d, np.int64(64), hip.hipMemcpyKind.hipMemcpyDeviceToHost)[0] == 0
        assert (out == 3).all()
        assert hip.hipFree(d)[0] == 0

    capture(tmp_path, app)
    calls = {rec[2]: rec for rec in archive_calls(tmp_path)}
    assert calls["hipMalloc"][3] == [64]
    assert calls["hipMemset"][3][1:] == [3, 64]
    result = replay(tmp_path, strict=True)
    assert result.exit_code == 0, text(result)
