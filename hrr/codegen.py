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

from typing import Any, Iterable

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


def source_of(fn: Any) -> str | None:
    """The source a generated function was compiled from (None: not generated here)."""
    return getattr(fn, SOURCE_ATTR, None)


__all__ = ["SOURCE_ATTR", "compile_function", "function_source", "indent", "source_of"]
