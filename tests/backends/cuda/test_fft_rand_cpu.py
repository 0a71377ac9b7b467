"""The cuda backend's hipFFT and hipRAND bodies without a GPU: a stand-in for libcufft and
libcurand records what each call passes; statuses map to hipFFT's and hipRAND's; plans
and generators that are not live, and execs whose buffers are short of the plan, never
reach the library; a missing library names the wheel to install."""
from __future__ import annotations

from hrr.backends.cuda.mathlibs.live import LiveHandles

import ctypes

import numpy as np
import pytest

from hrr.backends.cuda import mathlibs, memory
from hrr.backends.cuda.mathlibs import hipfft as cfft
from hrr.backends.cuda.mathlibs import hiprand as crand
from hrr.backends.mathlib import LibraryError
from hrr.errors import BackendError
from hrr.hiptypes.mathlibs.hipfft import hipfftResult_t as R
from hrr.hiptypes.mathlibs.hiprand import hiprandStatus as S


class FakeLib:
    """Answers ``results.get(name, 0)`` and logs (name, args); a plan or generator
    creation writes ``handle`` through its first argument."""

    def __init__(self) -> None:
        self.log: list = []
        self.handle, self.results = 0, {}

    def __getattr__(self, name: str):
        def call(*args):
            self.log.append((name, args))
            if name.startswith(("cufftPlan", "curandCreateGenerator")):
                args[0]._obj.value = self.handle
            return self.results.get(name, 0)
        call.argtypes = call.restype = None
        self.__dict__[name] = call
        return call


def raw(args):
    return tuple(a.value if isinstance(a, (ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_ulonglong,
                                           ctypes.c_float, ctypes.c_double)) else a for a in args)


@pytest.fixture
def fake(monkeypatch):
    lib = FakeLib()
    monkeypatch.setattr(cfft, "load", lambda name, wheel: lib)
    monkeypatch.setattr(crand, "load", lambda name, wheel: lib)
    monkeypatch.setattr(cfft, "_plans", {})
    monkeypatch.setattr(crand, "_offsets", {})
    monkeypatch.setattr(crand, "_live", LiveHandles(crand._S.HIPRAND_STATUS_NOT_INITIALIZED, "hiprandGenerator_t"))
    monkeypatch.setattr(cfft, "fits", lambda addr, n: True)
    return lib


FFT, RAND = cfft.body.bodies, crand.body.bodies


def test_a_missing_library_names_its_wheel(monkeypatch):
    monkeypatch.setattr(mathlibs, "_loaded", {})

    def not_found(libname):
        raise RuntimeError(f"lib{libname}.so not found")
    import cuda.pathfinder
    monkeypatch.setattr(cuda.pathfinder, "load_nvidia_dynamic_lib", not_found)
    for fn, wheel in ((cfft.cufft, "nvidia-cufft"), (crand.curand, "nvidia-curand")):
        with pytest.raises(BackendError) as err:
            fn()
        assert wheel in str(err.value) and "hrr[cuda]" in str(err.value)


def test_a_plan_is_hrrs_number_even_for_cufft_handle_zero(fake):
    status, plan = FFT["hipfftPlan1d"](8, 41, 2)
    assert status == R.HIPFFT_SUCCESS and int(plan) > cfft.PLAN_BASE
    assert fake.log[-1][0] == "cufftPlan1d" and raw(fake.log[-1][1][1:]) == (8, 41, 2)
    live = cfft.handle_lookup("fft_plan")(plan)
    assert live.handle == 0
    FFT["hipfftExecC2C"](live, 0x1000, 0x1000, -1)
    assert fake.log[-1][0] == "cufftExecC2C" and raw(fake.log[-1][1]) == (0, 0x1000, 0x1000, -1)
    FFT["hipfftExecD2Z"](live, 0x1000, 0x2000)
    assert raw(fake.log[-1][1]) == (0, 0x1000, 0x2000)
    FFT["hipfftSetStream"](live, 0)
    assert raw(fake.log[-1][1]) == (0, None)
    FFT["hipfftDestroy"](live)
    calls = len(fake.log)
    with pytest.raises(LibraryError) as err:
        cfft.handle_lookup("fft_plan")(plan)
    assert err.value.status == R.HIPFFT_INVALID_PLAN and len(fake.log) == calls


@pytest.mark.parametrize("embed", [np.array([10], np.int32), [10]])
def test_plan_many_passes_int_arrays_or_null(fake, embed):
    FFT["hipfftPlanMany"](1, [8], None, 1, 0, None, 1, 0, 105, 3)
    args = fake.log[-1][1]
    assert list(args[2]) == [8] and args[3] is None and args[6] is None
    FFT["hipfftPlanMany"](1, np.array([8], np.int32), embed, 2, 20, [9], 1, 9, 42, 2)
    args = fake.log[-1][1]
    assert list(args[3]) == [10] and list(args[6]) == [9] and raw(args[4:6]) == (2, 20)
    with pytest.raises(LibraryError) as err:
        FFT["hipfftPlanMany"](4, [2, 2, 2, 2], None, 1, 0, None, 1, 0, 41, 1)
    assert err.value.status == R.HIPFFT_INVALID_VALUE


def test_cufft_results_become_hipfft_results(fake):
    fake.results["cufftPlan2d"] = 8
    with pytest.raises(LibraryError) as err:
        FFT["hipfftPlan2d"](0, 4, 41)
    assert err.value.status == R.HIPFFT_INVALID_SIZE
    fake.results["cufftPlan3d"] = 15   # a license error: hipFFT has no such result
    with pytest.raises(LibraryError) as err:
        FFT["hipfftPlan3d"](2, 2, 2, 41)
    assert err.value.status == R.HIPFFT_INTERNAL_ERROR


