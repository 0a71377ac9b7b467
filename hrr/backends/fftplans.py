"""hipFFT's plans as every backend sees them: what hipfftPlan1d/2d/3d/Many were given
(``FftPlan``, checked by ``make_plan``) and the bytes an exec reaches from each of its
pointers (``extents``). The sim computes with them (``sim/mathlibs/fft_transforms.py``);
the cuda backend checks an exec's buffers against them before cuFFT runs it. The
conventions are hipFFT's (and cuFFT's):

* transforms are unnormalised both ways; ``HIPFFT_FORWARD`` (-1) is exp(-2 pi i jk/n),
  ``HIPFFT_BACKWARD`` (1) exp(+2 pi i jk/n); R2C is forward and C2R backward implicitly;
* data is row-major (the last of ``n`` varies fastest); R2C writes n[-1]//2 + 1 complex
  values per row, C2R reads that many;
* the advanced layout: element (b, i0..ir-1) lies at b*dist + stride*linear(i, embed),
  linear(i, embed) = ((i0*embed[1] + i1)*embed[2] + i2)... (embed[0] is never used), in
  elements of that side's type; if ``inembed`` or ``onembed`` is NULL every advanced
  parameter is ignored (cuFFT's rule) and the basic layout is used: contiguous, and
  for an in-place real transform the real rows padded to 2*(n[-1]//2 + 1) values;
* in-place means ``idata == odata`` at exec time.

Failures are ``FftError`` carrying a ``hipfftResult_t`` name.
"""
from __future__ import annotations

import math
from typing import Sequence

import attrs
import numpy as np

HIPFFT_FORWARD, HIPFFT_BACKWARD = -1, 1

# The sim's cap on the elements one side of a plan touches (batch * prod(n)): an exec's
# temporaries (offsets, double-precision copies) take about 40 bytes an element, so 2**25
# elements are about 1.3 GiB of host memory; a larger plan is HIPFFT_ALLOC_FAILED.
MAX_PLAN_ELEMENTS = 1 << 25


@attrs.frozen
class FftType:
    """One hipfftType_t: its value, what it reads and writes, and its direction rule."""

    name: str
    value: int
    kind: str             # "c2c", "r2c" or "c2r"
    in_dtype: np.dtype
    out_dtype: np.dtype


_C64, _C128 = np.dtype(np.complex64), np.dtype(np.complex128)
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
FFT_TYPES: dict[int, FftType] = {t.value: t for t in (
    FftType("HIPFFT_C2C", 41, "c2c", _C64, _C64),
    FftType("HIPFFT_R2C", 42, "r2c", _F32, _C64),
    FftType("HIPFFT_C2R", 44, "c2r", _C64, _F32),
    FftType("HIPFFT_Z2Z", 105, "c2c", _C128, _C128),
    FftType("HIPFFT_D2Z", 106, "r2c", _F64, _C128),
    FftType("HIPFFT_Z2D", 108, "c2r", _C128, _F64),
)}
# exec call suffix -> the plan type it needs
EXEC_TYPES = {"C2C": 41, "R2C": 42, "C2R": 44, "Z2Z": 105, "D2Z": 106, "Z2D": 108}


