"""A range of records by sequence number: ``hrr dump --calls`` and ``hrr replay --calls``."""
from __future__ import annotations

import attrs

from hrr.errors import UsageError


@attrs.frozen
class CallRange:
    """Sequence numbers ``start <= seq < stop`` (``stop`` None: no end), as a Python slice."""

    start: int = 0
    stop: int | None = None

    def __contains__(self, seq: object) -> bool:
        return type(seq) is int and seq >= self.start and (self.stop is None or seq < self.stop)

    def past(self, seq: object) -> bool:
        """True once ``seq`` is at or beyond the end (capture writes records in seq order)."""
        return self.stop is not None and type(seq) is int and seq >= self.stop


def parse_range(text: str) -> CallRange:
    """Parse ``N`` (only call N), ``N:M`` (N to M-1), ``:M`` or ``N:``; UsageError if malformed."""
    hint = "RANGE is N, N:M (M excluded), :M or N: with non-negative call numbers"

    def number(part: str) -> int:
        if not part.strip().isdigit():
            raise UsageError(f"--calls {text!r}: {part!r} is not a non-negative call number", hint=hint)
        return int(part)

    if ":" not in text:
        n = number(text)
        return CallRange(n, n + 1)
    head, _, tail = text.partition(":")
    start = number(head) if head.strip() else 0
    stop = number(tail) if tail.strip() else None
    if stop is not None and stop <= start:
        raise UsageError(f"--calls {text!r} is empty", hint=hint)
    return CallRange(start, stop)
