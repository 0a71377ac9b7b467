"""``sim``: an embedded, deterministic simulated HIP device with hip-python's surface.

``from hrr.backends.sim import hip, hiprtc`` gives module objects that behave like
hip-python's ``hip`` and ``hiprtc``: same function names and signatures, same tuple
returns, same enums and constants. See DESIGN.md ("The sim device") for the execution model.
"""
from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Callable, Iterator

from hrr.backends import hiprtc_ext as _hiprtc_ext
from hrr import hiptypes as _ht
from hrr.backends import surface as _surface
from hrr.backends.sim import api as _api
from hrr.backends.sim import device as _device
from hrr.backends.sim import rtc as _rtc
from hrr.backends.sim import streams as _streams
from hrr.backends.sim.builtin_kernels import LIBRARY as BUILTIN_LIBRARY
from hrr.backends.sim.device import reset_device
from hrr.backends.sim.native.policy import archive_kernels
from hrr.backends.sim.kernels import KernelDef, KernelLibrary, LaunchContext
from hrr.backends.sim.libraries import register_library, unregister_library
from hrr.backends.sim.mathlibs import library

NAME = "sim"
PASSTHROUGH_UNCATALOGUED = False
HIP_PYTHON_ITSELF = False
#: The sim's device memory is host RAM: replay charges it to its host-memory budget.
DEVICE_MEMORY_IS_HOST_MEMORY = True
#: Replay launches through ``hip`` (no packed-kernargs path around the surface).
launch_kernargs: Callable[..., tuple] | None = None
hip = _api.hip  # built from the catalogue around the sim's bodies (hrr.backends.surface)
# The catalogued calls (the uncatalogued ones are on ``hip`` but never recorded).
SUPPORTED_APIS: tuple[str, ...] = tuple(n for n in hip.SUPPORTED_APIS if n not in _api.UNCATALOGUED)
UNCATALOGUED_APIS: tuple[str, ...] = tuple(_api.UNCATALOGUED)
SUPPORTED_RTC_APIS: tuple[str, ...] = _rtc.SUPPORTED_RTC_APIS
kernel_layout = _api.kernel_layout
last_error_detail = _api.last_error_detail
hiprtc = _hiprtc_ext.attach(_ht.surface_module(
    "hrr.backends.sim.hiprtc", "hrr sim backend: hip-python's hiprtc surface",
    {fn: getattr(_rtc, fn) for fn in SUPPORTED_RTC_APIS}))


def add_body(name: str, body: Callable) -> Callable:
    """Give catalogue row ``name`` (e.g. a test-only extension row) the sim body ``body``:
    ``hip`` gains the function built from the row, as every call's is. Returns it."""
    return _surface.add_body(hip, name, body)


def builtin_code_object() -> bytes:
    """The code object (bytes for hipModuleLoadData) of the built-in kernel library."""
    return BUILTIN_LIBRARY.code_object()


def runtime_unavailable_reason() -> str | None:
    """The sim runs wherever hrr does."""
    return None


@contextlib.contextmanager
def bounded_stalls(seconds: float) -> Iterator[None]:
    """While replay runs, a stuck wait ends after ``seconds`` (the scheduler reads
    ``STALL_TIMEOUT_S`` at every wait); the setting is restored after."""
    old = _streams.STALL_TIMEOUT_S
    _streams.STALL_TIMEOUT_S = min(old, seconds)
    try:
        yield
    finally:
        _streams.STALL_TIMEOUT_S = old


def device_manifest() -> dict[str, str] | None:
    """What a capture's manifest records of the device (``device``): the model's name as
    HRR_SIM_DEVICE takes it, HIP's name for it and its target id."""
    model = _device.current().model
    return {"model": model.key, "name": model.name, "arch": model.gcn_arch_name}


def lost_in_fork_child() -> bool:
    """False: a fork()ed child has its own copy of the sim device, which it can use."""
    return False


def device_for_replay(recorded: Any) -> list[str]:
    """A fresh device for replaying a process archive whose manifest's ``device`` is
    ``recorded``: the model it names, so the replay is the GPU the program saw, whatever
    HRR_SIM_DEVICE says. An archive that names none (from before the sim had models, or of
    another backend) replays on HRR_SIM_DEVICE's model, running code objects built for any
    AMD target as the sim then did. Returns the replay summary's notes (none when the device
    is the recorded one)."""
    from hrr.backends import devicemodels
    from hrr.config import config

    asked = devicemodels.selected()   # UsageError when HRR_SIM_DEVICE names no model
    name = recorded.get("model") if isinstance(recorded, dict) else None
    if not isinstance(name, str):
        reset_device(asked, check_targets=False)
        return []
    model = devicemodels.MODELS.get(name)
    if model is None:
        reset_device(asked, check_targets=False)
        return [f"Device: the archive's device model {name[:40]!r} is not one this hrr knows "
                f"({', '.join(devicemodels.names())}); replayed on {asked.describe()}"]
    reset_device(model)
    if config().sim_device is not None and asked is not model:
        return [f"Device: {model.describe()}, as recorded ({devicemodels.ENV}={asked.key} is for "
                f"programs hrr runs or captures: replay is the device the program saw)"]
    return []


__all__ = ["NAME", "hip", "hiprtc", "library", "add_body", "builtin_code_object", "kernel_layout", "reset_device",
           "SUPPORTED_APIS", "SUPPORTED_RTC_APIS", "last_error_detail", "KernelDef",
           "KernelLibrary", "LaunchContext", "register_library", "unregister_library",
           "BUILTIN_LIBRARY", "archive_kernels", "device_manifest", "device_for_replay", "lost_in_fork_child",
           "PASSTHROUGH_UNCATALOGUED", "HIP_PYTHON_ITSELF", "DEVICE_MEMORY_IS_HOST_MEMORY", "launch_kernargs",
           "bounded_stalls", "runtime_unavailable_reason"]


if TYPE_CHECKING:   # mypy holds this module to the backend contract
    from hrr.backends import sim as _this_backend
    from hrr.backends.contract import Backend

    _CONTRACT: Backend = _this_backend
