"""hipRAND on the sim: a generator holds its ``Generator`` state (``rand_generators``) and
the stream it is bound to; a generate call checks its arguments and takes the next ``n``
values of the generator's stream when it is called, and writes them when its op runs (an
output outside device-visible memory faults then, as a kernel's access does)."""
from __future__ import annotations

from typing import Any, Callable

import attrs

from hrr.backends.bodies import Bodies
from hrr.backends.mathlib import LibraryError
from hrr.backends.sim.device import current as _dev
from hrr.backends.sim.mathlibs import handles
from hrr.backends.sim.mathlibs import rand_generators as rand
from hrr.backends.sim.streams import Op, Stream
from hrr.hiptypes.mathlibs.hiprand import hiprandStatus

body = Bodies("hiprand")
_S = hiprandStatus


@attrs.define(eq=False)
class RandGenerator:
    """A hiprandGenerator_t: its state and the stream its work goes to."""

    value: int
    state: rand.Generator
    stream: Stream


def _checked(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except rand.RandError as exc:
        raise LibraryError(_S[exc.status], str(exc)) from None


@body
def hiprandCreateGenerator(rng_type: Any) -> tuple:
    state = _checked(lambda: rand.create(int(rng_type)))
    return (_S.HIPRAND_STATUS_SUCCESS,
            handles.create("rand_generator", lambda v: RandGenerator(v, state, _dev().scheduler.null)))


@body
def hiprandDestroyGenerator(generator: RandGenerator) -> None:
    handles.destroy("rand_generator", generator.value)


@body
def hiprandSetStream(generator: RandGenerator, stream: Stream) -> None:
    generator.stream = stream


@body
def hiprandSetPseudoRandomGeneratorSeed(generator: RandGenerator, seed: int) -> None:
    generator.state.set_seed(int(seed))


@body
def hiprandSetGeneratorOffset(generator: RandGenerator, offset: int) -> None:
    _checked(lambda: generator.state.set_offset(int(offset)))


@body
def hiprandSetGeneratorOrdering(generator: RandGenerator, order: Any) -> None:
    _checked(lambda: generator.state.set_ordering(int(order)))


def _generate(distribution: str, *names: str) -> Callable[..., None]:
    dtype, _ = rand.DISTRIBUTIONS[distribution]

    def generate(generator: RandGenerator, output_data: int, n: int, *values: float) -> None:
        params = dict(zip(names, (float(v) for v in values), strict=True))
        _checked(lambda: rand.check_generate(distribution, output_data, n, params.get("lambda_")))
        if n <= 0:
            return
        nbytes, memory = n * dtype.itemsize, _dev().memory
        draw = generator.state.reserve(n)

        def run() -> None:
            rand.fill(draw, distribution, memory.resolve_for_kernel(output_data, nbytes), **params)
        label = f"hiprandGenerate{'' if distribution == 'Generate' else distribution}(n={n})"
        _dev().submit(generator.stream, lambda: Op(label, run, 5.0 + nbytes / 5_000))
    return generate


body.table({
    "hiprandGenerate": _generate("Generate"),
    "hiprandGenerateUniform": _generate("Uniform"),
    "hiprandGenerateUniformDouble": _generate("UniformDouble"),
    "hiprandGenerateNormal": _generate("Normal", "mean", "stddev"),
    "hiprandGenerateNormalDouble": _generate("NormalDouble", "mean", "stddev"),
    "hiprandGenerateLogNormal": _generate("LogNormal", "mean", "stddev"),
    "hiprandGenerateLogNormalDouble": _generate("LogNormalDouble", "mean", "stddev"),
    "hiprandGeneratePoisson": _generate("Poisson", "lambda_"),
})

__all__ = ["body", "RandGenerator"]
