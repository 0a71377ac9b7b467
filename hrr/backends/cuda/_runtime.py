"""Lazy access to NVIDIA's cuda-bindings and the driver library.

Importing ``hrr.backends.cuda`` never touches the driver. The first call that needs it
runs ``require_driver()``, which raises ``BackendError`` with a hint (never a raw
cuda-bindings traceback) when cuda-bindings or ``libcuda.so.1`` is missing.
"""
from __future__ import annotations

import ctypes
import os
import threading
from typing import Any

from hrr import hiptypes as ht
from hrr.errors import BackendError

NO_DRIVER_HINT = ("the cuda backend runs on an NVIDIA GPU with its driver (libcuda.so.1); "
                  "use --backend sim (or HRR_BACKEND=sim) on this machine")
NO_BINDINGS_HINT = "install the cuda extra: pip install 'hrr[cuda]'"


class _State:
    ready = False
    drv: Any = None
    rt: Any = None
    libcuda: Any = None
    lock = threading.Lock()
    # bumped by hipDeviceReset: every thread looks its current context up again
    generation = 0
    pid = 0            # the process that loaded the driver
    forked = False     # a fork()ed child of a process that had loaded it: no device here


STATE = _State()
_tls = threading.local()


INTEROP_HINT = ("hip-python's interop layer (hip-python-interop) and NVIDIA's cuda-bindings both install "
                 "cuda.bindings and cannot share one environment: record a cuda-python program on the sim "
                 "(--backend sim), and replay its archive on cuda from an environment with hrr[cuda] and "
                 "without the interop (replay needs neither the program nor its packages)")


def _nvidia(module: Any) -> Any:
    """``module`` when it is NVIDIA's; BackendError when ``cuda.bindings`` is hip-python's
    interop layer (its modules set ``HIP_PYTHON``; their CUDA calls are HIP calls, which
    under hrr are this backend's own: calling them would never reach a GPU)."""
    if getattr(module, "HIP_PYTHON", False):
        raise BackendError(f"{module.__name__} is hip-python's interop layer, not NVIDIA's cuda-bindings",
                           hint=INTEROP_HINT)
    return module


def bindings() -> tuple[Any, Any]:
    """``(driver, runtime)`` from cuda-bindings, or BackendError when not installed."""
    try:
        from cuda.bindings import driver, runtime
    except Exception as exc:  # noqa: BLE001 - any import failure: the extra is missing
        raise BackendError(f"cuda-bindings cannot be imported ({exc.__class__.__name__}: {exc})",
                           hint=NO_BINDINGS_HINT) from None
    return _nvidia(driver), _nvidia(runtime)


def nvrtc_module() -> Any:
    try:
        from cuda.bindings import nvrtc
    except Exception as exc:  # noqa: BLE001
        raise BackendError(f"cuda-bindings cannot be imported ({exc.__class__.__name__}: {exc})",
                           hint=NO_BINDINGS_HINT) from None
    return _nvidia(nvrtc)


def driver_present() -> bool:
    """True when ``libcuda.so.1`` can be loaded (does not raise)."""
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


class DriverUnavailable(BackendError):
    """No driver or no cuda-bindings here; ``hip_error`` names the HIP error a real runtime
    returns from its calls in that case (the app sees that, never this exception)."""

    def __init__(self, what: str, *, hint: str | None = None, hip_error: str = "hipErrorNoDevice") -> None:
        super().__init__(what, hint=hint)
        self.hip_error = hip_error


FORK_CHILD_HINT = ("CUDA does not survive fork(): a child of a process that had used the GPU gets "
                   "hipErrorNotInitialized from every call; start GPU workers with "
                   "multiprocessing's 'spawn' method, or before the parent's first HIP call")


def _after_fork_in_child() -> None:
    """A fork()ed child of a process that had loaded the driver cannot use its context:
    as NVIDIA's runtime does there, every call now returns hipErrorNotInitialized (the
    frame's driver load fails) without touching the driver."""
    STATE.lock = threading.Lock()   # another thread of the parent's may have held it
    if STATE.ready or STATE.forked:
        STATE.ready, STATE.forked = False, True


os.register_at_fork(after_in_child=_after_fork_in_child)


