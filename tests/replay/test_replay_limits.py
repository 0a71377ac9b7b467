"""Replay's limits: every allocation replay makes is charged against --max-host-bytes
before it is made (pinned memory, the sim's device memory, host buffers, blobs queued
for a restore); a wall-clock limit; a stuck wait is reported at once, not after 2 s."""
from __future__ import annotations

import json
import struct
import subprocess
import sys
import textwrap

import pytest
from hostile import D2H, H2D, PID, HostileArchive, describe, replay_cli
from hrrtest import fresh_backend, only, replay, text

from hrr.archive import Limits, open_archive
from hrr.backends.sim import streams as sim_streams
from hrr.pipeline.manager import make_plugin_manager
from hrr.replay.engine import ProcessReplayer, ReplayOptions
from hrr.replay.result import Outcome, ReplayResult
from hrr.replay.run import replay_archive
from hrr.archive.pack import ENTRY_COST

KiB, MiB = 1 << 10, 1 << 20
CAP = Limits(max_host_bytes=MiB)


def _limit_refusals(result: ReplayResult) -> list[str]:
    """The limit refusals of the one process, as ``record N api [limit]: reason``."""
    return [f"record {r.seq} {r.api} [limit]: {r.reason}" for r in only(result).refusals if r.category == "limit"]


def _host_memory(result: ReplayResult) -> tuple[int, int, int]:
    """(peak host bytes, --max-host-bytes, records refused by a limit) of the one process."""
    proc = only(result)
    return proc.peak_host_bytes, proc.max_host_bytes, proc.count("limit")


@pytest.mark.parametrize("api", ["hipHostMalloc", "hipMallocHost", "hipHostAlloc"])
def test_pinned_allocations_are_charged_before_they_are_made(tmp_path, api):
    """A 7 MB archive reached 6 GB with a 1 MiB cap: pinned allocations were never counted."""
    a = HostileArchive(tmp_path / "a")
    for _ in range(3):
        a.pinned(400 * KiB, api=api)
    a.close()
    result = replay(a.root, backend="sim", strict=True, limits=CAP)
    assert _limit_refusals(result) == [
        f"record 2 {api} [limit]: {api} (pinned memory) needs 409600 bytes of host memory, "
        f"819200 already held: over --max-host-bytes (1048576)"], text(result)
    assert _host_memory(result) == (819200, 1048576, 1), text(result)
    assert result.exit_code == 1


def test_a_1tib_pinned_allocation_is_refused_not_a_numpy_traceback(tmp_path):
    a = HostileArchive(tmp_path / "a")
    a.pinned(1 << 40)
    a.close()
    result = replay(a.root, backend="sim", strict=False)
    assert _limit_refusals(result) == [
        "record 0 hipHostMalloc [limit]: hipHostMalloc (pinned memory) needs 1099511627776 bytes of "
        "host memory, 0 already held: over --max-host-bytes (17179869184)"], text(result)
    # With the cap raised past it, the sim itself says out of memory (a divergence).
    result = replay(a.root, backend="sim", strict=False, limits=Limits(max_host_bytes=1 << 41))
    assert result.exit_code == 2 and only(result).outcome is Outcome.DIVERGED, text(result)
    assert [d.replayed_name for d in only(result).divergences] == ["hipErrorOutOfMemory (2)"], text(result)


def test_sim_device_memory_is_charged_and_freeing_gives_it_back(tmp_path):
    a = HostileArchive(tmp_path / "a")
    d1 = a.device(600 * KiB)
    a.call("hipFree", [d1])
    a.device(600 * KiB)      # fits again once the first is freed
    a.device(600 * KiB)      # does not
    a.close()
    result = replay(a.root, backend="sim", strict=False, limits=CAP)
    assert _limit_refusals(result) == [
        "record 3 hipMalloc [limit]: hipMalloc (device memory) needs 614400 bytes of host memory, "
        "614400 already held: over --max-host-bytes (1048576)"], text(result)


def test_a_failed_allocation_gives_its_charge_back(tmp_path, monkeypatch):
    """A hipHostMalloc of 700 KiB that failed when recorded fails again at replay: nothing
    is held, so the next one fits under 1 MiB."""
    from hrr.backends import sim

    a = HostileArchive(tmp_path / "a")
    a.call("hipHostMalloc", [700 * KiB, 0], err=2, outs=[None])   # hipErrorOutOfMemory
    a.pinned(700 * KiB)
    a.close()
    fresh_backend("sim")
    real, calls = sim.hip.hipHostMalloc, []

    def fail_first(size, flags=0):
        calls.append(size)
        return (sim.hip.hipError_t.hipErrorOutOfMemory, None) if len(calls) == 1 else real(size, flags)

    monkeypatch.setattr(sim.hip, "hipHostMalloc", fail_first)
    result = replay(a.root, strict=True, limits=CAP)
    assert result.exit_code == 0, text(result)
    assert (only(result).reproduced_errors, only(result).divergence_count) == (1, 0), text(result)
    assert _host_memory(result) == (716800, 1048576, 0), text(result)


