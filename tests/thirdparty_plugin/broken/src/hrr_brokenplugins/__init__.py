"""hrr plugins that cannot load, one per way of being broken (for hrr's tests)."""
from __future__ import annotations

import pluggy

__version__ = "0.0.1"
hookimpl = pluggy.HookimplMarker("hrr")


class Misspelled:
    """A hook name with a typo: pluggy knows no ``hrr_capture_lanch``."""

    @hookimpl
    def hrr_capture_lanch(self, ctx, launch):
        return None


class BadArgs:
    """An argument name the hookspec does not pass."""

    @hookimpl
    def hrr_capture_launch(self, ctx, lnch):
        return None


class Wrapper:
    """Capture hooks are called by hrr one at a time, so they cannot be wrappers."""

    @hookimpl(hookwrapper=True)
    def hrr_capture_launch(self, ctx, launch):
        yield


class RaisesAtConstruction:
    def __init__(self) -> None:
        raise RuntimeError("needs a licence server")
