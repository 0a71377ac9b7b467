"""A stand-in for cuda.bindings' runtime or driver in the cuda backend's CPU tests."""
from __future__ import annotations


class FakeCuda:
    """Records every call ``(name, function, args)`` in ``log`` (except those whose names
    start with ``quiet``) and answers ``results[function]``, else ``(0, 0x77)``."""

    def __init__(self, name: str, log: list, results: dict, quiet: tuple[str, ...] = ()) -> None:
        self._name, self._log, self._results, self._quiet = name, log, results, quiet

    def __getattr__(self, fn: str):
        def call(*args):
            if not (self._quiet and fn.startswith(self._quiet)):
                self._log.append((self._name, fn, args))
            return self._results.get(fn, (0, 0x77))
        return call
