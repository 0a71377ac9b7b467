"""The sim's math libraries: one module a family (``hrr.hiptypes.mathlibs.LIBRARIES``), each
registering its bodies (``Bodies(family)``), from which ``library(name)`` builds hip-python's
module of that name, once. A library call runs under the device lock like a HIP call; its
work is an ``Op`` on the stream its handle is bound to (``device.submit``), so it is ordered
with kernels and copies and captured into a graph like them. ``device.py``'s ``libraries``
holds each kind's live handles (``handles.py``).
"""
from __future__ import annotations

import importlib
import threading
import types
from typing import Any, Callable

from hrr.backends import surface
from hrr.backends.mathlib import build_library, frame_namespace
from hrr.backends.sim import device as _device
from hrr.backends.sim.mathlibs.handles import lookup
from hrr.backends.sim.stream_calls import _stream
from hrr.hiptypes.mathlibs import LIBRARIES, TYPES

# The per-call protocol of a library call: the device lock, the status of a failure (no
# HIP last error is set: the libraries keep none), host waiters woken.
_SOURCE = """\
_sim = _current()
with _sim.lock:
    _sim.scheduler.api_threads.add(_ident())
    try:
        result = {call}
    except LibraryError as exc:
        result = (exc.status, *NONES)
    except HipError as exc:
        result = (_status_of(exc), *NONES)
    if _sim.scheduler.waiting_threads:
        _sim.scheduler.cond.notify_all()
    return result
"""

_built: dict[str, types.ModuleType] = {}
_build_lock = threading.Lock()


def _handle(kind: str) -> Callable[[Any], Any]:
    """A handle argument: a sim stream, or a live library handle of ``kind``."""
    return _stream if kind == "stream" else lambda obj: lookup(kind, obj)


def library(name: str) -> types.ModuleType | None:
    """hip-python's module ``name`` (``hipblas``, ...) on the sim, or None for no family of that name."""
    if name not in LIBRARIES:
        return None
    with _build_lock:
        module = _built.get(name)
        if module is None:
            family = importlib.import_module(f"hrr.backends.sim.mathlibs.{name}")
            frame = surface.Frame(_SOURCE, "", {"_current": _device.current, "_ident": threading.get_ident,
                                                **frame_namespace(TYPES[name])})
            module = _built[name] = build_library(name, "sim", family.body.bodies, frame, _handle)
    return module


__all__ = ["library"]
