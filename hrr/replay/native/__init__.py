"""Replay's native helper: ``equal_run.c``, a CPython extension built at first use
(``hrr.cextension``: the first C compiler that works, hrr's image cache).

It counts the records after a replayed launch that are equal to it without a Python frame
per record (``hrr.replay.runs`` holds the same rule in Python, used where this cannot be built).
"""
from __future__ import annotations

import functools
from types import ModuleType

from hrr import cextension
from hrr.ccompilers import c_compilers

SOURCES = ("equal_run.c",)
MODULE = "hrr_replay_runs"


@functools.lru_cache(maxsize=None)
def extension() -> tuple[ModuleType | None, str]:
    """The extension (built or taken from the cache), or None and why not."""
    return cextension.build(MODULE, __package__, SOURCES, "replay equal runs", c_compilers("HRR_CC", "gnu"))


__all__ = ["extension"]
