"""Roles of plain values: numbers, enums, dim3s, kernel names, the application's own
code and data addresses (recorded, never replayed), and parameters recorded as null."""
from __future__ import annotations

from typing import Any

from hrr.api.catalogue import Api
from hrr.api.roles.base import (
    _U64,
    Action,
    After,
    Call,
    CaptureServices,
    Check,
    Encoder,
    ReplayServices,
    Role,
    _extent,
    _text,
    bad,
    brief,
    byte_counts,
    check_address,
    check_scalar,
    check_size,
    check_triple,
    dim3_list,
    register,
    scalar,
)
from hrr.backends.hiptypes import ENUM_TYPES, address_or_zero


@register
class Value(Role):
    name = "value"

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
            recorded = call.wire[5][j] if len(call.wire[5]) > j else None
            if call.err or recorded is None:
                return call.raw[i]
            return check_size(recorded, f"the recorded {source}")
        return act


@register
class Enum(Role):
    name = "enum"

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

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: dim3_list(a[i])

    def check(self, row: Api, i: int) -> Check:
        return check_triple

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        return lambda call: rep.dim3(*call.raw[i])


class _AppAddress(Role):
    """An address in the application's own code or data: recorded, never handed to a
    backend at replay (an archive carries no host code)."""

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: address_or_zero(a[i])

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name
        return lambda v: check_address(v, what)

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


@register
class Ignored(Role):
    name = "ignored"


@register
class ResultBuf(Role):
    """App memory a query writes its answer into (``Param.size`` or ``Param.span`` bytes):
    not recorded; replay hands the call a zeroed buffer of its own and never checks it (a
    query's answer, an address or a context, may differ between runs)."""

    name = "result_buf"

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        extent, what = _extent(row, i), f"the result of {row.name}"

        def act(call: Call) -> Any:
            buf = rep.buffer(max(extent(call.raw), 1), what)
            rep.hold(buf)
            return buf
        return act
