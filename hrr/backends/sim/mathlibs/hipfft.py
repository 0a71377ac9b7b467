"""hipFFT on the sim: a plan holds its ``FftPlan`` (``hrr.backends.fftplans``) and the stream it is
bound to; an exec checks its type and direction against the plan when it is called, and
computes the transform with numpy when its op runs on that stream. A buffer that does not
hold the plan's extent inside device-visible memory faults then, as a kernel's access
does (an asynchronous hipErrorIllegalAddress); nothing outside an allocation is touched."""
from __future__ import annotations

import ctypes
from typing import Any, Callable, Sequence

import attrs

from hrr.backends import fftplans as fft
from hrr.backends.bodies import Bodies
from hrr.backends.mathlib import LibraryError
from hrr.backends.sim.device import current as _dev
from hrr.backends.sim.mathlibs.fft_transforms import transform_buffers
from hrr.backends.sim.mathlibs import handles
from hrr.backends.sim.streams import Op, Stream
from hrr.hiptypes import address_or_zero
from hrr.hiptypes.mathlibs.hipfft import hipfftResult_t

body = Bodies("hipfft")
_R = hipfftResult_t


@attrs.define(eq=False)
class Plan:
    """A hipfftHandle: its transform and the stream its execs go to."""

    value: int
    fft: fft.FftPlan
    stream: Stream


def _fail(exc: fft.FftError) -> LibraryError:
    return LibraryError(_R[exc.status], str(exc))


def _new_plan(make: Callable[[], fft.FftPlan]) -> tuple:
    try:
        plan = make()
    except fft.FftError as exc:
        raise _fail(exc) from None
    return (_R.HIPFFT_SUCCESS, handles.create("fft_plan", lambda v: Plan(v, plan, _dev().scheduler.null)))


def _no_layout(rank: int, n: Sequence[int], fft_type: Any, batch: int) -> fft.FftPlan:
    return fft.make_plan(rank, n, None, 1, 0, None, 1, 0, int(fft_type), batch)


def _ints(obj: Any, rank: int) -> tuple[int, ...] | None:
    """``rank`` C ints from a list (replay), a buffer or an address (the app's); None: NULL."""
    if obj is None:
        return None
    if isinstance(obj, (list, tuple)):
        return tuple(ctypes.c_int(int(v)).value for v in obj[:rank])  # recorded unsigned
    addr = address_or_zero(obj)
    if not addr:
        return None
    return tuple((ctypes.c_int * rank).from_address(addr)) if rank > 0 else ()


@body
def hipfftPlan1d(nx: int, type: Any, batch: int) -> tuple:
    return _new_plan(lambda: _no_layout(1, (nx,), type, batch))


@body
def hipfftPlan2d(nx: int, ny: int, type: Any) -> tuple:
    return _new_plan(lambda: _no_layout(2, (nx, ny), type, 1))


@body
def hipfftPlan3d(nx: int, ny: int, nz: int, type: Any) -> tuple:
    return _new_plan(lambda: _no_layout(3, (nx, ny, nz), type, 1))


@body
def hipfftPlanMany(rank: int, n: Any, inembed: Any, istride: int, idist: int, onembed: Any, ostride: int,
                   odist: int, type: Any, batch: int) -> tuple:
    if rank not in (1, 2, 3):
        raise LibraryError(_R.HIPFFT_INVALID_VALUE, f"rank {rank} is not 1, 2 or 3")
    sizes = _ints(n, rank)
    if sizes is None:
        raise LibraryError(_R.HIPFFT_INVALID_VALUE, "n is NULL")
    return _new_plan(lambda: fft.make_plan(rank, sizes, _ints(inembed, rank), istride, idist, _ints(onembed, rank),
                                           ostride, odist, int(type), batch))


def _exec(suffix: str) -> Callable[..., None]:
    def execute(plan: Plan, idata: int, odata: int, direction: int | None = None) -> None:
        memory, shape = _dev().memory, plan.fft
        try:
            fft.check_exec(shape, suffix, direction)
        except fft.FftError as exc:
            raise _fail(exc) from None
        in_place = idata == odata
        n_in, n_out = fft.extents(shape, in_place)

        def run() -> None:
            src = memory.resolve_for_kernel(idata, n_in)
            transform_buffers(shape, src, memory.resolve_for_kernel(odata, n_out), in_place, direction)
        label = f"hipfftExec{suffix}(n={list(shape.n)}, batch={shape.batch})"
        _dev().submit(plan.stream, lambda: Op(label, run, 5.0 + (n_in + n_out) / 5_000))
    return execute


body.table({f"hipfftExec{s}": _exec(s) for s in fft.EXEC_TYPES})


@body
def hipfftSetStream(plan: Plan, stream: Stream) -> None:
    plan.stream = stream


@body
def hipfftDestroy(plan: Plan) -> None:
    handles.destroy("fft_plan", plan.value)


__all__ = ["body", "Plan"]
