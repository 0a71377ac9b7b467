"""Stream-ordered allocation, memory pools and CU-masked streams under capture: recorded on
the sim in content mode, replayed --strict with every device-to-host copy byte-exact and
every error the recording saw reproduced; a pool's allocations are device memory to the
allocation table, the pointer maps and the pinned-snapshot plugin."""
from __future__ import annotations

import ctypes
import struct

import numpy as np

from hrr.api.catalogue import CATALOGUE
from hrrtest import archive_calls, capture, only, replay, text
from pool_app import N, exercise_pools, pool_props

ROWS = {name for name, row in CATALOGUE.items() if row.family == "mempool"} | {
    "hipMallocAsync", "hipFreeAsync", "hipExtStreamCreateWithCUMask"}


def _by_api(root) -> dict[str, list[list]]:
    out: dict[str, list[list]] = {}
    for rec in archive_calls(root):
        out.setdefault(rec[2], []).append(rec)
    return out


def test_every_pool_row_round_trips_with_its_errors(tmp_path):
    def app(hip, rtc, be):
        be.hip.hipMalloc(4096)   # unrecorded: replay's device addresses differ from the recording's
        return exercise_pools(hip, errors=True)
    results = capture(tmp_path, app)
    src = np.arange(N, dtype=np.uint32) * 5 + 3
    assert (results["from_b"] == src).all()
    assert results["masked"][:4].tolist() == [0x5A5A5A5A] * 4 and (results["masked"][4:20] == src[:16]).all()
    assert results["used_while_live"] == N * 4 and results["used_high"] == 2 * N * 4
    calls = _by_api(tmp_path)
    assert ROWS - set(calls) == set(), "every row is recorded"
    assert len(ROWS) == 12
    mask = calls["hipExtStreamCreateWithCUMask"][0][3]
    assert mask == [2, struct.pack("<2I", 0xF, 0)]   # the mask's words, packed
    create = calls["hipMemPoolCreate"][0][3][0]
    assert create == [1, 0, 1, 0, 0]   # pinned, no IPC handle, device 0, no maximum size
    threshold, opportunistic = (rec[3][2] for rec in calls["hipMemPoolSetAttribute"])
    assert threshold == struct.pack("<Q", 1 << 20) and opportunistic == struct.pack("<i", 0)
    result = replay(tmp_path)
    assert result.exit_code == 0, text(result)
    proc = only(result)
    assert proc.checks_failed == 0 and proc.refusals == () and proc.checks_passed == 2, text(result)
    assert proc.reproduced_errors == 4, text(result)


def test_a_kernel_reading_a_pool_allocation_is_translated_and_never_snapshotted(tmp_path):
    """A pool's allocation is device memory: the launch's pointer word is recorded against
    it and translated at replay; the pinned-snapshot plugin takes nothing from it."""
    def app(hip, rtc, be):
        from hrr.backends import sim
        be.hip.hipMalloc(4096)
        mod = hip.hipModuleLoadData(sim.builtin_code_object())[1]
        fill = hip.hipModuleGetFunction(mod, b"fill_u32")[1]
        s = hip.hipStreamCreate()[1]
        pool = hip.hipMemPoolCreate(pool_props(hip))[1]
        d = hip.hipMallocFromPoolAsync(N * 4, pool, s)[1]
        args = (ctypes.c_void_p(int(d)), ctypes.c_uint32(0xC0FFEE), ctypes.c_uint32(N))
        assert hip.hipModuleLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 0, s,
                                         [ctypes.addressof(v) for v in args], None)[0] == 0
        out = np.zeros(N, np.uint32)
        hip.hipMemcpyDtoHAsync(out, d, N * 4, s)
        hip.hipFreeAsync(d, s)
        hip.hipStreamSynchronize(s)
        hip.hipMemPoolDestroy(pool)
        return out, int(d)
    out, addr = capture(tmp_path, app, plugins=["pinned_snapshot"])
    assert (out == 0xC0FFEE).all()
    launch = next(rec for rec in archive_calls(tmp_path) if rec[2] == "hipModuleLaunchKernel")
    kernel, grid, block, kernargs, ptrs = launch[6]["launch"][:5]
    assert [p[1] for p in ptrs] == [addr], "the pointer word names the pool allocation"
    assert "records" not in launch[6], "no pinned snapshot of device memory"
    result = replay(tmp_path, plugins=["pinned_snapshot"])
    assert result.exit_code == 0, text(result)
    assert "Pinned host snapshots: 0 restored" in text(result)
    assert only(result).checks_passed == 1 and only(result).refusals == (), text(result)


def test_a_changed_pool_result_fails_replay(tmp_path):
    """The checks through pool allocations are real: a result that differs fails."""
    def app(hip, rtc, be):
        s = hip.hipStreamCreate()[1]
        d = hip.hipMallocAsync(16, s)[1]
        hip.hipMemsetAsync(d, 1, 16, s)
        out = np.zeros(16, np.uint8)
        hip.hipMemcpyDtoHAsync(out, d, 16, s)
        hip.hipFreeAsync(d, s)
        hip.hipStreamSynchronize(s)
    capture(tmp_path, app)
    from hrr.backends import sim
    real = sim.hip.hipMemsetAsync

    def other_value(dst, value, n, stream):
        return real(dst, 2, n, stream)
    sim.hip.hipMemsetAsync = other_value
    try:
        result = replay(tmp_path, backend="sim")
    finally:
        sim.hip.hipMemsetAsync = real
    assert result.exit_code != 0 and only(result).checks_failed == 1, text(result)
