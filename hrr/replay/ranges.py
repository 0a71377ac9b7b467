"""``hrr replay --calls RANGE``: which records before the range are set-up, what the
range counts, and its summary line.

RANGE is ``hrr dump``'s (``hrr.events.ranges.parse_range``): ``N``, ``N:M``, ``:M``, ``N:``
by record sequence number, M excluded. Records before N are *set-up*: every call is
replayed (allocations, frees, handles, registrations, copies, memsets, launches, graph
launches and syncs alike, so the range sees the memory and handles it would have seen)
except a pure query that succeeded; nothing before N is checked. Records from M on are
not replayed; they are only read to find the check records of copies made in the range.
"""
from __future__ import annotations

from typing import Any

import attrs

from hrr.api.catalogue import CATALOGUE, pure_queries
from hrr.events.ranges import CallRange


def skipped_in_setup(api: str, err: int) -> bool:
    """True for a record before the range that set-up leaves out: a pure query
    (``Api.pure``: its only effect is the answer it returns) that succeeded. A failed one is
    replayed: its error becomes the thread's last error, which a later hipGetLastError
    returns. Not pure, because they change state: hipGetLastError (clears the last error),
    hipStreamQuery/hipEventQuery (a poll runs ready work on the sim and ends a capture of
    the stream it names), hipThreadExchangeStreamCaptureMode (sets the mode)."""
    row = CATALOGUE.get(api)
    return row is not None and row.pure and err == 0


def __getattr__(name: str) -> Any:
    # PURE_QUERIES is read from the catalogue when asked, so an extended catalogue's rows count.
    if name == "PURE_QUERIES":
        return pure_queries()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def describe(calls: CallRange) -> str:
    """RANGE as the user can type it again: ``N``, ``N:M``, ``:M`` or ``N:``."""
    if calls.stop is None:
        return f"{calls.start}:"
    if calls.stop == calls.start + 1:
        return str(calls.start)
    return f":{calls.stop}" if calls.start == 0 else f"{calls.start}:{calls.stop}"


@attrs.define
class RangeCounts:
    """What one process's replay did with ``--calls``."""

    calls: Any                       # a hrr.events.ranges.CallRange
    setup_replayed: int = 0          # records before N handed to replay (not checked)
    setup_skipped: int = 0           # pure queries before N that succeeded when recorded
    in_range: int = 0                # records N <= seq < M
    first_in_range: int | None = None
    last_in_range: int | None = None
    last_seq: int | None = None      # the last record read, to tell where the archive ends
    late_checks: int = 0             # in-range copies whose check record lies past M
    tail_synced: bool = False        # replay synchronised the device at M for them
    tail_error: str | None = None    # what that synchronisation returned, when it failed

    def saw(self, seq: int) -> None:
        self.last_seq = seq if self.last_seq is None else max(self.last_seq, seq)

    def count_in_range(self, seq: int) -> None:
        self.in_range += 1
        self.first_in_range = seq if self.first_in_range is None else min(self.first_in_range, seq)
        self.last_in_range = seq if self.last_in_range is None else max(self.last_in_range, seq)

    def summary(self, passed: int, failed: int, unverifiable: int) -> str:
        """``Range N:M: K set-up calls replayed before N (not checked), ...``."""
        c = self.calls
        head = f"Range {describe(c)}{' (to the end)' if c.stop is None else ''}: "
        if c.start:
            head += (f"{_n(self.setup_replayed, 'set-up call')} replayed before {c.start} (not checked), "
                     f"{_n(self.setup_skipped, 'pure query', 'pure queries')} skipped; ")
        if not self.in_range:
            end = "it holds no record" if self.last_seq is None else f"its last record is {self.last_seq}"
            return head + f"no record in range ({end})"
        span = (f"{self.first_in_range}" if self.first_in_range == self.last_in_range
                else f"{self.first_in_range} to {self.last_in_range}")
        text = (head + f"{_n(self.in_range, 'record')} in range ({span}); checks in range: "
                f"{passed} passed, {failed} failed, {unverifiable} unverifiable")
        if self.late_checks:
            text += (f" ({self.late_checks} compared after replay synchronised the device at "
                     f"{c.stop}: their copies were synchronised after the range)")
        if self.tail_error is not None:
            text += (f" (replay synchronised the device at {c.stop} for the copies whose check "
                     f"comes later and got {self.tail_error}: they are unverifiable)")
        if c.stop is not None and self.last_seq is not None and self.last_seq < c.stop - 1 \
                and self.last_in_range == self.last_seq:
            text += f"; the records end at {self.last_seq}"
        return text


def _n(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"