def test_registered_buffers_and_pageable_copy_buffers_are_charged(tmp_path):
    a = HostileArchive(tmp_path / "a")
    a.call("hipHostRegister", [["h", 0x10000, 2 * MiB, None], 2 * MiB, 0])
    dev = a.device(16)
    a.copy(["h", 0x20000, 2 * MiB, None], ["a", dev, 2 * MiB, None], 2 * MiB, D2H)
    a.close()
    result = replay(a.root, backend="sim", strict=False, limits=CAP)
    assert _limit_refusals(result) == [
        "record 0 hipHostRegister [limit]: hipHostRegister needs 2097152 bytes of host memory, 0 "
        "already held: over --max-host-bytes (1048576)",
        "record 2 hipMemcpy [limit]: the destination of hipMemcpy needs 2097152 bytes of host memory, 16 "
        "already held: over --max-host-bytes (1048576)"], text(result)


def test_restores_queued_on_a_stream_are_charged_until_the_device_synchronises(tmp_path):
    """An asynchronous copy from pinned memory queues its blob on the stream; the bytes are
    held until a device synchronisation lets them go."""
    n = 256 * KiB
    a = HostileArchive(tmp_path / "a")
    pinned, dev = a.pinned(n), a.device(n)
    s = a.stream()
    blob = a.blob(bytes(range(256)) * (n // 256))
    for _ in range(3):     # 512 KiB held, then 768 KiB, 1 MiB, then over the cap
        a.copy(["a", dev, n, None], ["a", pinned, n, blob], n, H2D, api="hipMemcpyAsync", stream=s)
    a.call("hipDeviceSynchronize", [])
    a.copy(["a", dev, n, None], ["a", pinned, n, blob], n, H2D, api="hipMemcpyAsync", stream=s)
    a.close()
    result = replay(a.root, backend="sim", strict=False, limits=CAP)
    assert _limit_refusals(result) == [
        f"record 5 hipMemcpyAsync [limit]: blob {blob} queued for a restore needs 262144 bytes of "
        "host memory, 1048576 already held: over --max-host-bytes (1048576)"], text(result)


def test_a_plugins_blob_reads_are_charged(tmp_path):
    """ctx.read_blob (what the pinned-snapshot restores use) goes through the same budget."""
    a = HostileArchive(tmp_path / "a")
    blob = a.blob(b"x" * (600 * KiB))
    a.close()
    from hrr.backends import sim
    from hrr.pipeline.context import EventRefused
    pm, _ = make_plugin_manager([])
    proc = open_archive(str(a.root), CAP).processes[0]
    replayer = ProcessReplayer(proc, sim, pm, CAP, ReplayOptions())
    assert len(replayer.ctx.read_blob(blob)) == 600 * KiB
    with pytest.raises(EventRefused, match="over --max-host-bytes") as exc:
        replayer.ctx.read_blob(blob)
    assert exc.value.category == "limit"


def _stall_archive(root, syncs: int) -> HostileArchive:
    """A wait_flag kernel that no recorded call releases, then ``syncs`` synchronisations
    that the recording saw time out; two recorded threads (so the sim used to give the
    idle one HRR_SIM_STALL_TIMEOUT_S per wait to release it)."""
    a = HostileArchive(root)
    fn = a.function("wait_flag")
    flag = a.device(4)
    s = a.stream()
    a.call("hipInit", [0], tid=2000)
    launch = {"kernel": "wait_flag", "grid": [1, 1, 1], "block": [1, 1, 1],
              "kernargs": struct.pack("<QI", flag, 1) + bytes(4), "ptrs": [[0, flag, 0]]}
    a.call("hipModuleLaunchKernel", [fn, 1, 1, 1, 1, 1, 1, 0, s, None, None], extra={"launch": launch})
    for _ in range(syncs):
        a.call("hipStreamSynchronize", [s], err=702)  # hipErrorLaunchTimeOut
    return a.close()


def test_a_wait_no_recorded_call_releases_is_reported_at_once(tmp_path):
    """With the sim's stall wait set to an hour, the archive replays as soon as replay
    bounds stalls (without it, the subprocess timeout below is reached)."""
    a = _stall_archive(tmp_path / "a", syncs=3)
    proc = replay_cli(a.root, "--json", env={"HRR_SIM_STALL_TIMEOUT_S": "3600"}, timeout=60)
    assert proc.returncode == 0, describe(proc)
    (replayed,) = json.loads(proc.stdout)["processes"]
    assert (replayed["reproduced_errors"], replayed["divergence_count"]) == (3, 0), describe(proc)
    assert "deadlock" in proc.stderr


def test_replay_restores_the_sims_stall_timeout(tmp_path):
    before = sim_streams.STALL_TIMEOUT_S
    a = _stall_archive(tmp_path / "a", syncs=1)
    result = replay(a.root, backend="sim", strict=False)
    assert result.exit_code == 0, text(result)
    assert (only(result).reproduced_errors, only(result).divergence_count) == (1, 0), text(result)
    assert sim_streams.STALL_TIMEOUT_S == before


class _Clock:
    """A clock that moves one second every time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def test_max_seconds_stops_replay_between_records(tmp_path):
    root = tmp_path / "a"
    for pid in (PID, PID + 1):
        a = HostileArchive(root, pid=pid)
        for _ in range(10):
            a.call("hipInit", [0])
        a.close()
    fresh_backend("sim")
    result = replay_archive(str(root), backend="sim", options=ReplayOptions(max_seconds=5, clock=_Clock()),
                            plugins=[])
    assert result.exit_code == 1, text(result)
    first, second = result.processes
    # The clock is read once for the deadline (1 s + 5) and once before each record (2, 3, ...).
    assert "stopped at record 5: replay ran longer than --max-seconds=5 (raise it to replay " \
           "further)" in first.failures, text(result)
    assert (first.pid, first.backend, first.records, first.calls_replayed, first.noops) == (PID, "sim", 5, 5, 0)
    assert first.timed_out and first.outcome is Outcome.FAILED
    assert (second.pid, second.outcome, second.skipped) == (PID + 1, Outcome.SKIPPED, "--max-seconds=5 was reached")


def test_watchdog_ends_a_call_that_never_returns():
    """Past --max-seconds (+ grace) a call that never returns ends the process: exit 1 and
    one line."""
    code = textwrap.dedent("""
        import threading
        from hrr.replay.run import start_watchdog
        start_watchdog(0.2, "replay did not finish")
        threading.Event().wait()   # a call that never returns
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, describe(proc)
    assert proc.stderr.strip().splitlines() == ["hrr: error: replay did not finish"], describe(proc)


def test_watchdog_stays_quiet_when_replay_finishes():
    code = textwrap.dedent("""
        from hrr.replay.run import start_watchdog
        start_watchdog(0.2, "replay did not finish").set()
        import time; time.sleep(0.5)
        print("finished")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == "finished\n" and not proc.stderr, describe(proc)


def test_records_of_threads_over_max_threads_are_refused_and_the_rest_replays(tmp_path):
    a = HostileArchive(tmp_path / "a")
    for tid in (1, 2, 3, 1, 3):
        a.call("hipInit", [0], tid=tid)
    a.close()
    result = replay(a.root, backend="sim", strict=True, limits=Limits(max_threads=2))
    assert _limit_refusals(result) == [
        f"record {seq} hipInit [limit]: thread 3 would be replay thread 3, over --max-threads (2): "
        "its records are not replayed" for seq in (2, 4)], text(result)
    proc = only(result)
    assert (proc.pid, proc.backend, proc.records, proc.calls_replayed, proc.noops) == (4242, "sim", 5, 3, 0)
    assert result.exit_code == 1 and proc.outcome is Outcome.REFUSED


def test_buffers_of_synchronous_copies_are_given_back_when_the_call_returns(tmp_path):
    """300 synchronous 4 KiB device-to-host copies under a 64 KiB cap: each buffer is
    released once its copy has returned and been checked (they used to be held until a
    hipDeviceSynchronize, and the 16th copy was refused)."""
    a = HostileArchive(tmp_path / "a")
    dev = a.device(4 * KiB)
    blob = a.blob(bytes(4 * KiB))
    for _ in range(300):
        a.copy(["h", 0x1000, 4 * KiB, blob], ["a", dev, 4 * KiB, None], 4 * KiB, D2H)
    a.close()
    result = replay(a.root, backend="sim", strict=True, limits=Limits(max_host_bytes=64 * KiB))
    assert result.exit_code == 0 and only(result).checks == (300, 0, 0), text(result)
    # two buffers at once, and the blobs' pack index (one entry) while it is held
    assert _host_memory(result) == (8192 + ENTRY_COST, 65536, 0), text(result)
