"""The ``hip`` backend: hip-python's own ``hip`` and ``hiprtc`` modules, for AMD GPUs.

``hiprtc`` is hip-python's module itself. ``hip`` is a thin module over hip-python's:
every function is hip-python's own object, except that the module calls
(``hipModuleLoad*``, ``hipModuleGetFunction``, ``hipModuleUnload``, ``hipDeviceReset``)
call hip-python's and then note the kernel argument layouts their code object gives
(``modules.py``), which ``kernel_layout`` answers. Capture wraps this module as it wraps
every backend's; a function hrr does not catalogue passes through and is recorded as an
unreplayable call (``PASSTHROUGH_UNCATALOGUED``).

Importing needs hip-python only; hip-python opens ``libamdhip64.so`` at the first call
(``runtime_unavailable_reason`` says before then whether it can).
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import types
from typing import TYPE_CHECKING, Any, Callable

from hrr.backends.hip.modules import Layouts, file_bytes
from hrr.hiptypes import HIP_PYTHON_MAJOR, real_modules
from hrr.hiptypes.kernargs import KernelLayout
from hrr.hiptypes.mathlibs import LIBRARIES, real_library

if not real_modules():
    raise ImportError("the hip backend needs hip-python (pip install hip-python)")

NAME = "hip"
#: A call hip-python has and hrr's catalogue does not: passed through, recorded as unreplayable.
PASSTHROUGH_UNCATALOGUED = True
#: ``hip`` is hip-python's own release (7.x or 10.x), not hrr's surface to be adapted to it.
HIP_PYTHON_ITSELF = True
RUNTIME_LIBRARY = "libamdhip64.so"
DEVICE_MEMORY_IS_HOST_MEMORY = False   # a GPU's memory is its own
#: Replay launches through ``hip`` (no packed-kernargs path around hip-python).
launch_kernargs: Callable[..., tuple] | None = None

_real_hip, hiprtc = real_modules()
_layouts = Layouts()


def _arg(args: tuple, kwargs: dict, index: int, name: str) -> Any:
    return args[index] if len(args) > index else kwargs.get(name)


def _ok(result: Any) -> bool:
    return isinstance(result, tuple) and len(result) > 1 and int(result[0]) == 0


def _noting(real: Callable, note: Callable[[tuple, dict, Any], None]) -> Callable:
    """hip-python's ``real``, then ``note(args, kwargs, result)``; the signature stays real's."""
    @functools.wraps(real)
    def call(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        try:
            note(args, kwargs, result)
        except Exception:  # noqa: BLE001 - bookkeeping never fails the program's call
            pass
        return result
    return call


def _loaded_data(args: tuple, kwargs: dict, result: Any) -> None:
    if _ok(result):
        _layouts.loaded(result[1], _arg(args, kwargs, 0, "image"))


def _loaded_file(args: tuple, kwargs: dict, result: Any) -> None:
    if _ok(result):
        _layouts.loaded(result[1], file_bytes(_arg(args, kwargs, 0, "fname")))


def _got_function(args: tuple, kwargs: dict, result: Any) -> None:
    if _ok(result):
        _layouts.got_function(_arg(args, kwargs, 0, "module"), _arg(args, kwargs, 1, "kname"), result[1])


def _unloaded(args: tuple, kwargs: dict, result: Any) -> None:
    if isinstance(result, tuple) and int(result[0]) == 0:
        _layouts.unloaded(_arg(args, kwargs, 0, "module"))


def _reset(args: tuple, kwargs: dict, result: Any) -> None:
    if isinstance(result, tuple) and int(result[0]) == 0:
        _layouts.clear()


_NOTES = {"hipModuleLoadData": _loaded_data, "hipModuleLoadDataEx": _loaded_data,
          "hipModuleLoad": _loaded_file, "hipModuleGetFunction": _got_function,
          "hipModuleUnload": _unloaded, "hipDeviceReset": _reset}


def _build() -> types.ModuleType:
    mod = types.ModuleType(_real_hip.__name__, _real_hip.__doc__)
    mod.__dict__.update({k: v for k, v in vars(_real_hip).items() if k not in ("__name__", "__doc__")})
    for name, note in _NOTES.items():
        real = getattr(_real_hip, name, None)
        if real is not None:
            setattr(mod, name, _noting(real, note))
    return mod


hip = _build()


def library(name: str) -> types.ModuleType | None:
    """hip-python's own module ``name`` (``hipblas``, ...), as it is: capture wraps it as it
    wraps ``hip``, a call hrr does not catalogue passing through unreplayable."""
    return real_library(name) if name in LIBRARIES else None


def kernel_layout(function: Any) -> KernelLayout:
    """The user-argument layout (hidden arguments left out) of a function handle that this
    backend's ``hipModuleGetFunction`` returned, from its module's code object."""
    return _layouts.layout(function)


def last_error_detail() -> str:
    """hip-python says nothing beyond the error code."""
    return ""


def device_manifest() -> dict[str, str] | None:
    """The manifest records no device model for a GPU."""
    return None


def lost_in_fork_child() -> bool:
    """False: whether a fork()ed child can use the device is the HIP runtime's business,
    which hip-python does not tell; the child's calls are recorded as they return."""
    return False


def reset_device() -> None:
    """Nothing: the GPU is left as hip-python has it (tests and replay do not reset it)."""


def device_for_replay(recorded: Any) -> list[str]:
    """Nothing to prepare: replay is on the GPU here, as hip-python has it; no notes."""
    reset_device()
    return []


def archive_kernels(trusted: bool, budget: Any = None,
                    seconds_left: Any = None) -> contextlib.AbstractContextManager[Any]:
    """An archive's code objects run on the GPU like any GPU program's: nothing to arrange."""
    return contextlib.nullcontext()


def bounded_stalls(seconds: float) -> contextlib.AbstractContextManager[Any]:
    """A GPU wait is the runtime's: replay's watchdog, not the backend, bounds it."""
    return contextlib.nullcontext()


def runtime_library_path() -> str:
    """The HIP runtime library hip-python opens at its first call (found as hip-python
    finds it: ``ROCM_PATH``/``ROCM_HOME``, /opt/rocm, rocm_sdk, then the loader's path)."""
    if HIP_PYTHON_MAJOR == 7:
        return RUNTIME_LIBRARY
    try:
        from rocm.bindings.util.paths import get_library_path
        return os.fsdecode(get_library_path("amdhip64"))
    except Exception:  # noqa: BLE001 - hip-python's lookup failing: the loader's own search
        return RUNTIME_LIBRARY


def runtime_unavailable_reason() -> str | None:
    """Why hip-python cannot open a HIP runtime here, in one line (None when it can)."""
    path = runtime_library_path()
    try:
        ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
    except OSError as exc:
        detail = " ".join(str(exc).split())
        return f"no HIP runtime: {RUNTIME_LIBRARY} cannot be loaded ({detail}); install ROCm or set ROCM_PATH"
    return None


__all__ = ["NAME", "hip", "hiprtc", "library", "kernel_layout", "runtime_library_path", "runtime_unavailable_reason",
           "PASSTHROUGH_UNCATALOGUED", "HIP_PYTHON_ITSELF", "RUNTIME_LIBRARY", "DEVICE_MEMORY_IS_HOST_MEMORY",
           "launch_kernargs", "last_error_detail", "device_manifest", "reset_device", "device_for_replay",
           "lost_in_fork_child",
           "archive_kernels", "bounded_stalls"]


if TYPE_CHECKING:   # mypy holds this module to the backend contract
    from hrr.backends import hip as _this_backend
    from hrr.backends.contract import Backend

    _CONTRACT: Backend = _this_backend
