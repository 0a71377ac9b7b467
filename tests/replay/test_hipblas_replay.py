"""Replay of hipBLAS calls: host scalars come back from their recorded bytes, device
arrays are translated and bounds-checked by their BLAS extent, handles are mapped."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from hrr.archive.format import EVENTS_FILE, join_events, split_events
from hrrtest import archive_calls, capture_libraries, only, replay, text


def rewrite(root: Path, api: str, change) -> None:
    """Edit the recorded arguments of every ``api`` record, with valid checksums."""
    (pid,) = Path(root).glob("pid-*")
    path = pid / EVENTS_FILE
    head, version, values, trailer = split_events(path.read_bytes())

    def edit(v: list) -> list:
        v = list(v)
        if v[2] == api:
            v[3] = change(list(v[3]))
        return v
    path.write_bytes(join_events(head, [edit(v) for v in values], trailer, version))


def _saxpy_app(n: int = 16, incx: int = 1, alpha: float = 2.0):
    def app(hip, libraries):
        blas = libraries["hipblas"]
        x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
        dx, dy = hip.hipMalloc(n * 4)[1], hip.hipMalloc(n * 4)[1]
        hip.hipMemcpy(dx, x, n * 4, hip.hipMemcpyKind.hipMemcpyHostToDevice)
        hip.hipMemcpy(dy, y, n * 4, hip.hipMemcpyKind.hipMemcpyHostToDevice)
        handle = blas.hipblasCreate()[1]
        a = np.array([alpha], np.float32)
        assert blas.hipblasSaxpy(handle, n // abs(incx), a, dx, incx, dy, 1)[0] == 0
        out = np.zeros(n, np.float32)
        hip.hipMemcpy(out, dy, n * 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
        blas.hipblasDestroy(handle)
        return out
    return app


def test_a_saxpy_replays_and_its_result_is_checked(tmp_path):
    out = capture_libraries(tmp_path, _saxpy_app())
    np.testing.assert_array_equal(out, 2 * np.arange(16, dtype=np.float32) + 1)
    result = replay(tmp_path)
    proc = only(result)
    assert result.exit_code == 0 and proc.checks_passed == 1 and not proc.refusals, text(result)


def test_the_recorded_alpha_is_what_replay_uses(tmp_path):
    """alpha is host memory: its bytes are in the archive, and replay hands the call a buffer
    holding them (a zero-filled one would make the checked copy differ)."""
    capture_libraries(tmp_path, _saxpy_app(alpha=3.0))
    (saxpy,) = [v for v in archive_calls(tmp_path) if v[2] == "hipblasSaxpy"]
    tag, _, n, blob = saxpy[3][2]
    assert (tag, n) == ("h", 4) and blob is not None
    assert only(replay(tmp_path)).checks_passed == 1


def test_an_array_past_its_allocation_is_refused_not_run(tmp_path):
    """n=16 with incx=2 reaches 31 floats of a 16-float allocation: refused as out of bounds."""
    capture_libraries(tmp_path, _saxpy_app(n=16, incx=2))
    rewrite(tmp_path, "hipblasSaxpy", lambda a: [a[0], 16] + a[2:])
    proc = only(replay(tmp_path))
    assert proc.count("bounds") == 1, proc
