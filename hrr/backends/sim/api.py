"""The sim's ``hip`` module: ``hrr.backends.surface`` builds it (signatures, argument
conversion, result tuples) from the catalogue around the bodies that each family module
registers (``device_calls``, ``memory_calls``, ``stream_calls``, ``event_calls``,
``module_calls``, ``graph_calls``, ``pool_calls``), inside the sim's frame.

A body gets its row's arguments converted (pointers as addresses, handles as the live
sim objects, enums as members), runs under the device lock and returns the result tuple
(None for a success without outputs) or raises ``HipError``; the frame records a failure
as the calling thread's last error and wakes host waiters. A body is what the device
does, as a thin call into the sim's model: capture rules, handle tables and submission
on ``device.Device``, copies and allocations on ``memory.Memory``, code objects in
``kernels``, stream memory operations in ``streams``.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from hrr.backends import surface
from hrr.backends.bodies import gather, tables
from hrr.hiptypes import as_handle_value, hipError_t
from hrr.hiptypes.kernargs import KernelLayout, LaunchArgsError
from hrr.backends.sim import device as _device
from hrr.backends.sim import (
    device_calls,
    event_calls,
    graph_calls,
    memory_calls,
    module_calls,
    pool_calls,
    stream_calls,
)
from hrr.backends.sim.device import current as _dev
from hrr.backends.sim.stream_calls import _stream
from hrr.backends.surface import HipError

SUCCESS = hipError_t.hipSuccess

# The per-call protocol: the device lock, this thread noted as an API caller, a failure
# recorded as the thread's last error (with its detail), host waiters woken. Its locals
# must not be hip-python parameter names (hipDevicePrimaryCtx* take one called ``dev``).
FRAME = surface.Frame("""\
_sim = _current()
with _sim.lock:
    _sim.scheduler.api_threads.add(_ident())
    try:
        result = {call}
    except HipError as exc:
        result, detail = (exc.code, *NONES), exc.detail
    except LaunchArgsError as exc:
        result, detail = (_INVALID, *NONES), str(exc)
    else:
        detail = ""
    {record}
    if _sim.scheduler.waiting_threads:
        _sim.scheduler.cond.notify_all()
    return result
""", """\
if result[0] != _SUCCESS:
    _sim.set_last_error(result[0], detail)
""", {"_current": _device.current, "_ident": threading.get_ident, "HipError": HipError,
      "LaunchArgsError": LaunchArgsError, "_SUCCESS": SUCCESS, "_INVALID": hipError_t.hipErrorInvalidValue})


# HIP answers an unknown (or destroyed, or NULL) handle of these kinds with another error
_LOOKUP_ERRORS = {"mem_pool": "hipErrorInvalidValue"}


def handle_lookup(kind: str) -> Callable[[Any], Any]:
    """A handle argument of ``kind`` as the live sim object (hipErrorInvalidHandle if none)."""
    if kind == "stream":
        return _stream
    attr, what = kind + "s", kind.replace("_", " ")
    code = _LOOKUP_ERRORS.get(kind, "hipErrorInvalidHandle")

    def lookup(obj: Any) -> Any:
        dev = _dev()
        return dev.lookup(getattr(dev, attr), obj, what, code)
    return lookup


# On the sim's surface but not yet catalogue rows (name -> (body, outputs)): framed, with
# their arguments as passed, and recorded only once their row exists.
UNCATALOGUED: dict[str, tuple[Callable, int]] = {}

FAMILIES = (device_calls.body, memory_calls.body, stream_calls.body, event_calls.body, module_calls.body,
            graph_calls.body, pool_calls.body)
BODIES: dict[str, Callable] = gather(FAMILIES)
# The calls that are a constant, a deletion or another call's body with fixed arguments.
TABLE: dict[str, Callable] = tables(FAMILIES)
hip = surface.build("hrr.backends.sim.hip", "hrr sim backend: hip-python's hip surface", BODIES, FRAME,
                    handle_lookup, enum_errors={"hipMemcpyKind": "hipErrorInvalidMemcpyDirection"},
                    uncatalogued=UNCATALOGUED)


def kernel_layout(function: Any) -> KernelLayout:
    """The parameter layout of a function handle from hipModuleGetFunction (or its int)."""
    dev = _dev()
    with dev.lock:
        fn = dev.functions.get(as_handle_value(function))
    if fn is None:
        raise ValueError(f"{function!r} is not a live sim kernel function")
    return fn.kernel.layout


def last_error_detail() -> str:
    """The message behind this thread's last error (e.g. which stream deadlocked)."""
    return _dev().last_error()[1]


