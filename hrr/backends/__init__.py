"""Backends: each offers ``hip`` and ``hiprtc`` module objects with hip-python's surface.

A backend module exposes ``NAME``, ``hip``, ``hiprtc`` and
``kernel_layout(function) -> KernelLayout`` (the parameter layout of a function handle
that its ``hipModuleGetFunction`` returned), which capture needs to normalise launches.
"""
from __future__ import annotations

import importlib
from types import ModuleType

from hrr.errors import BackendError

BACKEND_MODULES = {
    "sim": "hrr.backends.sim",
    "cuda": "hrr.backends.cuda",
    "hip": "hrr.backends.hip_python",
}
DEFAULT_BACKEND = "sim"


def backend_name_from_env() -> str:
    """The backend that ``HRR_BACKEND`` names (``sim`` when unset), read once per
    process with every other variable (``hrr.config``)."""
    from hrr.config import config
    return config().backend or DEFAULT_BACKEND


def load_backend(name: str | None = None) -> ModuleType:
    """Import the backend called ``name`` (default: ``HRR_BACKEND`` or ``sim``)."""
    name = name or backend_name_from_env()
    if name not in BACKEND_MODULES:
        raise BackendError(f"unknown backend {name!r}",
                           hint=f"choose one of: {', '.join(sorted(BACKEND_MODULES))}")
    try:
        return importlib.import_module(BACKEND_MODULES[name])
    except BackendError:
        raise
    except ImportError as exc:
        raise BackendError(f"backend {name!r} cannot be imported: {exc}",
                           hint="install its extra, e.g. pip install 'hrr[cuda]'") from exc
