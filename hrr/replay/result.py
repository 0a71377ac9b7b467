"""What a replay found, as data: :func:`hrr.replay.run.replay_archive` returns a
:class:`ReplayResult`; ``hrr replay`` prints :func:`render` of it (and ``--json`` prints
:meth:`ReplayResult.to_json`), so the printed summary and the object cannot disagree.

The engine counts into :class:`ReplayStats` while it replays one process; once the process
is done, ``run.py`` freezes those counts, the plugins' counters and summary lines, and the
verdict into a :class:`ProcessResult`.
"""
from __future__ import annotations

import enum
import textwrap
from typing import Any

import attrs

from hrr.hiptypes import hipError_t
from hrr.hiptypes.mathlibs import TYPES as LIBRARY_TYPES
from hrr import exitcodes
from hrr.replay.ranges import RangeCounts
from hrr.replay.ranges import describe as describe_range

#: The refusals a summary names one by one; the rest are counted.
REFUSALS_SHOWN = 10


@attrs.frozen
class Refusal:
    """A record replay would not act on: its number, API, why, and the kind of why."""

    seq: int
    api: str
    reason: str
    category: str


@attrs.frozen
class Divergence:
    """A call whose replay returned another error code than the recording."""

    seq: int
    api: str
    recorded: int
    replayed: int
    setup: bool = False                # a set-up call before --calls' range
    module: str = "hip"                # the call's module: a math library's names its own status

    @property
    def recorded_name(self) -> str:
        """The recorded error as ``hipErrorX (N)`` (a library's status: ``HIPFFT_X (N)``)."""
        return err_name(self.recorded, self.module)

    @property
    def replayed_name(self) -> str:
        """The error replay got, as ``hipErrorX (N)`` (a library's status: ``HIPFFT_X (N)``)."""
        return err_name(self.replayed, self.module)


def err_name(code: int, module: str = "hip") -> str:
    """``hipErrorX (n)``, a math library's status (``HIPRAND_STATUS_X (n)``) when ``module``
    is one, or the bare number when it is no member."""
    library = LIBRARY_TYPES.get(module)
    try:
        return f"{(library.status if library is not None else hipError_t)(code).name} ({code})"
    except ValueError:
        return str(code)


@attrs.define
class ReplayStats:
    """The engine's running counts for one process (mutable while it replays)."""

    events: int = 0
    replayed: int = 0
    noops: int = 0
    unreplayable: int = 0
    reproduced_errors: int = 0
    checks_passed: int = 0
    checks_failed: int = 0
    checks_unverifiable: int = 0
    divergences: int = 0
    repeated_launches: int = 0         # launches made again as the validated one before them
    aborted: bool = False
    timed_out: bool = False            # stopped by --max-seconds
    peak_host_bytes: int = 0           # the most host memory replay held for the archive
    refusals: list[Refusal] = attrs.field(factory=list)
    failures: list[str] = attrs.field(factory=list)
    range: RangeCounts | None = None   # what --calls did, when it was given
    diverged: list[Divergence] = attrs.field(factory=list)   # one per divergence counted

    def count(self, category: str) -> int:
        """How many records were refused with ``category``."""
        return sum(1 for r in self.refusals if r.category == category)


class Outcome(str, enum.Enum):
    """A replay's verdict, most serious last (the whole archive takes its worst process's)."""

    OK = "OK"
    SKIPPED = "SKIPPED"                # not replayed at all (see ProcessResult.skipped)
    #: nothing failed, but nothing was verified either: no check passed, and the archive is
    #: metadata-only or its device-to-host copies were unverifiable (exit 0, as OK)
    UNVERIFIED = "UNVERIFIED"
    REFUSED = "REFUSED"                # only --strict failed it
    FAILED = "FAILED"
    DIVERGED = "DIVERGED"
    INTERRUPTED = "INTERRUPTED"

    @property
    def exit_code(self) -> int:
        """The exit code ``hrr replay`` ends with for this verdict."""
        return _EXIT_CODES[self]


def nothing_verified(passed: int, unverifiable: int, content_mode: object) -> bool:
    """Whether a replay with no failure earns UNVERIFIED rather than OK: no check passed,
    and there were copies it could not verify or no content to verify them with."""
    return passed == 0 and (unverifiable > 0 or content_mode == "metadata-only")


_EXIT_CODES = {Outcome.OK: exitcodes.OK, Outcome.SKIPPED: exitcodes.OK, Outcome.UNVERIFIED: exitcodes.OK,
               Outcome.REFUSED: exitcodes.STRICT_REFUSED, Outcome.FAILED: exitcodes.FAILED,
               Outcome.DIVERGED: exitcodes.DIVERGED, Outcome.INTERRUPTED: exitcodes.INTERRUPTED}
_RANK = {o: i for i, o in enumerate(Outcome)}


