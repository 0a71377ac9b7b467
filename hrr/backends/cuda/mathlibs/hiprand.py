"""hipRAND on the cuda backend: each call is cuRAND's host API (through ctypes), as
hipRAND itself runs on NVIDIA GPUs. hipRAND's statuses and orderings have cuRAND's values;
its generator types are mapped (``CURAND_TYPES``). cuRAND does not check a generator, so
the live ones are kept here and any other is "not initialised" before cuRAND sees it.

cuRAND's pseudo-random generators are deterministic from (type, seed, offset, ordering)
on one GPU model and library version (HIPRAND_ORDERING_PSEUDO_DYNAMIC excepted), so a
replay on cuda regenerates the bytes its capture on cuda saw.
"""
from __future__ import annotations

import ctypes
from typing import Any, Callable

from hrr.backends.bodies import Bodies
from hrr.backends.cuda.mathlibs import load
from hrr.backends.cuda.mathlibs.live import LiveHandles
from hrr.backends.mathlib import LibraryError
from hrr.hiptypes.mathlibs.hiprand import hiprandStatus

body = Bodies("hiprand")

_S = hiprandStatus
_VP, _U64, _SIZE, _F, _D = ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_size_t, ctypes.c_float, ctypes.c_double
# hiprandRngType value -> curandRngType value
CURAND_TYPES = {0: 0, 400: 100, 401: 101, 402: 121, 403: 141, 404: 142, 405: 161,
                500: 200, 501: 201, 502: 202, 503: 203, 504: 204}
# generate call suffix -> (cuRAND function, its distribution parameters' types)
GENERATE: dict[str, tuple[str, tuple]] = {
    "": ("curandGenerate", ()),
    "Uniform": ("curandGenerateUniform", ()),
    "UniformDouble": ("curandGenerateUniformDouble", ()),
    "Normal": ("curandGenerateNormal", (_F, _F)),
    "NormalDouble": ("curandGenerateNormalDouble", (_D, _D)),
    "LogNormal": ("curandGenerateLogNormal", (_F, _F)),
    "LogNormalDouble": ("curandGenerateLogNormalDouble", (_D, _D)),
    "Poisson": ("curandGeneratePoisson", (_D,)),
}
_ARGTYPES: dict[str, list] = {
    "curandCreateGenerator": [ctypes.POINTER(_VP), ctypes.c_int],
    "curandDestroyGenerator": [_VP],
    "curandSetStream": [_VP, _VP],
    "curandSetPseudoRandomGeneratorSeed": [_VP, _U64],
    "curandSetGeneratorOffset": [_VP, _U64],
    "curandSetGeneratorOrdering": [_VP, ctypes.c_int],
    **{fn: [_VP, _VP, _SIZE, *extra] for fn, extra in GENERATE.values()},
}

_live = LiveHandles(_S.HIPRAND_STATUS_NOT_INITIALIZED, "hiprandGenerator_t")

_typed: list[ctypes.CDLL] = []  # libraries whose functions are typed


def curand() -> ctypes.CDLL:
    """libcurand, loaded and typed at the first hipRAND call (BackendError naming nvidia-curand)."""
    lib = load("curand", "nvidia-curand")
    if lib not in _typed:
        for name, argtypes in _ARGTYPES.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = argtypes, ctypes.c_int
        _typed.append(lib)
    return lib


def status(code: int) -> Any:
    """A curandStatus_t as hiprandStatus."""
    try:
        return _S(code)
    except ValueError:
        return _S.HIPRAND_STATUS_INTERNAL_ERROR


def call(name: str, *args: Any) -> None:
    """cuRAND's ``name``; LibraryError with hipRAND's status when it fails."""
    code = int(getattr(curand(), name)(*args))
    if code:
        raise LibraryError(status(code), f"{name}: cuRAND status {code}")


def handle_lookup(kind: str) -> Callable[[Any], ctypes.c_void_p]:
    """A ``rand_generator`` argument as cuRAND's generator, when it is a live one."""
    return lambda obj: _live.lookup(obj)


@body
def hiprandCreateGenerator(rng_type: Any) -> tuple:
    curand_type = CURAND_TYPES.get(int(rng_type))
    if curand_type is None:
        raise LibraryError(_S.HIPRAND_STATUS_TYPE_ERROR, f"{rng_type!r} is no hipRAND generator type")
    gen = ctypes.c_void_p()
    call("curandCreateGenerator", ctypes.byref(gen), ctypes.c_int(curand_type))
    return (_S.HIPRAND_STATUS_SUCCESS, _live.add(gen))


@body
def hiprandDestroyGenerator(generator: ctypes.c_void_p) -> None:
    _live.discard(generator)
    _offsets.pop(int(generator.value or 0), None)
    call("curandDestroyGenerator", generator)


@body
def hiprandSetStream(generator: ctypes.c_void_p, stream: int) -> None:
    call("curandSetStream", generator, _VP(stream or None))


#: The offset each generator was last given (hipRAND's default: 0), by handle value.
_offsets: dict[int, int] = {}


def _restart(generator: ctypes.c_void_p, seed: int | None) -> None:
    """hipRAND starts a generator's sequence again at (seed, offset) whenever either is set,
    the same value too (rocRAND re-initialises its state); cuRAND, on the H100, went on from
    where it was when the same seed was set again. Setting each to another value first and
    then to the wanted one makes cuRAND begin again at (seed, offset) too."""
    offset = _offsets.get(int(generator.value or 0), 0)
    if seed is not None:
        call("curandSetPseudoRandomGeneratorSeed", generator, _U64(seed ^ 1))
        call("curandSetPseudoRandomGeneratorSeed", generator, _U64(seed))
    call("curandSetGeneratorOffset", generator, _U64(offset ^ 1))
    call("curandSetGeneratorOffset", generator, _U64(offset))


@body
def hiprandSetPseudoRandomGeneratorSeed(generator: ctypes.c_void_p, seed: int) -> None:
    _restart(generator, int(seed) & (2**64 - 1))


@body
def hiprandSetGeneratorOffset(generator: ctypes.c_void_p, offset: int) -> None:
    _offsets[int(generator.value or 0)] = int(offset) & (2**64 - 1)
    _restart(generator, None)


@body
def hiprandSetGeneratorOrdering(generator: ctypes.c_void_p, order: Any) -> None:
    call("curandSetGeneratorOrdering", generator, ctypes.c_int(int(order)))


def _generate(suffix: str) -> Callable[..., None]:
    fn_name, types = GENERATE[suffix]

    def generate(generator: ctypes.c_void_p, output_data: int, n: int, *params: float) -> None:
        call(fn_name, generator, _VP(output_data or None), _SIZE(int(n)),
             *(t(float(v)) for t, v in zip(types, params, strict=True)))
    return generate


body.table({f"hiprandGenerate{s}": _generate(s) for s in GENERATE})

__all__ = ["body", "handle_lookup", "curand", "call", "status", "CURAND_TYPES"]
