"""The math libraries' part of the every-API app: each family's exerciser calls every row
of its family at least once (hipBLAS: the handle calls, then every case of blascases)."""
from __future__ import annotations

import ctypes
from typing import Any

from blascases import Session, cases
from fft_rand_app import exercise_hipfft, exercise_hiprand


def exercise_hipblas(hip: Any, hipblas: Any) -> list:
    """Every hipBLAS row; returns what each case wrote (checked at replay as copies)."""
    s = Session(hip, hipblas)
    stream = hip.hipStreamCreate()[1]
    assert hipblas.hipblasSetStream(s.handle, stream)[0] == 0
    got = ctypes.c_uint64(0)
    assert hipblas.hipblasGetStream(s.handle, ctypes.addressof(got))[0] == 0
    mode = ctypes.c_int32(-1)
    assert hipblas.hipblasSetPointerMode(s.handle, hipblas.hipblasPointerMode_t.HIPBLAS_POINTER_MODE_HOST)[0] == 0
    assert hipblas.hipblasGetPointerMode(s.handle, ctypes.addressof(mode))[0] == 0
    written = [got for case in cases(lambda name: True) for got, _ in case.run(s)]
    s.close()
    assert hip.hipStreamDestroy(stream)[0] == 0
    return written


EXERCISERS = {"hipblas": exercise_hipblas, "hipfft": exercise_hipfft, "hiprand": exercise_hiprand}


def exercise_libraries(hip: Any, libraries: dict[str, Any]) -> dict[str, Any]:
    """Each family's exerciser on its module (``libraries``: by name, as capture installs them)."""
    return {name: EXERCISERS[name](hip, module) for name, module in libraries.items()}