class FftError(Exception):
    """A hipFFT call that fails; ``status`` is the hipfftResult_t member's name."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status


@attrs.frozen
class Layout:
    """Where one side's elements lie: element offsets, in that side's element type."""

    shape: tuple[int, ...]   # the logical shape of one transform on this side
    embed: tuple[int, ...]
    stride: int
    dist: int
    dtype: np.dtype

    def extent(self, batch: int) -> int:
        """Bytes from the data pointer to the end of the last element this side touches."""
        last = 0
        for i, e in zip(self.shape, self.embed, strict=True):
            last = last * e + (i - 1)
        return ((batch - 1) * self.dist + self.stride * last + 1) * self.dtype.itemsize

    def offsets(self, batch: int) -> np.ndarray:
        """Element offsets of every (batch, index...) element: shape (batch, *shape)."""
        linear = np.zeros((), np.int64)
        for i, e in zip(self.shape, self.embed, strict=True):
            linear = linear[..., None] * e + np.arange(i, dtype=np.int64)
        return np.arange(batch, dtype=np.int64).reshape((batch,) + (1,) * len(self.shape)) * self.dist \
            + linear * self.stride


@attrs.frozen
class FftPlan:
    """A hipfftHandle's plan as hipfftPlanMany takes it (embeds None: the basic layout)."""

    fft_type: FftType
    n: tuple[int, ...]
    batch: int
    inembed: tuple[int, ...] | None = None
    istride: int = 1
    idist: int = 0
    onembed: tuple[int, ...] | None = None
    ostride: int = 1
    odist: int = 0

    @property
    def half(self) -> tuple[int, ...]:
        return self.n[:-1] + (self.n[-1] // 2 + 1,)

    def layouts(self, in_place: bool) -> tuple[Layout, Layout]:
        """The input and the output layout of an exec (``in_place``: idata == odata)."""
        t, n = self.fft_type, self.n
        in_shape = self.half if t.kind == "c2r" else n
        out_shape = self.half if t.kind == "r2c" else n
        if self.inembed is not None and self.onembed is not None:
            return (Layout(in_shape, self.inembed, self.istride, self.idist, t.in_dtype),
                    Layout(out_shape, self.onembed, self.ostride, self.odist, t.out_dtype))
        padded = n[:-1] + (2 * (n[-1] // 2 + 1),)
        in_embed = padded if in_place and t.kind == "r2c" else in_shape
        out_embed = padded if in_place and t.kind == "c2r" else out_shape
        return (Layout(in_shape, in_embed, 1, math.prod(in_embed), t.in_dtype),
                Layout(out_shape, out_embed, 1, math.prod(out_embed), t.out_dtype))


def _ints(values: Sequence[int] | None, rank: int, what: str) -> tuple[int, ...] | None:
    if values is None:
        return None
    out = tuple(int(v) for v in values)
    if len(out) != rank:
        raise FftError("HIPFFT_INVALID_VALUE", f"{what} has {len(out)} entries, the rank is {rank}")
    return out


def make_plan(rank: int, n: Sequence[int], inembed: Sequence[int] | None, istride: int, idist: int,
              onembed: Sequence[int] | None, ostride: int, odist: int, fft_type: int, batch: int,
              max_elements: int | None = MAX_PLAN_ELEMENTS) -> FftPlan:
    """A plan as hipfftPlanMany checks it (hipfftPlan1d/2d/3d are its special cases), within
    ``max_elements`` a side (None: no limit, for a backend whose library has its own)."""
    if rank not in (1, 2, 3):
        raise FftError("HIPFFT_INVALID_VALUE", f"rank {rank} is not 1, 2 or 3")
    t = FFT_TYPES.get(int(fft_type))
    if t is None:
        raise FftError("HIPFFT_INVALID_TYPE", f"{fft_type} is no hipfftType_t")
    shape = _ints(n, rank, "n")
    assert shape is not None
    if min(shape) < 1 or batch < 1:
        raise FftError("HIPFFT_INVALID_SIZE", f"sizes {list(shape)} and batch {batch} must all be at least 1")
    if max_elements is not None and math.prod(shape) * batch > max_elements:
        raise FftError("HIPFFT_ALLOC_FAILED", f"{math.prod(shape) * batch} elements exceed the sim's "
                                              f"{max_elements} per plan")
    ie, oe = _ints(inembed, rank, "inembed"), _ints(onembed, rank, "onembed")
    if ie is None or oe is None:
        return FftPlan(t, shape, batch)
    if min(ie + oe) < 1 or min(istride, ostride) < 1 or min(idist, odist) < 0:
        raise FftError("HIPFFT_INVALID_VALUE", f"embeds {list(ie)}/{list(oe)} and strides {istride}/{ostride} "
                                               f"must be at least 1, dists {idist}/{odist} at least 0")
    return FftPlan(t, shape, batch, ie, istride, idist, oe, ostride, odist)


def check_exec(plan: FftPlan, exec_suffix: str, direction: int | None) -> None:
    """An exec call's checks before any data moves: its type matches the plan, and a
    complex-to-complex one names a direction."""
    if EXEC_TYPES[exec_suffix] != plan.fft_type.value:
        raise FftError("HIPFFT_INVALID_VALUE", f"hipfftExec{exec_suffix} on a {plan.fft_type.name} plan")
    if plan.fft_type.kind == "c2c" and direction not in (HIPFFT_FORWARD, HIPFFT_BACKWARD):
        raise FftError("HIPFFT_INVALID_VALUE", f"direction {direction} is neither HIPFFT_FORWARD (-1) "
                                               f"nor HIPFFT_BACKWARD (1)")


def extents(plan: FftPlan, in_place: bool) -> tuple[int, int]:
    """Bytes an exec reads from idata and writes from odata."""
    lin, lout = plan.layouts(in_place)
    return lin.extent(plan.batch), lout.extent(plan.batch)
