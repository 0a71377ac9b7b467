"""The two wire forms of a kernel launch's ``extra.launch``, and the one place that reads both.

Format version 3 (what capture writes) is a list with fixed positions, cheaper to pack,
unpack and store than a map::

    [kernel, grid, block, kernargs, ptrs]            arguments read
    [kernel, grid, block, kernargs, ptrs, offsets]   a launch replayed through kernelParams
    [kernel, grid, block, error]                     arguments not read: ``error`` says why

kernel a str or null; grid, block 3 ints; kernargs bytes; ptrs ``[offset, base, delta]``
triples, one per 8 kernarg bytes at most; offsets each kernel parameter's byte offset.
Versions 1 and 2 wrote a map with those names as keys. Readers accept either form in any
version; the hot replay path (hrr/replay/launches.py) reads the list itself, every other
reader goes through :func:`launch_map`. The launch codec (``hrr.api.roles.launch``)
writes the list and declares its fields (``LAUNCH_RULES``, one rule each: the schema's
and the launch runner's checks are generated from them); they are offered here too.
"""
from __future__ import annotations

from hrr.api.roles.launch import LAUNCH_FIELDS, LAUNCH_FORMS, LAUNCH_RULES, MAX_LAUNCH_PARAMS, launch_list, launch_map

__all__ = ["LAUNCH_FIELDS", "LAUNCH_FORMS", "LAUNCH_RULES", "MAX_LAUNCH_PARAMS", "launch_list", "launch_map"]
