"""Wrapping a backend's ``hip`` module so that every catalogued call is recorded.

One wrapper per catalogue row, specialised once when the module is wrapped (so a row
added to the catalogue before then is recorded like any other): it binds the arguments,
lets watching stages see the call, runs it, encodes arguments and outputs by asking each
parameter's and output's role (``hrr.api.roles``) and hands the event to the archive writer.
Nothing here does a syscall per call.

The wrapper is compiled per row (``_source``): the steps a row does not need are left out,
the simplest encoders are written inline (``_INLINE``, each the same function as its
role's encoder, which a test checks), the row's watchers are read from one object looked
up at wrap time, and the writer numbers and appends the record under its one lock. A
launch's kernarg bytes are packed once: the backend is handed them as a raw ``extra``
(``kernargs.packed_extra``) while the record keeps the arguments as the app passed them.
"""
from __future__ import annotations

import functools
import types
from typing import Any, Callable

from hrr.api.catalogue import CATALOGUE, Api, rows
from hrr.codegen import function_source, lazy_function
from hrr.backends.contract import api_module
from hrr.api.roles import INLINE_NAMESPACE, LAUNCH, OUT_ROLES, PARAM_ROLES, OutRole, Role, out_role, param_role
from hrr.capture.launches import native_launch_wrapper
from hrr.hiptypes.kernargs import packed_extra
from hrr.events.model import PSEUDO_UNCATALOGUED, UNCATALOGUED_REASON
from hrr.pipeline.context import CallInfo

#: Parameter roles whose encoder is written inline (``Role.inline``): an expression of the
#: argument ``v`` equal to ``role.encoder(row, i, cap)(args)`` with ``v = args[i]`` (a test
#: checks them), by role name.
_INLINE = {name: role.inline for name, role in PARAM_ROLES.items() if role.inline is not None}
#: The same for output roles' encoders, of the output ``v`` (``OutRole.inline``).
_INLINE_OUT = {name: role.inline for name, role in OUT_ROLES.items() if role.inline is not None}
_NAMESPACE = {**INLINE_NAMESPACE, "_CallInfo": CallInfo, "_packed": packed_extra, "_EMPTY": {}}


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
    """Builds a recording module (``hip``, ``hiprtc`` or a math library's) for one capture session."""

    def __init__(self, session: Any, module: str = "hip") -> None:
        self.session = session
        self.module = module
        self.real = api_module(session.backend, module)

    def wrapped_module(self) -> types.ModuleType:
        """A module with everything the backend's ``hip`` (or ``hiprtc``) has, the calls of
        the catalogue rows of that module recorded."""
        mod = types.ModuleType(f"hip.{self.module}", doc=f"hip-python's {self.module} module, recorded by hrr")
        # __getattr__ too: an uncatalogued HIP name fails as it does on the backend's module;
        # and hip-python's names that merely start with "__" (``__hip_texture``: the interop
        # layer binds them at import), not the module's own dunders
        mod.__dict__.update({k: v for k, v in vars(self.real).items()
                             if not (k.startswith("__") and k.endswith("__")) or k == "__getattr__"})
        for row in rows():
            if row.module != self.module:
                continue
            fn = getattr(self.real, row.name, None)
            if fn is not None:
                setattr(mod, row.name, self._wrap(row, fn))
        if self.session.backend.PASSTHROUGH_UNCATALOGUED:
            for name, fn in vars(self.real).items():
                if name.startswith("hip") and name not in CATALOGUE and callable(fn) \
                        and not isinstance(fn, type):
                    setattr(mod, name, self._passthrough(name, fn))
        return mod

    def _passthrough(self, name: str, real: Callable) -> Callable:
        """``real`` (a call the catalogue has no row for) run as the app called it, with a
        ``@uncatalogued`` record of its name and error, and the function listed once per
        process under the manifest's ``unreplayable_apis``: replay cannot redo it."""
        session = self.session
        listed: list[Any] = [None]   # the writer it was listed in (a forked child has its own)

        @functools.wraps(real)
        def passthrough(*args: Any, **kwargs: Any) -> Any:
            result = real(*args, **kwargs)
            try:
                err = int(result[0]) if isinstance(result, tuple) and result else 0
            except (TypeError, ValueError):
                err = 0
            writer = session.writer
            writer.append_call(writer.api_number(PSEUDO_UNCATALOGUED), [name], err, [], {})
            if listed[0] is not writer:
                listed[0] = writer
                session.add_unreplayable(name, UNCATALOGUED_REASON)
            return result
        return passthrough

    def _wrap(self, row: Api, real: Callable) -> Callable:
        session, ctx = self.session, self.session.ctx
        name = row.name
        roles = [param_role(p.role) for p in row.params]
        outs = [out_role(o.role) for o in row.outs]
        shape = row.launch
        ns: dict[str, Any] = {
            **_NAMESPACE, "_row": row, "_real": real, "_bind": _binder(row), "_session": session,
            "_w": ctx.row_watchers(name), "_run_before": ctx.run_before, "_run_after": ctx.run_after,
            "_num": session.writer.api_number(name),
            "_enrich": _chain([role.enricher(row, j, session) for j, role in enumerate(outs)]),
            "_post": _chain([role.after_call(row, i, session) for i, role in enumerate(roles)]
                            + [role.after_call(row, j, session) for j, role in enumerate(outs)]
                            + session.row_effects(row)),
            "_launch": LAUNCH.encoder(row, session) if shape is not None else None,
        }
        for i, role in enumerate(roles):
            if role.inline is None:
                ns[f"_e{i}"] = role.encoder(row, i, session)
        for j, (out, o) in enumerate(zip(outs, row.outs, strict=True)):
            ns[f"_o{j}"] = out.encoder(o)
        ns["_outs"] = [ns[f"_o{j}"] for j in range(len(outs))]
        handoff = None
        if shape is not None and shape.extra is not None:
            handoff = (row.param_index(shape.kernel_params), row.param_index(shape.extra))
        deferred = any(role.deferred for role in roles)
        # written and compiled at its first call: a program calls a few of the hundreds of
        # rows, and compiling every wrapper was most of what capture added to start-up
        wrapper = lazy_function("wrapper", functools.partial(
            _source, row, roles, outs, deferred=deferred, handoff=handoff, enrich=ns["_enrich"] is not None,
            post=ns["_post"] is not None), ns, f"capture {name}")
        wrapper.__name__ = wrapper.__qualname__ = name
        wrapper.__doc__ = getattr(real, "__doc__", None)
        wrapper.__wrapped__ = real
        # The common launch recorded natively (capture/launches.py); the wrapper does the rest
        simple = not (outs or deferred or ns["_enrich"] is not None or ns["_post"] is not None)
        fast = native_launch_wrapper(row, roles, session, wrapper, real, ns["_num"], simple) \
            if handoff is not None else None
        return fast if fast is not None else wrapper


