"""Roles of addresses: raw pointers (translated and bounds-checked at replay), handles,
and the endpoints of copies and host ranges (``[tag, addr, nbytes, blob]``)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from hrr.api.catalogue import NULL_INVALID_HANDLES, Api, Param
from hrr.api.roles.base import (
    AddressRole,
    DEVICE,
    HOST_KINDS,
    REGISTERED,
    Action,
    After,
    Call,
    CaptureServices,
    Check,
    Conversions,
    Encoder,
    ReplayServices,
    Role,
    View,
    WireType,
    _extent,
    _makes_graph_node,
    _null,
    _payload,
    _reader,
    _translate,
    _writer,
    bad,
    check_address,
    check_fits,
    check_size,
    is_int,
    register,
)
from hrr.hiptypes import address_or_zero, handle_or_zero
from hrr.errors import EventRefused


@register
class Ptr(AddressRole):
    """A raw address: translated through replay's allocations; when the call names its
    extent (``Param.size``, times ``Param.elem``; ``Param.rows``; or ``Param.span``) the
    whole range must lie inside one."""

    name = "ptr"
    inline = "({v} if type({v}) is int else _address({v}))"

    def show(self, view: View, p: Param, v: Any) -> Any:
        return view.address(v)

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        p = row.params[i]
        released = row.destroys == "alloc" and i == 0
        if p.rows is not None or p.elem != 1:
            return self._measured(row, i, rep)
        span, size_at = p.span or 0, row.size_index(p)

        def act(call: Call) -> Any:
            addr = call.raw[i]
            if released and call.err and rep.translate(addr) is None:
                # A release the recording saw fail (a double free): hand the backend
                # memory it never allocated, so it fails the same way and frees nothing.
                return rep.poison_address()
            replay = _translate(rep, addr, p.name)
            n = call.raw[size_at] if size_at is not None else span
            if replay is not None and n:
                check_fits(rep.find(addr), addr, n)
            return replay
        return act

    @classmethod
    def _measured(cls, row: Api, i: int, rep: ReplayServices) -> Action:
        """A pointer whose extent is elements (``Param.elem``) or a strided region (``rows``)."""
        return cls.bounded(row.params[i].name, i, _extent(row, i), rep)

    @staticmethod
    def bounded(what: str, i: int, extent: Callable[[list], int], rep: ReplayServices) -> Action:
        """Argument ``i`` translated, the ``extent(call.raw)`` bytes from it inside one allocation."""
        def act(call: Call) -> Any:
            addr = call.raw[i]
            replay = _translate(rep, addr, what)
            n = extent(call.raw)
            if replay is not None and n:
                check_fits(rep.find(addr), addr, n)
            return replay
        return act


@register
class Handle(Role):
    name = "handle"
    wire = WireType(is_int, "a handle value (int)")
    inline = "({v}._value if type({v}) in _handles else _handle({v}))"
    names_handle = True

    def convert(self, p: Param, conv: Conversions) -> Callable[[Any], Any] | None:
        return conv.handle(p.kind or "")

    def show(self, view: View, p: Param, v: Any) -> Any:
        return view.handle(v, p.kind or self.name)

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: handle_or_zero(a[i])

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name
        return lambda v: check_address(v, what)

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        p = row.params[i]
        kind = p.kind or ""
        null_stands_in = kind in NULL_INVALID_HANDLES

        def act(call: Call) -> Any:
            value = call.raw[i]
            try:
                return rep.lookup_handle(kind, value)
            except KeyError:
                if null_stands_in and call.err:
                    # A destroyed handle the recording saw a call fail with: NULL fails the same
                    # way, and no stale handle reaches the backend.
                    return None
                raise EventRefused(f"{p.name}: unknown {p.kind} handle 0x{value:x}",
                                   category="untranslated") from None
        return act


class _Endpoint(Role):
    """``[tag, addr, nbytes, blob]``: tag ``a`` inside a tracked allocation, ``h`` other
    host memory; ``nbytes`` must equal the call's byte-count parameter."""

    is_address = True

    def show(self, view: View, p: Param, v: Any) -> Any:
        return view.endpoint(v)

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name

        def check(v: Any) -> tuple[str, int, int, str | None]:
            if not (isinstance(v, (list, tuple)) and len(v) == 4 and v[0] in ("a", "h")):
                raise bad(f"{what}: a copy endpoint record is malformed")
            tag, addr, n, blob = v
            addr = check_address(addr, f"{what} address")
            n = check_size(n, f"{what} size")
            if blob is not None and not isinstance(blob, str):
                raise bad(f"{what}: a copy endpoint names a bad blob")
            return tag, addr, n, blob
        return check

    @staticmethod
    def sized(row: Api, i: int) -> Callable[[Call], tuple[str, int, int, str | None]]:
        """The checked endpoint, once its byte count is found equal to the call's."""
        p = row.params[i]
        size_at = row.size_index(p)

        def endpoint(call: Call) -> tuple[str, int, int, str | None]:
            tag, addr, n, blob = call.raw[i]
            if size_at is not None and call.raw[size_at] != n:
                raise EventRefused(f"{p.name}: the endpoint holds {n} bytes but {p.size} is "
                                   f"{call.raw[size_at]}", category="bounds")
            return tag, addr, n, blob
        return endpoint


