"""hip-python's module surface on hrr's modules: ``surface_module`` gives a backend's
``hip`` or ``hiprtc`` every name of hip-python's, its own types, enums and constants (hrr's
look-alikes where it lacks them), and, for a function the backend does not implement, a
stand-in that raises ``UncataloguedCall`` when called.
"""
from __future__ import annotations

import builtins
import sys
import types
from typing import Any

from hrr.errors import HrrError
from hrr.hiptypes.enums import CONSTANTS, ENUM_TYPES
from hrr.hiptypes.installed import _real
from hrr.hiptypes.mathlibs import LIBRARY_ENUMS, LibraryTypes
from hrr.hiptypes.pointers import HANDLE_TYPES
from hrr.hiptypes.structs import GRAPH_STRUCTS, POOL_STRUCTS, TYPE_ALIASES, VALUE_TYPES


# How a program finds out which HIP calls hrr covers: an installed command, not a file
# of the source tree (pip installs do not ship docs/).
COVERAGE_COMMAND = "hrr coverage"
UNCATALOGUED_MARK = "__hrr_uncatalogued__"

# The stand-in's and the module ``__getattr__``'s raising frames are compiled under a name
# that is no file of hrr's, so a program's traceback ends at its own line and then one
# line saying what happened, not inside hrr's source.
_RAISERS = compile(
    "def standin(*args, **kwargs):\n"
    "    raise UncataloguedCall(MODULE, NAME, BACKEND)\n"
    "def __getattr__(name):\n"
    "    raise AttributeError(message(name), name=name, obj=None)\n",
    "<hrr: hip-python's name, as this backend offers it>", "exec")
_STANDIN_CODE, _GETATTR_CODE = (c for c in _RAISERS.co_consts if isinstance(c, types.CodeType))


def _renamed(code: types.CodeType, name: str) -> types.CodeType:
    if sys.version_info >= (3, 11):
        return code.replace(co_name=name, co_qualname=name)
    return code.replace(co_name=name)


class UncataloguedCall(HrrError, NotImplementedError):
    """A call of a hip-python function that the backend does not implement: hrr records
    and replays only catalogued calls. Raised when the function is called (the name itself
    exists, as in hip-python), so ``hasattr`` and ``from ... import`` see hip-python's surface.
    A NotImplementedError, not an AttributeError: the attribute is there, the call is not."""

    def __init__(self, module: str, name: str, backend: str) -> None:
        super().__init__(
            f"{module}.{name} is not offered by hrr's {backend} backend: hrr records and replays only "
            "the HIP calls its catalogue lists",
            hint=f"`{COVERAGE_COMMAND}` lists them and the hip-python functions not covered yet; "
                 "on an AMD GPU, --backend hip passes it to hip-python unrecorded")
        self.function, self.backend = name, backend


UncataloguedCall.__module__ = "hrr.hiptypes"   # the name a program catches it by


def is_uncatalogued(fn: Any) -> bool:
    """Whether ``fn`` is the stand-in for a hip-python function the backend does not offer."""
    return getattr(fn, UNCATALOGUED_MARK, None) is not None


def uncatalogued_function(module: str, name: str, backend: str, real_fn: Any) -> Any:
    """A stand-in for hip-python's function ``module.name`` (``real_fn``): its name, its
    signature (through ``__wrapped__``), and a call that raises UncataloguedCall."""
    uncatalogued: Any = types.FunctionType(
        _renamed(_STANDIN_CODE, name),
        {"__builtins__": builtins, "UncataloguedCall": UncataloguedCall, "MODULE": module, "NAME": name,
         "BACKEND": backend}, name)
    uncatalogued.__qualname__ = name
    uncatalogued.__doc__ = (f"hip-python's ``{name}``, which hrr's {backend} backend does not offer: "
                            "calling it raises UncataloguedCall.")
    uncatalogued.__wrapped__ = real_fn  # inspect.signature: hip-python's
    setattr(uncatalogued, UNCATALOGUED_MARK, (module, name, backend))
    return uncatalogued


def is_function(value: Any) -> bool:
    return callable(value) and not isinstance(value, (type, types.ModuleType))


def is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _unknown_name(full_name: str, real: Any) -> Any:
    """The module ``__getattr__`` (PEP 562), asked only for names the module lacks, which
    hip-python's module lacks too (every name it has is on the module): the plain
    AttributeError, saying so, with the nearest HIP name for a misspelt one."""
    def message(name: str) -> str:
        text = f"module {full_name!r} has no attribute {name!r}"
        if not is_dunder(name):
            if real is None:
                text += " (hip-python is not installed here, so hrr offers only what it implements)"
            else:
                text += f": hip-python's {real.__name__} has no such name either"
                if name.startswith("hip"):   # a misspelt HIP name: say which one exists
                    import difflib   # start-up cost: only for a misspelt name
                    close = difflib.get_close_matches(name, [n for n in dir(real) if n.startswith("hip")], n=1)
                    text += f" (did you mean {close[0]!r}?)" if close else ""
        return text
    return types.FunctionType(_GETATTR_CODE, {"__builtins__": builtins, "message": message}, "__getattr__")


