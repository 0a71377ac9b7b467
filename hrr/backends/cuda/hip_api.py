"""The cuda backend's ``hip`` module: ``hrr.backends.surface`` builds it from the catalogue
around the bodies that each family module registers (``device_calls``, ``memory_calls``,
``stream_calls``, ``event_calls``, ``module_calls``, ``graph_calls``, ``pool_calls``), over
NVIDIA's cuda-bindings (runtime where simpler, driver for modules, launches, pinned memory
and stream memory operations).

Results carry CUDA's errors mapped through ``_errors.CUDA_TO_HIP_NAME``. Device
allocations come back as ``DeviceArray``, pinned host memory as ``Pointer``, handles as
hiptypes handle classes whose ``int()`` is the CUDA handle. A call that is one driver
call is a table entry (``CALLS``), not a function; what the backend keeps beside the
driver lives in ``memory`` (pinned allocations) and ``modules`` (layouts, launches).
"""
from __future__ import annotations

import types
from typing import Callable

from hrr import hiptypes as ht
from hrr.backends import surface
from hrr.backends.bodies import gather, tables
from hrr.backends.cuda import (
    _runtime,
    device_calls,
    event_calls,
    graph_calls,
    memory_calls,
    module_calls,
    pool_calls,
    stream_calls,
)
from hrr.backends.cuda._runtime import STATE as S
from hrr.backends.cuda._runtime import handle_value as _h
from hrr.backends.cuda.device_calls import _tls
from hrr.backends.surface import HipError

E = ht.hipError_t

# The per-call protocol: load the driver on first use; without one, return the HIP error
# a real runtime returns there (hipErrorNoDevice, hipErrorInsufficientDriver) with None
# outputs, never raise into the app. A failed result is the thread's last error.
FRAME = surface.Frame("""\
if not S.ready:
    try:
        _require_driver()
    except _DriverUnavailable as exc:
        err = getattr(E, exc.hip_error)
        _tls.last = err
        return (err, *NONES)
try:
    result = {call}
except HipError as exc:
    result = (exc.code, *NONES)
{record}
return result
""", """\
if result[0]:
    _tls.last = result[0]
""", {"S": S, "_require_driver": _runtime.require_driver, "_DriverUnavailable": _runtime.DriverUnavailable,
      "E": E, "_tls": _tls, "HipError": HipError})


FAMILIES = (device_calls.body, memory_calls.body, stream_calls.body, event_calls.body, module_calls.body,
            graph_calls.body, pool_calls.body)
BODIES: dict[str, Callable] = gather(FAMILIES)
# The calls that are a table entry: one CUDA call (onecall.one_call), or one call into the models.
CALLS: dict[str, Callable] = tables(FAMILIES)


def build_module() -> types.ModuleType:
    """hip-python's ``hip`` over cuda-bindings (importing needs no driver)."""
    return surface.build("hrr.backends.cuda.hip", "hip-python's hip API over NVIDIA cuda-bindings (hrr's cuda backend)",
                         BODIES, FRAME, lambda kind: _h)