def _source(row: Api, roles: list[Role], outs: list[OutRole], *, deferred: bool,
            handoff: tuple[int, int] | None, enrich: bool, post: bool) -> str:
    """The Python source of ``row``'s wrapper (names from ``Recorder._wrap``'s namespace)."""
    n, launch = len(roles), row.launch is not None
    code = [f"if kwargs or len(args) != {n}:" if n else "if kwargs or args:", "    args = _bind(args, kwargs)",
            "call = records = None",
            "if _w.before:",
            "    call = _CallInfo(_row, args)",
            f"    records = _run_before({row.name!r}, call, _w.before)"]
    if launch:
        code += ["wire_launch, launch_records, kernargs = _launch(args)",
                 "if launch_records:",
                 "    records = {**(records or {}), **launch_records}"]
    items, local = [], set()
    for i, role in enumerate(roles):
        if role.inline is not None:
            if "{v}" in role.inline:
                code.append(f"a{i} = args[{i}]")
                local.add(i)
            items.append(role.inline.format(v=f"a{i}"))
        else:
            items.append(f"_e{i}(args)")
    code.append(f"wire = [{', '.join(items)}]" if items else "wire = []")
    if handoff is not None:
        params_at, extra_at = handoff
        backend_args = ", ".join("None" if k == params_at else "_packed(kernargs)" if k == extra_at
                                 else f"a{k}" if k in local else f"args[{k}]" for k in range(n))
        code += ["if kernargs is None:", "    result = _real(*args)", "else:",
                 f"    result = _real({backend_args})"]
    else:
        code.append("result = _real(*args)")
    code.append("err = int(result[0])")
    if deferred:
        code.append("wire = [p(result) if callable(p) else p for p in wire]")
    if outs:
        code.append(f"if len(result) > {len(outs)}:")
        items = []
        for j, out in enumerate(outs):
            if out.inline is not None:
                code.append(f"    r{j} = result[{j + 1}]")
                items.append(out.inline.format(v=f"r{j}"))
            else:
                items.append(f"_o{j}(result[{j + 1}])")
        code += [f"    outs = [{', '.join(items)}]", "else:",
                 "    outs = [c(v) for c, v in zip(_outs, result[1:])]"]
    else:
        code.append("outs = []")
    if launch or enrich:
        code.append("extra = {'launch': wire_launch}" if launch else "extra = {}")
        if enrich:
            code.append("_enrich(args, result, extra)")
        code += ["if records:", "    extra['records'] = records"]
    else:
        code.append("extra = {'records': records} if records else _EMPTY")
    code.append("seq = _session.writer.append_call(_num, wire, err, outs, extra)")
    if post:
        code.append("_post(args, result, seq)")
    code += ["if _w.after:", f"    _run_after({row.name!r}, call or _CallInfo(_row, args), result, _w.after)",
             "return result"]
    return function_source("wrapper", ["*args", "**kwargs"], code)


__all__ = ["Recorder"]
