"""hipRAND's host generator API computed with numpy: the sim's random number generators.

The sim's sequences are its own (AMD's and NVIDIA's differ from each other and from
these), but a generator's output is a pure function of (type, seed, offset, ordering)
and the calls made on it, so replay on the sim reproduces capture on the sim bit for bit:

* value number ``i`` of a generator's stream (``i`` = offset + values generated since
  the seed, offset or ordering was last set) comes from one Philox4x32-10 block with key
  (seed low word, seed high word) and counter (i low word, i high word, type, ordering),
  HIPRAND_ORDERING_PSEUDO_DEFAULT counting as LEGACY, its alias; each generate call
  consumes ``n`` values, whatever the distribution;
* from a block's words w0..w3: hiprandGenerate gives w0; Uniform (w0 >> 8 + 1) * 2**-24,
  in (0, 1]; UniformDouble (the 53 bits w0:w1 + 1) * 2**-53; Normal and LogNormal
  Box-Muller's cosine branch on u1 = w0:w1, u2 = w2:w3 (53-bit, as UniformDouble) in
  double precision, rounded to float for the single-precision calls; Poisson inverts
  the CDF at u1 over a window of +-40 standard deviations (lambda above 1e9: the normal
  approximation, rounded and clamped to 32 bits).

Uniform and integer values depend on integer arithmetic only; the others use numpy's
log/cos/exp in double precision, so their last bit can differ between numpy builds.
The sim implements the pseudo-random types; quasi-random ones (Sobol) are
HIPRAND_STATUS_NOT_IMPLEMENTED. Failures are ``RandError`` carrying a
``hiprandStatus`` name.
"""
from __future__ import annotations

import math

import attrs
import numpy as np

# hiprandRngType values
PSEUDO_TYPES = {400: "HIPRAND_RNG_PSEUDO_DEFAULT", 401: "HIPRAND_RNG_PSEUDO_XORWOW",
                402: "HIPRAND_RNG_PSEUDO_MRG32K3A", 403: "HIPRAND_RNG_PSEUDO_MTGP32",
                404: "HIPRAND_RNG_PSEUDO_MT19937", 405: "HIPRAND_RNG_PSEUDO_PHILOX4_32_10"}
QUASI_TYPES = {500: "HIPRAND_RNG_QUASI_DEFAULT", 501: "HIPRAND_RNG_QUASI_SOBOL32",
               502: "HIPRAND_RNG_QUASI_SCRAMBLED_SOBOL32", 503: "HIPRAND_RNG_QUASI_SOBOL64",
               504: "HIPRAND_RNG_QUASI_SCRAMBLED_SOBOL64"}
_NO_OFFSET = (403, 404)  # Mersenne twisters: an absolute offset cannot be set
# hiprandOrdering values the pseudo-random types accept; DEFAULT is LEGACY's alias
PSEUDO_ORDERINGS = {100: 100, 101: 103, 102: 102, 103: 103, 104: 104}
ORDERING_DEFAULT = 101

# A generate call's distribution: (output dtype, whether n must be even and the pointer
# aligned to two values, as Box-Muller's pairs need on a GPU)
DISTRIBUTIONS: dict[str, tuple[np.dtype, bool]] = {
    "Generate": (np.dtype(np.uint32), False),
    "Uniform": (np.dtype(np.float32), False),
    "UniformDouble": (np.dtype(np.float64), False),
    "Normal": (np.dtype(np.float32), True),
    "NormalDouble": (np.dtype(np.float64), True),
    "LogNormal": (np.dtype(np.float32), True),
    "LogNormalDouble": (np.dtype(np.float64), True),
    "Poisson": (np.dtype(np.uint32), False),
}
_CHUNK = 1 << 18  # values drawn at once, to bound temporaries


