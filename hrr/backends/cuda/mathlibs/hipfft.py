"""hipFFT on the cuda backend: each call is cuFFT's (through ctypes), as hipFFT itself runs
on NVIDIA GPUs. hipFFT's types, directions and results have cuFFT's values; a cuFFT result
hipFFT lacks (15, a license error; 17 and above, missing dependencies) is
HIPFFT_INTERNAL_ERROR. A cufftHandle is a small int that may be 0, so the plan the app
sees is hrr's own number (``PLAN_BASE`` + n) for a live cuFFT plan: any other is
HIPFFT_INVALID_PLAN before cuFFT sees it.

cuFFT does not check buffers, and a replayed archive is untrusted: before an exec, each
buffer must hold the plan's extent (``hrr.backends.fftplans``) inside one device
allocation (cuMemGetAddressRange) or one pinned allocation this backend made, else the
exec is HIPFFT_INVALID_VALUE and cuFFT never runs it.
"""
from __future__ import annotations

import ctypes
import itertools
import threading
from typing import Any, Callable

import attrs

from hrr.backends import fftplans
from hrr.backends.bodies import Bodies
from hrr.backends.cuda import memory
from hrr.backends.cuda._runtime import driver
from hrr.backends.cuda.mathlibs import load
from hrr.backends.mathlib import LibraryError
from hrr.hiptypes import address_or_zero, as_handle_value
from hrr.hiptypes.mathlibs import LibraryHandle
from hrr.hiptypes.mathlibs.hipfft import hipfftResult_t

body = Bodies("hipfft")

_R = hipfftResult_t
_INT, _VP = ctypes.c_int, ctypes.c_void_p
_P_INT = ctypes.POINTER(ctypes.c_int)
PLAN_BASE = 0x0FF7_0000_0000  # far from any address, and never NULL
EXEC_SUFFIXES = ("C2C", "R2C", "C2R", "Z2Z", "D2Z", "Z2D")
_ARGTYPES: dict[str, list] = {
    "cufftPlan1d": [_P_INT, _INT, _INT, _INT],
    "cufftPlan2d": [_P_INT, _INT, _INT, _INT],
    "cufftPlan3d": [_P_INT, _INT, _INT, _INT, _INT],
    "cufftPlanMany": [_P_INT, _INT, _P_INT, _P_INT, _INT, _INT, _P_INT, _INT, _INT, _INT, _INT],
    "cufftSetStream": [_INT, _VP],
    "cufftDestroy": [_INT],
    **{f"cufftExec{s}": [_INT, _VP, _VP, _INT] if s in ("C2C", "Z2Z") else [_INT, _VP, _VP] for s in EXEC_SUFFIXES},
}


@attrs.frozen
class CufftPlan:
    """A live plan: the number the app holds, cuFFT's handle, and its layout (None when
    hrr's own check of the parameters refuses what cuFFT accepted: no extent is known)."""

    number: int
    handle: int
    layout: fftplans.FftPlan | None


_plans: dict[int, CufftPlan] = {}
_numbers = itertools.count(1)
_lock = threading.Lock()

_typed: list[ctypes.CDLL] = []  # libraries whose functions are typed


def cufft() -> ctypes.CDLL:
    """libcufft, loaded and typed at the first hipFFT call (BackendError naming nvidia-cufft)."""
    lib = load("cufft", "nvidia-cufft")
    if lib not in _typed:
        for name, argtypes in _ARGTYPES.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = argtypes, _INT
        _typed.append(lib)
    return lib


def result(code: int) -> Any:
    """A cufftResult as hipfftResult_t."""
    try:
        return _R(code)
    except ValueError:
        return _R.HIPFFT_INTERNAL_ERROR


def call(name: str, *args: Any) -> None:
    """cuFFT's ``name``; LibraryError with hipFFT's result when it fails."""
    code = int(getattr(cufft(), name)(*args))
    if code:
        raise LibraryError(result(code), f"{name}: cuFFT result {code}")


def handle_lookup(kind: str) -> Callable[[Any], CufftPlan]:
    """An ``fft_plan`` argument as its live plan."""
    def lookup(obj: Any) -> CufftPlan:
        try:
            value = as_handle_value(obj)
        except TypeError:
            value = 0
        plan = _plans.get(value)
        if plan is None:
            raise LibraryError(_R.HIPFFT_INVALID_PLAN, f"{obj!r} is not a live hipfftHandle")
        return plan
    return lookup



