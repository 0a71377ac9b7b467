"""The sim's math-library handles: each kind's live objects on the current device
(``Device.libraries``, emptied by hipDeviceReset), numbered from the kind's own base."""
from __future__ import annotations

import itertools
from typing import Any, Callable

from hrr.api.mathlibs import HANDLE_KINDS
from hrr.backends.sim.device import current as _dev
from hrr.backends.surface import HipError
from hrr.hiptypes import as_handle_value
from hrr.hiptypes.mathlibs import LibraryHandle

# Handle values of each kind start at their own base, apart from the HIP handles' (0x5x00_0000).
_BASES = {kind: 0x6100_0000 + 0x100_0000 * k for k, kind in enumerate(HANDLE_KINDS)}
_counter = itertools.count(1)


def create(kind: str, make: Callable[[int], Any]) -> LibraryHandle:
    """A new live ``kind`` object ``make(value)``; the app gets its handle."""
    value = _BASES[kind] + 0x10 * next(_counter)
    _dev().libraries.setdefault(kind, {})[value] = make(value)
    return LibraryHandle(value)


def lookup(kind: str, obj: Any) -> Any:
    """The live ``kind`` object the handle ``obj`` names; hipErrorInvalidHandle (the library's
    "not initialised") when none."""
    try:
        value = as_handle_value(obj)
    except TypeError:
        raise HipError("hipErrorInvalidHandle", f"{obj!r} is not a {kind}") from None
    found = _dev().libraries.get(kind, {}).get(value)
    if found is None:
        raise HipError("hipErrorInvalidHandle", f"0x{value:x} is not a live {kind}")
    return found


def destroy(kind: str, value: int) -> None:
    """Forget the live ``kind`` object of handle ``value``."""
    _dev().libraries.get(kind, {}).pop(value, None)


__all__ = ["create", "lookup", "destroy"]
