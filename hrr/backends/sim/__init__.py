"""``sim``: an embedded, deterministic simulated HIP device with hip-python's surface.

``from hrr.backends.sim import hip, hiprtc`` gives module objects that behave like
hip-python's ``hip`` and ``hiprtc``: same function names and signatures, same tuple
returns, same enums and constants. See DESIGN.md ("The sim device") for the execution model.
"""
from __future__ import annotations

import types

from hrr.backends import hiptypes as _ht
from hrr.backends.sim import api as _api
from hrr.backends.sim import rtc as _rtc
from hrr.backends.sim.builtin_kernels import LIBRARY as BUILTIN_LIBRARY
from hrr.backends.sim.device import reset_device
from hrr.backends.sim.kernels import (
    KernelDef,
    KernelLibrary,
    LaunchContext,
    register_library,
    unregister_library,
)

NAME = "sim"
SUPPORTED_APIS: tuple[str, ...] = _api.SUPPORTED_APIS
SUPPORTED_RTC_APIS: tuple[str, ...] = _rtc.SUPPORTED_RTC_APIS
kernel_layout = _api.kernel_layout
last_error_detail = _api.last_error_detail


def _module(name: str, functions: tuple[str, ...], source: types.ModuleType) -> types.ModuleType:
    return _ht.surface_module(name, f"hrr sim backend: hip-python's {name.rsplit('.', 1)[-1]} surface",
                              {fn: getattr(source, fn) for fn in functions})


hip = _module("hrr.backends.sim.hip", SUPPORTED_APIS + _api.UNCATALOGUED_APIS, _api)
hiprtc = _module("hrr.backends.sim.hiprtc", SUPPORTED_RTC_APIS, _rtc)


def builtin_code_object() -> bytes:
    """The code object (bytes for hipModuleLoadData) of the built-in kernel library."""
    return BUILTIN_LIBRARY.code_object()


__all__ = ["NAME", "hip", "hiprtc", "builtin_code_object", "kernel_layout", "reset_device",
           "SUPPORTED_APIS", "SUPPORTED_RTC_APIS", "last_error_detail", "KernelDef",
           "KernelLibrary", "LaunchContext", "register_library", "unregister_library",
           "BUILTIN_LIBRARY"]
