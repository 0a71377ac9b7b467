"""Output roles: what a call returns (values, allocations, aliases, handles, text, images)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from hrr.api.catalogue import Api, Out
from hrr.api.roles.base import (
    DEVICE,
    After,
    Call,
    CaptureServices,
    Enricher,
    OutBinder,
    OutRole,
    OutView,
    ReplayServices,
    _digest,
    _first,
    _text,
    check_size,
    register,
)
from hrr.api.roles.structs import handle_values, pack_words, unpack_words
from hrr.api.wire import OUTS
from hrr.hiptypes import address_or_zero, handle_or_zero


def _address_out(v: Any) -> Any:
    return None if v is None else address_or_zero(v)


def _handle_out(v: Any) -> Any:
    return None if v is None else handle_or_zero(v)


@register
class ValueOut(OutRole):
    name = "value"
    inline = "({v} if type({v}) is int else _number({v}))"


@register
class TextOut(OutRole):
    """A string result (a lowered name, an error string), recorded as text."""

    name = "text"

    def encoder(self, out: Out) -> Callable[[Any], Any]:
        def encode(v: Any) -> Any:
            if v is None:
                return None
            if isinstance(v, (bytes, bytearray)):
                return bytes(v).decode(errors="replace")
            return str(v)
        return encode


@register
class ImageOut(OutRole):
    """A linked image: ``[nbytes, digest]`` (the digest is the name hipModuleLoadData
    stores the same bytes under)."""

    name = "image"

    def encoder(self, out: Out) -> Callable[[Any], Any]:
        def encode(v: Any) -> Any:
            try:
                data = memoryview(v).cast("B").tobytes()
            except (TypeError, ValueError):
                return None
            return [len(data), _digest(data)]
        return encode


@register
class AllocOut(OutRole):
    """A new allocation of ``Out.kind`` whose size is the ``Out.size`` parameter."""

    name = "alloc"

    def show(self, view: OutView, row: Api, j: int, v: Any, args: Sequence) -> Any:
        at = row.size_index(row.outs[j])
        return view.new_allocation(v, args[at] if at is not None and at < len(args) else None)

    def encoder(self, out: Out) -> Callable[[Any], Any]:
        return _address_out

    def after_call(self, row: Api, j: int, cap: CaptureServices) -> After | None:
        out = row.outs[j]
        at = row.size_index(out)
        per = _out_index(row, out.per)
        kind, track = out.kind or DEVICE, cap.track_allocation

        def after(args: tuple, result: tuple, seq: int) -> None:
            if int(result[0]) == 0 and result[1 + j] is not None:
                size = int(args[at]) if at is not None else int(per is not None)
                if per is not None:
                    size *= int(result[1 + per] or 0)
                track(address_or_zero(result[1 + j]), max(size, 1), kind)
        return after

    def charger(self, row: Api, j: int, rep: ReplayServices) -> Callable[[Call], int] | None:
        out = row.outs[j]
        if out.size is None or not (out.kind == "pinned" or (out.kind == DEVICE and rep.charges_device_memory)):
            return None
        size, what = _alloc_size(row, j), f"{row.name} ({out.kind} memory)"
        return lambda call: rep.charge(max(size(call), 1), what)

    def binder(self, row: Api, j: int, rep: ReplayServices) -> OutBinder | None:
        kind = row.outs[j].kind or DEVICE
        size = _alloc_size(row, j)

        def bind(call: Call, cap: int, value: Any, charged: int) -> int:
            rep.add_allocation(cap, int(value), max(size(call), 1), kind, charged=charged)
            return 0   # the allocation holds the charge until it is released
        return bind


def _out_index(row: Api, name: str | None) -> int | None:
    return None if name is None else next(k for k, o in enumerate(row.outs) if o.name == name)


def _alloc_size(row: Api, j: int) -> Callable[[Call], int]:
    """Replay: the recorded size of output ``j``'s allocation (``size`` parameter, times the
    recorded ``per`` output for a pitched one)."""
    out = row.outs[j]
    at = row.size_index(out)
    per = _out_index(row, out.per)
    if per is None:
        return lambda call: call.raw[at] if at is not None else 0

    def size(call: Call) -> int:
        outs = call.wire[OUTS]
        unit = check_size(outs[per] if len(outs) > per else 0, f"the recorded {out.per}")
        return check_size((call.raw[at] if at is not None else 1) * unit, f"{row.name}'s allocation size")
    return size


@register
class AliasOut(OutRole):
    """A device address for the host allocation the call's first pointer names."""

    name = "alias"

    def show(self, view: OutView, row: Api, j: int, v: Any, args: Sequence) -> Any:
        return view.new_alias(v, args[0] if args else None)

    def encoder(self, out: Out) -> Callable[[Any], Any]:
        return _address_out

    def after_call(self, row: Api, j: int, cap: CaptureServices) -> After | None:
        host_at = _first(row, "ptr")
        track = cap.track_alias

        def after(args: tuple, result: tuple, seq: int) -> None:
            if int(result[0]) == 0 and result[1 + j] is not None and host_at is not None:
                track(address_or_zero(args[host_at]), address_or_zero(result[1 + j]))
        return after

    def binder(self, row: Api, j: int, rep: ReplayServices) -> OutBinder | None:
        host_at = _first(row, "ptr")
        if host_at is None:
            return None

        def bind(call: Call, cap: int, value: Any, charged: int) -> int:
            host = call.raw[host_at]
            owner = rep.find(host)
            if owner is not None and cap != host:  # a distinct device address range
                delta = host - owner.capture_base
                rep.add_allocation(cap - delta, int(value) - delta, owner.size, owner.kind,
                                   owner=owner.capture_base)
            return charged
        return bind


