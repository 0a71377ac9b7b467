"""Tracking (frees), chunking and the concurrent writer."""
from __future__ import annotations

import numpy as np
import pytest
from pinned_helpers import (
    Kernels,
    blob_files,
    manifest,
    read_blob,
    records,
    whole_chunks,
    xxh,
)

from hrr_plugins.pinned_snapshot.records import CHUNK_BYTES


def _plugin(session):
    return session.ctx.shared["pinned_snapshot"]


def _snap(session, addr):
    p = _plugin(session)
    return p.tracker.snapshot(session.ctx, [addr], 0, False)


@pytest.mark.parametrize("alloc,free", [
    ("hipHostMalloc", "hipHostFree"),
    ("hipHostMalloc", "hipFree"),
    ("hipMallocHost", "hipFreeHost"),
    ("hipHostRegister", "hipHostUnregister"),
])
def test_freed_address_is_no_longer_snapshotted(cap, alloc, free):
    def app(hip, be, session):
        keep = np.ones(4096, np.uint8)
        if alloc == "hipHostRegister":
            assert hip.hipHostRegister(keep, keep.nbytes, 0)[0] == 0
            addr = int(keep.ctypes.data)
        else:
            args = (4096, 0) if alloc == "hipHostMalloc" else (4096,)
            err, p = getattr(hip, alloc)(*args)
            assert err == 0
            addr = int(p)
        inner = addr + 100
        assert _plugin(session).tracker.is_tracked(inner)
        assert _snap(session, inner) is not None
        assert getattr(hip, free)(addr)[0] == 0
        assert not _plugin(session).tracker.is_tracked(inner)
        assert _snap(session, inner) is None
    cap(app)


def test_failed_free_keeps_tracking(cap):
    def app(hip, be, session):
        keep = np.ones(4096, np.uint8)
        assert hip.hipHostRegister(keep, keep.nbytes, 0)[0] == 0
        addr = int(keep.ctypes.data)
        assert hip.hipHostFree(addr)[0] != 0          # registered memory is not hipHostFree's
        assert _plugin(session).tracker.is_tracked(addr)
        _err, p = hip.hipHostMalloc(4096, 0)
        assert hip.hipHostFree(p)[0] == 0
        _err, q = hip.hipHostMalloc(8192, 0)
        assert hip.hipHostUnregister(q)[0] != 0       # not registered: fails
        assert _plugin(session).tracker.is_tracked(int(q))
        keep[:] = 9
        assert _snap(session, addr) is not None
    cap(app)


def test_device_alias_is_tracked(cap):
    def app(hip, be, session):
        err, p = hip.hipHostMalloc(4096, 0)
        err, dev = hip.hipHostGetDevicePointer(p, 0)
        assert err == 0
        assert _plugin(session).tracker.is_tracked(int(dev) + 8)
        rec = _snap(session, int(dev) + 8)
        assert rec["snaps"][0]["base"] == int(p)   # the record names the host range
    cap(app)


@pytest.mark.usefixtures("loose_blobs")
def test_one_byte_change_adds_exactly_one_chunk(cap):
    nchunks = 4
    size = nchunks * CHUNK_BYTES - 100   # the last chunk is short

    def app(hip, be, session):
        k = Kernels(hip, be)
        _err, p = hip.hipHostMalloc(size, 0)
        buf = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_uint8 * size).from_address(int(p)))
        buf[:] = np.random.default_rng(3).integers(0, 255, size, dtype=np.uint8)
        _err, d = hip.hipMalloc(4)
        k.sum(d, p, 16)
        hip.hipDeviceSynchronize()
        k.sum(d, p, 16)                       # unchanged, same stream: no record
        hip.hipDeviceSynchronize()
        buf[2 * CHUNK_BYTES + 5] ^= 0xFF      # one byte in chunk 2
        k.sum(d, p, 16)
        hip.hipDeviceSynchronize()
    root = cap(app)
    recs = [r for _api, rs in records(root) for r in rs]
    assert len(recs) == 2
    first, second = whole_chunks(recs, CHUNK_BYTES)
    assert [n for _, n in first] == [CHUNK_BYTES] * 3 + [CHUNK_BYTES - 100]
    changed = [i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a[0] != b[0]]
    assert changed == [2]
    assert manifest(root)["host_snapshot"]["chunks_written"] == nchunks + 1
    snap_blobs = {name for chunks in (first, second) for name, _ in chunks}
    assert len(snap_blobs) == nchunks + 1 and snap_blobs <= set(blob_files(root))


def test_concurrent_writer_never_breaks_blob_names(cap):
    """Deterministic: the live buffer is rewritten right after the copy is taken and
    before it is hashed. The record must hold the copied bytes, every blob's name must
    match its bytes, and the next launch must record the new bytes."""
    n = 3 * CHUNK_BYTES

    def app(hip, be, session):
        k = Kernels(hip, be)
        _err, p = hip.hipHostMalloc(n, 0)
        buf = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_uint8 * n).from_address(int(p)))
        buf[:] = 1
        tracker = _plugin(session).tracker
        tracker.after_copy = lambda base, size: buf.__setitem__(slice(None), 2)
        _err, d = hip.hipMalloc(4)
        k.sum(d, p, 16)
        tracker.after_copy = None
        hip.hipDeviceSynchronize()
        k.sum(d, p, 16)
        hip.hipDeviceSynchronize()
    root = cap(app)
    recs = [r for _api, rs in records(root) for r in rs]
    assert len(recs) == 2
    contents = []
    for r in recs:
        data = b""
        for name, size in r["snaps"][0]["chunks"]:
            blob = read_blob(root, name)
            assert xxh(blob) == name and len(blob) == size
            data += blob
        contents.append(data)
    assert contents[0] == b"\x01" * n       # what the copy saw
    assert contents[1] == b"\x02" * n       # the writer's bytes, recorded by the next launch
