"""hipBLAS on the cuda backend (cuBLAS) against numpy: every case of tests/blascases.py
within the precision's tolerance (``blascases.RTOL``: 1e-5 relative for S/C, 1e-12 for
D/Z), the stream a handle is bound to, and the statuses of bad arguments. Skipped cleanly
where there is no NVIDIA GPU."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from blascases import Session, cases, check, ok

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def blas(cuda_backend):
    return cuda_backend.library("hipblas")


@pytest.fixture
def session(hip, blas):
    s = Session(hip, blas)
    yield s
    s.close()


def test_each_call_matches_numpy(session, blas):
    """All cases in one test: one handle, a few seconds in all."""
    for case in cases(lambda name: hasattr(blas, name)):
        check(case, session)


def test_the_handle_runs_on_its_stream(session, hip, blas):
    stream = ok(hip.hipStreamCreate())
    ok(blas.hipblasSetStream(session.handle, stream))
    got = ctypes.c_uint64(0)
    ok(blas.hipblasGetStream(session.handle, ctypes.addressof(got)))
    assert got.value == int(stream)
    x = np.arange(8, dtype=np.float32)
    dx, dy = session.upload(x), session.upload(np.zeros(8, np.float32))
    ok(blas.hipblasSaxpy(session.handle, 8, session.host_scalar("S", 3.0), dx, 1, dy, 1))
    ok(hip.hipStreamSynchronize(stream))
    np.testing.assert_array_equal(session.download(dy, x), 3 * x)
    ok(hip.hipStreamDestroy(stream))


def test_bad_arguments_return_hipblas_statuses(session, blas):
    S = blas.hipblasStatus_t
    assert blas.hipblasSaxpy(0x1234, 4, None, 0, 1, 0, 1) == (S.HIPBLAS_STATUS_NOT_INITIALIZED,)
    assert blas.hipblasSetPointerMode(session.handle, 7)[0] in (S.HIPBLAS_STATUS_INVALID_VALUE,
                                                               S.HIPBLAS_STATUS_INVALID_ENUM)
    err, h = blas.hipblasCreate()
    ok(blas.hipblasDestroy(h))
    assert blas.hipblasDestroy(h) == (S.HIPBLAS_STATUS_NOT_INITIALIZED,)