@attrs.frozen
class PinnedSnapshots:
    """The pinned-host-snapshot restores of one process (the contract's summary line)."""

    restored: int = 0
    refused: int = 0
    skipped_graph_capture: int = 0


@attrs.frozen
class ProcessResult:
    """The replay of one ``pid-<pid>/`` archive: its counts, what it refused, where it
    diverged, the plugins' counters and lines, and its verdict."""

    pid: int
    outcome: Outcome
    backend: str = ""
    skipped: str | None = None         # why it was not replayed at all (outcome SKIPPED)
    records: int = 0
    calls_replayed: int = 0
    noops: int = 0
    unreplayable: int = 0
    reproduced_errors: int = 0
    checks_passed: int = 0
    checks_failed: int = 0
    checks_unverifiable: int = 0
    divergence_count: int = 0
    repeated_launches: int = 0
    divergences: tuple[Divergence, ...] = ()
    refusals: tuple[Refusal, ...] = ()
    failures: tuple[str, ...] = ()
    strict_reasons: tuple[str, ...] = ()   # what --strict failed it for (only with --strict)
    notes: tuple[str, ...] = ()            # how the recording ended (not closed, repaired, empty)
    timed_out: bool = False
    interrupted: bool = False
    peak_host_bytes: int = 0
    max_host_bytes: int = 0
    counters: dict[str, int] = attrs.field(factory=dict)   # ctx.counters: core's and plugins'
    plugin_lines: tuple[str, ...] = ()     # the plugins' hrr_replay_summary lines
    content_mode: str | None = None
    ended: str | None = None               # how the recorded program ended, in words
    unreplayable_apis: tuple[tuple[str, str], ...] = ()  # the manifest's (api, reason)
    range: RangeCounts | None = None

    @property
    def exit_code(self) -> int:
        """The exit code this process alone would give."""
        return self.outcome.exit_code

    @property
    def pinned(self) -> PinnedSnapshots:
        """Pinned host snapshots restored, refused, and skipped in a capturing stream."""
        c = self.counters
        return PinnedSnapshots(c.get("pinned_restored", 0), c.get("pinned_refused", 0),
                               c.get("pinned_skipped_graph_capture", 0))

    @property
    def checks(self) -> tuple[int, int, int]:
        """Device-to-host checks (passed, failed, unverifiable)."""
        return self.checks_passed, self.checks_failed, self.checks_unverifiable

    def refusals_by_category(self) -> dict[str, list[Refusal]]:
        """The refused records grouped by category, in replay order."""
        groups: dict[str, list[Refusal]] = {}
        for r in self.refusals:
            groups.setdefault(r.category, []).append(r)
        return groups

    def count(self, category: str) -> int:
        """How many records were refused with ``category``."""
        return sum(1 for r in self.refusals if r.category == category)


@attrs.frozen
class ReplayResult:
    """The replay of a whole archive: one :class:`ProcessResult` per process, in archive
    order, and the verdict of the worst one."""

    path: str
    processes: tuple[ProcessResult, ...]

    @property
    def outcome(self) -> Outcome:
        """The most serious process outcome (OK for an archive where nothing failed)."""
        worst = max((p.outcome for p in self.processes), key=_RANK.__getitem__, default=Outcome.OK)
        return Outcome.OK if worst is Outcome.SKIPPED else worst

    @property
    def exit_code(self) -> int:
        """``hrr replay``'s exit code: 0 OK, 1 FAILED or REFUSED, 2 DIVERGED, 130 INTERRUPTED."""
        return self.outcome.exit_code

    def process(self, pid: int) -> ProcessResult:
        """The result of process ``pid`` (KeyError when the archive holds none)."""
        for p in self.processes:
            if p.pid == pid:
                return p
        raise KeyError(pid)

    def to_json(self) -> dict[str, Any]:
        """The result as JSON-native data (what ``hrr replay --json`` prints)."""
        return {"path": self.path, "outcome": self.outcome.value, "exit_code": self.exit_code,
                "processes": [_process_json(p) for p in self.processes]}


def _process_json(p: ProcessResult) -> dict[str, Any]:
    data = attrs.asdict(p, recurse=True, filter=lambda a, _v: a.name != "range",
                        value_serializer=lambda _i, _a, v: v.value if isinstance(v, Outcome) else v)
    data["divergences"] = [{**attrs.asdict(d), "recorded_name": d.recorded_name,
                            "replayed_name": d.replayed_name} for d in p.divergences]
    data["unreplayable_apis"] = [{"api": a, "reason": r} for a, r in p.unreplayable_apis]
    data["refusals_by_category"] = {k: len(v) for k, v in p.refusals_by_category().items()}
    data["pinned"] = attrs.asdict(p.pinned)
    data["exit_code"] = p.exit_code
    data["range"] = None if p.range is None else {
        "calls": describe_range(p.range.calls), "start": p.range.calls.start, "stop": p.range.calls.stop,
        **attrs.asdict(p.range, filter=lambda a, _v: a.name != "calls")}
    return data


