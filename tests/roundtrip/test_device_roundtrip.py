"""The device section (issue 10) round trip on the sim: settings replay for real (a reset
between them is replayed too), a context handle made by one call is found by the next,
a walk over every hipDeviceAttribute_t member reproduces its errors, and the copies that
follow still match byte for byte."""
from __future__ import annotations

import numpy as np

from hrr.api.catalogue import CATALOGUE
from hrrtest import archive_calls, capture, only, replay, text


def _app(hip, hiprtc, be):
    L = hip.hipLimit_t
    answers = {m.name: hip.hipDeviceGetAttribute(m, 0) for m in hip.hipDeviceAttribute_t}
    assert hip.hipDeviceSetLimit(L.hipLimitStackSize, 8192)[0] == 0
    assert hip.hipDeviceSetCacheConfig(hip.hipFuncCache_t.hipFuncCachePreferShared)[0] == 0
    err, ctx = hip.hipCtxGetCurrent()
    assert hip.hipCtxSetCurrent(ctx)[0] == 0
    err, pctx = hip.hipDevicePrimaryCtxRetain(0)
    assert hip.hipCtxGetApiVersion(pctx)[0] == hip.hipError_t.hipErrorNotSupported
    assert hip.hipDeviceEnablePeerAccess(1, 0)[0] == hip.hipError_t.hipErrorInvalidDevice
    d = hip.hipMalloc(64)[1]
    src = np.arange(16, dtype=np.uint32) * 7
    assert hip.hipMemcpy(d, src, 64, hip.hipMemcpyKind.hipMemcpyHostToDevice)[0] == 0
    assert hip.hipDevicePrimaryCtxReset(0)[0] == 0      # frees d: the next allocation starts afresh
    assert hip.hipDeviceGetLimit(L.hipLimitStackSize)[1] == 1024
    assert hip.hipSetDeviceFlags(hip.hipDeviceScheduleYield)[0] == 0
    d = hip.hipMalloc(64)[1]
    assert hip.hipMemcpy(d, src, 64, hip.hipMemcpyKind.hipMemcpyHostToDevice)[0] == 0
    out = np.zeros(16, np.uint32)
    assert hip.hipMemcpy(out, d, 64, hip.hipMemcpyKind.hipMemcpyDeviceToHost)[0] == 0
    assert (out == src).all()
    return answers


def test_device_calls_replay_strictly(tmp_path):
    answers = capture(tmp_path, _app)
    errors = sum(1 for err, _ in answers.values() if err != 0)
    assert 0 < errors < len(answers)
    result = replay(tmp_path)
    assert result.exit_code == 0, text(result)
    proc = only(result)
    assert proc.refusals == () and proc.checks_failed == 0 and proc.checks_passed >= 1, text(result)
    assert proc.reproduced_errors >= errors + 2, text(result)
    calls = [rec[2] for rec in archive_calls(tmp_path)]
    for name in ("hipDeviceSetLimit", "hipCtxSetCurrent", "hipDevicePrimaryCtxReset", "hipSetDeviceFlags"):
        assert name in calls and CATALOGUE[name].replay == "real"


def test_a_context_handle_is_translated(tmp_path):
    """hipCtxSetCurrent's context is the one hipCtxGetCurrent returned at replay: a handle
    replay never saw is refused, not passed on."""
    def app(hip, hiprtc, be):
        err, ctx = hip.hipCtxGetCurrent()
        assert hip.hipCtxSetCurrent(ctx)[0] == 0
    capture(tmp_path, app)
    assert only(replay(tmp_path)).refusals == ()
    records = archive_calls(tmp_path)
    (get,) = [r for r in records if r[2] == "hipCtxGetCurrent"]
    (put,) = [r for r in records if r[2] == "hipCtxSetCurrent"]
    assert put[3] == get[5] and put[3][0] != 0      # the handle, recorded on both sides

