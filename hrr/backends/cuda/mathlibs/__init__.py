"""The cuda backend's math libraries: one module a family (``hrr.hiptypes.mathlibs.LIBRARIES``)
over NVIDIA's own library (cuBLAS for hipBLAS), loaded with ctypes through cuda.pathfinder
at the family's first call; ``library(name)`` builds hip-python's module of that name, once.
Work goes to the stream the handle is bound to, as the NVIDIA library does it; a library
that is not installed is a ``BackendError`` naming the wheel to install.
"""
from __future__ import annotations

import ctypes
import importlib
import threading
import types
from typing import Any, Callable

from hrr.backends import surface
from hrr.backends.cuda import _runtime
from hrr.backends.cuda._runtime import STATE as S
from hrr.backends.cuda._runtime import handle_value
from hrr.backends.mathlib import build_library, frame_namespace
from hrr.errors import BackendError
from hrr.hiptypes.mathlibs import LIBRARIES, TYPES

# The per-call protocol: the driver loaded first (without one, the library's "not
# initialised"), a failure's status returned, never raised into the app.
_SOURCE = """\
if not S.ready:
    try:
        _require_driver()
    except _DriverUnavailable:
        return (_NOT_READY, *NONES)
try:
    result = {call}
except LibraryError as exc:
    result = (exc.status, *NONES)
except HipError as exc:
    result = (_status_of(exc), *NONES)
return result
"""

_built: dict[str, types.ModuleType] = {}
_loaded: dict[str, ctypes.CDLL] = {}
_lock = threading.Lock()


def load(libname: str, wheel: str) -> ctypes.CDLL:
    """NVIDIA's library ``libname`` (``cublas``), loaded once; BackendError naming ``wheel``
    (the pip package that ships it) when it cannot be."""
    with _lock:
        lib = _loaded.get(libname)
        if lib is None:
            try:
                from cuda.pathfinder import load_nvidia_dynamic_lib
                lib = ctypes.CDLL(load_nvidia_dynamic_lib(libname).abs_path)
            except Exception as exc:  # noqa: BLE001 - not installed, or no cuda.pathfinder
                raise BackendError(
                    f"the cuda backend cannot load NVIDIA's {libname} ({' '.join(str(exc).split())[:300]})",
                    hint=f"pip install {wheel} (or pip install 'hrr[cuda]')") from None
            _loaded[libname] = lib
    return lib


def library(name: str) -> types.ModuleType | None:
    """hip-python's module ``name`` (``hipblas``, ...) over NVIDIA's library, or None for no
    family of that name. Building it loads nothing: the first call does."""
    if name not in LIBRARIES:
        return None
    with _lock:
        module = _built.get(name)
        if module is None:
            family = importlib.import_module(f"hrr.backends.cuda.mathlibs.{name}")
            library_types = TYPES[name]
            frame = surface.Frame(_SOURCE, "", {
                "S": S, "_require_driver": _runtime.require_driver, "_DriverUnavailable": _runtime.DriverUnavailable,
                "_NOT_READY": library_types.status_of("hipErrorNotInitialized"), **frame_namespace(library_types)})
            module = _built[name] = build_library(name, "cuda", family.body.bodies, frame, _handle(family))
    return module


def _handle(family: Any) -> Callable[[str], Callable[[Any], Any]]:
    """A handle argument: a CUDA stream's value, or a live handle the family keeps."""
    return lambda kind: handle_value if kind == "stream" else family.handle_lookup(kind)


__all__ = ["library", "load"]
