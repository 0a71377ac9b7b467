"""Backends: each offers ``hip`` and ``hiprtc`` module objects with hip-python's surface.

A backend module implements ``hrr.backends.contract.Backend``: ``NAME``, ``hip``,
``hiprtc``, ``kernel_layout(function) -> KernelLayout`` (the parameter layout of a function
handle that its ``hipModuleGetFunction`` returned) and the rest of what capture and replay
ask of it.
"""
from __future__ import annotations

import importlib
from typing import cast

from hrr.backends.contract import Backend
from hrr.errors import BackendError

BACKEND_MODULES = {
    "sim": "hrr.backends.sim",
    "cuda": "hrr.backends.cuda",
    "hip": "hrr.backends.hip",
}
DEFAULT_BACKEND = "sim"


def backend_name_from_env() -> str:
    """The backend that ``HRR_BACKEND`` names (``sim`` when unset), read once per
    process with every other variable (``hrr.config``)."""
    from hrr.config import config
    return config().backend or DEFAULT_BACKEND


def load_backend(name: str | None = None) -> Backend:
    """Import the backend called ``name`` (default: ``HRR_BACKEND`` or ``sim``)."""
    name = name or backend_name_from_env()
    if name not in BACKEND_MODULES:
        raise BackendError(f"unknown backend {name!r}",
                           hint=f"choose one of: {', '.join(sorted(BACKEND_MODULES))}")
    try:
        mod = importlib.import_module(BACKEND_MODULES[name])
    except BackendError:
        raise
    except ImportError as exc:
        hint = "pip install hip-python" if name == "hip" else "install its extra, e.g. pip install 'hrr[cuda]'"
        raise BackendError(f"backend {name!r} cannot be imported: {exc}", hint=hint) from exc
    # A backend whose calls would raise without its runtime (hip-python's dlopen) says so
    # now, e.g. when replay takes the backend from an archive's manifest.
    backend = cast(Backend, mod)   # every backend module implements the contract (tests/backends/test_contract.py)
    reason = backend.runtime_unavailable_reason()
    if reason is not None:
        raise BackendError(f"backend {name!r}: {reason}; backends that work here: "
                           f"{', '.join(available_backends()) or 'none'}")
    return backend


def unavailable_reason(name: str) -> str | None:
    """Why backend ``name`` cannot run here, in one line (None when it can). Never raises,
    never starts a device: asked before the program starts."""
    if name not in BACKEND_MODULES:
        return f"unknown backend {name!r}"
    if name == "sim":
        return None
    try:
        importlib.import_module(BACKEND_MODULES[name])
    except ImportError as exc:
        return str(exc) if name == "hip" else f"backend {name!r} is not available in this build"
    except Exception as exc:  # noqa: BLE001 -- a reason to print, whatever went wrong
        return f"backend {name!r} cannot be loaded ({type(exc).__name__}: {exc})"
    if name == "cuda":
        from hrr.backends.cuda._runtime import gpu_unavailable_reason
        return gpu_unavailable_reason()
    if name == "hip":
        from hrr.backends.hip import runtime_unavailable_reason
        return runtime_unavailable_reason()
    return None


def available_backends() -> list[str]:
    """The backends that can run here."""
    return [name for name in sorted(BACKEND_MODULES) if unavailable_reason(name) is None]
