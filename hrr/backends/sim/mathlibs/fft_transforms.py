"""hipFFT's transforms computed with numpy on the sim's memory, for the plans of
``hrr.backends.fftplans`` (whose docstring gives hipFFT's conventions).

The sim computes in double precision and rounds single-precision results to float32.
C2R leaves its input untouched (cuFFT and hipFFT may overwrite it: a program must not
read it after the call).
"""
from __future__ import annotations

import numpy as np

from hrr.backends.fftplans import HIPFFT_FORWARD, FftError, FftPlan


def transform(plan: FftPlan, data: np.ndarray, direction: int | None) -> np.ndarray:
    """One plan's transform of ``data`` (shape (batch, *input shape)), in double precision."""
    t, axes = plan.fft_type, tuple(range(1, len(plan.n) + 1))
    if t.kind == "r2c":
        return np.fft.rfftn(data.astype(np.float64), axes=axes)
    if t.kind == "c2r":
        return np.fft.irfftn(data.astype(np.complex128), s=plan.n, axes=axes, norm="forward")
    x = data.astype(np.complex128)
    if direction == HIPFFT_FORWARD:
        return np.fft.fftn(x, axes=axes)
    return np.fft.ifftn(x, axes=axes, norm="forward")


def transform_buffers(plan: FftPlan, src: np.ndarray, dst: np.ndarray, in_place: bool, direction: int | None) -> None:
    """Run one exec: ``src`` and ``dst`` are uint8 views from idata and odata, at least
    ``extents`` long (the same memory when ``in_place``). All input is read before any
    output is written, so overlapping buffers give one defined result."""
    lin, lout = plan.layouts(in_place)
    n_in, n_out = lin.extent(plan.batch), lout.extent(plan.batch)
    if src.size < n_in or dst.size < n_out:
        raise FftError("HIPFFT_EXEC_FAILED", f"the buffers hold {src.size}/{dst.size} bytes, "
                                             f"the plan needs {n_in}/{n_out}")
    data = src[:n_in].view(lin.dtype)[lin.offsets(plan.batch)]
    result = transform(plan, data, direction)
    dst[:n_out].view(lout.dtype)[lout.offsets(plan.batch)] = result.astype(lout.dtype)
