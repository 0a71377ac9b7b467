"""hipDeviceReset: every allocation and handle of the device goes, at capture and at replay.

Capture stops tracking what the reset freed (a later launch must not make the pinned
snapshot copy unmapped memory); replay forgets its own allocations, so a record that
still names one is refused instead of handed to the backend."""
from __future__ import annotations

from pinned_helpers import capture, events, pinned_array, replay, text

PLUGINS = ["pinned_snapshot", "graph_capture"]


def test_capture_forgets_what_the_reset_freed(tmp_path):
    def app(hip, be, session):
        assert hip.hipMalloc(64)[0] == 0
        p = hip.hipHostMalloc(64, 0)[1]
        pinned_array(p, 16)[:] = 1
        pinned = session.ctx.shared["pinned_snapshot"].tracker
        assert len(session.allocations._allocs) == 2 and pinned.entries
        assert hip.hipDeviceReset()[0] == 0
        return len(session.allocations._allocs), dict(pinned.entries)

    tracked, pinned_entries = capture(tmp_path, app, plugins=PLUGINS)
    assert tracked == 0
    assert pinned_entries == {}


def test_a_pointer_the_reset_freed_is_recorded_as_plain_host_memory(tmp_path):
    """After the reset the old pinned address is no allocation of the device any more:
    a copy into it is recorded as host memory (checked byte for byte), not as a tracked
    allocation that replay would translate into a buffer the reset freed."""
    def app(hip, be, session):
        p = hip.hipHostMalloc(64, 0)[1]
        assert hip.hipDeviceReset()[0] == 0
        return int(p)

    capture(tmp_path, app, plugins=PLUGINS)
    result = replay(tmp_path, plugins=PLUGINS)
    assert result.exit_code == 0, text(result)


def test_copy_after_reset_is_host_memory(tmp_path):
    import numpy as np

    def app(hip, be, session):
        p = hip.hipHostMalloc(64, 0)[1]
        keep = np.zeros(16, np.uint32)          # stands in for the app's own buffer
        assert hip.hipDeviceReset()[0] == 0
        d = hip.hipMalloc(64)[1]
        assert hip.hipMemset(d, 3, 64)[0] == 0
        assert hip.hipMemcpy(keep, d, 64, hip.hipMemcpyKind.hipMemcpyDeviceToHost)[0] == 0
        return int(p), int(keep.ctypes.data)

    capture(tmp_path, app, plugins=PLUGINS)
    copies = [e for e in events(tmp_path) if e[2] == "hipMemcpy"]
    assert copies and copies[0][3][0][0] == "h", copies
    result = replay(tmp_path, plugins=PLUGINS)
    assert result.exit_code == 0, text(result)
