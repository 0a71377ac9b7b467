"""hipFFT's and hipRAND's part of the every-API app: every row of each family at least once."""
from __future__ import annotations

from typing import Any

import numpy as np


def _ok(result: tuple) -> Any:
    assert int(result[0]) == 0, result
    return result[1] if len(result) == 2 else None


def _read(hip: Any, d: Any, like: np.ndarray) -> np.ndarray:
    out = np.empty_like(like)
    _ok(hip.hipMemcpy(out, d, out.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
    return out


def exercise_hipfft(hip: Any, hipfft: Any) -> list:
    """Every hipFFT row; returns what each exec wrote (checked at replay as copies)."""
    T, written = hipfft.hipfftType_t, []
    stream = _ok(hip.hipStreamCreate())
    buf = _ok(hip.hipMalloc(4096))
    _ok(hip.hipMemcpy(buf, np.arange(512, dtype=np.float64), 4096, hip.hipMemcpyKind.hipMemcpyHostToDevice))
    out = _ok(hip.hipMalloc(4096))
    plans = [
        (_ok(hipfft.hipfftPlan1d(8, T.HIPFFT_C2C, 2)), hipfft.hipfftExecC2C, True, np.complex64),
        (_ok(hipfft.hipfftPlan2d(4, 4, T.HIPFFT_Z2Z)), hipfft.hipfftExecZ2Z, True, np.complex128),
        (_ok(hipfft.hipfftPlan3d(2, 2, 4, T.HIPFFT_R2C)), hipfft.hipfftExecR2C, False, np.complex64),
        (_ok(hipfft.hipfftPlanMany(1, np.array([6], np.int32), np.array([8], np.int32), 1, 8,
                                   np.array([4], np.int32), 1, 4, T.HIPFFT_D2Z, 3)), hipfft.hipfftExecD2Z, False,
         np.complex128),
        (_ok(hipfft.hipfftPlan1d(6, T.HIPFFT_C2R, 1)), hipfft.hipfftExecC2R, False, np.float32),
        (_ok(hipfft.hipfftPlan1d(6, T.HIPFFT_Z2D, 1)), hipfft.hipfftExecZ2D, False, np.float64),
    ]
    for plan, execute, directed, dtype in plans:
        _ok(hipfft.hipfftSetStream(plan, stream))
        _ok(execute(plan, buf, out, hipfft.HIPFFT_FORWARD) if directed else execute(plan, buf, out))
        _ok(hip.hipStreamSynchronize(stream))
        written.append(_read(hip, out, np.zeros(8, dtype)))
        _ok(hipfft.hipfftDestroy(plan))
    for d in (buf, out):
        _ok(hip.hipFree(d))
    _ok(hip.hipStreamDestroy(stream))
    return written


def exercise_hiprand(hip: Any, hiprand: Any) -> list:
    """Every hipRAND row; returns what each generate call wrote."""
    gen = _ok(hiprand.hiprandCreateGenerator(hiprand.hiprandRngType.HIPRAND_RNG_PSEUDO_PHILOX4_32_10))
    stream = _ok(hip.hipStreamCreate())
    _ok(hiprand.hiprandSetStream(gen, stream))
    _ok(hiprand.hiprandSetPseudoRandomGeneratorSeed(gen, 77))
    _ok(hiprand.hiprandSetGeneratorOffset(gen, 5))
    _ok(hiprand.hiprandSetGeneratorOrdering(gen, hiprand.hiprandOrdering.HIPRAND_ORDERING_PSEUDO_DEFAULT))
    d, written = _ok(hip.hipMalloc(256)), []
    for name, dtype, args in (("hiprandGenerate", np.uint32, ()), ("hiprandGenerateUniform", np.float32, ()),
                              ("hiprandGenerateUniformDouble", np.float64, ()),
                              ("hiprandGenerateNormal", np.float32, (0.0, 1.0)),
                              ("hiprandGenerateNormalDouble", np.float64, (1.0, 2.0)),
                              ("hiprandGenerateLogNormal", np.float32, (0.0, 0.5)),
                              ("hiprandGenerateLogNormalDouble", np.float64, (0.0, 0.5)),
                              ("hiprandGeneratePoisson", np.uint32, (3.0,))):
        _ok(getattr(hiprand, name)(gen, d, 16, *args))
        _ok(hip.hipStreamSynchronize(stream))
        written.append(_read(hip, d, np.zeros(16, dtype)))
    _ok(hiprand.hiprandDestroyGenerator(gen))
    _ok(hip.hipFree(d))
    _ok(hip.hipStreamDestroy(stream))
    return written
