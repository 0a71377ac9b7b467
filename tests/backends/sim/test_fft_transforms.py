"""The sim's hipFFT engine against numpy: every transform type, ranks 1-3, batches,
sizes 1 and odd, in-place (padded real rows), and plan many's advanced layout."""
from __future__ import annotations

import numpy as np
import pytest

from hrr.backends import fftplans as fft
from hrr.backends.fftplans import FftError, make_plan
from hrr.backends.sim.mathlibs.fft_transforms import transform_buffers

C2C, R2C, C2R, Z2Z, D2Z, Z2D = 41, 42, 44, 105, 106, 108
RNG = np.random.default_rng(7)


def _complex(shape, dtype):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def _run(plan, src_arr, out_nbytes, direction=None, in_place=False):
    src = np.frombuffer(bytearray(src_arr.tobytes()), np.uint8)
    dst = src if in_place else np.zeros(out_nbytes, np.uint8)
    transform_buffers(plan, src, dst, in_place, direction)
    return dst


def _basic(rank_n, fft_type, batch):
    return make_plan(len(rank_n), rank_n, None, 1, 0, None, 1, 0, fft_type, batch)


SHAPES = [(1,), (8,), (7,), (4, 6), (3, 5), (1, 1), (2, 3, 4), (1, 4, 5)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("fft_type,dtype,tol", [(C2C, np.complex64, 1e-4), (Z2Z, np.complex128, 1e-12)])
@pytest.mark.parametrize("direction", [fft.HIPFFT_FORWARD, fft.HIPFFT_BACKWARD])
def test_c2c_unnormalised_both_ways(shape, fft_type, dtype, tol, direction):
    batch = 3
    x = _complex((batch,) + shape, dtype)
    plan = _basic(shape, fft_type, batch)
    out = _run(plan, x, x.nbytes, direction).view(dtype).reshape(x.shape)
    axes = tuple(range(1, len(shape) + 1))
    want = np.fft.fftn(x.astype(np.complex128), axes=axes) if direction == -1 else \
        np.fft.ifftn(x.astype(np.complex128), axes=axes) * np.prod(shape)
    assert out.dtype == dtype
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol * np.prod(shape))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("fft_type,rdt,cdt,tol", [(R2C, np.float32, np.complex64, 1e-4),
                                                  (D2Z, np.float64, np.complex128, 1e-12)])
def test_r2c_writes_half_plus_one(shape, fft_type, rdt, cdt, tol):
    batch = 2
    x = RNG.standard_normal((batch,) + shape).astype(rdt)
    half = shape[:-1] + (shape[-1] // 2 + 1,)
    plan = _basic(shape, fft_type, batch)
    nbytes = batch * int(np.prod(half)) * np.dtype(cdt).itemsize
    assert fft.extents(plan, False) == (x.nbytes, nbytes)
    out = _run(plan, x, nbytes).view(cdt).reshape((batch,) + half)
    want = np.fft.rfftn(x.astype(np.float64), axes=tuple(range(1, len(shape) + 1)))
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol * np.prod(shape))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("fft_type,rdt,cdt,tol", [(C2R, np.float32, np.complex64, 1e-4),
                                                  (Z2D, np.float64, np.complex128, 1e-12)])
def test_c2r_unnormalised_and_input_kept(shape, fft_type, rdt, cdt, tol):
    batch = 2
    axes = tuple(range(1, len(shape) + 1))
    real = RNG.standard_normal((batch,) + shape)
    spectrum = np.fft.rfftn(real, axes=axes).astype(cdt)  # Hermitian by construction
    plan = _basic(shape, fft_type, batch)
    src = np.frombuffer(bytearray(spectrum.tobytes()), np.uint8)
    dst = np.zeros(real.size * np.dtype(rdt).itemsize, np.uint8)
    transform_buffers(plan, src, dst, False, None)
    out = dst.view(rdt).reshape(real.shape)
    np.testing.assert_allclose(out, real * np.prod(shape), rtol=tol, atol=tol * np.prod(shape))
    assert src.tobytes() == spectrum.tobytes()  # the sim leaves C2R's input untouched


