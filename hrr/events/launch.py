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
reader goes through :func:`launch_map`.
"""
from __future__ import annotations

from typing import Any

#: The field names by position, per list length (4: the error form).
LAUNCH_FIELDS: dict[int, tuple[str, ...]] = {
    4: ("kernel", "grid", "block", "error"),
    5: ("kernel", "grid", "block", "kernargs", "ptrs"),
    6: ("kernel", "grid", "block", "kernargs", "ptrs", "offsets"),
}


def launch_map(v: Any) -> Any:
    """``extra.launch`` as the map form: a list of 4, 5 or 6 items becomes the map of its
    fields (unchecked: the schema check types them); a map, or anything else, comes back as it is."""
    if type(v) is list:
        names = LAUNCH_FIELDS.get(len(v))
        if names is not None:
            return dict(zip(names, v, strict=True))
    return v


def launch_list(fields: dict) -> list:
    """The list form of a map-form ``extra.launch`` (its keys as capture writes them)."""
    if "error" in fields:
        return [fields.get("kernel"), fields.get("grid"), fields.get("block"), fields["error"]]
    out = [fields.get("kernel"), fields.get("grid"), fields.get("block"), fields.get("kernargs"), fields.get("ptrs")]
    if "offsets" in fields:
        out.append(fields["offsets"])
    return out


__all__ = ["LAUNCH_FIELDS", "launch_list", "launch_map"]