def _ints(obj: Any, rank: int) -> ctypes.Array | None:
    """``rank`` C ints from a list (replay), a buffer or an address (the app's); None: NULL."""
    if obj is None:
        return None
    if isinstance(obj, (list, tuple)):
        return (ctypes.c_int * rank)(*(ctypes.c_int(int(v)).value for v in obj[:rank]))
    addr = address_or_zero(obj)
    return (ctypes.c_int * rank).from_buffer_copy(ctypes.string_at(addr, 4 * rank)) if addr and rank > 0 else None


def _layout(rank: int, n: Any, inembed: Any, istride: int, idist: int, onembed: Any, ostride: int, odist: int,
            fft_type: Any, batch: int) -> fftplans.FftPlan | None:
    try:
        return fftplans.make_plan(rank, n, inembed, istride, idist, onembed, ostride, odist, int(fft_type), batch,
                                  max_elements=None)
    except fftplans.FftError:
        return None


def _plan(layout: fftplans.FftPlan | None, name: str, *args: Any) -> tuple:
    h = ctypes.c_int(0)
    call(name, ctypes.byref(h), *args)
    with _lock:
        number = PLAN_BASE + next(_numbers)
        _plans[number] = CufftPlan(number, h.value, layout)
    return (_R.HIPFFT_SUCCESS, LibraryHandle(number))


@body
def hipfftPlan1d(nx: int, type: Any, batch: int) -> tuple:
    return _plan(_layout(1, (nx,), None, 1, 0, None, 1, 0, type, batch),
                 "cufftPlan1d", _INT(nx), _INT(int(type)), _INT(batch))


@body
def hipfftPlan2d(nx: int, ny: int, type: Any) -> tuple:
    return _plan(_layout(2, (nx, ny), None, 1, 0, None, 1, 0, type, 1),
                 "cufftPlan2d", _INT(nx), _INT(ny), _INT(int(type)))


@body
def hipfftPlan3d(nx: int, ny: int, nz: int, type: Any) -> tuple:
    return _plan(_layout(3, (nx, ny, nz), None, 1, 0, None, 1, 0, type, 1),
                 "cufftPlan3d", _INT(nx), _INT(ny), _INT(nz), _INT(int(type)))


@body
def hipfftPlanMany(rank: int, n: Any, inembed: Any, istride: int, idist: int, onembed: Any, ostride: int,
                   odist: int, type: Any, batch: int) -> tuple:
    if rank not in (1, 2, 3):
        raise LibraryError(_R.HIPFFT_INVALID_VALUE, f"rank {rank} is not 1, 2 or 3")
    sizes, ie, oe = _ints(n, rank), _ints(inembed, rank), _ints(onembed, rank)
    layout = None if sizes is None else _layout(rank, list(sizes), None if ie is None else list(ie), istride, idist,
                                                None if oe is None else list(oe), ostride, odist, type, batch)
    return _plan(layout, "cufftPlanMany", _INT(rank), sizes, ie, _INT(istride), _INT(idist), oe, _INT(ostride),
                 _INT(odist), _INT(int(type)), _INT(batch))


def fits(addr: int, n: int) -> bool:
    """Whether ``n`` bytes from ``addr`` lie inside one device allocation, or one pinned
    allocation this backend made."""
    if not addr:
        return False
    res, base, size = driver().cuMemGetAddressRange(addr)
    if int(res) == 0:
        return addr + n <= int(base) + int(size)
    return memory.pinned_holds(addr, n)


def _exec(suffix: str) -> Callable[..., None]:
    def execute(plan: CufftPlan, idata: int, odata: int, *direction: int) -> None:
        if plan.layout is not None:
            n_in, n_out = fftplans.extents(plan.layout, idata == odata)
            for what, addr, n in (("idata", idata, n_in), ("odata", odata, n_out)):
                if not fits(addr, n):
                    raise LibraryError(_R.HIPFFT_INVALID_VALUE, f"{what}: the plan reaches {n} bytes from 0x{addr:x}, "
                                                                f"past the allocation there")
        call(f"cufftExec{suffix}", _INT(plan.handle), _VP(idata or None), _VP(odata or None),
             *(_INT(int(d)) for d in direction))
    return execute


body.table({f"hipfftExec{s}": _exec(s) for s in EXEC_SUFFIXES})


@body
def hipfftSetStream(plan: CufftPlan, stream: int) -> None:
    call("cufftSetStream", _INT(plan.handle), _VP(stream or None))


@body
def hipfftDestroy(plan: CufftPlan) -> None:
    with _lock:
        _plans.pop(plan.number, None)
    call("cufftDestroy", _INT(plan.handle))


__all__ = ["body", "handle_lookup", "cufft", "call", "result", "PLAN_BASE"]
