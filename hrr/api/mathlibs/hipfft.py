"""hipFFT's catalogue rows, in hip-python 7.x's ``hipfft`` names and argument order.

A plan is an ``fft_plan`` handle; ``n``, ``inembed`` and ``onembed`` are ``rank`` C ints
(``int_array``; None: NULL); an exec's ``idata``/``odata`` are device addresses (``ptr``)
whose extent the plan gives, which no parameter holds: the sim faults an exec whose
buffers are too small, as a GPU does. An exec's work goes to the stream its plan is bound
to (hipfftSetStream).
"""
from __future__ import annotations

from hrr.api.rowtypes import Api, H, O, P, Param

FAMILY = "hipfft"
HANDLE_KINDS = ("fft_plan",)
_PLAN = H("plan", "fft_plan")
_TYPE = P("type", "enum", "hipfftType_t")
EXEC_SUFFIXES = ("C2C", "R2C", "C2R", "Z2Z", "D2Z", "Z2D")


def _row(name: str, *params: Param, **fields: object) -> Api:
    return Api(name, FAMILY, tuple(params), module=FAMILY, **fields)  # type: ignore[arg-type]


def _plan(name: str, *params: Param) -> Api:
    return Api(name, FAMILY, tuple(params), (O("plan", "handle", "fft_plan"),), module=FAMILY)


def _exec(suffix: str) -> Api:
    direction = (P("direction"),) if suffix in ("C2C", "Z2Z") else ()
    return _row(f"hipfftExec{suffix}", _PLAN, P("idata", "ptr"), P("odata", "ptr"), *direction)


ROWS: tuple[Api, ...] = (
    _plan("hipfftPlan1d", P("nx"), _TYPE, P("batch")),
    _plan("hipfftPlan2d", P("nx"), P("ny"), _TYPE),
    _plan("hipfftPlan3d", P("nx"), P("ny"), P("nz"), _TYPE),
    _plan("hipfftPlanMany", P("rank"), P("n", "int_array", size="rank"), P("inembed", "int_array", size="rank"),
          P("istride"), P("idist"), P("onembed", "int_array", size="rank"), P("ostride"), P("odist"), _TYPE,
          P("batch")),
    *(_exec(s) for s in EXEC_SUFFIXES),
    _row("hipfftSetStream", _PLAN, H("stream", "stream")),
    _row("hipfftDestroy", _PLAN, destroys="fft_plan"),
)

__all__ = ["ROWS", "HANDLE_KINDS", "FAMILY", "EXEC_SUFFIXES"]
