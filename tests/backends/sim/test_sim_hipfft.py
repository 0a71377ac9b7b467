"""hipFFT's rows on the sim through hip-python's surface: every plan and exec row against
numpy (ranks 1-3, batches, size 1, in-place, plan many's layout), work ordered on the
plan's stream, and hipFFT's results for bad plans, types, directions and buffers."""
from __future__ import annotations

import numpy as np
import pytest

from hrr.backends import sim
from hrr.backends.sim import hip

hipfft = sim.library("hipfft")
R = hipfft.hipfftResult_t
T = hipfft.hipfftType_t
OK = hip.hipError_t.hipSuccess
K = hip.hipMemcpyKind
RNG = np.random.default_rng(3)


def upload(a: np.ndarray, extra: int = 0) -> int:
    err, d = hip.hipMalloc(a.nbytes + extra)
    assert err == OK
    assert hip.hipMemcpy(d, a, a.nbytes, K.hipMemcpyHostToDevice)[0] == OK
    return int(d)


def download(d: int, like: np.ndarray) -> np.ndarray:
    out = np.empty_like(like)
    assert hip.hipMemcpy(out, d, out.nbytes, K.hipMemcpyDeviceToHost)[0] == OK
    return out


def cplx(shape, dtype=np.complex64):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def plan_of(make, *args):
    err, plan = make(*args)
    assert err == R.HIPFFT_SUCCESS and plan is not None
    return plan


@pytest.mark.parametrize("n,batch", [(16, 1), (5, 3), (1, 4)])
@pytest.mark.parametrize("suffix,fft_type,dtype,tol", [("C2C", "HIPFFT_C2C", np.complex64, 1e-4),
                                                      ("Z2Z", "HIPFFT_Z2Z", np.complex128, 1e-11)])
def test_plan1d_c2c_both_directions(n, batch, suffix, fft_type, dtype, tol):
    x = cplx((batch, n), dtype)
    d_in, d_out = upload(x), upload(np.zeros_like(x))
    plan = plan_of(hipfft.hipfftPlan1d, n, T[fft_type], batch)
    execute = getattr(hipfft, f"hipfftExec{suffix}")
    assert execute(plan, d_in, d_out, hipfft.HIPFFT_FORWARD) == (R.HIPFFT_SUCCESS,)
    np.testing.assert_allclose(download(d_out, x), np.fft.fft(x.astype(np.complex128), axis=1), atol=tol * n)
    assert execute(plan, d_out, d_out, hipfft.HIPFFT_BACKWARD) == (R.HIPFFT_SUCCESS,)  # in place
    np.testing.assert_allclose(download(d_out, x), x * n, atol=tol * n * n)
    assert hipfft.hipfftDestroy(plan) == (R.HIPFFT_SUCCESS,)


