"""Replay's native helper: ``equal_run.c``, a CPython extension built at first use
(``hrr.cextension``: the first C compiler that works, hrr's image cache).

It counts the records after a replayed launch that are equal to it without a Python frame
per record (``hrr.replay.runs`` holds the same rule in Python, used where this cannot be built).
"""
from __future__ import annotations

from hrr import cextension

SOURCES = ("equal_run.c",)
MODULE = "hrr_replay_runs"

extension = cextension.extension_of(MODULE, __package__, SOURCES, "replay equal runs")

__all__ = ["extension"]
