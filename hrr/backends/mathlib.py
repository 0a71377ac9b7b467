"""What every backend's math libraries share: ``LibraryError`` (a body's failure with the
library's status) and ``build_library``, which builds a family's module from its catalogue
rows around a backend's bodies, as ``surface.build`` builds ``hip``.

A library call returns its status enum first (``hipblasStatus_t``), never a ``hipError_t``,
and leaves HIP's last error alone; a failed argument conversion (a dead handle, a value
outside an enum) becomes the status ``LibraryTypes.status_of`` names.
"""
from __future__ import annotations

import types
from typing import Any, Callable, Mapping

from hrr.api.catalogue import rows
from hrr.backends import surface
from hrr.hiptypes.mathlibs import TYPES, LibraryTypes


class LibraryError(Exception):
    """Raised by a math-library body: the call returns ``status`` (a member of its enum)."""

    def __init__(self, status: Any, detail: str = "") -> None:
        super().__init__(detail or getattr(status, "name", str(status)))
        self.status = status


def frame_namespace(library: LibraryTypes) -> dict[str, Any]:
    """The names a library frame's source uses: ``_OK``, ``LibraryError``, ``HipError``,
    ``_status_of``."""
    return {"_OK": (library.success,), "LibraryError": LibraryError, "HipError": surface.HipError,
            "_status_of": lambda exc: library.status_of(exc.code.name)}


def build_library(name: str, backend: str, bodies: Mapping[str, Callable], frame: surface.Frame,
                  handle: Callable[[str], Callable]) -> types.ModuleType:
    """Family ``name``'s module on ``backend``: a function per catalogue row of the family
    that has a body, hip-python's other names of the module, the library's enums."""
    library = TYPES[name]
    return surface.build(f"hrr.backends.{backend}.{name}", f"hrr {backend} backend: hip-python's {name} surface",
                         bodies, frame, handle, catalogue=[r for r in rows() if r.module == name],
                         library=library)


__all__ = ["LibraryError", "build_library", "frame_namespace"]
