"""Wrapping a backend's ``hip`` module so that every catalogued call is recorded.

One wrapper per catalogue row, specialised once when the module is wrapped (so a row
added to the catalogue before then is recorded like any other): it binds the arguments,
lets watching stages see the call, runs it, encodes arguments and outputs by asking each
parameter's and output's role (``hrr.api.roles``) and hands the event to the session.
Nothing here does a syscall per call.
"""
from __future__ import annotations

import types
from typing import Any, Callable

from hrr.api.catalogue import Api, rows
from hrr.api.roles import LAUNCH, After, Enricher, out_role, param_role
from hrr.pipeline.context import CallInfo


def _binder(row: Api) -> Callable[[tuple, dict], tuple]:
    names = [p.name for p in row.params]
    defaults = [p.default for p in row.params]
    n = len(names)

    def bind(args: tuple, kwargs: dict) -> tuple:
        if not kwargs and len(args) == n:
            return args
        out = list(args) + defaults[len(args):]
        for key, value in kwargs.items():
            try:
                out[names.index(key)] = value
            except ValueError:
                raise TypeError(f"{row.name}() got an unexpected keyword argument {key!r}") from None
        return tuple(out)
    return bind


def _chain(fns: list[Any]) -> Any:
    """One callable running ``fns`` in order (None when there are none)."""
    fns = [f for f in fns if f is not None]
    if len(fns) <= 1:
        return fns[0] if fns else None

    def chained(*a: Any) -> None:
        for f in fns:
            f(*a)
    return chained


class Recorder:
    """Builds the recording ``hip`` module for one capture session."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.real = session.backend.hip

    def wrapped_module(self) -> types.ModuleType:
        """A module with everything the backend's ``hip`` has, catalogued calls recorded."""
        mod = types.ModuleType("hip.hip", doc="hip-python's hip module, recorded by hrr")
        mod.__dict__.update({k: v for k, v in vars(self.real).items() if not k.startswith("__")})
        for row in rows():
            fn = getattr(self.real, row.name, None)
            if fn is not None:
                setattr(mod, row.name, self._wrap(row, fn))
        return mod

    def _wrap(self, row: Api, real: Callable) -> Callable:
        session, ctx = self.session, self.session.ctx
        bind = _binder(row)
        name = row.name
        roles = [param_role(p.role) for p in row.params]
        outs = [out_role(o.role) for o in row.outs]
        encoders = [role.encoder(row, i, session) for i, role in enumerate(roles)]
        deferred = any(role.deferred for role in roles)  # values known after the call
        out_encoders = [role.encoder(o) for role, o in zip(outs, row.outs, strict=True)]
        launch = LAUNCH.encoder(row, session) if row.launch is not None else None
        enrich: Enricher | None = _chain([role.enricher(row, j, session) for j, role in enumerate(outs)])
        post: After | None = _chain([role.after_call(row, i, session) for i, role in enumerate(roles)]
                                    + [role.after_call(row, j, session) for j, role in enumerate(outs)]
                                    + session.row_effects(row))
        record = session.record
        befores, afters = ctx.before_watchers, ctx.after_watchers

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            args = bind(args, kwargs)
            call = None
            records = None
            if name in befores:
                call = CallInfo(row, args)
                records = ctx.run_before(name, call)
            extra: dict = {}
            if launch is not None:
                launch_extra, launch_records = launch(args)
                extra["launch"] = launch_extra
                if launch_records:
                    records = {**(records or {}), **launch_records}
            wire_args = [enc(args) for enc in encoders]
            result = real(*args)
            err = int(result[0])
            if deferred:
                wire_args = [p(result) if callable(p) else p for p in wire_args]
            outs = [c(v) for c, v in zip(out_encoders, result[1:], strict=False)] if out_encoders else []
            if enrich is not None:
                enrich(args, result, extra)
            if records:
                extra["records"] = records
            seq = record(name, wire_args, err, outs, extra)
            if post is not None:
                post(args, result, seq)
            if name in afters:
                ctx.run_after(name, call or CallInfo(row, args), result)
            return result

        wrapper.__name__ = wrapper.__qualname__ = name
        wrapper.__doc__ = getattr(real, "__doc__", None)
        wrapper.__wrapped__ = real  # type: ignore[attr-defined]
        return wrapper


__all__ = ["Recorder"]
