"""A hip-python program that uses hipFFT and hipRAND as hip-python's modules are used
(``from hip import hip, hipfft, hiprand``): random input from a seeded generator on a
stream, a batched forward C2C and an in-place backward transform, a real round trip."""
import sys

import numpy as np
from hip import hip, hipfft, hiprand


def ok(result):
    assert int(result[0]) == 0, result
    return result[1] if len(result) == 2 else None


n, batch = 16, 3
H2D, D2H = hip.hipMemcpyKind.hipMemcpyHostToDevice, hip.hipMemcpyKind.hipMemcpyDeviceToHost
stream = ok(hip.hipStreamCreate())
gen = ok(hiprand.hiprandCreateGenerator(hiprand.hiprandRngType.HIPRAND_RNG_PSEUDO_DEFAULT))
ok(hiprand.hiprandSetPseudoRandomGeneratorSeed(gen, 2026))
ok(hiprand.hiprandSetStream(gen, stream))
signal = ok(hip.hipMalloc(n * batch * 8))                  # complex64, as 2*n*batch floats
ok(hiprand.hiprandGenerateNormal(gen, signal, 2 * n * batch, 0.0, 1.0))
counts = ok(hip.hipMalloc(64 * 4))
ok(hiprand.hiprandGeneratePoisson(gen, counts, 64, 4.0))

spectrum = ok(hip.hipMalloc(n * batch * 8))
plan = ok(hipfft.hipfftPlan1d(n, hipfft.hipfftType_t.HIPFFT_C2C, batch))
ok(hipfft.hipfftSetStream(plan, stream))
ok(hipfft.hipfftExecC2C(plan, signal, spectrum, hipfft.HIPFFT_FORWARD))
ok(hip.hipStreamSynchronize(stream))
x = np.zeros((batch, n), np.complex64)
ok(hip.hipMemcpy(x, signal, x.nbytes, D2H))
got = np.zeros_like(x)
ok(hip.hipMemcpy(got, spectrum, got.nbytes, D2H))
assert np.allclose(got, np.fft.fft(x.astype(np.complex128), axis=1), atol=1e-3)
ok(hipfft.hipfftExecC2C(plan, spectrum, spectrum, hipfft.HIPFFT_BACKWARD))
ok(hip.hipStreamSynchronize(stream))
ok(hip.hipMemcpy(got, spectrum, got.nbytes, D2H))
assert np.allclose(got, n * x, atol=1e-3)

real = np.linspace(-1, 1, 2 * 6, dtype=np.float64).reshape(2, 6)
d_real, d_half = ok(hip.hipMalloc(real.nbytes)), ok(hip.hipMalloc(2 * 4 * 16))
ok(hip.hipMemcpy(d_real, real, real.nbytes, H2D))
many = ok(hipfft.hipfftPlanMany(1, np.array([6], np.int32), None, 1, 0, None, 1, 0, hipfft.hipfftType_t.HIPFFT_D2Z, 2))
ok(hipfft.hipfftExecD2Z(many, d_real, d_half))
half = np.zeros((2, 4), np.complex128)
ok(hip.hipMemcpy(half, d_half, half.nbytes, D2H))
assert np.allclose(half, np.fft.rfft(real, axis=1))
poisson = np.zeros(64, np.uint32)
ok(hip.hipMemcpy(poisson, counts, poisson.nbytes, D2H))
assert 1 < poisson.mean() < 8
for p in (plan, many):
    ok(hipfft.hipfftDestroy(p))
ok(hiprand.hiprandDestroyGenerator(gen))
print("hipfft+hiprand: ok")
sys.exit(0)
