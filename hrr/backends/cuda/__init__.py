"""The ``cuda`` backend: HIP semantics on NVIDIA GPUs through NVIDIA's cuda-bindings.

``hip`` and ``hiprtc`` are module objects with hip-python's surface (see hip_api.py and
hiprtc_api.py). Importing this package never needs a GPU or driver; the first call that
does raises ``hrr.errors.BackendError("no NVIDIA driver found", hint=...)``. NVRTC (and
so ``builtin_code_object()``) works without a GPU.
"""
from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Callable

from hrr.backends import hiprtc_ext as _hiprtc_ext
from hrr.backends import surface as _surface
from hrr.backends.cuda import hip_api as _hip_api
from hrr.backends.cuda import mathlibs as _mathlibs
from hrr.backends.cuda import hiprtc_api as _hiprtc_api
from hrr.backends.cuda._errors import CUDA_TO_HIP_NAME, to_hip, to_hiprtc
from hrr.backends.cuda._runtime import driver_present, gpu_unavailable_reason, lost_in_fork_child, require_driver
from hrr.backends.cuda.builtin import (BUILTIN_KERNELS, BUILTIN_LAYOUTS, builtin_code_object,
                                       builtin_source)
from hrr.backends.cuda._runtime import STATE as _STATE
from hrr.backends.cuda._runtime import handle_value as _handle_value
from hrr.backends.cuda.modules import kernel_layout
from hrr.backends.cuda.modules import launch_packed as _launch_packed
from hrr.backends.cuda.modules import prepare_packed as _prepare_packed
from hrr.backends.cuda._errors import hip_error as _hip_error
from hrr.hiptypes import ihipModuleSymbol_t as _Function
from hrr.hiptypes import ihipStream_t as _Stream
from hrr.hiptypes.kernargs import packed_extra as _packed_extra

NAME = "cuda"
PASSTHROUGH_UNCATALOGUED = False
HIP_PYTHON_ITSELF = False
DEVICE_MEMORY_IS_HOST_MEMORY = False   # a GPU's memory is its own
hip = _hip_api.build_module()
#: hip-python's math-library modules (``hipblas``, ...) over NVIDIA's libraries
library = _mathlibs.library
hiprtc = _hiprtc_ext.attach(_hiprtc_api.build_module())
SUPPORTED_APIS = hip.SUPPORTED_APIS  # every catalogue row that has a body
SUPPORTED_HIPRTC_APIS = _hiprtc_api.HIPRTC_APIS


def add_body(name: str, body: Callable) -> Callable:
    """Give catalogue row ``name`` (e.g. a test-only extension row) the cuda body ``body``:
    ``hip`` gains the function built from the row, as every call's is. Returns it."""
    return _surface.add_body(hip, name, body)


def launch_kernargs(function: Any, grid: tuple, block: tuple, shared: int, stream: Any, kernargs: bytes) -> tuple:
    """``hip.hipModuleLaunchKernel(function, *grid, *block, shared, stream, None, extra)``
    with ``kernargs`` as its packed arguments, without the hip surface in between (replay's
    launch runner): the same driver call, result and last error."""
    if _STATE.ready:
        fh = function._value if type(function) is _Function else _handle_value(function)
        sh = 0 if stream is None else stream._value if type(stream) is _Stream else _handle_value(stream)
        err = _launch_packed(fh, grid, block, shared, sh, kernargs)
        if err is not None:
            if err:
                _hip_api._tls.last = err
            return (err,)
    return hip.hipModuleLaunchKernel(function, *grid, *block, shared, stream, None, _packed_extra(kernargs))


launch_kernargs.stands_for = hip.hipModuleLaunchKernel   # type: ignore[attr-defined]


def _launch_failed(res: int) -> tuple:
    """A prepared launch's driver error, as ``launch_kernargs`` returns and keeps it."""
    err = _hip_error(res)
    _hip_api._tls.last = err
    return (err,)


def prepare_launch(function: Any, grid: tuple, block: tuple, shared: int, stream: Any, kernargs: bytes) -> Any:
    """``launch_kernargs(function, grid, block, shared, stream, kernargs)`` as a zero-argument
    callable made from C (the driver's launch with these arguments, no Python in between), or
    None where ``launch_kernargs`` would not launch it directly (then replay binds that instead)."""
    if not _STATE.ready:
        return None
    fh = function._value if type(function) is _Function else _handle_value(function)
    sh = 0 if stream is None else stream._value if type(stream) is _Stream else _handle_value(stream)
    return _prepare_packed(fh, grid, block, shared, sh, kernargs, _launch_failed)


launch_kernargs.prepare = prepare_launch   # type: ignore[attr-defined]


def last_error_detail() -> str:
    """CUDA says nothing beyond the error code."""
    return ""


def device_manifest() -> dict[str, str] | None:
    """The manifest records no device model for a GPU."""
    return None


def device_for_replay(recorded: Any) -> list[str]:
    """A fresh device before a process replays: ``reset_device`` (the GPU is the one here,
    whatever the manifest recorded); no notes."""
    reset_device()
    return []


def archive_kernels(trusted: bool, budget: Any = None,
                    seconds_left: Any = None) -> contextlib.AbstractContextManager[Any]:
    """An archive's code objects run on the GPU like any GPU program's: nothing to arrange."""
    return contextlib.nullcontext()


def bounded_stalls(seconds: float) -> contextlib.AbstractContextManager[Any]:
    """A GPU wait is the driver's: replay's watchdog, not the backend, bounds it."""
    return contextlib.nullcontext()


def runtime_unavailable_reason() -> str | None:
    """None: importing needs no GPU, and the first call that needs the driver says why it
    cannot run (``gpu_unavailable_reason`` answers before a program starts)."""
    return None


def reset_device() -> None:
    """``hipDeviceReset`` when the driver is already in use (tests leave the GPU as they
    found it); does nothing, and loads nothing, before the first driver call."""
    from hrr.backends.cuda._runtime import STATE
    if STATE.ready:
        hip.hipDeviceReset()
        hip.hipGetLastError()  # and this thread's last error (CUDA keeps it across a reset)

__all__ = ["NAME", "hip", "hiprtc", "library", "kernel_layout", "builtin_code_object", "builtin_source",
           "BUILTIN_KERNELS", "BUILTIN_LAYOUTS", "SUPPORTED_APIS", "SUPPORTED_HIPRTC_APIS",
           "CUDA_TO_HIP_NAME", "to_hip", "to_hiprtc", "driver_present", "require_driver", "gpu_unavailable_reason",
           "reset_device", "add_body", "launch_kernargs", "PASSTHROUGH_UNCATALOGUED", "HIP_PYTHON_ITSELF",
           "DEVICE_MEMORY_IS_HOST_MEMORY", "last_error_detail", "device_manifest", "device_for_replay",
           "archive_kernels", "bounded_stalls", "runtime_unavailable_reason", "lost_in_fork_child"]


if TYPE_CHECKING:   # mypy holds this module to the backend contract
    from hrr.backends import cuda as _this_backend
    from hrr.backends.contract import Backend

    _CONTRACT: Backend = _this_backend
