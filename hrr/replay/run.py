"""Replaying a whole archive: every process in it, then one summary and an exit code."""
from __future__ import annotations

import contextlib
import gc
import os
import sys
import threading
from typing import Any, Callable, Iterator, Sequence

from hrr.archive.manifest import abnormal_end, describe_ended
from hrr.archive import Limits, open_archive
from hrr.backends import BACKEND_MODULES, load_backend
from hrr import exitcodes
from hrr.backends.contract import Backend
from hrr.backends.forkchild import lost_device
from hrr.errors import FormatError, UsageError
from hrr.pipeline.manager import installed_plugins, load_plugins, warn_broken
from hrr.replay.engine import ProcessReplayer, ReplayOptions
from hrr.replay.ranges import describe as describe_range
from hrr.replay.result import (SKIPPED_AFTER_INTERRUPT, Outcome, ProcessResult, ReplayResult, ReplayStats,
                               nothing_verified, render_process)

EXIT_FAILED = exitcodes.FAILED
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


LOST_DEVICE_NOTE = ("Device: none in this process (a fork() child of one that had initialised the GPU "
                    "runtime): its own calls replayed as hipErrorNotInitialized, as recorded")


def _lost_device_at_fork(manifest: dict) -> bool:
    """Whether the manifest says the process is a fork() child that could not use the
    device (its parent had initialised the GPU runtime before the fork)."""
    forked = manifest.get("forked_from")
    return isinstance(forked, dict) and forked.get("device") == "lost"


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


def archive_kernels(backend: Backend, trusted: bool, budget: Any = None,
                    seconds_left: Callable[[], float] | None = None) -> contextlib.AbstractContextManager:
    """A backend that compiles an archive's kernel source (the sim) is told that the kernels
    are a stranger's, to run sandboxed (or, ``trusted``, as they are), and what its compiles
    and images may use (replay's host budget, the time left); others need nothing."""
    return backend.archive_kernels(trusted, budget, seconds_left)


def bounded_stalls(backend: Backend, seconds: float = REPLAY_STALL_SECONDS) -> contextlib.AbstractContextManager:
    """While replay runs, a stuck wait on the sim ends after ``seconds`` (its scheduler
    reads ``STALL_TIMEOUT_S`` at every wait); other backends are left as they are."""
    return backend.bounded_stalls(seconds)


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
    if manifest.get("bypassed_bindings"):
        shown = ", ".join(name[:80] for name in manifest["bypassed_bindings"][:4])
        reasons.append(f"the program imported hip-python's own bindings past hrr ({shown}): "
                       "calls made through them were not recorded")
    if manifest.get("content_mode") != "content":
        reasons.append("the archive is metadata-only (capture with --content, or set HIP_HRR_CAPTURE_CONTENT=1)")
    if stats.checks_unverifiable:
        reasons.append(f"{stats.checks_unverifiable} checks could not be verified")
    if missing_plugins:
        reasons.append(f"recorded plugins not installed: {', '.join(missing_plugins)}")
    reasons.extend(_plugin_failure_reasons(manifest.get("plugin_failures")))
    for part in ctx.pm.hook.hrr_replay_strict_failures(ctx=ctx):
        reasons.extend(part or ())
    reasons.extend(f"plugin '{f['plugin']}' failed during replay ({f['error']} in {f['hook']})"
                   for f in ctx.plugin_failures)
    return reasons


def _fresh_device(backend: Backend, manifest: dict) -> list[str]:
    """Reset the device before a process replays: work an earlier process left queued (its
    program ended without synchronising) must not run into this one, nor stall it. A backend
    that models devices (the sim) becomes the one the manifest recorded; its notes are returned."""
    return list(backend.device_for_replay(manifest.get("device")))


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

    def raw_events(self) -> Iterator[Any]:
        return self._counted(self._proc.raw_events())


# Replay makes a list per record and drops it at once: almost nothing it allocates can form
# a cycle, yet every 700 allocations start a collection. A higher first threshold while a
# process replays left ~15% less time in the collector (bench: replay_events_per_s).
REPLAY_GC_THRESHOLD = 50_000