def _has_symbol(mod: types.ModuleType) -> Any:
    def has_symbol(name: Any) -> bool:
        """Whether this backend offers the HIP function ``name`` (str or bytes), as
        hip-python's ``has_symbol`` tells whether the HIP runtime exports it."""
        key = name.decode() if isinstance(name, (bytes, bytearray)) else str(name)
        fn = mod.__dict__.get(key)
        return key.startswith("hip") and is_function(fn) and not is_uncatalogued(fn)
    return has_symbol


def mirrored_names(real: Any, leaf: str, backend: str, offered: Any = ()) -> dict[str, Any]:
    """Every name of hip-python's module ``real`` but its module dunders: its own objects
    (types, structs, enums and their private ``_X__Base`` bases, constants), and for each
    function not in ``offered`` a stand-in that raises UncataloguedCall when called."""
    out: dict[str, Any] = {}
    for key in dir(real):
        if is_dunder(key) or key in offered:
            continue
        value = getattr(real, key)
        out[key] = uncatalogued_function(leaf, key, backend, value) if is_function(value) else value
    return out


def surface_module(name: str, doc: str, functions: dict[str, Any], backend: str | None = None,
                   library: LibraryTypes | None = None) -> types.ModuleType:
    """A module with hip-python's surface: ``functions``, and every other name hip-python's
    module has, as hip-python's own object (its types, structs, handle classes, enums and
    constants) or, for a function, a stand-in raising UncataloguedCall naming ``backend``
    (default: the package above ``name``) when called. hrr's look-alikes and constants fill
    the names hip-python lacks (all of them where it is absent), with the members of the
    enums hrr uses at module level. Backends build their ``hip`` and ``hiprtc`` with it, and
    each math library's module (``library``: its types) with only that library's names."""
    mod = types.ModuleType(name, doc)
    leaf = name.rsplit(".", 1)[-1]
    backend = backend or (name.split(".")[-2] if name.count(".") else name)
    if library is not None:
        return _library_module(mod, leaf, backend, library, functions)
    real = None if _real is None else (_real[1] if leaf == "hiprtc" else _real[0])
    names = mod.__dict__
    names["__getattr__"] = _unknown_name(name, real)
    if real is not None:
        # hip-python's classes, never hrr's look-alikes, under hip-python's names: a Cython
        # module that cimports hip-python (its CUDA interop layer) imports each class it
        # derives from (ihipStream_t, hipDeviceProp_t...) by name from this module, and
        # refuses any class but hip-python's own (its size and vtable are checked).
        names.update(mirrored_names(real, leaf, backend, functions))
    for enum_type in ENUM_TYPES.values():
        if enum_type.__name__ in LIBRARY_ENUMS:
            continue
        names.setdefault(enum_type.__name__, enum_type)
        for member in enum_type:
            names.setdefault(member.name, member)
    for key, value in CONSTANTS.items():
        names.setdefault(key, value)
    # hrr offers hiprtc's classes on hip too, and hip's on hiprtc: hip-python's where it has them
    other = None if _real is None else (_real[0] if leaf == "hiprtc" else _real[1])
    for key, value in (*((c.__name__, c) for c in (*VALUE_TYPES, *GRAPH_STRUCTS, *POOL_STRUCTS,
                                                     *HANDLE_TYPES.values())), *TYPE_ALIASES.items()):
        names.setdefault(key, getattr(other, key, value))
    names.update(functions)
    names["SUPPORTED_APIS"] = tuple(functions)
    if real is not None and hasattr(real, "has_symbol"):
        names["has_symbol"] = _has_symbol(mod)
    if real is not None and hasattr(real, "__all__"):   # ``from hip.hip import *`` takes hip-python's names
        names["__all__"] = list(real.__all__)
    return mod


def _library_module(mod: types.ModuleType, leaf: str, backend: str, library: LibraryTypes,
                    functions: dict[str, Any]) -> types.ModuleType:
    """A math library's module: ``functions``, hip-python's other names of it (stand-ins for
    its functions the backend does not offer), and the library's enums and their members."""
    names, real = mod.__dict__, library.real
    names["__getattr__"] = _unknown_name(mod.__name__, real)
    if real is not None:
        names.update(mirrored_names(real, leaf, backend, functions))
    for enum_type in library.enums:
        names.setdefault(enum_type.__name__, enum_type)
        for member in enum_type:
            names.setdefault(member.name, member)
    for constant, value in {**library.aliases, **library.constants}.items():
        names.setdefault(constant, value)
    names.update(functions)
    names["SUPPORTED_APIS"] = tuple(functions)
    if real is not None and hasattr(real, "__all__"):
        names["__all__"] = list(real.__all__)
    return mod
