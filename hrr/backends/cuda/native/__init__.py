"""Replay's prepared launch on the cuda backend: ``prepared_launch.c``, a CPython extension
built at first use (``hrr.cextension``: the first C compiler that works, hrr's image cache).

Replay asks ``hrr.backends.cuda.prepare_launch`` for a zero-argument launch of a record it has
validated; the records after it that are equal to it make that launch again through the
extension's ``PreparedLaunch`` (cuLaunchKernel from C), with no Python in between. Where the
extension cannot be built, the prepared launch is the Python one (``launch_kernargs`` with
fixed arguments): the same driver call, slower.
"""
from __future__ import annotations

from hrr import cextension

SOURCES = ("prepared_launch.c",)
MODULE = "hrr_cuda_launch"

extension = cextension.extension_of(MODULE, __package__, SOURCES, "cuda prepared launch")

__all__ = ["extension"]
