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


def _dot_app(hip, libraries):
    blas = libraries["hipblas"]
    x = np.arange(8, dtype=np.float32)
    dx = hip.hipMalloc(32)[1]
    hip.hipMemcpy(dx, x, 32, hip.hipMemcpyKind.hipMemcpyHostToDevice)
    handle = blas.hipblasCreate()[1]
    result = np.zeros(1, np.float32)
    assert blas.hipblasSdot(handle, 8, dx, 1, dx, 1, result)[0] == 0
    blas.hipblasDestroy(handle)
    return result[0]


def test_a_result_written_to_host_memory_is_checked(tmp_path):
    """sdot in host pointer mode writes its result to host memory before it returns: replay
    compares it byte for byte like a device-to-host copy (here, 7 elements instead of 8 differ)."""
    assert capture_libraries(tmp_path, _dot_app) == 140.0
    assert only(replay(tmp_path)).checks_passed == 1
    rewrite(tmp_path, "hipblasSdot", lambda a: [a[0], 7] + a[2:])
    proc = only(replay(tmp_path))
    assert proc.checks_failed == 1, proc


def _batched_app(hip, libraries):
    """gemmBatched's arrays hold device addresses the program wrote; replay's differ."""
    blas = libraries["hipblas"]
    n, batch = 2, 3
    mats = [[hip.hipMalloc(n * n * 4)[1] for _ in range(batch)] for _ in range(3)]
    for i, (a, b) in enumerate(zip(mats[0], mats[1], strict=True)):
        hip.hipMemcpy(a, np.full(n * n, i + 1, np.float32), n * n * 4, hip.hipMemcpyKind.hipMemcpyHostToDevice)
        hip.hipMemcpy(b, np.eye(n, dtype=np.float32), n * n * 4, hip.hipMemcpyKind.hipMemcpyHostToDevice)
    arrays = []
    for group in mats:
        d = hip.hipMalloc(batch * 8)[1]
        hip.hipMemcpy(d, np.array([int(p) for p in group], np.uint64), batch * 8,
                      hip.hipMemcpyKind.hipMemcpyHostToDevice)
        arrays.append(d)
    handle = blas.hipblasCreate()[1]
    one, zero = np.ones(1, np.float32), np.zeros(1, np.float32)
    N = blas.hipblasOperation_t.HIPBLAS_OP_N
    assert blas.hipblasSgemmBatched(handle, N, N, n, n, n, one, arrays[0], n, arrays[1], n, zero, arrays[2], n,
                                    batch)[0] == 0
    out = []
    for c in mats[2]:
        host = np.zeros(n * n, np.float32)
        hip.hipMemcpy(host, c, n * n * 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
        out.append(host)
    blas.hipblasDestroy(handle)
    return out


def test_gemm_batched_pointer_arrays_are_translated(tmp_path):
    out = capture_libraries(tmp_path, _batched_app)
    assert [float(o[0]) for o in out] == [1.0, 2.0, 3.0]
    proc = only(replay(tmp_path))
    assert proc.checks_passed == 3 and proc.checks_failed == 0 and not proc.refusals, proc


def test_a_pointer_array_naming_memory_replay_never_made_is_refused(tmp_path):
    """A batch of 4 reads one address past the 3 the program wrote: refused, never run."""
    capture_libraries(tmp_path, _batched_app)
    rewrite(tmp_path, "hipblasSgemmBatched", lambda a: a[:-1] + [4])
    proc = only(replay(tmp_path))
    assert proc.count("bounds") == 1, proc
