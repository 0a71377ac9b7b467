"""Runs of equal launch records: what replay takes after a launch without looking at each.

A program that launches the same kernel with the same arguments many times in a row records
one launch record per call, equal but for its sequence number. Once replay's launch runner has
checked and made the first (``hrr.replay.launches``), the records equal to it that follow are
taken here in one step: counted (``equal_run``: C from ``hrr.replay.native`` where it builds,
else ``python_equal_run``, the same rule) and handed to the backend's prepared launch to make
that many times (cuda: ``PreparedLaunch.repeat``, through a CUDA graph for long runs).

Equal means strictly: the same types all the way down (1, 1.0 and True differ), every field but
the sequence number, which must be a non-negative int.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

from hrr.api.wire import SEQ, WIRE_LEN
from hrr.replay import native

#: ``equal_run(items, template, limit) -> (count, item)``.
EqualRun = Callable[[Iterator[Any], list, int], tuple[int, Any]]


def _strict_equal(a: Any, b: Any, depth: int = 0) -> bool:
    if a is b:
        return True
    t = type(a)
    if t is not type(b) or depth > 32:
        return False
    if t in (int, str, bytes, float):
        return bool(a == b)
    if t is list:
        return len(a) == len(b) and all(_strict_equal(x, y, depth + 1) for x, y in zip(a, b, strict=True))
    if t is dict:
        if len(a) != len(b):
            return False
        for key, value in a.items():
            if type(key) is not str or key not in b or not _strict_equal(value, b[key], depth + 1):
                return False
        return True
    return False


def _matches(item: Any, template: list) -> bool:
    if type(item) is not tuple or len(item) != 3:
        return False
    value = item[2]
    if type(value) is not list or len(value) != WIRE_LEN:
        return False
    seq = value[SEQ]
    if type(seq) is not int or seq < 0:
        return False
    return all(_strict_equal(value[i], template[i]) for i in range(WIRE_LEN) if i != SEQ)


def python_equal_run(items: Iterator[Any], template: list, limit: int) -> tuple[int, Any]:
    """Take items from ``items`` while each is ``(index, offset, record)`` with a record equal
    to ``template`` but for its seq, at most ``limit``: how many, and the first item taken that
    was not one (None when the limit was reached or ``items`` ended)."""
    if type(template) is not list or len(template) != WIRE_LEN:
        raise ValueError("equal_run: template must be a wire record (a list of 7)")
    count = 0
    while count < limit:
        item = next(items, None)
        if item is None:
            break
        if not _matches(item, template):
            return count, item
        count += 1
    return count, None


def repeat_launch(again: Callable[[], Any], n: int) -> tuple[int, Any]:
    """Make the prepared launch ``again`` n times, stopping at the first that fails: how many
    were made, and the last result (the failure's, when one failed). A backend's prepared
    launch may offer ``repeat(n)`` doing this itself (cuda: from C, long runs as graphs)."""
    repeat = getattr(again, "repeat", None)
    if repeat is not None:
        return repeat(n)
    made, result = 0, None
    while made < n:
        result = again()
        if int(result[0]):
            return made, result
        made += 1
    return made, result


def equal_run() -> EqualRun:
    """The C ``equal_run`` where the extension builds, else ``python_equal_run``."""
    module, _ = native.extension()
    return module.equal_run if module is not None else python_equal_run


__all__ = ["EqualRun", "equal_run", "python_equal_run", "repeat_launch"]
