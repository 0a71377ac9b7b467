"""A backend's bodies, registered by name where they are written.

Each family module of a backend (``device_calls``, ``memory_calls``, ``stream_calls``,
``event_calls``, ``module_calls``, ``graph_calls``, ``pool_calls``) makes one
``Bodies`` for the catalogue families it covers; a body function is marked ``@body``
(registered under its name), and calls that are a table entry (one driver call, a
constant) are given with ``body.table({...})``. A body for a row of another family, or
for a name twice, fails at import; ``gather`` joins a backend's families for
``surface.build``.
"""
from __future__ import annotations

from typing import Callable, Iterable, Mapping, TypeVar

from hrr.api.catalogue import CATALOGUE

F = TypeVar("F", bound=Callable)


class Bodies:
    """The bodies of the catalogue rows of ``families`` on one backend."""

    def __init__(self, *families: str) -> None:
        self.families = families
        self.bodies: dict[str, Callable] = {}
        self.tabled: dict[str, Callable] = {}   # the ones given as table entries

    def __call__(self, fn: F) -> F:
        """``@body``: register ``fn`` as the body of the row it is named after."""
        self._add(fn.__name__, fn)
        return fn

    def table(self, entries: Mapping[str, Callable]) -> None:
        """Register each entry (row name -> body) of a table."""
        for name, fn in entries.items():
            self._add(name, fn)
            self.tabled[name] = fn

    def _add(self, name: str, fn: Callable) -> None:
        row = CATALOGUE.get(name)
        if row is None or row.family not in self.families:
            raise ValueError(f"{name} is not a catalogue row of {'/'.join(self.families)}")
        if name in self.bodies:
            raise ValueError(f"{name} has two bodies")
        self.bodies[name] = fn


def gather(families: Iterable[Bodies]) -> dict[str, Callable]:
    """Every family's bodies in one mapping (row name -> body)."""
    out: dict[str, Callable] = {}
    for family in families:
        twice = out.keys() & family.bodies.keys()
        if twice:
            raise ValueError(f"bodies registered twice: {sorted(twice)}")
        out.update(family.bodies)
    return out


def tables(families: Iterable[Bodies]) -> dict[str, Callable]:
    """Every family's table entries in one mapping."""
    return {name: fn for family in families for name, fn in family.tabled.items()}
