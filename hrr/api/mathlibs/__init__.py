"""The math libraries' catalogue rows: one module a family (``hrr.hiptypes.mathlibs``'s
``LIBRARIES``), each with ``ROWS`` and the ``HANDLE_KINDS`` its calls create. The catalogue
appends them after the HIP calls; a row of a family is a row like any other (its
``module`` is hip-python's module name, its ``family`` the same)."""
from __future__ import annotations

import importlib

from hrr.api.rowtypes import Api
from hrr.hiptypes.mathlibs import LIBRARIES

_FAMILIES = [importlib.import_module(f"hrr.api.mathlibs.{name}") for name in LIBRARIES]

ROWS: tuple[Api, ...] = tuple(row for family in _FAMILIES for row in family.ROWS)
HANDLE_KINDS: tuple[str, ...] = tuple(kind for family in _FAMILIES for kind in family.HANDLE_KINDS)

__all__ = ["ROWS", "HANDLE_KINDS"]
