"""Round trip of every catalogue row: call it, record it, replay it byte-exact."""
from __future__ import annotations

import pytest

import numpy as np

from every_api_app import exercise
from hrr.api.catalogue import CATALOGUE, UNREPLAYABLE
from hrrtest import archive_calls, capture, only, replay, text


def test_every_catalogue_row_round_trips(tmp_path, backend_name):
    results = capture(tmp_path, exercise, backend=backend_name)
    recorded = {rec[2] for rec in archive_calls(tmp_path)}
    expected = {name for name, row in CATALOGUE.items() if row.replay != UNREPLAYABLE}
    assert expected - recorded == set(), "the app must call every replayable row"
    result = replay(tmp_path, backend=backend_name)
    assert result.exit_code == 0, text(result)
    proc = only(result)
    assert proc.checks_failed == 0 and proc.refusals == (), text(result)
    assert proc.checks_passed >= 5, text(result)
    assert results["graph_sum"][0] != 0


@pytest.mark.usefixtures("loose_blobs")
def test_replay_detects_a_changed_device_result(tmp_path):
    """The checks are real: a result that differs from the recording fails replay."""
    def app(hip, hiprtc, be):
        d = hip.hipMalloc(16)[1]
        src = np.arange(4, dtype=np.uint32)
        hip.hipMemcpy(d, src, 16, hip.hipMemcpyKind.hipMemcpyHostToDevice)
        out = np.zeros(4, np.uint32)
        hip.hipMemcpy(out, d, 16, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
    capture(tmp_path, app)
    from hrr.archive import open_archive
    proc = open_archive(str(tmp_path)).processes[0]
    h2d = next(r.value for r in proc.events() if r.value[2] == "hipMemcpy" and r.value[3][1][0] == "h")
    blob = h2d[3][1][3]
    blob_path = tmp_path / f"pid-{proc.pid}" / "blobs" / blob[:2] / blob
    blob_path.chmod(0o600)
    blob_path.write_bytes(np.arange(4, dtype=np.uint32)[::-1].tobytes())  # now mismatches its name
    result = replay(tmp_path)
    assert result.exit_code != 0
    proc = only(result)
    assert proc.count("blob") or any("blob" in f for f in proc.failures), text(result)
