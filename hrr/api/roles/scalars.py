"""Roles of plain values: numbers, enums, dim3s, kernel names, the application's own
code and data addresses (recorded, never replayed), and parameters recorded as null."""
from __future__ import annotations

from typing import Any, Callable

from hrr.api.catalogue import Api, Param
from hrr.api.roles.base import (
    AddressRole,
    _U64,
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
    _text,
    bad,
    brief,
    byte_counts,
    check_scalar,
    check_size,
    check_triple,
    dim3_list,
    finite_scalar,
    int_list,
    register,
    scalar,
)
from hrr.api.wire import OUTS
from hrr.hiptypes import ENUM_TYPES


@register
class Value(Role):
    name = "value"
    wire = WireType(finite_scalar, "a finite number, string or null")
    inline = "({v} if type({v}) is int else _scalar({v}))"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: scalar(a[i])

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name
        if what in byte_counts(row):
            return lambda v: check_size(v, what)
        return lambda v: check_scalar(v, what)

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        source = row.params[i].replay_from
        if source is None:
            return None
        j = next(k for k, o in enumerate(row.outs) if o.name == source)

        def act(call: Call) -> Any:
            recorded = call.wire[OUTS][j] if len(call.wire[OUTS]) > j else None
            if call.err or recorded is None:
                return call.raw[i]
            return check_size(recorded, f"the recorded {source}")
        return act


@register
class Enum(Role):
    name = "enum"
    wire = WireType(lambda v: v is None or type(v) is int, "an int or null")
    inline = "(None if {v} is None else int({v}))"

    def convert(self, p: Param, conv: Conversions) -> Callable[[Any], Any] | None:
        return conv.enum(p.kind or "")

    def show(self, view: View, p: Param, v: Any) -> Any:
        return view.enum(v, p.kind)

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: None if a[i] is None else int(a[i])

    def check(self, row: Api, i: int) -> Check:
        p = row.params[i]
        enum = ENUM_TYPES.get(p.kind or "")

        def check(v: Any) -> Any:
            if v is None:
                return None
            if not isinstance(v, int) or isinstance(v, bool) or not -(1 << 63) <= v < _U64:
                raise bad(f"parameter {p.name} is {brief(v)}, not a {p.kind}")
            try:
                return enum(v) if enum is not None else v
            except ValueError:
                raise bad(f"{v} is not a {p.kind}") from None
        return check


@register
class Name(Role):
    name = "name"
    wire = WireType(lambda v: type(v) is str, "a string")

    def show(self, view: View, p: Param, v: Any) -> Any:
        return view.text(v)

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: _text(a[i])

    def check(self, row: Api, i: int) -> Check:
        def check(v: Any) -> str:
            if not isinstance(v, str):
                raise bad("kernel name is not a string")
            return v
        return check

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        return lambda call: call.raw[i].encode()


@register
class Dim3(Role):
    name = "dim3"
    wire = WireType(int_list(3), "a list of 3 ints")

    def convert(self, p: Param, conv: Conversions) -> Callable[[Any], Any] | None:
        return conv.dim3

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: dim3_list(a[i])

    def check(self, row: Api, i: int) -> Check:
        return check_triple

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        return lambda call: rep.dim3(*call.raw[i])


class _AppAddress(AddressRole):
    """An address in the application's own code or data: recorded, never handed to a
    backend at replay (an archive carries no host code)."""

    def show(self, view: View, p: Param, v: Any) -> Any:
        return view.app_address(v)

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        return lambda call: None


@register
class HostFn(_AppAddress):
    name = "host_fn"

    def after_call(self, row: Api, i: int, cap: CaptureServices) -> After | None:
        note = cap.add_unreplayable
        return lambda args, result, seq: note(row.name, row.reason)


@register
class UserData(_AppAddress):
    name = "user_data"


@register
class Launch(Role):
    """kernelParams / extra / args: recorded as null; ``LaunchCodec`` puts the kernarg
    bytes in the event's ``extra.launch``."""

    name = "launch"
    wire = WireType(lambda v: v is None, "null (launch arguments live in extra.launch)")
    inline = "None"
    in_launch_extra = True


@register
class Ignored(Role):
    name = "ignored"
    wire = WireType(lambda v: v is None, "null")
    inline = "None"

    def show(self, view: View, p: Param, v: Any) -> Any:
        return view.nothing(v)


@register
class ResultBuf(Role):
    """App memory a query writes its answer into (``Param.size`` or ``Param.span`` bytes):
    not recorded; replay hands the call a zeroed buffer of its own and never checks it (a
    query's answer, an address or a context, may differ between runs)."""

    name = "result_buf"
    wire = WireType(lambda v: v is None, "null (a query's answer is not recorded)")
    is_address = True

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        extent, what = _extent(row, i), f"the result of {row.name}"

        def act(call: Call) -> Any:
            buf = rep.buffer(max(extent(call.raw), 1), what)
            rep.hold(buf)
            return buf
        return act
