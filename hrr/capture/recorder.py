"""Wrapping a backend's ``hip`` module so that every catalogued call is recorded.

One wrapper per catalogue row, specialised once: it binds the arguments, lets watching
stages see the call, runs it, encodes arguments and outputs by their catalogue roles
and hands the event to the session. Nothing here does a syscall per call.
"""
from __future__ import annotations

import numbers
import types
from typing import Any, Callable

from hrr.api.catalogue import Api, rows
from hrr.backends.hiptypes import PointerConversionError, address_or_zero, handle_or_zero
from hrr.backends.kernargs import LaunchArgsError, pack_kernel_args
from hrr.pipeline.context import CallInfo, LaunchInfo


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


def _scalar(v: Any) -> Any:
    if v is None or type(v) in (int, float, bool, str):
        return v
    if isinstance(v, (int, numbers.Integral)):  # numpy and ctypes-free integer types too
        return int(v)
    if isinstance(v, (float, numbers.Real)):
        return float(v)
    value = getattr(v, "value", None)  # ctypes scalars (c_uint32(5), c_size_t(...))
    if type(value) in (int, float, bool):
        return value
    return None




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

    # ------------------------------------------------------------------ the wrapper
    def _wrap(self, row: Api, real: Callable) -> Callable:
        session, ctx = self.session, self.session.ctx
        bind = _binder(row)
        name = row.name
        is_launch = row.family == "launch"
        encoders = [self._encoder(row, i) for i in range(len(row.params))]
        deferred = any(p.role == "copy_dst" for p in row.params)  # values known after the call
        encode_outs = session.out_encoder(row)
        record = session.record
        befores, afters = ctx.before_watchers, ctx.after_watchers
        post = session.post_call_hooks.get(name)
        enrich = session.enrich_hooks.get(name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            args = bind(args, kwargs)
            call = None
            records = None
            if name in befores:
                call = CallInfo(row, args)
                records = ctx.run_before(name, call)
            extra: dict = {}
            if is_launch:
                launch_extra, launch_records = self._launch(row, args)
                extra["launch"] = launch_extra
                if launch_records:
                    records = {**(records or {}), **launch_records}
            wire_args = [enc(args) for enc in encoders]
            result = real(*args)
            err = int(result[0])
            if deferred:
                wire_args = [p(result) if callable(p) else p for p in wire_args]
            outs = encode_outs(result)
            if enrich is not None:
                enrich(row, args, result, extra)
            if records:
                extra["records"] = records
            seq = record(name, wire_args, err, outs, extra)
            if post is not None:
                post(row, args, result, seq)
            if name in afters:
                ctx.run_after(name, call or CallInfo(row, args), result)
            return result

        wrapper.__name__ = wrapper.__qualname__ = name
        wrapper.__doc__ = getattr(real, "__doc__", None)
        wrapper.__wrapped__ = real  # type: ignore[attr-defined]
        return wrapper

    # ------------------------------------------------------------------ encoders
    def _encoder(self, row: Api, index: int) -> Callable[[tuple], Any]:
        """``enc(args) -> wire value``, or a callable taking the call's result when the
        value is only known afterwards (copy destinations)."""
        p = row.params[index]
        role, session = p.role, self.session
        size_index = row.param_index(p.size) if p.size else None
        if role == "value":
            return lambda a: _scalar(a[index])
        if role == "enum":
            return lambda a: None if a[index] is None else int(a[index])
        if role == "ptr":
            return lambda a: address_or_zero(a[index])
        if role == "handle":
            return lambda a: handle_or_zero(a[index])
        if role == "copy_src":
            return lambda a: session.encode_copy_src(a[index], a[size_index], row)
        if role == "copy_dst":
            return lambda a: session.encode_copy_dst(a[index], a[size_index], row, a)
        if role == "host_range":
            return lambda a: session.encode_host_range(a[index], a[size_index])
        if role == "code":
            return lambda a: session.put_code_object(a[index])
        if role == "name":
            return lambda a: (a[index].decode(errors="replace")
                                    if isinstance(a[index], (bytes, bytearray)) else str(a[index]))
        if role == "dim3":
            return lambda a: _dim3(a[index])
        if role in ("host_fn", "user_data"):
            return lambda a: address_or_zero(a[index])
        return lambda a: None  # launch (in extra) and ignored

    # ------------------------------------------------------------------ launches
    def _launch(self, row: Api, args: tuple) -> tuple[dict, dict | None]:
        session = self.session
        func = args[0]
        fvalue = handle_or_zero(func)
        kernel, layout = session.function_info(func)
        if row.name == "hipModuleLaunchKernel":
            grid, block = tuple(args[1:4]), tuple(args[4:7])
            stream = args[8]
            kernel_params, extra_arg = args[9], args[10]
        else:  # hipLaunchKernel(function_address, numBlocks, dimBlocks, args, shared, stream)
            grid, block = _dim3(args[1]), _dim3(args[2])
            stream = args[5]
            kernel_params, extra_arg = args[3], None
        wire: dict = {"kernel": kernel, "grid": list(grid), "block": list(block)}
        if layout is None:
            wire["error"] = "the kernel's parameter layout is unknown"
            return wire, None
        try:
            kernargs = pack_kernel_args(layout, kernel_params, extra_arg)
        except (LaunchArgsError, PointerConversionError, ValueError, OSError) as exc:
            wire["error"] = f"launch arguments could not be read: {exc}"
            return wire, None
        pointers = session.scan_pointers(layout, kernargs)
        wire["kernargs"] = kernargs
        wire["ptrs"] = [p.to_wire() for p in pointers]
        info = LaunchInfo(row.name, fvalue, kernel, layout, kernargs, tuple(pointers),
                          handle_or_zero(stream), stream, tuple(int(x) for x in grid),
                          tuple(int(x) for x in block))
        return wire, session.ctx.run_launch(info)


def _dim3(v: Any) -> list[int]:
    if v is None:
        return [1, 1, 1]
    if isinstance(v, (tuple, list)):
        return [int(x) for x in v] + [1] * (3 - len(v))
    if isinstance(v, int):
        return [v, 1, 1]
    return [int(getattr(v, "x", 1)), int(getattr(v, "y", 1)), int(getattr(v, "z", 1))]


__all__ = ["Recorder"]
