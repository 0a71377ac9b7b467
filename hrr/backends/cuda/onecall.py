"""Bodies of the HIP calls that are one CUDA call, and the output converters they share
(used by ``hip_api`` and the per-section body modules alike)."""
from __future__ import annotations

from typing import Any, Callable

from hrr.backends.cuda._errors import hip_error
from hrr.backends.cuda._runtime import STATE as S
from hrr.backends.cuda._runtime import driver


def one_call(path: str, *outs: Callable[[Any], Any], args: Callable[..., tuple] | None = None) -> Callable[..., tuple]:
    """The body of a call that is one CUDA call: ``rt.NAME`` (runtime), ``drv.NAME``
    (driver, with the context made current) or ``cu.NAME`` (driver, as is); arguments in
    the row's order, or as ``args`` maps them, as ints; each of ``outs`` converts an output
    (None when the call failed or CUDA has no such output)."""
    where, name = path.split(".")

    def body(*a: Any) -> tuple:
        a = a if args is None else args(*a)
        api = S.rt if where == "rt" else driver() if where == "drv" else S.drv
        res = getattr(api, name)(*map(int, a))
        if not outs:
            return (hip_error(res[0]),)
        vals = res[1:] if int(res[0]) == 0 else ()
        return (hip_error(res[0]), *(conv(vals[i] if i < len(vals) else None) for i, conv in enumerate(outs)))
    return body


def new(cls: type) -> Callable[[Any], Any]:
    """An output made a ``cls`` (None stays None)."""
    return lambda v: None if v is None else cls(int(v))


def as_int(v: Any) -> int:
    """An output as an int (None: 0)."""
    return int(v or 0)


def cuda_kind(kind: Any) -> int:
    """A hipMemcpyKind as CUDA's: DeviceToDeviceNoCU is CUDA's DeviceToDevice."""
    return 3 if int(kind) == 1024 else int(kind)


__all__ = ["one_call", "new", "as_int", "cuda_kind"]
