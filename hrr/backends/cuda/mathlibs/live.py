"""The handles a NVIDIA library made for this process and has not destroyed. cuBLAS and
cuRAND check no handle, so a handle argument (an archive's, possibly) must be one of these
before the library sees it."""
from __future__ import annotations

import ctypes
import threading
from typing import Any

from hrr.backends.mathlib import LibraryError
from hrr.hiptypes import as_handle_value
from hrr.hiptypes.mathlibs import LibraryHandle


class LiveHandles:
    """One library's live handles; ``not_live`` is the status a stale or unknown one gets."""

    def __init__(self, not_live: Any, what: str) -> None:
        self._values: set[int] = set()
        self._lock = threading.Lock()
        self._not_live = not_live
        self._what = what

    def add(self, handle: ctypes.c_void_p) -> LibraryHandle:
        """Keep a handle the library just made; the app's object for it."""
        value = handle.value or 0
        with self._lock:
            self._values.add(value)
        return LibraryHandle(value)

    def discard(self, handle: ctypes.c_void_p) -> None:
        """Forget a handle before the library destroys it."""
        with self._lock:
            self._values.discard(handle.value or 0)

    def lookup(self, obj: Any) -> ctypes.c_void_p:
        """A handle argument as the library's pointer, when it is a live one."""
        try:
            value = as_handle_value(obj)
        except TypeError:
            value = 0
        with self._lock:
            live = value in self._values
        if not live:
            raise LibraryError(self._not_live, f"{obj!r} is not a live {self._what}")
        return ctypes.c_void_p(value)


__all__ = ["LiveHandles"]
