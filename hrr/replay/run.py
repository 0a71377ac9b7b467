"""Replaying a whole archive: every process in it, then one summary and an exit code."""
from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Any, Callable, Iterator

from hrr.archive import Limits, open_archive
from hrr.backends import load_backend
from hrr.capture.exits import abnormal_end, describe_ended
from hrr.cli import exitcodes
from hrr.errors import UsageError
from hrr.pipeline.manager import installed_plugins, load_plugins, warn_broken
from hrr.replay.engine import ProcessReplayer, ReplayOptions, ReplayStats
from hrr.replay.ranges import describe as describe_range

EXIT_OK, EXIT_FAILED, EXIT_DIVERGED = exitcodes.OK, exitcodes.FAILED, exitcodes.DIVERGED
EXIT_STRICT, EXIT_INTERRUPTED = exitcodes.STRICT_REFUSED, exitcodes.INTERRUPTED
# Which code wins when processes end differently: the most serious outcome.
_RANK = {EXIT_OK: 0, EXIT_STRICT: 1, EXIT_FAILED: 2, EXIT_DIVERGED: 3, EXIT_INTERRUPTED: 4}
_REFUSAL_CATEGORIES_SHOWN = 10
# Replay makes one recorded call at a time, so a wait on the sim that nothing can run is
# stuck for good: no other thread will make a call while it waits. Report it at once
# instead of giving other threads HRR_SIM_STALL_TIMEOUT_S (2 s) per wait to release it.
REPLAY_STALL_SECONDS = 0.0
# How long past --max-seconds a single call may hang before the process is ended.
WATCHDOG_GRACE_SECONDS = 10.0


def _plugins_for(manifest: dict, selected: list[str] | None) -> tuple[list[str], list[str]]:
    """The plugins to run at replay and the recorded ones that are not installed."""
    if selected is not None:
        return selected, []
    recorded = list((manifest.get("plugins") or {}).keys())
    available = installed_plugins()
    return [p for p in recorded if p in available], [p for p in recorded if p not in available]


def _fork_parent(processes: list, manifest: dict, proc: Any, limits: Limits) -> tuple[Any, int]:
    """For a fork()ed child: its parent's process archive and the parent's sequence
    number at the fork (the child inherited everything recorded before it)."""
    forked = manifest.get("forked_from")
    if not isinstance(forked, dict):
        return None, -1
    pid, seq = forked.get("pid"), forked.get("seq")
    if not isinstance(pid, int) or not isinstance(seq, int):
        return None, -1
    parent = next((p for p in processes if p.pid == pid), None)
    if parent is None:  # the child's directory was replayed on its own: look beside it
        sibling = os.path.join(os.path.dirname(proc.path), f"pid-{pid}")
        if os.path.isdir(sibling):
            parent = open_archive(sibling, limits).processes[0]
    return parent, seq


def completeness(proc: Any) -> tuple[list[str], list[str], list[str]]:
    """How ``proc``'s recording ended: (failures, strict reasons, notes). A record count that
    the trailer or a clean manifest states and events.bin does not hold is a failure."""
    state = proc.scan()
    manifest = proc.manifest
    failures: list[str] = []
    reasons: list[str] = []
    notes: list[str] = []
    claims = []
    if state.trailer is not None:
        claims.append(("its trailer", state.trailer.get("events")))
    if proc.manifest_error is None and manifest.get("clean_shutdown") is True:
        claims.append(("its manifest", (manifest.get("counts") or {}).get("events")))
    for source, claimed in claims:
        if not isinstance(claimed, int) or claimed < 0:
            failures.append(f"{source} gives no valid record count: the archive was damaged or edited")
        elif claimed != state.frames:
            what = "records were lost or removed" if claimed > state.frames else "records were added"
            failures.append(f"{source} says the process recorded {claimed} records, events.bin holds "
                            f"{state.frames}: {what}")
    if not proc.clean:
        why = ", ".join(_not_clean(proc, state)) or "not clean"
        reasons.append(f"the archive was not closed ({why}): its program was killed or crashed, "
                       "so calls it made may be missing")
        notes.append(f"Archive: NOT closed ({why}): replayed the {state.frames} complete records it holds")
    elif manifest.get("repaired") is True:
        reasons.append("the archive was closed by `hrr repair`, not by its program: calls it made "
                       "may be missing")
        notes.append("Archive: closed by `hrr repair`")
    if state.frames == 0:
        reasons.append("the process recorded no calls: there was nothing to replay or check")
        notes.append("Archive: the process recorded no calls")
    return failures, reasons, notes