@pytest.mark.parametrize("shape", [(4, 6), (3, 1), (2, 3, 4), (1, 1, 5)])
def test_plan2d_3d_real_round_trip(shape):
    make = hipfft.hipfftPlan2d if len(shape) == 2 else hipfft.hipfftPlan3d
    real = RNG.standard_normal(shape)
    half = shape[:-1] + (shape[-1] // 2 + 1,)
    d_real, d_spec = upload(real), upload(np.zeros(half, np.complex128))
    d2z, z2d = plan_of(make, *shape, T.HIPFFT_D2Z), plan_of(make, *shape, T.HIPFFT_Z2D)
    assert hipfft.hipfftExecD2Z(d2z, d_real, d_spec) == (R.HIPFFT_SUCCESS,)
    spectrum = download(d_spec, np.zeros(half, np.complex128))
    np.testing.assert_allclose(spectrum, np.fft.rfftn(real), atol=1e-10)
    assert hipfft.hipfftExecZ2D(z2d, d_spec, d_real) == (R.HIPFFT_SUCCESS,)
    np.testing.assert_allclose(download(d_real, real), real * np.prod(shape), atol=1e-9)
    assert (download(d_spec, spectrum) == spectrum).all()  # the sim keeps C2R's input


def test_single_precision_real_transforms_and_in_place_padding():
    n, batch = 10, 2
    real = RNG.standard_normal((batch, n)).astype(np.float32)
    padded = np.zeros((batch, n + 2), np.float32)
    padded[:, :n] = real
    d = upload(padded)
    r2c = plan_of(hipfft.hipfftPlan1d, n, T.HIPFFT_R2C, batch)
    c2r = plan_of(hipfft.hipfftPlan1d, n, T.HIPFFT_C2R, batch)
    assert hipfft.hipfftExecR2C(r2c, d, d) == (R.HIPFFT_SUCCESS,)
    spectrum = download(d, padded).view(np.complex64)
    np.testing.assert_allclose(spectrum, np.fft.rfft(real.astype(np.float64), axis=1), atol=1e-4)
    assert hipfft.hipfftExecC2R(c2r, d, d) == (R.HIPFFT_SUCCESS,)
    np.testing.assert_allclose(download(d, padded)[:, :n], real * n, atol=1e-3)


@pytest.mark.parametrize("embeds", ["numpy", "list"])
def test_plan_many_layout(embeds):
    n, inembed, onembed = [8], [10], [9]
    istride, idist, ostride, odist, batch = 1, 10, 1, 9, 3
    as_arg = (lambda v: np.array(v, np.int32)) if embeds == "numpy" else list
    x = cplx(idist * batch)
    d_in, d_out = upload(x), upload(np.zeros(odist * batch, np.complex64))
    plan = plan_of(hipfft.hipfftPlanMany, 1, as_arg(n), as_arg(inembed), istride, idist, as_arg(onembed),
                   ostride, odist, T.HIPFFT_C2C, batch)
    assert hipfft.hipfftExecC2C(plan, d_in, d_out, hipfft.HIPFFT_FORWARD) == (R.HIPFFT_SUCCESS,)
    got = download(d_out, np.zeros(odist * batch, np.complex64))
    for b in range(batch):
        want = np.fft.fft(x[b * idist:b * idist + 8].astype(np.complex128))
        np.testing.assert_allclose(got[b * odist:b * odist + 8], want, atol=1e-4)
        assert (got[b * odist + 8] == 0)


def test_plan_many_null_embeds_is_the_basic_layout():
    x = cplx((2, 4, 4))
    d_in, d_out = upload(x), upload(np.zeros_like(x))
    plan = plan_of(hipfft.hipfftPlanMany, 2, np.array([4, 4], np.int32), None, 7, 99, None, 5, 77,
                   T.HIPFFT_C2C, 2)
    assert hipfft.hipfftExecC2C(plan, d_in, d_out, hipfft.HIPFFT_FORWARD) == (R.HIPFFT_SUCCESS,)
    np.testing.assert_allclose(download(d_out, x), np.fft.fft2(x.astype(np.complex128)), atol=1e-4)


def test_exec_runs_on_the_plans_stream_in_order():
    x = cplx((1, 64))
    d = upload(x)
    _, s = hip.hipStreamCreate()
    plan = plan_of(hipfft.hipfftPlan1d, 64, T.HIPFFT_C2C, 1)
    assert hipfft.hipfftSetStream(plan, s) == (R.HIPFFT_SUCCESS,)
    host = np.zeros_like(x)
    assert hipfft.hipfftExecC2C(plan, d, d, hipfft.HIPFFT_FORWARD) == (R.HIPFFT_SUCCESS,)
    assert hip.hipMemcpyAsync(host, d, host.nbytes, K.hipMemcpyDeviceToHost, s)[0] == OK
    assert hip.hipStreamSynchronize(s)[0] == OK
    np.testing.assert_allclose(host, np.fft.fft(x.astype(np.complex128), axis=1), atol=1e-3)


def test_results_for_bad_plans_types_directions_and_buffers():
    assert hipfft.hipfftPlan1d(0, T.HIPFFT_C2C, 1) == (R.HIPFFT_INVALID_SIZE, None)
    assert hipfft.hipfftPlan1d(8, T.HIPFFT_C2C, 0) == (R.HIPFFT_INVALID_SIZE, None)
    assert hipfft.hipfftPlanMany(4, np.ones(4, np.int32), None, 1, 0, None, 1, 0, T.HIPFFT_C2C, 1)[0] == \
        R.HIPFFT_INVALID_VALUE
    plan = plan_of(hipfft.hipfftPlan1d, 8, T.HIPFFT_C2C, 2)
    d = upload(np.zeros(16, np.complex64))
    assert hipfft.hipfftExecC2C(plan, d, d, 0) == (R.HIPFFT_INVALID_VALUE,)
    assert hipfft.hipfftExecZ2Z(plan, d, d, -1) == (R.HIPFFT_INVALID_VALUE,)
    assert hipfft.hipfftDestroy(plan) == (R.HIPFFT_SUCCESS,)
    assert hipfft.hipfftExecC2C(plan, d, d, -1) == (R.HIPFFT_INVALID_PLAN,)
    assert hipfft.hipfftDestroy(plan) == (R.HIPFFT_INVALID_PLAN,)


@pytest.mark.parametrize("short", ["idata", "odata", "null"])
def test_a_buffer_short_of_the_plan_faults_like_a_kernel(short):
    """As on a GPU, the exec is accepted and its work faults on the stream; the sim
    touches nothing outside the allocations."""
    plan = plan_of(hipfft.hipfftPlan1d, 8, T.HIPFFT_C2C, 2)
    whole, small = upload(np.ones(16, np.complex64)), upload(np.ones(15, np.complex64))
    idata, odata = {"idata": (small, whole), "odata": (whole, small), "null": (whole, 0)}[short]
    assert hipfft.hipfftExecC2C(plan, idata, odata, -1) == (R.HIPFFT_SUCCESS,)
    assert hip.hipDeviceSynchronize()[0] == hip.hipError_t.hipErrorIllegalAddress
