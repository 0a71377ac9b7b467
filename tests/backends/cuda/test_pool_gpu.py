"""The cuda backend's memory pools and CU-masked streams on a real NVIDIA GPU: the same
program the sim runs (tests/roundtrip/pool_app.py), pool attributes read back, and the
errors HIP gives that the backend answers before the driver. Skipped where there is no
NVIDIA GPU (see conftest.py)."""
from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import numpy as np
import pytest

from hrr import hiptypes as ht

pytestmark = pytest.mark.gpu
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "roundtrip"))
from pool_app import N, exercise_pools, pool_props  # noqa: E402

E = ht.hipError_t
OK = E.hipSuccess
A = ht.hipMemPoolAttr


def test_the_pool_program_runs(hip):
    out = exercise_pools(hip)
    src = np.arange(N, dtype=np.uint32) * 5 + 3
    assert (out["from_b"] == src).all()
    assert out["masked"][:4].tolist() == [0x5A5A5A5A] * 4 and (out["masked"][4:20] == src[:16]).all()
    assert out["used_while_live"] >= N * 4 and out["used_high"] >= 2 * N * 4   # CUDA rounds up


def test_attributes_round_trip_and_hip_answers(hip):
    err, pool = hip.hipMemPoolCreate(pool_props(hip))
    assert err == OK and int(pool)
    assert hip.hipMemPoolSetAttribute(pool, A.hipMemPoolAttrReleaseThreshold, ctypes.c_uint64(1 << 22)) == (OK,)
    value = ctypes.c_uint64(0)
    assert hip.hipMemPoolGetAttribute(pool, A.hipMemPoolAttrReleaseThreshold, value) == (OK,)
    assert value.value == 1 << 22
    flag = ctypes.c_int32(7)
    assert hip.hipMemPoolGetAttribute(pool, A.hipMemPoolReuseAllowOpportunistic, flag) == (OK,)
    assert flag.value in (0, 1)
    assert hip.hipMemPoolSetAttribute(pool, A.hipMemPoolAttrUsedMemCurrent, ctypes.c_uint64(0))[0] != OK
    err, default = hip.hipDeviceGetDefaultMemPool(0)
    assert err == OK and int(default) != int(pool)
    assert hip.hipMemPoolDestroy(default) == (E.hipErrorInvalidValue,)
    err, stream = hip.hipStreamCreate()
    err, d = hip.hipMallocFromPoolAsync(4096, pool, stream)
    assert err == OK and isinstance(d, ht.DeviceArray)
    assert hip.hipFreeAsync(d, stream) == (OK,)
    assert hip.hipStreamSynchronize(stream) == (OK,)
    assert hip.hipFreeAsync(d, stream) == (E.hipErrorInvalidValue,)   # a double free
    assert hip.hipMemPoolTrimTo(pool, 0) == (OK,)
    assert hip.hipMemPoolDestroy(pool) == (OK,)
    assert hip.hipStreamDestroy(stream) == (OK,)


def test_a_cu_mask_is_checked_then_the_stream_is_plain(hip):
    err, s = hip.hipExtStreamCreateWithCUMask(1, [0x3])
    assert err == OK and int(s)
    assert hip.hipStreamDestroy(s) == (OK,)
    assert hip.hipExtStreamCreateWithCUMask(0, [0x3]) == (E.hipErrorInvalidValue, None)