@contextlib.contextmanager
def fewer_collections(threshold: int = REPLAY_GC_THRESHOLD) -> Iterator[None]:
    """Collect the youngest generation less often while the block runs (restored after)."""
    old = gc.get_threshold()
    gc.set_threshold(max(threshold, old[0]), *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


def replay_archive(path: str, *, backend: str | None = None, limits: Limits | None = None,
                   options: ReplayOptions | None = None, plugins: list[str] | None = None,
                   echo: Callable[[str], None] | None = None, progress: Any = None,
                   allow_abnormal_end: bool = False) -> ReplayResult:
    """Replay every process archive under ``path`` and return what it found; its
    ``exit_code`` is 0 when all checks passed, 1 on a failed check, a failure or a refusal
    by ``--strict``, 2 on an early divergence abort, 130 on Ctrl-C (after a partial result).
    ``echo``: told each line of :func:`hrr.replay.result.render` as soon as its process is
    done. ``progress``: a :class:`hrr.cli.progress.Bar` (or None), told of each process and record."""
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
    done: list[ProcessResult] = []

    def finish(*results: ProcessResult) -> None:
        done.extend(results)
        if echo is not None:
            partial = ReplayResult(path, tuple(done))
            for line in (ln for r in results for ln in render_process(r, partial)):
                echo(line)

    timed_out = False
    for i, proc in enumerate(processes):
        if timed_out:
            finish(_skipped(proc, f"--max-seconds={options.max_seconds:g} was reached"))
            continue
        if proc.pid in past_end:
            finish(_skipped(proc, f"--calls {describe_range(options.calls)} starts past its last record "
                                  f"({past_end[proc.pid]})"))
            continue
        manifest = proc.manifest
        backend_name = backend or manifest.get("backend") or "sim"
        if backend is None and backend_name not in BACKEND_MODULES:
            # A name no hrr backend has is a damaged manifest, not a backend missing here.
            raise FormatError(f"the manifest names backend {str(backend_name)[:40]!r}, which no hrr "
                              "backend is called", where=os.path.join(proc.path, "manifest.json"),
                              hint=f"replay it with --backend {'|'.join(sorted(BACKEND_MODULES))}")
        mod = load_backend(backend_name)
        device_notes = _fresh_device(mod, manifest)  # each recorded process had a device of its own
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
        own_backend = None
        if _lost_device_at_fork(manifest):
            own_backend = lost_device(mod)
            device_notes = device_notes + [LOST_DEVICE_NOTE]
        interrupted = False
        try:
            with bounded_stalls(mod), fewer_collections(), archive_kernels(
                    mod, options.trust_kernels, replayer.budget, lambda: deadline - options.clock()):
                stats = replayer.run(prefix=parent, prefix_until=until, own_backend=own_backend)
        except KeyboardInterrupt:  # Ctrl-C: the result of what was done, then stop
            stats, interrupted = replayer.stats, True
        if progress is not None:
            progress.end()  # the bar's last state stays above this process's summary
        if interrupted:
            finish(_process_result(proc.pid, backend_name, stats, replayer.ctx, manifest, Outcome.INTERRUPTED,
                                   _plugin_lines(replayer.ctx), interrupted=True),
                   *(_skipped(p, SKIPPED_AFTER_INTERRUPT) for p in processes[i + 1:]))
            break
        ended_failures, ended_reasons, ended_notes = completeness(proc)
        stats.failures.extend(ended_failures)
        timed_out = stats.timed_out
        plugin_lines = _plugin_lines(replayer.ctx)  # asked before the strict reasons, as always
        reasons: list[str] = []
        if stats.aborted:
            outcome = Outcome.DIVERGED
        else:
            if options.strict:
                reasons = ended_reasons + strict_reasons(stats, replayer.ctx, manifest, missing,
                                                         allow_abnormal_end)
            outcome = (Outcome.FAILED if stats.checks_failed or stats.failures
                       else Outcome.REFUSED if reasons
                       else Outcome.UNVERIFIED if nothing_verified(stats.checks_passed, stats.checks_unverifiable,
                                                                  manifest.get("content_mode"))
                       else Outcome.OK)
        finish(_process_result(proc.pid, backend_name, stats, replayer.ctx, manifest, outcome, plugin_lines,
                               strict=reasons, notes=device_notes + ended_notes))
    return ReplayResult(path, tuple(done))


def _skipped(proc: Any, why: str) -> ProcessResult:
    """A process the replay did not start."""
    return ProcessResult(pid=proc.pid, outcome=Outcome.SKIPPED, skipped=why)


def _plugin_lines(ctx: Any) -> list[str]:
    """The plugins' summary lines for one process (``hrr_replay_summary``)."""
    lines = [line for part in ctx.pm.hook.hrr_replay_summary(ctx=ctx) for line in (part or ())]
    return lines + ctx.plugin_failure_lines()


def _process_result(pid: int, backend: str, stats: ReplayStats, ctx: Any, manifest: dict, outcome: Outcome,
                    plugin_lines: Sequence[str], *, strict: Sequence[str] = (), notes: Sequence[str] = (),
                    interrupted: bool = False) -> ProcessResult:
    """Freeze one process's counts, its plugins' counters and lines, and its verdict."""
    return ProcessResult(
        pid=pid, outcome=outcome, backend=backend, records=stats.events, calls_replayed=stats.replayed,
        noops=stats.noops, unreplayable=stats.unreplayable, reproduced_errors=stats.reproduced_errors,
        repeated_launches=stats.repeated_launches,
        checks_passed=stats.checks_passed, checks_failed=stats.checks_failed,
        checks_unverifiable=stats.checks_unverifiable, divergence_count=stats.divergences,
        divergences=tuple(stats.diverged), refusals=tuple(stats.refusals), failures=tuple(stats.failures),
        strict_reasons=tuple(strict), notes=tuple(notes), timed_out=stats.timed_out, interrupted=interrupted,
        peak_host_bytes=stats.peak_host_bytes, max_host_bytes=ctx.limits.max_host_bytes,
        counters=dict(ctx.counters), plugin_lines=tuple(plugin_lines),
        content_mode=manifest.get("content_mode"),
        ended=describe_ended(manifest.get("ended")) if "ended" in manifest else None,
        unreplayable_apis=tuple((f"{e.get('api')}", f"{e.get('reason')}")
                                for e in manifest.get("unreplayable_apis") or ()),
        range=stats.range)
