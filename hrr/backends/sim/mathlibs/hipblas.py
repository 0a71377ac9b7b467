"""hipBLAS on the sim: each call's work is one ``Op`` on its handle's stream, computed with
numpy on device memory with BLAS's semantics (column-major matrices, leading dimensions,
increments that may be negative: element i of a vector with INC < 0 is at (n - 1 - i)*|INC|;
a vector the call writes with increment 0 is refused as an invalid value).

Scalars follow the handle's pointer mode: in host mode ``alpha`` is read when the call is
made and a result is written to host memory before the call returns (the call waits for
its stream, as hipBLAS does); in device mode both are device memory, read or written when
the op runs.
"""
from __future__ import annotations

# Importing the two halves registers their bodies on ``body``.
from hrr.backends.sim.mathlibs import hipblas_matrix, hipblas_vector  # noqa: F401
from hrr.backends.sim.mathlibs.hipblas_common import body

__all__ = ["body"]
