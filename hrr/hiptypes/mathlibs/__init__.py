"""The math libraries hip-python binds beside ``hip`` (``from hip import hipblas``, ...):
``LIBRARIES``, the one list of them every layer reads, and each family's types.

A family is one name in ``LIBRARIES`` and one module of that name in each of
``hrr.hiptypes.mathlibs`` (its enums and ``TYPES``), ``hrr.api.mathlibs`` (its catalogue
rows), ``hrr.backends.sim.mathlibs`` and ``hrr.backends.cuda.mathlibs`` (its bodies); the
``hip`` backend passes hip-python's own module through. docs/math-libraries.md says how one
is added.
"""
from __future__ import annotations

import enum
import importlib
from typing import Any, Mapping

import attrs

from hrr.hiptypes.enums import ENUM_TYPES
from hrr.hiptypes.installed import RELEASES
from hrr.hiptypes.pointers import Handle

#: Every math-library family, by hip-python's module name (the registration list).
LIBRARIES: tuple[str, ...] = ("hipblas", "hipfft", "hiprand")


@attrs.frozen
class LibraryTypes:
    """What every layer needs of one family: its module name, the status enum each of its
    calls returns first, the status a HIP-side failure of an argument becomes, and its enums."""

    module: str
    status: Any                       # the enum type (hipblasStatus_t)
    success: Any                      # its success member
    statuses: Mapping[str, Any]       # hipError_t name of a failed conversion -> status
    fallback: Any                     # the status of any other failure
    enums: tuple[Any, ...] = ()
    real: Any = None                  # hip-python's own module, when installed
    constants: Mapping[str, int] = attrs.field(factory=dict)  # its plain ints (hipFFT's HIPFFT_FORWARD)
    #: hip-python's other names of its enums (hipfft's ``hipfftResult`` is ``hipfftResult_t``)
    aliases: Mapping[str, Any] = attrs.field(factory=dict)

    def status_of(self, hip_error_name: str) -> Any:
        """The status a failed argument conversion (a hipError_t name) becomes."""
        return self.statuses.get(hip_error_name, self.fallback)


class LibraryHandle(Handle):
    """A math library's handle as hrr's backends give it to the app (a hipblasHandle_t...):
    hip-python gives a ``Pointer``; ``int(h)`` is its value either way."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<LibraryHandle 0x{self._value:x}>"


def real_library(name: str) -> Any:
    """hip-python's own module ``name`` (7.x's ``hip.<name>``, else 10.x's
    ``rocm.bindings.<name>``), or None when no installed release has it."""
    spellings = {7: f"hip.{name}", 10: f"rocm.bindings.{name}"}
    for major in (7, 10):
        if major not in RELEASES:
            continue
        try:
            module = importlib.import_module(spellings[major])
        except Exception:  # noqa: BLE001 - absent or broken: hrr's look-alikes stand in
            continue
        if getattr(module, "SUPPORTED_APIS", None) is None:   # not hrr's own module
            return module
    return None


def library_enum(real: Any, name: str, members: Mapping[str, int]) -> Any:
    """hip-python's enum ``name`` from its module ``real`` when installed, else an IntEnum
    with the same members and values; registered in ``ENUM_TYPES`` for the ``enum`` role."""
    found = getattr(real, name, None) if real is not None else None
    enum_type = found if found is not None else enum.IntEnum(name, dict(members))
    ENUM_TYPES[name] = enum_type
    return enum_type


def library_types(name: str) -> LibraryTypes:
    """The ``TYPES`` of family ``name``."""
    return importlib.import_module(f"hrr.hiptypes.mathlibs.{name}").TYPES


TYPES: dict[str, LibraryTypes] = {name: library_types(name) for name in LIBRARIES}
#: The enum names of every family (hip's and hiprtc's modules do not offer them).
LIBRARY_ENUMS: frozenset[str] = frozenset(e.__name__ for t in TYPES.values() for e in t.enums)

__all__ = ["LIBRARIES", "LibraryTypes", "LibraryHandle", "TYPES", "LIBRARY_ENUMS", "real_library", "library_enum",
           "library_types"]