def lost_in_fork_child() -> bool:
    """Whether this process is a fork()ed child of one that had loaded the driver."""
    return STATE.forked or (STATE.ready and STATE.pid != os.getpid())


def require_driver() -> None:
    """Load cuda-bindings and the driver once; DriverUnavailable when either is missing,
    or hipErrorNotInitialized's DriverUnavailable in a fork()ed child of a process that
    had loaded them."""
    if STATE.ready:
        return
    with STATE.lock:
        if STATE.ready:
            return
        if STATE.forked:
            raise DriverUnavailable("the GPU was initialised by the parent process before fork()",
                                    hint=FORK_CHILD_HINT, hip_error="hipErrorNotInitialized")
        try:
            drv, rt = bindings()
        except BackendError as exc:   # the cuda extra is missing: the runtime has no driver layer
            raise DriverUnavailable(exc.what, hint=exc.hint, hip_error="hipErrorInsufficientDriver") from None
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError:
            raise DriverUnavailable("no NVIDIA driver found", hint=NO_DRIVER_HINT) from None
        lib.cuLaunchHostFunc.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        lib.cuLaunchHostFunc.restype = ctypes.c_int
        try:
            drv.cuInit(0)
        except RuntimeError as exc:  # cuda.pathfinder's DynamicLibNotFoundError
            raise DriverUnavailable("no NVIDIA driver found", hint=f"{NO_DRIVER_HINT} [{exc}]",
                                    hip_error="hipErrorInsufficientDriver") from None
        STATE.drv, STATE.rt, STATE.libcuda = drv, rt, lib
        STATE.pid = os.getpid()
        STATE.ready = True


def ensure_context() -> None:
    """Make the runtime's primary context current on this thread before a driver-API
    call. Uses only calls that are legal during stream capture (never cudaFree(0))."""
    if getattr(_tls, "ctx", None) == STATE.generation:
        return
    drv, rt = STATE.drv, STATE.rt
    if STATE.generation == 0:
        # After a device reset the context a thread still has current is destroyed
        # (709): from then on only a fresh retain of the primary context is trusted.
        err, ctx = drv.cuCtxGetCurrent()
        if int(err) == 0 and ctx is not None and int(ctx) != 0:
            _tls.ctx = STATE.generation
            return
    err, dev = rt.cudaGetDevice()
    if int(err) != 0:
        return
    err, cudev = drv.cuDeviceGet(dev)
    if int(err) != 0:
        return
    err, pctx = drv.cuDevicePrimaryCtxRetain(cudev)
    if int(err) != 0:
        return
    if int(drv.cuCtxSetCurrent(pctx)[0]) == 0:
        _tls.ctx = STATE.generation


def forget_context() -> None:
    """After hipSetDevice: look the current context up again on the next driver call."""
    _tls.ctx = None


def forget_all_contexts() -> None:
    """After hipDeviceReset: every thread looks its current context up again."""
    STATE.generation += 1


def gpu_unavailable_reason() -> str | None:
    """Why the cuda backend cannot run here (None when an NVIDIA GPU is usable).
    Never raises; used by the tests' skip logic and ``hrr`` diagnostics."""
    try:
        from cuda.bindings import runtime as rt
    except Exception as exc:  # noqa: BLE001
        return f"cuda-bindings not installed ({exc}): {NO_BINDINGS_HINT}"
    if getattr(rt, "HIP_PYTHON", False):
        return ("cuda.bindings is hip-python's interop layer here, not NVIDIA's cuda-bindings (the two "
                "cannot share an environment: record on the sim, replay on cuda from another one)")
    if not driver_present():
        return "no NVIDIA driver (libcuda.so.1) found"
    try:
        err, n = rt.cudaGetDeviceCount()
    except Exception as exc:  # noqa: BLE001
        return f"the NVIDIA driver cannot be used ({exc})"
    if int(err) != 0 or not n:
        return f"no NVIDIA GPU (cudaGetDeviceCount: {err!r})"
    return None


def driver() -> Any:
    """cuda-bindings' driver module, with this thread's context made current."""
    ensure_context()
    return STATE.drv


def handle_value(obj: Any) -> int:
    """A handle argument (hiptypes handle, int, None, c_void_p, cuda-bindings handle)."""
    try:
        return ht.as_handle_value(obj)
    except ht.PointerConversionError:
        return int(obj)