@register
class HandleOut(OutRole):
    """A new handle of ``Out.kind``. A kernel function's name and parameter layout are
    remembered at capture (launches need the layout to read their arguments)."""

    name = "handle"
    names_handle = True

    def show(self, view: OutView, row: Api, j: int, v: Any, args: Sequence) -> Any:
        return view.new_handle(v, row.outs[j].kind or self.name)

    def encoder(self, out: Out) -> Callable[[Any], Any]:
        return _handle_out

    def enricher(self, row: Api, j: int, cap: CaptureServices) -> Enricher | None:
        if row.outs[j].kind != "function":
            return None
        name_at = _first(row, "name")
        note = cap.note_function

        def enrich(args: tuple, result: tuple, extra: dict) -> None:
            if int(result[0]) == 0 and result[1 + j] is not None:
                note(_text(args[name_at]) if name_at is not None else "", result[1 + j], extra)
        return enrich

    def binder(self, row: Api, j: int, rep: ReplayServices) -> OutBinder | None:
        kind = row.outs[j].kind or ""

        def bind(call: Call, cap: int, value: Any, charged: int) -> int:
            rep.bind_handle(kind, cap, value)
            return charged
        return bind


@register
class HandlesOut(OutRole):
    """A list of handles of ``Out.kind`` (a graph's nodes): recorded packed, each bound at
    replay to the handle at the same place in the replayed call's list."""

    name = "handles"

    def encoder(self, out: Out) -> Callable[[Any], Any]:
        return lambda v: None if v is None else pack_words(handle_values(v))

    def binder(self, row: Api, j: int, rep: ReplayServices) -> OutBinder | None:
        kind, what = row.outs[j].kind or "", row.outs[j].name

        def bind(call: Call, cap: Any, value: Any, charged: int) -> int:
            mine = handle_values(value)
            for k, recorded in enumerate(unpack_words(cap, what)):
                if k < len(mine):
                    rep.bind_handle(kind, recorded, value[k] if isinstance(value, (list, tuple)) else value)
            return charged
        return bind