@pytest.mark.parametrize("shape", [(8,), (7,), (1,), (4, 6), (2, 3, 5)])
def test_in_place_real_transforms_use_padded_rows(shape):
    batch = 2
    pad = 2 * (shape[-1] // 2 + 1)
    real = RNG.standard_normal((batch,) + shape)
    buf = np.zeros((batch,) + shape[:-1] + (pad,), np.float64)
    buf[..., :shape[-1]] = real
    plan = _basic(shape, D2Z, batch)
    # the input ends at the last real value; the complex output fills the padding
    assert fft.extents(plan, True) == (buf.nbytes - (pad - shape[-1]) * 8, buf.nbytes)
    out = _run(plan, buf, 0, in_place=True)
    spectrum = out.view(np.complex128).reshape((batch,) + shape[:-1] + (pad // 2,))
    axes = tuple(range(1, len(shape) + 1))
    np.testing.assert_allclose(spectrum, np.fft.rfftn(real, axes=axes), atol=1e-10)
    back = _run(_basic(shape, Z2D, batch), spectrum, 0, in_place=True)
    rows = back.view(np.float64).reshape(buf.shape)[..., :shape[-1]]
    np.testing.assert_allclose(rows, real * np.prod(shape), atol=1e-9)


def test_in_place_c2c():
    x = _complex((2, 16), np.complex64)
    plan = _basic((16,), C2C, 2)
    out = _run(plan, x, 0, fft.HIPFFT_FORWARD, in_place=True).view(np.complex64).reshape(x.shape)
    np.testing.assert_allclose(out, np.fft.fft(x.astype(np.complex128), axis=1), atol=1e-4)


def test_plan_many_strides_dists_and_embeds():
    # 2-D 3x4 transforms, batch 2, input embedded in 5x6 with stride 2, output in 4x5 stride 1
    n, inembed, istride, onembed, ostride = (3, 4), (5, 6), 2, (4, 5), 1
    idist, odist = 5 * 6 * 2 + 3, 4 * 5 + 1
    batch = 2
    src = _complex(idist * batch, np.complex128)
    plan = make_plan(2, n, inembed, istride, idist, onembed, ostride, odist, Z2Z, batch)
    ext_in, ext_out = fft.extents(plan, False)
    assert ext_in == ((batch - 1) * idist + istride * (2 * 6 + 3) + 1) * 16
    dst = np.zeros(ext_out, np.uint8)
    sentinel = dst.copy()
    transform_buffers(plan, np.frombuffer(src[:ext_in // 16].tobytes(), np.uint8).copy(), dst, False, -1)
    got = dst.view(np.complex128)
    touched = np.zeros(got.size, bool)
    for b in range(batch):
        block = np.array([[src[b * idist + istride * (i * inembed[1] + j)] for j in range(4)] for i in range(3)])
        want = np.fft.fft2(block)
        for i in range(3):
            for j in range(4):
                k = b * odist + ostride * (i * onembed[1] + j)
                np.testing.assert_allclose(got[k], want[i, j], atol=1e-12)
                touched[k] = True
    assert (dst.view(np.complex128)[~touched] == sentinel.view(np.complex128)[~touched]).all()


def test_plan_many_r2c_layout_counts_each_side_in_its_own_type():
    n, batch = (6,), 3
    plan = make_plan(1, n, (6,), 1, 7, (4,), 1, 5, R2C, batch)
    x = RNG.standard_normal(7 * batch).astype(np.float32)
    ext_in, ext_out = fft.extents(plan, False)
    assert (ext_in, ext_out) == (((batch - 1) * 7 + 6) * 4, ((batch - 1) * 5 + 4) * 8)
    out = _run(plan, x[:ext_in // 4], ext_out).view(np.complex64)
    for b in range(batch):
        np.testing.assert_allclose(out[b * 5:b * 5 + 4], np.fft.rfft(x[b * 7:b * 7 + 6].astype(np.float64)),
                                   atol=1e-4)


def test_null_embed_ignores_the_advanced_parameters():
    plan = make_plan(1, (8,), None, 3, 100, (8,), 2, 50, C2C, 2)
    assert plan == _basic((8,), C2C, 2)
    assert fft.extents(plan, False) == (2 * 8 * 8, 2 * 8 * 8)


@pytest.mark.parametrize("args,status", [
    ((0, (8,), None, 1, 0, None, 1, 0, C2C, 1), "HIPFFT_INVALID_VALUE"),
    ((4, (2, 2, 2, 2), None, 1, 0, None, 1, 0, C2C, 1), "HIPFFT_INVALID_VALUE"),
    ((1, (0,), None, 1, 0, None, 1, 0, C2C, 1), "HIPFFT_INVALID_SIZE"),
    ((1, (8,), None, 1, 0, None, 1, 0, C2C, 0), "HIPFFT_INVALID_SIZE"),
    ((1, (8,), None, 1, 0, None, 1, 0, 43, 1), "HIPFFT_INVALID_TYPE"),
    ((2, (8,), None, 1, 0, None, 1, 0, C2C, 1), "HIPFFT_INVALID_VALUE"),
    ((1, (8,), (8,), 0, 8, (8,), 1, 8, C2C, 1), "HIPFFT_INVALID_VALUE"),
    ((1, (8,), (8,), 1, -1, (8,), 1, 8, C2C, 1), "HIPFFT_INVALID_VALUE"),
    ((1, (1 << 20,), None, 1, 0, None, 1, 0, C2C, 1 << 6), "HIPFFT_ALLOC_FAILED"),
])
def test_plan_errors(args, status):
    with pytest.raises(FftError) as err:
        make_plan(*args)
    assert err.value.status == status


def test_exec_checks_type_and_direction():
    plan = _basic((8,), C2C, 1)
    with pytest.raises(FftError, match="hipfftExecZ2Z on a HIPFFT_C2C plan"):
        fft.check_exec(plan, "Z2Z", -1)
    with pytest.raises(FftError, match="direction 0"):
        fft.check_exec(plan, "C2C", 0)
    fft.check_exec(_basic((8,), R2C, 1), "R2C", None)


def test_short_buffers_fail_instead_of_reading_past_them():
    plan = _basic((8,), C2C, 2)
    with pytest.raises(FftError) as err:
        transform_buffers(plan, np.zeros(8 * 8 * 2 - 1, np.uint8), np.zeros(256, np.uint8), False, -1)
    assert err.value.status == "HIPFFT_EXEC_FAILED"
