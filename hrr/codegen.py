"""The one place hrr turns Python source it wrote into functions.

Three things are generated per catalogue row: a backend's ``hip`` function (the surface,
``hrr.backends.surface``), capture's wrapper (``hrr.capture.recorder``) and replay's checks
and launch runner (``hrr.events.codec``, ``hrr.replay.launches``). Each keeps its own
template; all of them write their source with :func:`function_source` and compile it with
:func:`compile_function`, which keeps the source on the function (:func:`source_of`) so
that ``python -m hrr.api.explain NAME`` can print what runs for a row. The source is hrr's
own, built from the catalogue and the roles, never from an archive's content.

Ground floor: this module imports nothing of hrr, so every layer (hiptypes included) may use it.
"""
from __future__ import annotations

import types
from typing import Any, Callable, Iterable

#: The attribute a generated function keeps its source under.
SOURCE_ATTR = "__hrr_source__"


def indent(lines: Iterable[str], level: int = 1) -> str:
    """``lines`` as source indented by ``level`` steps of four spaces, one line each."""
    pad = "    " * level
    return "".join(f"{pad}{line}\n" if line else "\n" for line in lines)


def function_source(name: str, params: Iterable[str], body: Iterable[str]) -> str:
    """``def name(params):`` with ``body`` (lines, relative indentation kept) as its block."""
    lines = list(body) or ["pass"]
    return f"def {name}({', '.join(params)}):\n" + indent(lines)


def compile_function(name: str, source: str, namespace: dict[str, Any],
                     label: str | None = None) -> Any:
    """Compile ``source`` (which defines ``name``) in ``namespace`` and return ``name``;
    the function keeps ``source`` (:func:`source_of`). ``label`` names it in tracebacks
    (``<hrr LABEL>``; default the function's name)."""
    code = compile(source, f"<hrr {label or name}>", "exec")
    exec(code, namespace)  # noqa: S102 - hrr's own source, built from the catalogue and roles
    fn = namespace[name]
    try:
        setattr(fn, SOURCE_ATTR, source)
    except AttributeError:   # not a plain function: nothing to keep it on
        pass
    return fn


#: The attribute a function made by :func:`lazy_function` keeps its builder under.
BUILD_ATTR = "__hrr_build__"
# What a lazy function runs until its first call has built it: the builder, then the body.
_TRAMPOLINE = compile("def trampoline(*args, **kwargs):\n    return __hrr_build__()(*args, **kwargs)\n",
                      "<hrr lazy function>", "exec")


def _trampoline_code() -> Any:
    scope: dict[str, Any] = {}
    exec(_TRAMPOLINE, scope)  # noqa: S102 - the constant source above
    return scope["trampoline"].__code__


_TRAMPOLINE_CODE = _trampoline_code()


def lazy_function(name: str, make_source: Callable[[], str], namespace: dict[str, Any],
                  label: str | None = None) -> Any:
    """A function ``name(*args, **kwargs)`` whose body is ``make_source()``'s (which must
    define ``name`` with that signature), written and compiled in ``namespace`` at its first
    call (or :func:`source_of`): until then it costs no compile. The function object stays
    the same (its code is replaced), so whoever holds it calls the compiled body directly."""
    fn = types.FunctionType(_TRAMPOLINE_CODE, namespace, name)

    def build() -> Any:
        if fn.__code__ is _TRAMPOLINE_CODE:   # two threads' first calls may both compile: the same body
            source = make_source()
            built = compile_function(name, source, namespace, label)
            fn.__code__ = built.__code__
            setattr(fn, SOURCE_ATTR, source)
        return fn
    namespace[BUILD_ATTR] = build
    setattr(fn, BUILD_ATTR, build)
    return fn


def source_of(fn: Any) -> str | None:
    """The source a generated function was compiled from (None: not generated here); a
    :func:`lazy_function` is built first."""
    build = getattr(fn, BUILD_ATTR, None)
    if build is not None:
        build()
    return getattr(fn, SOURCE_ATTR, None)


__all__ = ["BUILD_ATTR", "SOURCE_ATTR", "compile_function", "function_source", "indent", "lazy_function",
           "source_of"]
