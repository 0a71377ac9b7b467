"""Size cap, stream ordering and the blob cap at replay."""
from __future__ import annotations

import ctypes
import threading

import numpy as np
from pinned_helpers import Kernels, d2h, manifest, pinned, pinned_array, records, text

from hrr.archive import Limits

MiB = 1024 * 1024


def big_app(hip, be, session):
    k = Kernels(hip, be)
    n = 2 * MiB // 4
    err, p = hip.hipHostMalloc(2 * MiB, 0)
    assert err == 0
    view = pinned_array(p, n)
    for step in range(2):
        view[:] = np.arange(n, dtype=np.uint32) * (step + 3)
        err, d = hip.hipMalloc(4)
        k.sum(d, p, n)
        hip.hipDeviceSynchronize()
        d2h(hip, d, 4)


def test_cap_at_size_replays(cap, rep, backend_name):
    root = cap(big_app, host_snapshot_max_bytes=2 * MiB)
    result = rep(root)
    assert result.exit_code == 0, text(result)
    assert pinned(result).restored == 2


def test_cap_below_size_is_listed_and_not_restored(cap, rep):
    root = cap(big_app, host_snapshot_max_bytes=1 * MiB)
    listed = [u for u in manifest(root)["unreplayable_apis"] if u["api"] == "pinned host snapshot"]
    assert listed and listed[0]["variable"] == "HIP_HRR_HOST_SNAPSHOT_MAX_MB"
    assert listed[0]["size"] == 2 * MiB
    assert records(root) == []
    result = rep(root, strict=False)
    assert pinned(result).restored == 0
    assert result.exit_code == 1 and any("bytes differ" in f for f in result.processes[-1].failures)


def streams_app(hip, be, session):
    """s1: wait_flag, then a pinned-input sum; s2: a sum of the same input, then the
    set_flag that releases s1. Capture must not wait; replay must not hang."""
    k = Kernels(hip, be)
    n = 1024
    _err, p = hip.hipHostMalloc(n * 4, 0)
    pinned_array(p, n)[:] = np.arange(n, dtype=np.uint32) + 11
    _err, flag = hip.hipMalloc(4)
    assert hip.hipMemset(flag, 0, 4)[0] == 0
    _err, s1 = hip.hipStreamCreate()
    _err, s2 = hip.hipStreamCreate()
    _err, o1 = hip.hipMalloc(4)
    _err, o2 = hip.hipMalloc(4)
    k.launch(k.wait_flag, (flag, ctypes.c_uint32(1)), stream=s1)
    k.sum(o1, p, n, stream=s1)
    k.sum(o2, p, n, stream=s2)
    k.launch(k.set_flag, (flag, ctypes.c_uint32(1)), stream=s2)
    hip.hipDeviceSynchronize()
    d2h(hip, o1, 4)
    d2h(hip, o2, 4)


def _with_deadline(fn, seconds):
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("r", fn()), daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"did not finish within {seconds} s (a hang)"
    return box["r"]


def test_streams_no_hang_and_match(cap, rep, backend_name):
    root = _with_deadline(lambda: cap(streams_app), 30)
    # Same bytes, different stream: both launches carry a record.
    assert len(records(root)) == 2
    result = _with_deadline(lambda: rep(root), 30)
    assert result.exit_code == 0, text(result)
    assert pinned(result).restored == 2


def blob_app(hip, be, session):
    k = Kernels(hip, be)
    n = 64 * 1024 // 4           # one full 64 KiB chunk
    _err, p = hip.hipHostMalloc(n * 4, 0)
    pinned_array(p, n)[:] = 3
    _err, d = hip.hipMalloc(4)
    assert hip.hipMemset(d, 0xAB, 4)[0] == 0
    k.sum(d, p, n)
    hip.hipDeviceSynchronize()
    d2h(hip, d, 4)


def test_blob_over_max_file_bytes_ends_launch_before_kernel(cap, rep):
    root = cap(blob_app)
    result = rep(root, limits=Limits(max_file_bytes=32 * 1024), strict=False)
    assert pinned(result).refused == 1 and pinned(result).restored == 0
    (proc,) = result.processes
    assert any(r.category == "pinned_snapshot" and "max_file_bytes" in r.reason for r in proc.refusals), text(result)
    # The kernel never ran: the output still holds the memset's 0xab bytes, not a sum.
    assert any("got abababab" in f for f in proc.failures), text(result)
    assert result.exit_code == 1