# ----------------------------------------------------------------------------- rendering
def render(result: ReplayResult) -> list[str]:
    """The human summary of ``result``: every line ``hrr replay`` prints, in order."""
    lines: list[str] = []
    for p in result.processes:
        lines.extend(render_process(p, result))
    return lines


def render_process(p: ProcessResult, result: ReplayResult | None = None) -> list[str]:
    """The lines of one process (``result``: the archive, to tell a process skipped after a
    Ctrl-C, which the interrupted process's lines already name, from one skipped alone)."""
    if p.skipped is not None:
        return [] if p.skipped == SKIPPED_AFTER_INTERRUPT else [f"pid-{p.pid}: not replayed: {p.skipped}"]
    lines = _summary(p)
    if p.interrupted:
        lines.append(f"Result: INTERRUPTED (Ctrl-C) after {p.records} records: the summary above is partial")
        rest = [q for q in (result.processes if result is not None else ()) if q.skipped == SKIPPED_AFTER_INTERRUPT]
        if rest:
            lines.append(f"Not replayed: {', '.join(f'pid-{q.pid}' for q in rest)}")
        return lines
    lines.extend(p.notes)
    if p.outcome is Outcome.DIVERGED:
        lines.append("Result: DIVERGED (replay stopped early)")
        return lines
    lines.extend(f"STRICT: {reason}" for reason in p.strict_reasons)
    verdict = {Outcome.FAILED: "FAILED", Outcome.REFUSED: "REFUSED by --strict",
               Outcome.UNVERIFIED: "UNVERIFIED"}.get(p.outcome, "OK")
    lines.append(f"Result: {verdict}")
    return lines


#: ProcessResult.skipped of the processes a Ctrl-C left unreplayed.
SKIPPED_AFTER_INTERRUPT = "replay was interrupted (Ctrl-C) before this process"


def _summary(p: ProcessResult) -> list[str]:
    pin = p.pinned
    lines = [
        f"pid-{p.pid}: replayed on {p.backend}: {p.records} records, {p.calls_replayed} calls replayed, "
        f"{p.noops} no-ops",
        f"Device-to-host checks: {p.checks_passed} passed, {p.checks_failed} failed, "
        f"{p.checks_unverifiable} unverifiable",
        *([p.range.summary(*p.checks)] if p.range is not None else []),
        f"Errors reproduced: {p.reproduced_errors}; divergences: {p.divergence_count}",
        f"Pinned host snapshots: {pin.restored} restored, {pin.refused} refused, "
        f"{pin.skipped_graph_capture} skipped (graph capture)",
        f"Host memory: peak {p.peak_host_bytes} bytes of --max-host-bytes {p.max_host_bytes}; "
        f"{p.count('limit')} records refused by a limit",
    ]
    if p.content_mode == "metadata-only":
        lines.append("Content: metadata-only archive: inputs were zero-filled and no "
                     "device-to-host check was possible")
    if p.ended is not None:   # a long exception message wraps, never cut mid-word
        lines.extend(textwrap.wrap(f"Program: {p.ended}", width=100, subsequent_indent="  ",
                                   break_long_words=False, break_on_hyphens=False) or ["Program:"])
    if not (p.checks_passed or p.checks_failed):
        lines.append(f"Nothing was verified: {_why_nothing_verified(p)}")
    if p.refusals:
        lines.append(f"Refused: {len(p.refusals)} records")
        for r in p.refusals[:REFUSALS_SHOWN]:
            lines.append(f"  record {r.seq} {r.api} [{r.category}]: {r.reason}")
        if len(p.refusals) > REFUSALS_SHOWN:
            lines.append(f"  ... and {len(p.refusals) - REFUSALS_SHOWN} more")
    lines.extend(f"Unreplayable: {api}: {reason}" for api, reason in p.unreplayable_apis)
    lines.extend(p.plugin_lines)
    lines.extend(f"FAILED: {failure}" for failure in p.failures)
    return lines


def _why_nothing_verified(p: ProcessResult) -> str:
    """Why a replay compared no device-to-host copy, and what would change that."""
    if p.content_mode == "metadata-only":
        return ("the archive is metadata-only, so no copy could be compared: capture with "
                "--content (or HIP_HRR_CAPTURE_CONTENT=1)")
    if p.checks_unverifiable:
        return f"all {p.checks_unverifiable} device-to-host copies were unverifiable"
    if p.range is not None:
        return "the --calls range holds no checked device-to-host copy"
    return "the program made no device-to-host copy that replay could compare"


__all__ = ["Divergence", "Outcome", "PinnedSnapshots", "ProcessResult", "Refusal", "ReplayResult",
           "ReplayStats", "SKIPPED_AFTER_INTERRUPT", "nothing_verified", "render", "render_process"]
