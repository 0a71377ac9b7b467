"""hipRAND's catalogue rows (the host generator API), in hip-python 7.x's ``hiprand``
names and argument order. A generator is a ``rand_generator`` handle; a generate call's
output is ``n`` values in device memory (``lib_array``), written on the stream the
generator is bound to (hiprandSetStream)."""
from __future__ import annotations

from hrr.api.rowtypes import Api, H, O, P, Param

FAMILY = "hiprand"
HANDLE_KINDS = ("rand_generator",)
_GEN = H("generator", "rand_generator")
# generate call suffix -> (bytes a value, its distribution's parameters)
GENERATE: dict[str, tuple[int, tuple[str, ...]]] = {
    "": (4, ()), "Uniform": (4, ()), "UniformDouble": (8, ()),
    "Normal": (4, ("mean", "stddev")), "NormalDouble": (8, ("mean", "stddev")),
    "LogNormal": (4, ("mean", "stddev")), "LogNormalDouble": (8, ("mean", "stddev")),
    "Poisson": (4, ("lambda_",)),
}


def _row(name: str, *params: Param, **fields: object) -> Api:
    return Api(name, FAMILY, tuple(params), module=FAMILY, **fields)  # type: ignore[arg-type]


def _generate(suffix: str) -> Api:
    elem, extra = GENERATE[suffix]
    return _row(f"hiprandGenerate{suffix}", _GEN, P("output_data", "lib_array", "elements n", elem=elem), P("n"),
                *(P(name) for name in extra))


ROWS: tuple[Api, ...] = (
    Api("hiprandCreateGenerator", FAMILY, (P("rng_type", "enum", "hiprandRngType"),),
        (O("generator", "handle", "rand_generator"),), module=FAMILY),
    _row("hiprandDestroyGenerator", _GEN, destroys="rand_generator"),
    _row("hiprandSetStream", _GEN, H("stream", "stream")),
    _row("hiprandSetPseudoRandomGeneratorSeed", _GEN, P("seed")),
    _row("hiprandSetGeneratorOffset", _GEN, P("offset")),
    _row("hiprandSetGeneratorOrdering", _GEN, P("order", "enum", "hiprandOrdering")),
    *(_generate(s) for s in GENERATE),
)

__all__ = ["ROWS", "HANDLE_KINDS", "FAMILY", "GENERATE"]
