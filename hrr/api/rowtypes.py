"""What a catalogue row is made of: ``Api`` (a call), ``Param`` (a parameter and its role),
``Out`` (an output), ``LaunchShape``, and the shorthands ``P``, ``H`` and ``O`` the rows are
written with. ``hrr.api.catalogue`` documents the roles and holds the rows; the math
libraries' rows (``hrr.api.mathlibs``) are written with the same types.
"""
from __future__ import annotations

from typing import Any

import attrs

REAL, NOOP, UNREPLAYABLE = "real", "noop", "unreplayable"


@attrs.frozen
class Param:
    """One parameter of a call, in hip-python's positional order."""

    name: str
    role: str
    kind: str | None = None  # handle kind or enum name
    size: str | None = None  # the parameter that holds this buffer's byte count
    optional: bool = False   # may be omitted by the caller: ``default`` is passed instead
    default: Any = None
    span: int | None = None  # bytes a ``ptr`` reaches when no parameter holds its size
    elem: int = 1            # bytes per unit of ``size`` / the ``rows`` width
    rows: tuple[str, str, str] | None = None  # (pitch, width, height) of a strided region
    replay_from: str | None = None  # the output whose recorded value replay passes instead

    def extent(self, pitch: int, width: int, height: int) -> int:
        """The bytes a strided region of ``height`` rows spans (0 when it has no row)."""
        return pitch * (height - 1) + width * self.elem if height and width else 0


@attrs.frozen
class Out:
    """One output of a call, in the order hip-python returns them after the error."""

    name: str
    role: str
    kind: str | None = None
    size: str | None = None
    per: str | None = None   # an allocation of ``size`` units of this output's bytes


@attrs.frozen
class LaunchShape:
    """Where a launch row keeps its shape: ``grid``/``block`` name three scalar parameters
    or one ``dim3`` parameter; ``kernel_params``/``extra`` the argument parameters."""

    grid: tuple[str, ...]
    block: tuple[str, ...]
    shared: str
    kernel_params: str
    extra: str | None = None


@attrs.frozen
class Api:
    """A catalogue row: a HIP call, how it is recorded and how it replays."""

    name: str
    family: str
    params: tuple[Param, ...] = ()
    outs: tuple[Out, ...] = ()
    replay: str = REAL
    reason: str = ""            # why it is a no-op or unreplayable
    destroys: str | None = None  # handle kind or "alloc" the first parameter releases;
                                 # "device": everything (hipDeviceReset)
    stream: str | None = None    # the parameter naming the stream the work goes to
    sync: bool = False           # the call waits for device work (a capture sync point)
    volatile: bool = False       # its error may differ between runs (e.g. NotReady)
    module: str = "hip"          # "hip", "hiprtc" or a math library's ("hipblas", ...)
    waits: str | None = None     # what a successful return proves complete (see above)
    effect: str | None = None    # an irregular device effect (see above)
    pure: bool = False           # a query with no device effect
    launch: LaunchShape | None = None
    replays_as: str | None = None

    def param_index(self, name: str) -> int:
        for i, p in enumerate(self.params):
            if p.name == name:
                return i
        raise KeyError(f"{self.name} has no parameter {name!r}")

    def size_index(self, item: Any) -> int | None:
        """The index of the parameter that gives ``item``'s size (a Param or an Out), or None
        when it names none."""
        return self.param_index(item.size) if item.size else None


def P(name: str, role: str = "value", kind: str | None = None, size: str | None = None,
      optional: bool = False, default: Any = None, span: int | None = None, elem: int = 1,
      rows: tuple[str, str, str] | None = None, replay_from: str | None = None) -> Param:
    return Param(name, role, kind, size, optional, default, span, elem, rows, replay_from)


def H(name: str, kind: str) -> Param:
    return Param(name, "handle", kind)


def O(name: str,  # noqa: E743 - the catalogue reads P(...), H(...), O(...)
       role: str = "value", kind: str | None = None, size: str | None = None,
       per: str | None = None) -> Out:
    return Out(name, role, kind, size, per)


STREAM = H("stream", "stream")
