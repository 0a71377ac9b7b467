"""Pinned round trip: kernels read pinned buffers the host changes between launches;
replay must match the recording byte for byte (and must not with snapshots off)."""
from __future__ import annotations

import ctypes

import numpy as np
from pinned_helpers import Kernels, d2h, manifest, pinned_array, records

N = 4096  # u32 per buffer: 16 KiB


class SumArg(ctypes.Structure):
    _fields_ = [("src", ctypes.c_void_p), ("n", ctypes.c_uint32), ("pad", ctypes.c_uint32)]


def _extra_buffer_form(dst: int, src: int, n: int) -> tuple:
    raw = ctypes.create_string_buffer(24)
    ctypes.memmove(raw, dst.to_bytes(8, "little") + src.to_bytes(8, "little")
                   + n.to_bytes(4, "little") + b"\0" * 4, 24)
    size = ctypes.c_size_t(24)
    arr = (ctypes.c_void_p * 5)(1, ctypes.addressof(raw), 2, ctypes.addressof(size), 3)
    return arr, (raw, size)


def pinned_app(hip, be, session):
    k = Kernels(hip, be)
    outs = []

    def out():
        err, d = hip.hipMalloc(4)
        assert err == 0
        outs.append(d)
        return d

    def check(d):
        hip.hipDeviceSynchronize()
        return d2h(hip, d, 4)

    err, a = hip.hipHostMalloc(N * 4, 0)
    assert err == 0
    err, b = hip.hipMallocHost(N * 4)
    assert err == 0
    c_mem = np.zeros(N, np.uint32)
    assert hip.hipHostRegister(c_mem, N * 4, 0)[0] == 0
    av, bv = pinned_array(a, N), pinned_array(b, N)
    err, s2 = hip.hipStreamCreate()
    rng = np.random.default_rng(1)
    def fresh(view):  # new contents right before each launch, so every form needs its record
        view[:] = rng.integers(0, 1 << 20, N, dtype=np.uint32)

    for _step in range(3):
        for view, src in ((av, a), (bv, b), (c_mem, int(c_mem.ctypes.data))):   # malloc, mallocHost, register
            fresh(view)
            d = out()
            k.sum(d, src, N)
            check(d)
        fresh(av)                                                            # struct by value
        d = out()
        k.launch(k.struct_sum_u32, (d, SumArg(int(a), N, 0)))
        check(d)
        fresh(bv)                                                            # extra, tuple form
        d = out()
        k.launch(k.sum_u32, None, extra=(d, b, ctypes.c_uint32(N)))
        check(d)
        fresh(c_mem)                                                         # extra, buffer form
        d = out()
        arr, _keep = _extra_buffer_form(int(d), int(c_mem.ctypes.data), N)
        k.launch(k.sum_u32, None, extra=arr)
        check(d)
    # A launch into a graph capture, and one on a second stream while it is open.
    err, s1 = hip.hipStreamCreate()
    gd, d2, d3 = out(), out(), out()
    av[:] = 5
    bv[:] = 6
    assert hip.hipStreamBeginCapture(s1, hip.hipStreamCaptureMode.hipStreamCaptureModeGlobal)[0] == 0
    k.sum(gd, a, N, stream=s1)          # captured into the graph: no restore at replay
    k.sum(d2, b, N, stream=s2)          # another stream while the capture is open: restored
    err, graph = hip.hipStreamEndCapture(s1)
    assert err == 0
    check(d2)
    k.sum(d3, a, N, stream=s1)          # same bytes and stream as the captured launch: the
    check(d3)                           # captured record must not have become the last one
    err, exe = hip.hipGraphInstantiateWithFlags(graph, 0)[:2]
    assert err == 0
    av[:] = 7
    assert hip.hipGraphLaunch(exe, s1)[0] == 0
    check(gd)
    return outs


def test_roundtrip_matches(cap, rep, backend_name):
    root = cap(pinned_app)
    assert manifest(root)["host_snapshots"] is True
    code, lines, counts = rep(root)
    assert code == 0, "\n".join(lines)
    assert counts["restored"] == 21 and counts["refused"] == 0
    assert counts["skipped"] == 1  # the launch captured into the graph
    # The launch on the second stream while the capture was open is recorded normally,
    # the one captured into the graph is marked.
    recs = [r for _api, rs in records(root) for r in rs]
    assert sum(r["during_capture"] for r in recs) == 1


def test_roundtrip_snapshots_off_does_not_match(cap, rep, backend_name):
    root = cap(pinned_app, host_snapshots=False)
    assert manifest(root)["host_snapshots"] is False
    assert records(root) == []
    code, lines, counts = rep(root)
    assert code != 0
    assert counts["restored"] == 0
    assert any("bytes differ" in line for line in lines)