def _not_clean(proc: Any, state: Any) -> list[str]:
    """Why the reader does not call ``proc`` clean, in the words ``hrr info`` uses."""
    why = []
    if state.trailer is None:
        why.append("no trailer")
    elif state.trailer.get("events") != state.frames:
        why.append("the trailer's count is not the records'")
    if state.after_trailer:
        why.append("bytes after the trailer")
    if state.stopped:
        why.append("an unreadable frame header")
    if proc.manifest_error is not None:
        why.append(f"manifest unusable ({proc.manifest_error})")
    elif proc.manifest.get("clean_shutdown") is not True:
        why.append("manifest clean_shutdown false")
    return why


@contextlib.contextmanager
def bounded_stalls(backend: Any, seconds: float = REPLAY_STALL_SECONDS) -> Iterator[None]:
    """While replay runs, a stuck wait on the sim ends after ``seconds`` (its scheduler
    reads ``STALL_TIMEOUT_S`` at every wait); other backends are left as they are."""
    streams = getattr(backend, "streams", None)
    old = getattr(streams, "STALL_TIMEOUT_S", None)
    if not isinstance(old, (int, float)):
        yield
        return
    streams.STALL_TIMEOUT_S = min(old, seconds)
    try:
        yield
    finally:
        streams.STALL_TIMEOUT_S = old


def start_watchdog(seconds: float, message: str) -> threading.Event:
    """End this process with ``message`` on stderr and exit 1 unless the returned event is
    set within ``seconds``: the last word on a call that never returns (a GPU wait that
    nothing releases), which the check between records cannot interrupt."""
    done = threading.Event()

    def watch() -> None:
        if done.wait(seconds):
            return
        try:
            sys.stdout.flush()
            sys.stderr.write(f"hrr: error: {message}\n")
            sys.stderr.flush()
        finally:
            os._exit(EXIT_FAILED)

    threading.Thread(target=watch, name="hrr-replay-watchdog", daemon=True).start()
    return done


def summary_lines(name: str, backend: str, stats: ReplayStats, ctx: Any, manifest: dict) -> list[str]:
    """The human summary of one process's replay."""
    c = ctx.counters
    lines = [
        f"{name}: replayed on {backend}: {stats.events} records, {stats.replayed} calls replayed, "
        f"{stats.noops} no-ops",
        f"Device-to-host checks: {stats.checks_passed} passed, {stats.checks_failed} failed, "
        f"{stats.checks_unverifiable} unverifiable",
        *([stats.range.summary(stats.checks_passed, stats.checks_failed, stats.checks_unverifiable)]
          if stats.range is not None else []),
        f"Errors reproduced: {stats.reproduced_errors}; divergences: {stats.divergences}",
        f"Pinned host snapshots: {c['pinned_restored']} restored, {c['pinned_refused']} refused, "
        f"{c['pinned_skipped_graph_capture']} skipped (graph capture)",
        f"Host memory: peak {stats.peak_host_bytes} bytes of --max-host-bytes {ctx.limits.max_host_bytes}; "
        f"{stats.count('limit')} records refused by a limit",
    ]
    if manifest.get("content_mode") == "metadata-only":
        lines.append("Content: metadata-only archive: inputs were zero-filled and no "
                     "device-to-host check was possible")
    if "ended" in manifest:
        lines.append(f"Program: {describe_ended(manifest.get('ended'))}")
    if not (stats.checks_passed or stats.checks_failed):
        lines.append(f"Nothing was verified: {_why_nothing_verified(stats, manifest)}")
    if stats.refusals:
        lines.append(f"Refused: {len(stats.refusals)} records")
        for r in stats.refusals[:_REFUSAL_CATEGORIES_SHOWN]:
            lines.append(f"  record {r.seq} {r.api} [{r.category}]: {r.reason}")
        if len(stats.refusals) > _REFUSAL_CATEGORIES_SHOWN:
            lines.append(f"  ... and {len(stats.refusals) - _REFUSAL_CATEGORIES_SHOWN} more")
    for entry in manifest.get("unreplayable_apis") or ():
        lines.append(f"Unreplayable: {entry.get('api')}: {entry.get('reason')}")
    for part in ctx.pm.hook.hrr_replay_summary(ctx=ctx):
        lines.extend(part or ())
    for failure in stats.failures:
        lines.append(f"FAILED: {failure}")
    return lines


