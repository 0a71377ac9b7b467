"""hipRAND's rows on the sim through hip-python's surface: every generate row's type,
range and statistics, determinism from (type, seed, offset, ordering), work on the
generator's stream, and hipRAND's statuses."""
from __future__ import annotations

import numpy as np
import pytest

from hrr.backends import sim
from hrr.backends.sim import hip

hiprand = sim.library("hiprand")
S = hiprand.hiprandStatus
RT = hiprand.hiprandRngType
ORD = hiprand.hiprandOrdering
OK = hip.hipError_t.hipSuccess
K = hip.hipMemcpyKind
N = 4096


def device(nbytes: int) -> int:
    err, d = hip.hipMalloc(nbytes)
    assert err == OK
    return int(d)


def download(d: int, n: int, dtype) -> np.ndarray:
    out = np.empty(n, dtype)
    assert hip.hipMemcpy(out, d, out.nbytes, K.hipMemcpyDeviceToHost)[0] == OK
    return out


def generator(rng_type=RT.HIPRAND_RNG_PSEUDO_DEFAULT, seed=1234):
    err, g = hiprand.hiprandCreateGenerator(rng_type)
    assert err == S.HIPRAND_STATUS_SUCCESS and g is not None
    assert hiprand.hiprandSetPseudoRandomGeneratorSeed(g, seed) == (S.HIPRAND_STATUS_SUCCESS,)
    return g


def unit(x):
    return 0 < x.min() <= x.max() <= 1 and abs(x.mean() - .5) < .03


def moments(mean, std, tol):
    return lambda x: abs(x.mean() - mean) < tol and abs(x.std() - std) < tol


@pytest.mark.parametrize("name,dtype,args,check", [
    ("hiprandGenerate", np.uint32, (), lambda x: x.max() > 2**31 and np.unique(x).size > N - 10),
    ("hiprandGenerateUniform", np.float32, (), unit),
    ("hiprandGenerateUniformDouble", np.float64, (), unit),
    ("hiprandGenerateNormal", np.float32, (2.0, 0.5), moments(2.0, 0.5, .05)),
    ("hiprandGenerateNormalDouble", np.float64, (-1.0, 3.0), moments(-1.0, 3.0, .3)),
    ("hiprandGenerateLogNormal", np.float32, (0.0, 0.5), lambda x: x.min() > 0 and moments(0.0, 0.5, .05)(np.log(x))),
    ("hiprandGenerateLogNormalDouble", np.float64, (1.0, 0.25), lambda x: moments(1.0, 0.25, .03)(np.log(x))),
    ("hiprandGeneratePoisson", np.uint32, (7.5,), lambda x: abs(x.mean() - 7.5) < .3 and abs(x.var() - 7.5) < 1),
])
def test_every_generate_row(name, dtype, args, check):
    d = device(N * 8)
    g = generator(RT.HIPRAND_RNG_PSEUDO_PHILOX4_32_10)
    assert getattr(hiprand, name)(g, d, N, *args) == (S.HIPRAND_STATUS_SUCCESS,)
    x = download(d, N, dtype)
    assert check(x.astype(np.float64) if dtype != np.uint32 or "Poisson" in name else x)
    assert hiprand.hiprandDestroyGenerator(g) == (S.HIPRAND_STATUS_SUCCESS,)


def _bytes(rng_type=RT.HIPRAND_RNG_PSEUDO_XORWOW, seed=7, offset=0, order=ORD.HIPRAND_ORDERING_PSEUDO_DEFAULT,
           calls=(N,)):
    d = device(N * 4)
    g = generator(rng_type, seed)
    assert hiprand.hiprandSetGeneratorOffset(g, offset) == (S.HIPRAND_STATUS_SUCCESS,)
    assert hiprand.hiprandSetGeneratorOrdering(g, order) == (S.HIPRAND_STATUS_SUCCESS,)
    at = 0
    for n in calls:
        assert hiprand.hiprandGenerate(g, d + 4 * at, n) == (S.HIPRAND_STATUS_SUCCESS,)
        at += n
    return download(d, N, np.uint32).tobytes()


def test_sequences_are_a_function_of_type_seed_offset_ordering():
    base = _bytes()
    assert _bytes() == base
    assert _bytes(calls=(1000, 96, 3000)) == base  # successive calls continue the stream
    assert _bytes(offset=96)[:4 * (N - 96)] == base[4 * 96:]
    for other in (_bytes(rng_type=RT.HIPRAND_RNG_PSEUDO_MRG32K3A), _bytes(seed=8),
                  _bytes(order=ORD.HIPRAND_ORDERING_PSEUDO_SEEDED)):
        assert other != base


def test_generate_runs_on_the_generators_stream():
    d = device(N * 4)
    _, s = hip.hipStreamCreate()
    g = generator()
    assert hiprand.hiprandSetStream(g, s) == (S.HIPRAND_STATUS_SUCCESS,)
    host = np.zeros(N, np.float32)
    assert hiprand.hiprandGenerateUniform(g, d, N) == (S.HIPRAND_STATUS_SUCCESS,)
    assert hip.hipMemcpyAsync(host, d, host.nbytes, K.hipMemcpyDeviceToHost, s)[0] == OK
    assert hip.hipStreamSynchronize(s)[0] == OK
    assert host.min() > 0


def test_statuses():
    assert hiprand.hiprandCreateGenerator(RT.HIPRAND_RNG_QUASI_SOBOL32) == (S.HIPRAND_STATUS_NOT_IMPLEMENTED, None)
    assert hiprand.hiprandCreateGenerator(RT.HIPRAND_RNG_TEST) == (S.HIPRAND_STATUS_TYPE_ERROR, None)
    d = device(64)
    g = generator(RT.HIPRAND_RNG_PSEUDO_MT19937)
    assert hiprand.hiprandSetGeneratorOffset(g, 1) == (S.HIPRAND_STATUS_TYPE_ERROR,)
    assert hiprand.hiprandSetGeneratorOrdering(g, ORD.HIPRAND_ORDERING_QUASI_DEFAULT) == \
        (S.HIPRAND_STATUS_OUT_OF_RANGE,)
    assert hiprand.hiprandGenerateNormal(g, d, 3, 0.0, 1.0) == (S.HIPRAND_STATUS_LENGTH_NOT_MULTIPLE,)
    assert hiprand.hiprandGenerateNormal(g, d + 4, 2, 0.0, 1.0) == (S.HIPRAND_STATUS_LENGTH_NOT_MULTIPLE,)
    assert hiprand.hiprandGeneratePoisson(g, d, 4, 0.0) == (S.HIPRAND_STATUS_OUT_OF_RANGE,)
    assert hiprand.hiprandGenerate(g, d, 0) == (S.HIPRAND_STATUS_SUCCESS,)
    assert hiprand.hiprandDestroyGenerator(g) == (S.HIPRAND_STATUS_SUCCESS,)
    assert hiprand.hiprandGenerate(g, d, 4) == (S.HIPRAND_STATUS_NOT_INITIALIZED,)


def test_an_output_past_its_allocation_faults_like_a_kernel():
    d = device(64)
    g = generator()
    assert hiprand.hiprandGenerate(g, d, 17) == (S.HIPRAND_STATUS_SUCCESS,)   # 68 bytes of 64
    assert hip.hipDeviceSynchronize()[0] == hip.hipError_t.hipErrorIllegalAddress
