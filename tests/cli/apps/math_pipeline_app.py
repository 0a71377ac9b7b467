"""A hip-python program that chains the three math libraries as an application would
(``from hip import hip, hipblas, hipfft, hiprand``): a seeded normal generator fills a
matrix, hipBLAS multiplies it (gemm, one operand transposed, padded leading dimensions),
and an R2C/C2R hipFFT pair filters each column. Every result is checked against numpy
here, in the program, whatever backend runs it."""
import ctypes
import sys

import numpy as np
from hip import hip, hipblas, hipfft, hiprand

H2D, D2H = hip.hipMemcpyKind.hipMemcpyHostToDevice, hip.hipMemcpyKind.hipMemcpyDeviceToHost


def ok(result):
    assert int(result[0]) == 0, result
    return result[1] if len(result) == 2 else None


def download(ptr, shape, dtype):
    out = np.zeros(shape, dtype)
    ok(hip.hipMemcpy(out, ptr, out.nbytes, D2H))
    return out


m, n, k, lda = 24, 32, 16, 20          # A is k x m (used transposed), lda > k
stream = ok(hip.hipStreamCreate())

# 1. random A (column-major k x m inside an lda x m buffer) from a seeded normal generator
gen = ok(hiprand.hiprandCreateGenerator(hiprand.hiprandRngType.HIPRAND_RNG_PSEUDO_DEFAULT))
ok(hiprand.hiprandSetPseudoRandomGeneratorSeed(gen, 1234))
ok(hiprand.hiprandSetStream(gen, stream))
d_a = ok(hip.hipMalloc(lda * m * 4))
ok(hiprand.hiprandGenerateNormal(gen, d_a, lda * m, 1.0, 0.5))
ok(hip.hipStreamSynchronize(stream))
a_buf = download(d_a, (m, lda), np.float32)         # row r of a_buf is column r of A
assert abs(a_buf.mean() - 1.0) < 0.1 and abs(a_buf.std() - 0.5) < 0.1, (a_buf.mean(), a_buf.std())
A = a_buf[:, :k].T                                  # k x m

# 2. C = alpha * A^T B + beta * C with hipBLAS (column-major, B is k x n, C is m x n)
B = np.linspace(-1, 1, k * n, dtype=np.float32).reshape(n, k).T
C = np.full((m, n), 0.25, np.float32)
d_b, d_c = ok(hip.hipMalloc(B.nbytes)), ok(hip.hipMalloc(C.nbytes))
ok(hip.hipMemcpy(d_b, np.asfortranarray(B), B.nbytes, H2D))
ok(hip.hipMemcpy(d_c, np.asfortranarray(C), C.nbytes, H2D))
handle = ok(hipblas.hipblasCreate())
ok(hipblas.hipblasSetStream(handle, stream))
alpha, beta = ctypes.c_float(2.0), ctypes.c_float(-1.0)
ok(hipblas.hipblasSgemm(handle, hipblas.hipblasOperation_t.HIPBLAS_OP_T, hipblas.hipblasOperation_t.HIPBLAS_OP_N,
                        m, n, k, ctypes.addressof(alpha), d_a, lda, d_b, k, ctypes.addressof(beta), d_c, m))
ok(hip.hipStreamSynchronize(stream))
got_c = download(d_c, (n, m), np.float32).T
want_c = 2.0 * A.astype(np.float64).T @ B.astype(np.float64) - C
assert np.allclose(got_c, want_c, rtol=1e-4, atol=1e-4), np.abs(got_c - want_c).max()

# 3. each column of C (m samples) through R2C, its upper half zeroed on the host, then C2R
half = m // 2 + 1
d_spec = ok(hip.hipMalloc(n * half * 8))
fwd = ok(hipfft.hipfftPlan1d(m, hipfft.hipfftType_t.HIPFFT_R2C, n))
inv = ok(hipfft.hipfftPlan1d(m, hipfft.hipfftType_t.HIPFFT_C2R, n))
for plan in (fwd, inv):
    ok(hipfft.hipfftSetStream(plan, stream))
ok(hipfft.hipfftExecR2C(fwd, d_c, d_spec))
ok(hip.hipStreamSynchronize(stream))
spec = download(d_spec, (n, half), np.complex64)
assert np.allclose(spec, np.fft.rfft(got_c.T.astype(np.float64), axis=1), rtol=1e-3, atol=1e-3)
spec[:, half // 2:] = 0
ok(hip.hipMemcpy(d_spec, spec, spec.nbytes, H2D))
d_low = ok(hip.hipMalloc(C.nbytes))
ok(hipfft.hipfftExecC2R(inv, d_spec, d_low))
ok(hip.hipStreamSynchronize(stream))
low = download(d_low, (n, m), np.float32)
want_low = np.fft.irfft(spec.astype(np.complex128), n=m, axis=1) * m      # hipFFT does not normalise
assert np.allclose(low, want_low, rtol=1e-3, atol=1e-3), np.abs(low - want_low).max()

for plan in (fwd, inv):
    ok(hipfft.hipfftDestroy(plan))
ok(hipblas.hipblasDestroy(handle))
ok(hiprand.hiprandDestroyGenerator(gen))
for ptr in (d_a, d_b, d_c, d_spec, d_low):
    ok(hip.hipFree(ptr))
ok(hip.hipStreamDestroy(stream))
print(f"math pipeline: ok (C[0,0]={got_c[0, 0]:.6f}, low[0,0]={low[0, 0]:.6f})")
sys.exit(0)
