"""Replay's checks of the issue-10 memory rows: element and strided extents (``Param.elem``,
``Param.rows``), the strided role's packed rows, pitched allocations replayed at the
recorded pitch (``Param.replay_from``, ``Out.per``), and launches through kernelParams."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hrr.archive.format import EVENTS_FILE, join_events, split_events
from hrr.backends.sim import memory_calls
from hrrtest import capture, only, replay, text


def rewrite(root: Path, change) -> None:
    """Edit the event values of the archive's one process, with valid checksums."""
    (pid,) = Path(root).glob("pid-*")
    path = pid / EVENTS_FILE
    head, version, values, trailer = split_events(path.read_bytes())
    path.write_bytes(join_events(head, [change(list(v)) for v in values], trailer, version))


def patch(api: str, fn):
    def change(v: list) -> list:
        if v[2] == api:
            v[3] = fn(list(v[3]))
        return v
    return change


def test_an_element_memset_past_its_allocation_is_refused_not_run(tmp_path):
    """hipMemsetD32's count is elements: 9 of them overrun a 32-byte allocation even though
    9 bytes would not."""
    capture(tmp_path, lambda hip, rtc, be: hip.hipMemsetD32(hip.hipMalloc(32)[1], 5, 8))
    rewrite(tmp_path, patch("hipMemsetD32", lambda a: [a[0], a[1], 9]))
    proc = only(replay(tmp_path))
    assert proc.count("bounds") == 1 and proc.divergences == (), proc


def test_a_2d_memset_past_its_allocation_is_refused(tmp_path):
    def app(hip, rtc, be):
        d, pitch = hip.hipMallocPitch(16, 4)[1:]
        hip.hipMemset2D(d, pitch, 1, 16, 4)
    capture(tmp_path, app)
    rewrite(tmp_path, patch("hipMemset2D", lambda a: a[:4] + [5]))   # a fifth row
    assert only(replay(tmp_path)).count("bounds") == 1


def _copy2d_app(hip, rtc, be):
    d, pitch = hip.hipMallocPitch(8, 3)[1:]
    hip.hipMemcpy2D(d, pitch, np.arange(48, dtype=np.uint8), 16, 8, 3, hip.hipMemcpyKind.hipMemcpyHostToDevice)
    out = np.full(48, 0xAA, np.uint8)
    hip.hipMemcpy2D(out, 16, d, pitch, 8, 3, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
    return out


@pytest.mark.parametrize("change,category", [
    (lambda a: [a[0], a[1], [a[2][0], a[2][1], 23, a[2][3]]] + a[3:], "bounds"),  # 23 bytes for 3 rows of 8
    (lambda a: a[:4] + [8, 4, a[6]], "bounds"),                                     # rows but no more bytes
    (lambda a: [a[0], a[1] * 64] + a[2:], "bounds"),                                # a device pitch past the end
])
def test_a_doctored_2d_copy_is_refused(tmp_path, change, category):
    capture(tmp_path, _copy2d_app)
    rewrite(tmp_path, patch("hipMemcpy2D", lambda a: change(a) if a[2][0] == "h" else a))
    proc = only(replay(tmp_path))
    assert proc.count(category) >= 1, text(replay(tmp_path))


def test_a_2d_destination_that_differs_in_a_row_fails_the_check(tmp_path):
    """The D2H copy made to read its device rows 8 bytes apart instead of a pitch apart:
    rows 2 and 3 differ from the recording, and the row-by-row check says so."""
    capture(tmp_path, _copy2d_app)
    rewrite(tmp_path, patch("hipMemcpy2D", lambda a: a[:3] + [8] + a[4:] if a[0][0] == "h" else a))
    result = replay(tmp_path)
    proc = only(result)
    assert result.exit_code == 1 and proc.checks_failed == 1 and proc.refusals == (), text(result)
    assert "from byte 8" in proc.failures[0], proc.failures


def test_a_pitched_allocation_replays_at_the_recorded_pitch(tmp_path, monkeypatch):
    """Captured where rows are 512 bytes apart, replayed where the backend would choose 256:
    replay asks for the recorded pitch, so every recorded 2D access fits, byte-exact."""
    def app(hip, rtc, be):
        d, pitch = hip.hipMallocPitch(200, 4)[1:]
        assert pitch == 512                           # the replaying sim would choose 256
        src = (np.arange(200 * 4) % 253).astype(np.uint8)
        hip.hipMemcpy2D(d, pitch, src, 200, 200, 4, hip.hipMemcpyKind.hipMemcpyHostToDevice)
        out = np.zeros(pitch * 4, np.uint8)
        hip.hipMemcpy(out, d, pitch * 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost)   # the whole allocation
        return out
    with monkeypatch.context() as m:
        m.setattr(memory_calls, "PITCH_ALIGN", 512)
        capture(tmp_path, app)
    result = replay(tmp_path)
    assert result.exit_code == 0 and only(result).checks_passed == 1, text(result)


def test_pinned_2d_ends_are_restored_and_checked_row_by_row(tmp_path):
    """A 2D copy from and to pinned memory: the source rows are restored into replay's pinned
    allocation at the recorded pitch, the destination rows compared (not its gaps)."""
    import ctypes

    def app(hip, rtc, be):
        K = hip.hipMemcpyKind
        src_p, dst_p = hip.hipHostMalloc(64, 0)[1], hip.hipHostMalloc(64, 0)[1]
        src = np.ctypeslib.as_array((ctypes.c_uint8 * 64).from_address(int(src_p)))
        dst = np.ctypeslib.as_array((ctypes.c_uint8 * 64).from_address(int(dst_p)))
        src[:] = np.arange(64)
        dst[:] = 0xCC                                   # the gaps keep this, replay's are 0
        d, pitch = hip.hipMallocPitch(8, 4)[1:]
        hip.hipMemcpy2D(d, pitch, src_p, 16, 8, 4, K.hipMemcpyHostToDevice)
        hip.hipMemcpy2D(dst_p, 16, d, pitch, 8, 4, K.hipMemcpyDeviceToHost)
        return dst.copy()
    dst = capture(tmp_path, app)
    assert (dst.reshape(4, 16)[:, :8] == np.arange(64).reshape(4, 16)[:, :8]).all()
    result = replay(tmp_path)
    assert result.exit_code == 0 and only(result).checks_passed == 1, text(result)