class RandError(Exception):
    """A hipRAND call that fails; ``status`` is the hiprandStatus member's name."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status


@attrs.define
class Generator:
    """One hiprandGenerator_t's state: what its next value's number is made of."""

    rng_type: int
    seed: int = 0
    offset: int = 0
    ordering: int = ORDERING_DEFAULT
    consumed: int = 0  # values generated since the seed, offset or ordering was last set

    def set_seed(self, seed: int) -> None:
        """hiprandSetPseudoRandomGeneratorSeed: resets the stream, keeps the offset."""
        self.seed, self.consumed = int(seed) & (2**64 - 1), 0

    def set_offset(self, offset: int) -> None:
        """hiprandSetGeneratorOffset (HIPRAND_STATUS_TYPE_ERROR for the Mersenne twisters)."""
        if self.rng_type in _NO_OFFSET:
            raise RandError("HIPRAND_STATUS_TYPE_ERROR", f"{PSEUDO_TYPES[self.rng_type]} takes no offset")
        self.offset, self.consumed = int(offset) & (2**64 - 1), 0

    def set_ordering(self, ordering: int) -> None:
        """hiprandSetGeneratorOrdering: a pseudo-random ordering (else OUT_OF_RANGE)."""
        if int(ordering) not in PSEUDO_ORDERINGS:
            raise RandError("HIPRAND_STATUS_OUT_OF_RANGE", f"ordering {int(ordering)} is not a pseudo-random one")
        self.ordering, self.consumed = int(ordering), 0

    def reserve(self, n: int) -> "Draw":
        """Take the next ``n`` values of the stream: what a generate call computes later."""
        start = (self.offset + self.consumed) & (2**64 - 1)
        self.consumed += n
        return Draw(self.rng_type, self.seed, PSEUDO_ORDERINGS[self.ordering], start, n)


@attrs.frozen
class Draw:
    """The values one generate call writes: numbers ``start`` to ``start + n - 1``."""

    rng_type: int
    seed: int
    ordering: int
    start: int
    n: int

    def words(self, first: int, count: int) -> np.ndarray:
        """Philox blocks of values ``first`` .. ``first + count - 1`` (relative to ``start``):
        a (4, count) uint32 array."""
        i = (np.arange(count, dtype=np.uint64) + np.uint64((self.start + first) & (2**64 - 1)))
        return philox4x32_10(
            [(i & 0xFFFFFFFF).astype(np.uint32), (i >> np.uint64(32)).astype(np.uint32),
             np.full(count, self.rng_type, np.uint32), np.full(count, self.ordering, np.uint32)],
            (self.seed & 0xFFFFFFFF, self.seed >> 32))


def create(rng_type: int) -> Generator:
    """hiprandCreateGenerator's checks: a pseudo-random type makes a generator."""
    t = int(rng_type)
    if t in QUASI_TYPES:
        raise RandError("HIPRAND_STATUS_NOT_IMPLEMENTED", f"the sim has no {QUASI_TYPES[t]} generator")
    if t not in PSEUDO_TYPES:
        raise RandError("HIPRAND_STATUS_TYPE_ERROR", f"{t} is no hipRAND generator type")
    return Generator(t)


def check_generate(distribution: str, addr: int, n: int, lambda_: float | None = None) -> None:
    """A generate call's checks before any value is drawn."""
    dtype, pairs = DISTRIBUTIONS[distribution]
    if pairs and (n % 2 or addr % (2 * dtype.itemsize)):
        raise RandError("HIPRAND_STATUS_LENGTH_NOT_MULTIPLE",
                        f"hiprandGenerate{distribution} needs an even n (got {n}) and output aligned to "
                        f"{2 * dtype.itemsize} bytes (got 0x{addr:x})")
    if lambda_ is not None and not lambda_ > 0:
        raise RandError("HIPRAND_STATUS_OUT_OF_RANGE", f"lambda {lambda_} is not positive")


_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_LO = np.uint64(0xFFFFFFFF)


