"""hip-python's ``hip`` module, built once from the catalogue for every backend.

A backend supplies bodies (what its device or driver does) and a ``Frame`` (its per-call
protocol: a lock, last-error recording, lazy driver loading). For each catalogue row the
builder writes one function, compiled once at import as ``collections.namedtuple`` does,
with hip-python's parameter names, order and defaults. It converts every argument by its
role (pointers to addresses, handles through the backend's lookup, enums to members with
a value outside the enum failing the call, dim3s to ``(x, y, z)``), runs the body inside
the frame and returns ``(hipError_t member, *outputs)``, one None per output on failure.

Body conventions: a body returns the full result tuple, or None for a success without
outputs; it raises ``HipError`` to fail. Calls that do not fit the row's regular shape
are marked ``@irregular`` where they are written (as rr marks its irregular syscalls).
"""
from __future__ import annotations

import types
from typing import Any, Callable, Iterable, Mapping, TypeVar

import attrs

from hrr.api.catalogue import Api, get, rows
from hrr.codegen import compile_function, function_source
from hrr.api.roles import param_role
from hrr.hiptypes import ENUM_TYPES, as_address, hipError_t, surface_module

F = TypeVar("F", bound=Callable[..., Any])


class HipError(Exception):
    """Raised by a body or an argument conversion: the call returns ``code``."""

    def __init__(self, code: str | hipError_t, detail: str = "") -> None:
        name = code if isinstance(code, str) else code.name
        super().__init__(detail or name)
        self.code = getattr(hipError_t, name)
        self.detail = detail or name


@attrs.frozen
class Irregular:
    """How a hand-written body departs from the regular row shape."""

    raw: bool = False      # it takes the arguments as the app passed them (no conversion)
    records: bool = True   # a failure becomes the thread's last error
    bare: bool = False     # no frame at all: the body is the call (no lock, no driver load)


def irregular(raw: bool = False, records: bool = True, bare: bool = False) -> Callable[[F], F]:
    """Mark a hand-written body that does not follow its row's regular shape."""
    def mark(fn: F) -> F:
        fn.__hrr_irregular__ = Irregular(raw, records, bare)  # type: ignore[attr-defined]
        return fn
    return mark


@attrs.frozen
class Frame:
    """A backend's per-call protocol as Python source, compiled into every function.

    ``{call}`` is the body call with converted arguments (an expression whose value is
    the result tuple); ``NONES`` is the row's tuple of None outputs; a line holding only
    ``{record}`` becomes ``record`` (re-indented), or nothing for a non-recording call.
    ``namespace`` holds the names the source uses."""

    source: str
    record: str
    namespace: Mapping[str, Any]


def enum_converter(enum_type: type, error: str = "hipErrorInvalidValue") -> Callable[[Any], Any]:
    """An enum argument as its member (a plain int as a replay decodes it is accepted);
    a value outside the enum fails the call with ``error``."""
    def convert(value: Any) -> Any:
        try:
            return enum_type(int(value))
        except (ValueError, TypeError):
            raise HipError(error, f"{value!r} is not a {enum_type.__name__}") from None
    return convert


def error_name(value: Any) -> str:
    """hipGetErrorName's answer: the name of ``value``, hipErrorUnknown outside the enum."""
    try:
        return hipError_t(int(value)).name
    except ValueError:
        return "hipErrorUnknown"


def dims(d: Any) -> tuple[int, int, int]:
    """A dim3 argument (hip.dim3, an int, or up to three ints) as ``(x, y, z)``."""
    if isinstance(d, int):
        return (d, 1, 1)
    if hasattr(d, "x"):
        return (int(d.x), int(getattr(d, "y", 1)), int(getattr(d, "z", 1)))
    t = tuple(int(v) for v in d) + (1, 1, 1)
    return (t[0], t[1], t[2])


class _Conversions:
    """A backend's argument conversions, as each parameter's role picks them (``Role.convert``)."""

    address = staticmethod(as_address)
    dim3 = staticmethod(dims)

    def __init__(self, handle: Callable[[str], Callable], enum_errors: Mapping[str, str]) -> None:
        self._handle, self._enum_errors = handle, enum_errors

    def handle(self, kind: str) -> Callable[[Any], Any]:
        return self._handle(kind)

    def enum(self, kind: str) -> Callable[[Any], Any]:
        return enum_converter(ENUM_TYPES[kind], self._enum_errors.get(kind, "hipErrorInvalidValue"))


