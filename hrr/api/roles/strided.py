"""The strided role: one end of a 2D copy, its rows recorded packed."""
from __future__ import annotations

import functools
from typing import Any

from hrr.api.catalogue import Api
from hrr.api.roles.addresses import _Endpoint, _enqueue
from hrr.api.roles.base import (
    DEVICE,
    HOST_KINDS,
    Action,
    After,
    Call,
    CaptureServices,
    Encoder,
    ReplayServices,
    _null,
    _payload,
    _reader,
    _translate,
    check_fits,
    gather_rows,
    register,
    scatter_rows,
)
from hrr.hiptypes import address_or_zero, handle_or_zero
from hrr.errors import EventRefused


@register
class Strided(_Endpoint):
    """One end of a 2D copy (``Param.kind`` ``src`` or ``dst``), ``Param.rows`` naming its
    pitch, width and height: ``[tag, addr, nbytes, blob]`` as a copy endpoint, where
    ``nbytes`` is ``width * height`` and the blob holds the rows the copy reads (``src``)
    or writes (``dst``) packed, never the bytes between rows. Device memory is translated
    and its whole extent checked; host memory is rebuilt at replay at the recorded pitch
    (a replay-owned buffer, or the pinned allocation it names) and checked row by row."""

    name = "strided"
    copy_endpoint = True
    deferred = True   # a synchronous host destination's bytes are known after the call

    def _shape(self, row: Api, i: int) -> tuple[int, int, int]:
        rows = row.params[i].rows
        if rows is None:
            raise ValueError(f"{row.name}: strided parameter {row.params[i].name} names no rows")
        return row.param_index(rows[0]), row.param_index(rows[1]), row.param_index(rows[2])

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        p = row.params[i]
        pitch_at, width_at, height_at = self._shape(row, i)
        stream_at = row.param_index(row.stream) if row.stream else None
        find, rows_blob, expect_d2h = cap.find_allocation, cap.host_rows_blob, cap.expect_d2h
        dst, sync = p.kind == "dst", row.sync

        def encode(a: tuple) -> Any:
            obj = a[i]
            addr = address_or_zero(obj)
            pitch, width, height = (int(a[k] or 0) for k in (pitch_at, width_at, height_at))
            n = width * height
            alloc = find(addr)
            tag = "a" if alloc is not None else "h"
            if alloc is not None and alloc.kind == DEVICE:
                if dst and not sync:
                    expect_d2h(None)
                return ["a", addr, n, None]
            if not dst:
                return [tag, addr, n, rows_blob("h2d_payload", obj, addr, pitch, width, height)]
            if not sync:
                expect_d2h((handle_or_zero(a[stream_at]) if stream_at is not None else 0, addr, n, pitch,
                            width) if width else None)
                return [tag, addr, n, None]

            def after(result: tuple) -> list:
                ok = int(result[0]) == 0
                return [tag, addr, n, rows_blob("d2h_result", obj, addr, pitch, width, height) if ok else None]
            return after
        return encode

    def after_call(self, row: Api, i: int, cap: CaptureServices) -> After | None:
        if row.params[i].kind != "dst" or row.sync:
            return None
        issued = cap.d2h_issued
        return lambda args, result, seq: issued(int(result[0]) == 0, seq)

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        p = row.params[i]
        pitch_at, width_at, height_at = self._shape(row, i)
        extent, dst = p.extent, p.kind == "dst"
        queued = bool(row.stream) and not row.sync
        stream_at = row.param_index(row.stream) if queued and row.stream else None

        def act(call: Call) -> Any:
            tag, addr, n, blob = call.raw[i]
            raw = call.raw
            pitch, width, height = raw[pitch_at], raw[width_at], raw[height_at]
            if n != width * height or (height > 1 and pitch < width):
                raise EventRefused(f"{p.name}: {n} bytes do not make {height} rows of {width} bytes "
                                   f"{pitch} apart", category="bounds")
            span = extent(pitch, width, height)
            if tag == "h":
                buf = rep.buffer(span, f"the {'destination' if dst else 'source'} of {row.name}")
                base = int(buf.__array_interface__["data"][0])
                rep.hold(buf)
                if dst:
                    rep.expect(call, lambda: gather_rows(base, pitch, width, height), blob, n)
                else:
                    data = _payload(rep, blob, n)
                    if data is not None:
                        scatter_rows(base, pitch, width, height, data)
                    else:
                        rep.count("zero_filled_inputs")
                return buf
            replay = _translate(rep, addr, p.name)
            if replay is None:
                return _null(n, p.name)
            alloc = rep.find(addr)
            check_fits(alloc, addr, span)
            if alloc.kind in HOST_KINDS:
                if dst:
                    read = _reader(rep, alloc, addr, replay, span)
                    rep.expect(call, lambda: _pack(read(), pitch, width, height), blob, n)
                elif blob is not None:
                    data = rep.read_queued_blob(blob) if queued else rep.read_blob(blob)
                    if len(data) != n:
                        raise EventRefused(f"blob {blob} holds {len(data)} bytes, the copy moves {n}",
                                           category="blob")
                    restore = functools.partial(scatter_rows, replay, pitch, width, height, data)
                    call.queued.append(restore if stream_at is None else
                                       lambda: _enqueue(rep, call.args[stream_at], restore))
            return replay
        return act


def _pack(region: bytes, pitch: int, width: int, height: int) -> bytes:
    """The rows of a strided region already read in one piece, packed."""
    return b"".join(region[r * pitch:r * pitch + width] for r in range(height))