@register
class CopySrc(_Endpoint):
    name = "copy_src"
    copy_endpoint = True

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        p = row.params[i]
        at = row.size_index(p)
        find, host_blob = cap.find_allocation, cap.host_blob

        def encode(a: tuple) -> list:
            obj = a[i]
            addr, n = address_or_zero(obj), int((a[at] if at is not None else 0) or 0)
            alloc = find(addr)
            if alloc is not None and alloc.kind == DEVICE:
                return ["a", addr, n, None]
            return ["a" if alloc is not None else "h", addr, n, host_blob("h2d_payload", obj, addr, n)]
        return encode

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        what = row.params[i].name
        endpoint = self.sized(row, i)
        queued = bool(row.stream) and not row.sync   # the copy runs later, on its stream
        keep = rep.keep if _makes_graph_node(row) else rep.hold
        stream_at = row.param_index(row.stream) if queued and row.stream else None

        def act(call: Call) -> Any:
            tag, addr, n, blob = endpoint(call)
            if tag == "h":
                buf = rep.buffer(n, f"the source of {row.name}")
                data = _payload(rep, blob, n)
                if data is not None:
                    buf[:n] = np.frombuffer(data, dtype=np.uint8)
                else:
                    rep.count("zero_filled_inputs")
                keep(buf)
                return buf
            replay = _translate(rep, addr, what)
            if replay is None:
                return _null(n, what)
            alloc = rep.find(addr)
            # Every size is checked against the allocation it names, blob or no blob: the
            # backend would otherwise read past replay's buffer.
            check_fits(alloc, addr, n)
            if blob is not None and alloc.kind in HOST_KINDS:
                data = rep.read_queued_blob(blob) if queued else rep.read_blob(blob)
                if len(data) != n:
                    raise EventRefused(f"blob {blob} holds {len(data)} bytes, the copy moves {n}",
                                       category="blob")
                restore = _writer(replay, data)
                call.queued.append(restore if stream_at is None else
                                   lambda: _enqueue(rep, call.args[stream_at], restore))
            return replay
        return act


def _enqueue(rep: ReplayServices, stream: Any, restore: Callable[[], None]) -> None:
    if rep.enqueue_host_fn(stream, restore) != 0:
        raise EventRefused("could not queue the pinned-source restore", category="enqueue")


@register
class CopyDst(_Endpoint):
    """A copy destination. Host bytes are only known once the copy completed: after a
    synchronous call (the encoder returns a callable of the result), or when capture
    sees the stream of an asynchronous one synchronised (a ``@d2h`` record later)."""

    name = "copy_dst"
    copy_endpoint = True
    deferred = True

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        p = row.params[i]
        at = row.size_index(p)
        stream_at = row.param_index(row.stream) if row.stream else None
        find, host_blob, expect_d2h = cap.find_allocation, cap.host_blob, cap.expect_d2h

        def encode(a: tuple) -> Any:
            obj = a[i]
            addr, n = address_or_zero(obj), int((a[at] if at is not None else 0) or 0)
            alloc = find(addr)
            tag = "a" if alloc is not None else "h"
            if alloc is not None and alloc.kind == DEVICE:
                if not row.sync:
                    expect_d2h(None)   # nothing to await (and nothing left from an earlier call)
                return ["a", addr, n, None]
            if not row.sync:
                expect_d2h((handle_or_zero(a[stream_at]) if stream_at is not None else 0, addr, n))
                return [tag, addr, n, None]

            def after(result: tuple) -> list:
                blob = host_blob("d2h_result", obj, addr, n) if int(result[0]) == 0 else None
                return [tag, addr, n, blob]
            return after
        return encode

    def after_call(self, row: Api, i: int, cap: CaptureServices) -> After | None:
        if row.sync:
            return None
        issued = cap.d2h_issued
        return lambda args, result, seq: issued(int(result[0]) == 0, seq)

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        what = row.params[i].name
        endpoint = self.sized(row, i)
        keep = rep.keep if _makes_graph_node(row) else rep.hold

        def act(call: Call) -> Any:
            tag, addr, n, blob = endpoint(call)
            if tag == "h":
                buf = rep.buffer(n, f"the destination of {row.name}")
                keep(buf)
                rep.expect(call, lambda: buf[:n].tobytes(), blob, n)
                return buf
            replay = _translate(rep, addr, what)
            if replay is None:
                return _null(n, what)
            alloc = rep.find(addr)
            check_fits(alloc, addr, n)
            if alloc.kind in HOST_KINDS:
                rep.expect(call, _reader(rep, alloc, addr, replay, n), blob, n)
            return replay
        return act


@register
class HostRange(_Endpoint):
    """Application memory pinned in place: replay pins a buffer of its own, filled with
    the recorded bytes, and tracks it as a registered allocation once the call succeeded."""

    name = "host_range"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        p = row.params[i]
        at = row.size_index(p)
        host_blob = cap.host_blob

        def encode(a: tuple) -> list:
            obj = a[i]
            addr, n = address_or_zero(obj), int((a[at] if at is not None else 0) or 0)
            return ["h", addr, n, host_blob("registered_memory", obj, addr, n)]
        return encode

    def after_call(self, row: Api, i: int, cap: CaptureServices) -> After | None:
        p = row.params[i]
        at = row.size_index(p)
        track = cap.track_allocation

        def after(args: tuple, result: tuple, seq: int) -> None:
            if int(result[0]) == 0:
                n = int(args[at]) if at is not None else 0
                track(address_or_zero(args[i]), max(n, 1), REGISTERED)
        return after

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        endpoint = self.sized(row, i)

        def act(call: Call) -> Any:
            tag, addr, n, blob = endpoint(call)
            buf = rep.buffer(n, row.name)
            data = _payload(rep, blob, n)
            if data is not None:
                buf[:n] = np.frombuffer(data, dtype=np.uint8)
            base = int(buf.__array_interface__["data"][0])
            call.after.append(lambda: rep.add_allocation(addr, base, max(n, 1), REGISTERED, keepalive=buf))
            return base
        return act
