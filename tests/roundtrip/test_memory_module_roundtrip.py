"""Round trip of the memory and module/launch rows of issue 10: capture on the sim, replay
--strict, every device-to-host check byte-exact (2D host ends row by row)."""
from __future__ import annotations

import numpy as np
import pytest

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
    "hipLaunchCooperativeKernel", "hipModuleGetGlobal", "hipPointerGetAttribute", "hipMemRangeGetAttribute"}}


def test_every_memory_and_module_row_round_trips(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    arch = tmp_path / "arch"
    # managed memory the host wrote is restored before the launch that reads it, as pinned is
    def app(hip, rtc, be):
        be.hip.hipMalloc(4096)   # unrecorded: replay's device addresses differ from the recording's
        return exercise(hip, rtc, be, str(work))
    results = capture(arch, app, plugins=["pinned_snapshot"])
    assert len(SECTION) == 46
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


@pytest.fixture
def library_with_a_global():
    """A kernel library whose modules each get a 64-byte __device__ global ``table``."""
    from hrr.backends.sim.builtin_kernels import LIBRARY
    from hrr.backends.sim.kernels import KernelLibrary
    from hrr.backends.sim.libraries import register_library, unregister_library
    lib = KernelLibrary("hrr_test_globals", "1.0", {"copy_u8": LIBRARY.kernels["copy_u8"]}, {"table": 64})
    register_library(lib)
    yield lib
    unregister_library(lib.name)


def test_a_module_global_round_trips(tmp_path, library_with_a_global):
    """hipModuleGetGlobal's address is an allocation: copies into it and kernel arguments
    pointing at it are translated at replay to the replay module's own global."""
    def app(hip, rtc, be):
        import ctypes
        be.hip.hipMalloc(4096)   # unrecorded: replay's addresses differ from the recording's
        mod = hip.hipModuleLoadData(library_with_a_global.code_object())[1]
        err, table, size = hip.hipModuleGetGlobal(mod, b"table")
        assert err == 0 and size == 64
        hip.hipMemcpyHtoD(int(table) + 16, np.arange(48, dtype=np.uint8), 48)
        d = hip.hipMalloc(32)[1]
        copy = hip.hipModuleGetFunction(mod, b"copy_u8")[1]
        vals = (ctypes.c_void_p(int(d)), ctypes.c_void_p(int(table) + 24), ctypes.c_uint64(32))
        hip.hipModuleLaunchKernel(copy, 1, 1, 1, 32, 1, 1, 0, None, [ctypes.addressof(v) for v in vals], None)
        out = np.zeros(32, np.uint8)
        hip.hipMemcpyDtoH(out, d, 32)
        return out
    out = capture(tmp_path, app)
    assert out.tolist() == list(range(8, 40))
    result = replay(tmp_path)
    assert result.exit_code == 0 and only(result).checks_passed == 1, text(result)


def test_ext_launch_events_order_other_streams_at_replay(tmp_path):
    """hipExtLaunchKernel replays as itself, events included: a second stream that waits for
    its stop event copies the kernel's result, not what was there before it ran."""
    def app(hip, rtc, be):
        import ctypes
        from hrr.backends import sim
        mod = hip.hipModuleLoadData(sim.builtin_code_object())[1]
        wait, fill = (hip.hipModuleGetFunction(mod, k)[1] for k in (b"wait_flag", b"fill_u32"))
        s, s2, s3 = (hip.hipStreamCreate()[1] for _ in range(3))
        stop = hip.hipEventCreate()[1]
        flag, d = hip.hipMalloc(4)[1], hip.hipMalloc(16)[1]
        hip.hipMemset(flag, 0, 4)
        keep = [ctypes.c_void_p(int(flag)), ctypes.c_uint32(1), ctypes.c_void_p(int(d)), ctypes.c_uint32(7),
                ctypes.c_uint32(4)]
        hip.hipModuleLaunchKernel(wait, 1, 1, 1, 1, 1, 1, 0, s, [ctypes.addressof(v) for v in keep[:2]], None)
        hip.hipExtLaunchKernel(fill, hip.dim3(x=1), hip.dim3(x=32), [ctypes.addressof(v) for v in keep[2:]], 0, s,
                               None, stop, 0)
        hip.hipStreamWaitEvent(s2, stop, 0)
        out = np.zeros(4, np.uint32)
        hip.hipMemcpyAsync(out, d, 16, hip.hipMemcpyKind.hipMemcpyDeviceToHost, s2)
        hip.hipStreamWriteValue32(s3, flag, 1, 0)
        hip.hipStreamSynchronize(s2)
        return out
    out = capture(tmp_path, app)
    assert out.tolist() == [7] * 4
    result = replay(tmp_path)
    assert result.exit_code == 0 and only(result).checks_passed == 1, text(result)
