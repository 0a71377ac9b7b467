"""The recorder's per-call state: what one call leaves for its own bookkeeping is never
picked up by the next."""
from __future__ import annotations

import numpy as np
import pytest
from hrrtest import archive_calls, capture, replay, text

from hrr.backends import sim
from hrr.events import PSEUDO_D2H_CHECK


def test_an_async_copy_whose_backend_raised_leaves_nothing_for_the_next_copy(tmp_path, monkeypatch):
    """A device-to-host copy that raised was never recorded; the next asynchronous copy,
    into device memory, must not inherit its pending host destination (a check record
    naming a device-to-device copy, which replay refuses)."""
    real = sim.hip.hipMemcpyAsync
    seen: list[int] = []

    def flaky(*args):
        seen.append(1)
        if len(seen) == 1:
            raise RuntimeError("the backend failed")
        return real(*args)

    monkeypatch.setattr(sim.hip, "hipMemcpyAsync", flaky)

    def app(hip, hiprtc, be):
        kind = hip.hipMemcpyKind
        s = hip.hipStreamCreate()[1]
        d, d2 = hip.hipMalloc(64)[1], hip.hipMalloc(64)[1]
        out = np.zeros(64, np.uint8)
        with pytest.raises(RuntimeError):
            hip.hipMemcpyAsync(out, d, 64, kind.hipMemcpyDeviceToHost, s)
        assert hip.hipMemcpyAsync(d2, d, 64, kind.hipMemcpyDeviceToDevice, s)[0] == 0
        assert hip.hipStreamSynchronize(s)[0] == 0

    capture(tmp_path, app)
    assert [rec[2] for rec in archive_calls(tmp_path) if rec[2] == PSEUDO_D2H_CHECK] == []
    result = replay(tmp_path, backend="sim", strict=True)
    assert result.exit_code == 0, text(result)