def _why_nothing_verified(stats: ReplayStats, manifest: dict) -> str:
    """Why a replay compared no device-to-host copy, and what would change that."""
    if manifest.get("content_mode") == "metadata-only":
        return ("the archive is metadata-only, so no copy could be compared: capture with "
                "--content (or HIP_HRR_CAPTURE_CONTENT=1)")
    if stats.checks_unverifiable:
        return f"all {stats.checks_unverifiable} device-to-host copies were unverifiable"
    if stats.range is not None:
        return "the --calls range holds no checked device-to-host copy"
    return "the program made no device-to-host copy that replay could compare"


def _plugin_failure_reasons(failures: Any) -> list[str]:
    """A plugin that raised during capture was disabled, so its records stop there. The
    manifest is untrusted: anything but a list of maps is itself a reason."""
    if not failures:
        return []
    if not isinstance(failures, list):
        return ["the manifest's plugin_failures is malformed"]
    reasons = []
    for f in failures[:_REFUSAL_CATEGORIES_SHOWN]:
        if not isinstance(f, dict):
            reasons.append("the manifest's plugin_failures holds a malformed entry")
            continue
        plugin, hook, error = (str(f.get(k, "?"))[:100] for k in ("plugin", "hook", "error"))
        reasons.append(f"plugin {plugin!r} failed during capture ({error} in {hook}) and was "
                       f"disabled from then on")
    if len(failures) > _REFUSAL_CATEGORIES_SHOWN:
        reasons.append(f"... and {len(failures) - _REFUSAL_CATEGORIES_SHOWN} more plugin failures")
    return reasons


def strict_reasons(stats: ReplayStats, ctx: Any, manifest: dict, missing_plugins: list[str],
                   allow_abnormal_end: bool = False) -> list[str]:
    """Everything that was not replayed faithfully (what ``--strict`` fails on)."""
    reasons = []
    abnormal = abnormal_end(manifest.get("ended")) if "ended" in manifest else None
    if abnormal and not allow_abnormal_end:
        reasons.append(f"the program {abnormal} (pass --allow-abnormal-end if that is the point)")
    if stats.refusals:
        reasons.append(f"{len(stats.refusals)} records refused")
    if manifest.get("unreplayable_apis"):
        reasons.append("the manifest lists unreplayable APIs")
    if manifest.get("content_mode") != "content":
        reasons.append("the archive is metadata-only (capture with --content, or set HIP_HRR_CAPTURE_CONTENT=1)")
    if stats.checks_unverifiable:
        reasons.append(f"{stats.checks_unverifiable} checks could not be verified")
    if missing_plugins:
        reasons.append(f"recorded plugins not installed: {', '.join(missing_plugins)}")
    reasons.extend(_plugin_failure_reasons(manifest.get("plugin_failures")))
    for part in ctx.pm.hook.hrr_replay_strict_failures(ctx=ctx):
        reasons.extend(part or ())
    return reasons


def _fresh_device(backend: Any) -> None:
    """Reset the device before a process replays: work an earlier process left queued (its
    program ended without synchronising) must not run into this one, nor stall it."""
    reset = getattr(backend, "reset_device", None)
    if reset is not None:
        reset()


def _past_range_end(processes: list, calls: Any) -> dict[int, str]:
    """The processes whose records all lie before ``--calls``' start (pid -> what they
    hold); UsageError when that is every process: the range names nothing to replay."""
    if calls is None:
        return {}
    past = {}
    for proc in processes:
        frames = proc.scan().frames  # capture numbers a process's records 0, 1, 2, ...
        if frames <= calls.start:
            past[proc.pid] = f"it holds {frames} records" + (f", 0 to {frames - 1}" if frames else "")
    if len(past) == len(processes):
        held = "; ".join(f"pid-{pid}: {what}" for pid, what in past.items())
        raise UsageError(f"--calls {describe_range(calls)} starts past the end of the archive ({held})",
                         hint="`hrr dump ARCHIVE` lists the record numbers")
    return past


class _Counted:
    """A process archive whose record walks report progress: ``tick(n)`` after the n-th record."""

    def __init__(self, proc: Any, tick: Callable[[int], None]) -> None:
        self._proc, self._tick = proc, tick

    def __getattr__(self, name: str) -> Any:
        return getattr(self._proc, name)

    def _counted(self, items: Any) -> Iterator[Any]:
        for n, item in enumerate(items, 1):
            self._tick(n)
            yield item

    def events(self) -> Iterator[Any]:
        return self._counted(self._proc.events())

    def checked_events(self) -> Iterator[Any]:
        return self._counted(self._proc.checked_events())