def test_curand_types_map_and_parameters_pass(fake):
    fake.handle = 0xABC0
    status, gen = RAND["hiprandCreateGenerator"](405)
    assert status == S.HIPRAND_STATUS_SUCCESS and int(gen) == 0xABC0
    assert raw(fake.log[-1][1][1:]) == (161,)   # CURAND_RNG_PSEUDO_PHILOX4_32_10
    with pytest.raises(LibraryError) as err:
        RAND["hiprandCreateGenerator"](1234)
    assert err.value.status == S.HIPRAND_STATUS_TYPE_ERROR
    g = crand.handle_lookup("rand_generator")(gen)
    RAND["hiprandSetPseudoRandomGeneratorSeed"](g, 2**64 + 5)
    seeds = [raw(a) for n, a in fake.log if n == "curandSetPseudoRandomGeneratorSeed"]
    assert seeds[-1] == (0xABC0, 5)
    RAND["hiprandGenerateNormal"](g, 0x5000, 16, 1.5, 0.5)
    assert fake.log[-1][0] == "curandGenerateNormal" and raw(fake.log[-1][1]) == (0xABC0, 0x5000, 16, 1.5, 0.5)
    RAND["hiprandGeneratePoisson"](g, 0x5000, 16, 3.0)
    assert raw(fake.log[-1][1]) == (0xABC0, 0x5000, 16, 3.0)
    fake.results["curandGenerateUniform"] = 105
    with pytest.raises(LibraryError) as err:
        RAND["hiprandGenerateUniform"](g, 0x5000, 3)
    assert err.value.status == S.HIPRAND_STATUS_LENGTH_NOT_MULTIPLE
    RAND["hiprandDestroyGenerator"](g)
    with pytest.raises(LibraryError) as err:
        crand.handle_lookup("rand_generator")(gen)
    assert err.value.status == S.HIPRAND_STATUS_NOT_INITIALIZED


def test_setting_a_seed_or_offset_starts_the_sequence_again(fake):
    """hipRAND begins at (seed, offset) again whenever either is set, the same value too;
    cuRAND went on where it was (H100, 2026-12-05): each set is made as a change (another
    value first), and the offset the program gave is set again after a seed."""
    fake.handle = 0xABC0
    g = crand.handle_lookup("rand_generator")(RAND["hiprandCreateGenerator"](405)[1])
    RAND["hiprandSetGeneratorOffset"](g, 40)
    del fake.log[:]
    RAND["hiprandSetPseudoRandomGeneratorSeed"](g, 7)
    assert [(n, raw(a)[1]) for n, a in fake.log] == [
        ("curandSetPseudoRandomGeneratorSeed", 6), ("curandSetPseudoRandomGeneratorSeed", 7),
        ("curandSetGeneratorOffset", 41), ("curandSetGeneratorOffset", 40)]
    del fake.log[:]
    RAND["hiprandSetGeneratorOffset"](g, 0)
    assert [(n, raw(a)[1]) for n, a in fake.log] == [("curandSetGeneratorOffset", 1), ("curandSetGeneratorOffset", 0)]
    RAND["hiprandDestroyGenerator"](g)
    assert 0xABC0 not in crand._offsets


def test_every_function_is_typed_with_the_arity_it_is_called_with(fake):
    cfft.cufft()
    crand.curand()
    assert len(fake.cufftPlanMany.argtypes) == 11 and fake.cufftExecC2C.argtypes[-1] is ctypes.c_int
    assert len(fake.curandGenerateLogNormalDouble.argtypes) == 5
    assert fake.curandGeneratePoisson.argtypes[-1] is ctypes.c_double
    assert fake.curandGenerate.restype is ctypes.c_int


class FakeDriver:
    """cuMemGetAddressRange over one device allocation [0x10000, 0x10000 + 256)."""

    def cuMemGetAddressRange(self, addr):
        if 0x10000 <= addr < 0x10100:
            return (0, 0x10000, 256)
        return (1, 0, 0)


def test_an_exec_whose_buffers_are_short_of_the_plan_never_reaches_cufft(monkeypatch):
    lib = FakeLib()
    monkeypatch.setattr(cfft, "load", lambda name, wheel: lib)
    monkeypatch.setattr(cfft, "_plans", {})
    monkeypatch.setattr(cfft, "driver", lambda: FakeDriver())
    monkeypatch.setattr(memory, "_pinned", {0x90000: 64})
    plan = cfft.handle_lookup("fft_plan")(FFT["hipfftPlan1d"](8, 41, 2)[1])   # 128 bytes a side
    FFT["hipfftExecC2C"](plan, 0x10000, 0x10080, -1)
    assert lib.log[-1][0] == "cufftExecC2C"
    calls = len(lib.log)
    for idata, odata in ((0x10000, 0x10081), (0x10081, 0x10000), (0x10000, 0), (0x90000, 0x10000)):
        with pytest.raises(LibraryError) as err:
            FFT["hipfftExecC2C"](plan, idata, odata, -1)
        assert err.value.status == R.HIPFFT_INVALID_VALUE and "past the allocation" in str(err.value)
    assert len(lib.log) == calls
    monkeypatch.setattr(memory, "_pinned", {0x90000: 128})
    FFT["hipfftExecC2C"](plan, 0x90000, 0x10000, -1)   # pinned memory this backend made
    many = cfft.handle_lookup("fft_plan")(FFT["hipfftPlanMany"](1, [8], [8], 2, 16, [8], 1, 8, 41, 1)[1])
    with pytest.raises(LibraryError):   # a stride of 2 reaches 15 elements: 120 bytes from 0x10010
        FFT["hipfftExecC2C"](many, 0x10090, 0x10000, -1)
    FFT["hipfftExecC2C"](many, 0x10000, 0x10080, -1)
