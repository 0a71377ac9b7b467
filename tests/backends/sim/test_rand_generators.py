"""The sim's hipRAND engine: Philox's known answers, determinism from (type, seed,
offset, ordering), the stream's continuation across calls, the ranges and the
distributions' statistics, and hipRAND's status rules."""
from __future__ import annotations

import numpy as np
import pytest

from hrr.backends.sim.mathlibs import rand_generators as rand
from hrr.backends.sim.mathlibs.rand_generators import RandError

PHILOX, XORWOW, MT19937, SOBOL32 = 405, 401, 404, 501
LEGACY, DEFAULT, BEST = 103, 101, 100


def _gen(kind, n, gen, **params):
    out = np.zeros(n * rand.DISTRIBUTIONS[kind][0].itemsize, np.uint8)
    rand.fill(gen.reserve(n), kind, out, **params)
    return out.view(rand.DISTRIBUTIONS[kind][0])


@pytest.mark.parametrize("counter,key,want", [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF, 0xFFFFFFFF), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
])
def test_philox_known_answers(counter, key, want):
    words = rand.philox4x32_10([np.array([c], np.uint32) for c in counter], key)
    assert tuple(int(w[0]) for w in words) == want


def test_same_state_same_bytes_and_each_part_changes_them():
    def first(rng_type=PHILOX, seed=5, offset=0, ordering=DEFAULT):
        g = rand.create(rng_type)
        g.set_seed(seed)
        g.set_offset(offset)
        g.set_ordering(ordering)
        return _gen("Generate", 64, g).tobytes()
    base = first()
    assert first() == base
    for changed in (first(rng_type=XORWOW), first(seed=6), first(offset=1), first(ordering=BEST)):
        assert changed != base
    assert first(ordering=LEGACY) == base  # DEFAULT is LEGACY's alias


def test_calls_continue_the_stream_and_offset_skips_values():
    g = rand.create(PHILOX)
    g.set_seed(11)
    whole = _gen("Generate", 100, g)
    g.set_seed(11)  # resets the stream to the offset
    parts = np.concatenate([_gen("Generate", 30, g), _gen("Uniform", 20, g).view(np.uint32) * 0,
                            _gen("Generate", 50, g)])
    assert (parts[:30] == whole[:30]).all() and (parts[50:] == whole[50:]).all()
    g.set_offset(40)
    assert (_gen("Generate", 60, g) == whole[40:]).all()


def test_chunks_do_not_change_values(monkeypatch):
    g = rand.create(PHILOX)
    want = _gen("Normal", 1000, g)
    monkeypatch.setattr(rand, "_CHUNK", 7)
    g.set_seed(0)
    assert _gen("Normal", 1000, g).tobytes() == want.tobytes()


def test_uniform_ranges_and_moments():
    g = rand.create(XORWOW)
    u = _gen("Uniform", 200_000, g)
    d = _gen("UniformDouble", 200_000, g)
    assert u.dtype == np.float32 and d.dtype == np.float64
    for x in (u, d):
        assert x.min() > 0 and x.max() <= 1
        assert abs(x.mean() - 0.5) < 0.005 and abs(x.var() - 1 / 12) < 0.002
    assert np.unique(u).size > 150_000


@pytest.mark.parametrize("kind,dtype", [("Normal", np.float32), ("NormalDouble", np.float64)])
def test_normal_moments(kind, dtype):
    g = rand.create(PHILOX)
    x = _gen(kind, 200_000, g, mean=3.0, stddev=2.0)
    assert x.dtype == dtype
    assert abs(x.mean() - 3.0) < 0.03 and abs(x.std() - 2.0) < 0.03
    assert abs(((x - 3.0) / 2.0) ** 3).mean() < 2.0  # no heavy tails


@pytest.mark.parametrize("kind", ["LogNormal", "LogNormalDouble"])
def test_lognormal_is_exp_of_normal(kind):
    g = rand.create(PHILOX)
    x = _gen(kind, 100_000, g, mean=0.5, stddev=0.25)
    assert x.min() > 0
    logs = np.log(x.astype(np.float64))
    assert abs(logs.mean() - 0.5) < 0.01 and abs(logs.std() - 0.25) < 0.01


@pytest.mark.parametrize("lam", [0.5, 4.0, 100.0, 1e5, 2e9])
def test_poisson_moments(lam):
    g = rand.create(PHILOX)
    x = _gen("Poisson", 100_000, g, lambda_=lam).astype(np.float64)
    assert abs(x.mean() - lam) < 5 * np.sqrt(lam / 100_000) + 1e-9
    assert abs(x.var() / lam - 1) < 0.05


def test_poisson_small_lambda_frequencies():
    g = rand.create(PHILOX)
    x = _gen("Poisson", 100_000, g, lambda_=1.0)
    freq = np.bincount(x, minlength=4)[:4] / x.size
    np.testing.assert_allclose(freq, [0.3679, 0.3679, 0.1839, 0.0613], atol=0.006)


def test_status_rules():
    for bad, status in ((SOBOL32, "HIPRAND_STATUS_NOT_IMPLEMENTED"), (0, "HIPRAND_STATUS_TYPE_ERROR"),
                        (999, "HIPRAND_STATUS_TYPE_ERROR")):
        with pytest.raises(RandError) as err:
            rand.create(bad)
        assert err.value.status == status
    with pytest.raises(RandError) as err:
        rand.create(MT19937).set_offset(3)
    assert err.value.status == "HIPRAND_STATUS_TYPE_ERROR"
    with pytest.raises(RandError) as err:
        rand.create(PHILOX).set_ordering(201)
    assert err.value.status == "HIPRAND_STATUS_OUT_OF_RANGE"
    for args in (("Normal", 0x1000, 3), ("NormalDouble", 0x1008, 4)):
        with pytest.raises(RandError) as err:
            rand.check_generate(*args)
        assert err.value.status == "HIPRAND_STATUS_LENGTH_NOT_MULTIPLE"
    rand.check_generate("Uniform", 0x1004, 3)
    with pytest.raises(RandError) as err:
        rand.check_generate("Poisson", 0x1000, 4, 0.0)
    assert err.value.status == "HIPRAND_STATUS_OUT_OF_RANGE"