def philox4x32_10(counter: list[np.ndarray], key: tuple[int, int]) -> np.ndarray:
    """The Philox4x32-10 block function (Salmon et al., SC'11) over arrays of counters."""
    c0, c1, c2, c3 = (c.astype(np.uint64) for c in counter)
    k0, k1 = key[0] & 0xFFFFFFFF, key[1] & 0xFFFFFFFF
    for r in range(10):
        if r:
            k0, k1 = (k0 + _W0) & 0xFFFFFFFF, (k1 + _W1) & 0xFFFFFFFF
        p0, p1 = c0 * _M0, c2 * _M1
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ np.uint64(k0), p1 & _LO,
                          (p0 >> np.uint64(32)) ^ c3 ^ np.uint64(k1), p0 & _LO)
    return np.stack([c0, c1, c2, c3]).astype(np.uint32)


def _unit53(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """(0, 1] doubles from 53 bits of two words."""
    m = (hi.astype(np.uint64) << np.uint64(21)) | (lo.astype(np.uint64) >> np.uint64(11))
    return (m + np.uint64(1)).astype(np.float64) * 2.0**-53


def _gaussian(w: np.ndarray) -> np.ndarray:
    u1, u2 = _unit53(w[0], w[1]), _unit53(w[2], w[3])
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


def poisson_cdf(lambda_: float) -> tuple[int, np.ndarray]:
    """The Poisson CDF over lambda +- 40 standard deviations: (first k, cdf from it)."""
    width = int(40 * math.sqrt(lambda_)) + 40
    k0 = max(0, int(lambda_) - width)
    k = np.arange(k0, int(lambda_) + width + 1, dtype=np.float64)
    log_fact = math.lgamma(k0 + 1) + np.concatenate(([0.0], np.cumsum(np.log(k[1:]))))
    pmf = np.exp(k * math.log(lambda_) - lambda_ - log_fact)
    cdf = np.cumsum(pmf)
    return k0, cdf / cdf[-1]


def _poisson(w: np.ndarray, lambda_: float) -> np.ndarray:
    u = _unit53(w[0], w[1])
    if lambda_ > 1e9:
        z = np.sqrt(-2.0 * np.log(u)) * np.cos(2.0 * np.pi * _unit53(w[2], w[3]))
        return np.clip(np.rint(lambda_ + math.sqrt(lambda_) * z), 0, 2**32 - 1).astype(np.uint32)
    k0, cdf = poisson_cdf(lambda_)
    k = np.minimum(np.searchsorted(cdf, u, side="left"), cdf.size - 1) + k0
    return np.minimum(k, 2**32 - 1).astype(np.uint32)


def values(draw: Draw, distribution: str, first: int, count: int,
           mean: float = 0.0, stddev: float = 1.0, lambda_: float = 1.0) -> np.ndarray:
    """Values ``first`` .. ``first + count - 1`` of one generate call, in its output type."""
    dtype, _ = DISTRIBUTIONS[distribution]
    w = draw.words(first, count)
    if distribution == "Generate":
        return w[0]
    if distribution == "Uniform":
        return ((w[0] >> np.uint32(8)).astype(np.float32) + np.float32(1)) * np.float32(2.0**-24)
    if distribution == "UniformDouble":
        return _unit53(w[0], w[1])
    if distribution == "Poisson":
        return _poisson(w, lambda_)
    if dtype == np.float32:  # the C call takes float parameters
        mean, stddev = float(np.float32(mean)), float(np.float32(stddev))
    x = mean + stddev * _gaussian(w)
    return (np.exp(x) if distribution.startswith("LogNormal") else x).astype(dtype)


def fill(draw: Draw, distribution: str, out: np.ndarray, **params: float) -> None:
    """Write one generate call's ``draw.n`` values into ``out`` (a uint8 view at least
    n values long), a chunk at a time."""
    dtype, _ = DISTRIBUTIONS[distribution]
    target = out[:draw.n * dtype.itemsize].view(dtype)
    for first in range(0, draw.n, _CHUNK):
        count = min(_CHUNK, draw.n - first)
        target[first:first + count] = values(draw, distribution, first, count, **params)