def replay_archive(path: str, *, backend: str | None = None, limits: Limits | None = None,
                   options: ReplayOptions | None = None, plugins: list[str] | None = None,
                   echo: Callable[[str], None] = print, progress: Any = None,
                   allow_abnormal_end: bool = False) -> int:
    """Replay every process archive under ``path``; print the summary; return the exit
    code (0 all checks passed, 1 a failed check or failure, 2 an early divergence abort,
    3 refused by ``--strict``, 130 interrupted by Ctrl-C after a partial summary).
    ``progress``: a :class:`hrr.cli.progress.Bar` (or None), told of each process and record."""
    limits = limits or Limits()
    options = options or ReplayOptions()
    if not options.max_seconds > 0:
        raise UsageError(f"--max-seconds must be a positive number of seconds, got {options.max_seconds}")
    deadline = options.clock() + options.max_seconds
    archive = open_archive(path, limits)
    processes = archive.processes
    if not processes:
        raise UsageError(f"{path} holds no process archive (no pid-*/ directory)",
                         hint="is this the directory `hrr capture -o` wrote?")
    past_end = _past_range_end(processes, options.calls)
    code = EXIT_OK
    timed_out = False
    for proc in processes:
        if timed_out:
            echo(f"pid-{proc.pid}: not replayed: --max-seconds={options.max_seconds:g} was reached")
            continue
        if proc.pid in past_end:
            echo(f"pid-{proc.pid}: not replayed: --calls {describe_range(options.calls)} starts past "
                 f"its last record ({past_end[proc.pid]})")
            continue
        manifest = proc.manifest
        backend_name = backend or manifest.get("backend") or "sim"
        mod = load_backend(backend_name)
        _fresh_device(mod)  # each recorded process had a device of its own
        names, missing = _plugins_for(manifest, plugins)
        # A recorded plugin that is broken here is skipped like a missing one (one warning line).
        loaded = load_plugins(names, required=plugins is not None)
        warn_broken(loaded.broken)
        missing = missing + [f"{b.name} (broken here: {b.reason})" for b in loaded.broken]
        pm = loaded.pm
        if progress is not None:
            progress.task(f"replay pid-{proc.pid}", manifest=manifest)
        replayer = ProcessReplayer(proc if progress is None else _Counted(proc, progress), mod, pm,
                                   limits, options, deadline=deadline)
        parent, until = _fork_parent(processes, manifest, proc, limits)
        interrupted = False
        try:
            with bounded_stalls(mod):
                stats = replayer.run(prefix=parent, prefix_until=until)
        except KeyboardInterrupt:  # Ctrl-C: the summary of what was done, then stop
            stats, interrupted = replayer.stats, True
        if progress is not None:
            progress.end()  # the bar's last state stays above this process's summary
        if interrupted:
            for line in summary_lines(f"pid-{proc.pid}", backend_name, stats, replayer.ctx, manifest):
                echo(line)
            echo(f"Result: INTERRUPTED (Ctrl-C) after {stats.events} records: the summary above is partial")
            rest = processes[processes.index(proc) + 1:]
            if rest:
                echo(f"Not replayed: {', '.join(f'pid-{p.pid}' for p in rest)}")
            return EXIT_INTERRUPTED
        ended_failures, ended_reasons, ended_notes = completeness(proc)
        stats.failures.extend(ended_failures)
        for line in summary_lines(f"pid-{proc.pid}", backend_name, stats, replayer.ctx, manifest):
            echo(line)
        for note in ended_notes:
            echo(note)
        timed_out = stats.timed_out
        if stats.aborted:
            code = max(code, EXIT_DIVERGED, key=_RANK.__getitem__)
            echo("Result: DIVERGED (replay stopped early)")
            continue
        failed = bool(stats.checks_failed or stats.failures)
        refused = False
        if options.strict:
            reasons = ended_reasons + strict_reasons(stats, replayer.ctx, manifest, missing,
                                                     allow_abnormal_end)
            for reason in reasons:
                echo(f"STRICT: {reason}")
            refused = bool(reasons)
        if failed:
            code = max(code, EXIT_FAILED, key=_RANK.__getitem__)
        elif refused:
            code = max(code, EXIT_STRICT, key=_RANK.__getitem__)
        echo(f"Result: {'FAILED' if failed else 'REFUSED by --strict' if refused else 'OK'}")
    return code
