"""Round trip of the memory and module/launch rows of issue 10: capture on the sim, replay
--strict, every device-to-host check byte-exact (2D host ends row by row)."""
from __future__ import annotations

import numpy as np

from hrr.api.catalogue import CATALOGUE
from hrrtest import archive_calls, capture, only, replay, text
from memory_module_app import exercise

SECTION = {name for name in CATALOGUE if name in {
    "hipMemsetD8", "hipMemsetD16", "hipMemsetD32", "hipMemsetD8Async", "hipMemsetD16Async", "hipMemsetD32Async",
    "hipMemset2D", "hipMemset2DAsync", "hipMemsetD2D8", "hipMemsetD2D16", "hipMemsetD2D32", "hipMallocPitch",
    "hipMemAllocPitch", "hipMemcpy2D", "hipMemcpy2DAsync", "hipMemcpyWithStream", "hipMemcpyPeer",
    "hipMemcpyPeerAsync", "hipMallocManaged", "hipMemPrefetchAsync", "hipMemAdvise", "hipMemGetAddressRange",
    "hipMemPtrGetInfo", "hipHostGetFlags", "hipExtMallocWithFlags", "hipMemAllocHost", "hipModuleLoadDataEx",
    "hipModuleLoad", "hipModuleGetFunctionCount", "hipFuncGetAttributes", "hipFuncGetAttribute",
    "hipFuncSetAttribute", "hipFuncSetCacheConfig", "hipFuncSetSharedMemConfig",
    "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor",
    "hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", "hipModuleOccupancyMaxPotentialBlockSize",
    "hipModuleOccupancyMaxPotentialBlockSizeWithFlags", "hipOccupancyMaxPotentialBlockSize",
    "hipOccupancyMaxActiveBlocksPerMultiprocessor", "hipExtLaunchKernel", "hipModuleLaunchCooperativeKernel",
    "hipLaunchCooperativeKernel"}}


def test_every_memory_and_module_row_round_trips(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    arch = tmp_path / "arch"
    # managed memory the host wrote is restored before the launch that reads it, as pinned is
    results = capture(arch, lambda hip, rtc, be: exercise(hip, rtc, be, str(work)), plugins=["pinned_snapshot"])
    assert len(SECTION) == 43
    recorded = {rec[2] for rec in archive_calls(arch)}
    assert SECTION - recorded == set()
    # the 2D destination's gaps keep the app's bytes; its rows hold the copied ones
    copy2d = results["copy2d"].reshape(5, 40)
    assert (copy2d[:, 24:] == 0xEE).all() and (copy2d[:, :24] != 0xEE).any()
    r1, r2 = results["launches"]
    idx = np.arange(64, dtype=np.uint32)
    assert (r1 == idx * 8 + 1000).all()   # d = managed (1000 + i) + the peer copy of d (7 i)
    assert (r2 == np.where(idx < 32, 9, idx * 7) + r1).all()   # fill_u32 over half, then add
    result = replay(arch, plugins=["pinned_snapshot"])
    assert result.exit_code == 0, text(result)
    proc = only(result)
    assert "Pinned host snapshots: 1 restored" in text(result)
    assert proc.checks_failed == 0 and proc.refusals == (), text(result)
    assert proc.checks_passed == 6, text(result)


def test_a_2d_host_destination_is_checked_row_by_row(tmp_path):
    """Only the rows a D2H 2D copy writes are recorded: gaps the app filled differently do
    not matter, a changed row byte does."""
    def app(hip, rtc, be):
        d, pitch = hip.hipMallocPitch(8, 3)[1:]
        src = np.arange(24, dtype=np.uint8)
        hip.hipMemcpy2D(d, pitch, src, 8, 8, 3, hip.hipMemcpyKind.hipMemcpyHostToDevice)
        dst = np.full(3 * 16, 0x77, np.uint8)
        hip.hipMemcpy2D(dst, 16, d, pitch, 8, 3, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
        return dst
    dst = capture(tmp_path, app)
    assert dst.reshape(3, 16)[:, :8].tobytes() == bytes(range(24))
    rec = next(r for r in archive_calls(tmp_path) if r[2] == "hipMemcpy2D" and r[3][0][0] == "h")
    assert rec[3][0][2] == 24        # packed rows, not the 40-byte extent
    result = replay(tmp_path)
    assert result.exit_code == 0 and only(result).checks_passed == 1, text(result)