def _converters(row: Api, handle: Callable[[str], Callable], enum_errors: Mapping[str, str]) -> list[Callable | None]:
    conv = _Conversions(handle, enum_errors)
    return [param_role(p.role).convert(p, conv) for p in row.params]


def _compile(name: str, sig: list[str], call: str, frame: Frame, ns: dict[str, Any],
             mode: Irregular) -> Callable:
    """Compile ``def name(sig): <frame around call>`` in ``ns`` (once per row)."""
    lines = [f"return {call}"] if mode.bare else []
    for line in () if mode.bare else frame.source.replace("{call}", call).splitlines():
        if line.strip() != "{record}":
            lines.append(line)
        elif mode.records:
            indent = line[:len(line) - len(line.lstrip())]
            lines += [indent + r for r in frame.record.splitlines()]
    ns = {"_OK": (hipError_t.hipSuccess,), **frame.namespace, **ns}
    fn = compile_function(name, function_source(name, sig, lines), ns, f"surface {name}")
    fn.__hrr_body__ = ns["_body"]
    return fn


def make_function(row: Api, body: Callable, frame: Frame, converters: list[Callable | None]) -> Callable:
    """The app-facing function for ``row``: hip-python's signature, ``body`` in ``frame``."""
    mode = getattr(body, "__hrr_irregular__", Irregular())
    ns: dict[str, Any] = {"_body": body, "NONES": (None,) * len(row.outs)}
    sig, args = [], []
    for i, (p, conv) in enumerate(zip(row.params, converters, strict=True)):
        if p.optional:
            ns[f"_d{i}"] = p.default
        sig.append(f"{p.name}=_d{i}" if p.optional else p.name)
        if conv is None or mode.raw:
            args.append(p.name)
            continue
        ns[f"_c{i}"] = conv
        convert = f"_c{i}({p.name})"
        args.append(f"(None if {p.name} is None else {convert})" if p.optional and p.default is None else convert)
    fn = _compile(row.name, sig, f"(_body({', '.join(args)}) or _OK)", frame, ns, mode)
    fn.__doc__ = body.__doc__ or f"{row.name}({', '.join(p.name for p in row.params)})"
    return fn


def build(name: str, doc: str, bodies: Mapping[str, Callable], frame: Frame,
          handle: Callable[[str], Callable], *, enum_errors: Mapping[str, str] | None = None,
          uncatalogued: Mapping[str, tuple[Callable, int]] | None = None,
          catalogue: Iterable[Api] | None = None, library: Any = None) -> types.ModuleType:
    """hip-python's module: one function per catalogue row that has a body, plus the
    enums, constants and helper classes. ``handle(kind)`` converts a handle argument,
    ``enum_errors`` names the error for a bad value of an enum (default invalid value);
    ``uncatalogued`` adds calls that are not rows yet (name -> (body, number of outputs)):
    framed, but with their arguments as passed since no row gives their roles. ``library``:
    a math library's ``LibraryTypes`` (its module holds only its own names; its frame's
    namespace sets ``_OK`` to the library's success status)."""
    def function(row: Api, body: Callable) -> Callable:
        return make_function(row, body, frame, _converters(row, handle, enum_errors or {}))
    functions = {row.name: function(row, bodies[row.name])
                 for row in (rows() if catalogue is None else catalogue) if row.name in bodies}
    for extra, (body, n_outs) in (uncatalogued or {}).items():
        ns = {"_body": body, "NONES": (None,) * n_outs}
        functions[extra] = _compile(extra, ["*args", "**kwargs"], "(_body(*args, **kwargs) or _OK)",
                                    frame, ns, Irregular(raw=True))
        functions[extra].__doc__ = body.__doc__
    module = surface_module(name, doc, functions, library=library)
    module.__hrr_function__ = function  # type: ignore[attr-defined]  # for add_body
    return module


def add_body(module: types.ModuleType, name: str, body: Callable) -> Callable:
    """Put on ``module`` (from ``build``) the function for catalogue row ``name`` (e.g. a
    test-only extension row) around ``body``, built as every row's is; returns it."""
    fn = module.__hrr_function__(get(name), body)
    setattr(module, name, fn)
    return fn
