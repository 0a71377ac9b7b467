"""The ``hrr`` command line: capture, replay, info, repair, plugins, run."""
from __future__ import annotations

import functools
import importlib
import json
import math
import os
import sys
from collections.abc import Callable
from typing import Any

import click

from hrr import __version__
from hrr.backends import BACKEND_MODULES
from hrr.config import ARCHIVE_ENV, CONTENT_MODE_ENV, PLUGINS_ENV
from hrr import exitcodes
from hrr.cli import cache as cache_commands, launch
from hrr.cli.progress import progress_option
from hrr.errors import ArchiveError, HrrError, UsageError

# Start-up cost: each command imports the layers it uses (archive, replay, inspect, pipeline,
# backend models) inside its own function, so ``hrr --help`` and ``hrr run`` load none of them.

EPILOG = exitcodes.epilog()
EXIT_ERROR = exitcodes.FAILED
#: `hrr capture`: COMMAND exited 0 but a process's recording stopped early (disk full, file-size limit).
EXIT_INCOMPLETE = exitcodes.INCOMPLETE


def _discard_stdout() -> None:
    """stdout's reader went away (``| head``): point stdout at /dev/null, so later writes
    and the interpreter's last flush go nowhere instead of failing again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _echo_on(text: str) -> None:
    """``click.echo`` for a command whose exit status is its verdict (diff, replay): once
    stdout's reader has gone it writes nowhere and the command carries on, so
    ``hrr diff A B | head`` still exits 0 or 1, as ``git diff | head`` ends quietly."""
    try:
        click.echo(text)
    except BrokenPipeError:
        _discard_stdout()


def _friendly(fn: Callable) -> Callable:
    """Errors a user can cause print one clear line, never a traceback. A closed stdout
    (``hrr info A | head``) ends the command quietly with exit 0: its reader has what it wanted."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except BrokenPipeError:
            _discard_stdout()
            sys.exit(exitcodes.OK)
        except (HrrError, OSError, ValueError) as exc:
            click.echo(f"hrr: error: {exc}", err=True)
            sys.exit(exitcodes.for_error(exc))
    return wrapper


def _check_sim_device() -> None:
    """Before anything starts: HRR_SIM_DEVICE naming no sim device model is a usage error
    (one line naming the models); so is a bad HRR_SIM_WORKERS or HRR_SIM_WORKERS_MIN_THREADS."""
    from hrr.backends import devicemodels
    from hrr.config import config

    name = config().sim_device
    if name is not None:
        devicemodels.lookup(name)
    if config().sim_workers is not None or config().sim_workers_min_threads is not None:
        from hrr.backends.sim.native import pool   # start-up cost: only when one is set
        pool.settings()   # a bad HRR_SIM_WORKERS(_MIN_THREADS) is a usage error, before anything runs


def _no_archive(path: str) -> ArchiveError:
    return ArchiveError("no such archive", where=path, hint="pass the directory `hrr capture -o` wrote")


class _Group(click.Group):
    """Click's group, ending with hrr's exit codes: a usage error exits 64 (click's own 2 is
    "replay diverged"), Ctrl-C 130 with one line (never click's bare ``Aborted!``)."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, False, **extra)
        except click.exceptions.UsageError as exc:
            exc.show()
            sys.exit(exitcodes.USAGE)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except (click.Abort, KeyboardInterrupt):
            click.echo("hrr: interrupted (Ctrl-C): stopped before the end; what was printed above "
                       "is partial", err=True)
            sys.exit(exitcodes.INTERRUPTED)
        sys.exit(rv if isinstance(rv, int) else 0)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]},
             epilog=exitcodes.epilog())
@click.version_option(__version__, prog_name="hrr")
def cli() -> None:
    """hrr: HIP Record & Replay for Python.

    Record every HIP call a hip-python program makes (`hrr capture`), then replay the
    archive without the program and check every device-to-host copy byte for byte
    (`hrr replay`)."""


def _backend_usable(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Before the program starts: a backend that cannot run here ends the command with one
    line and exit 69 (for run and capture, HRR_BACKEND is checked when --backend is not given)."""
    from hrr.backends import available_backends, unavailable_reason

    name = value or (os.environ.get("HRR_BACKEND") if ctx.info_name in ("run", "capture") else None)
    if not name or ctx.resilient_parsing:
        return value
    reason = unavailable_reason(name)
    if reason is not None:
        where = "--backend" if value else "HRR_BACKEND"
        click.echo(f"hrr: error: {where} {name}: {reason}; backends that work here: "
                   f"{', '.join(available_backends()) or 'none'}", err=True)
        ctx.exit(exitcodes.BACKEND_UNAVAILABLE)
    return value


#: capture and run: everything from the program's name on is the program's own command line,
#: with or without ``--`` (as ``time``, ``strace`` and ``nohup`` take it): hrr's options go
#: before it, and an option of hrr's that the program also has stays the program's.
PROGRAM_SETTINGS = {"allow_interspersed_args": False}


def _kernel_timeout_env(seconds: float | None) -> dict[str, str]:
    """The environment that carries --kernel-timeout to the program's processes."""
    from hrr.config import SIM_KERNEL_TIMEOUT_ENV

    if seconds is None:
        return {}
    if not (math.isfinite(seconds) and seconds > 0):
        raise UsageError(f"--kernel-timeout must be a positive number of seconds, got {seconds:g}")
    return {SIM_KERNEL_TIMEOUT_ENV: repr(seconds)}


KERNEL_TIMEOUT_OPTION = click.option(
    "--kernel-timeout", type=float, default=None, metavar="SECONDS",
    help="On the sim, stop a native kernel that runs longer than SECONDS: its launch fails with "
         "hipErrorLaunchTimeOut (sets HRR_SIM_KERNEL_TIMEOUT; default: no limit, as on a GPU).")


BACKEND_OPTION = click.option("--backend", type=click.Choice(sorted(BACKEND_MODULES)), default=None,
                              callback=_backend_usable,
                              help="Backend that `from hip import hip` resolves to (default: HRR_BACKEND or sim). "
                                   "Checked before anything starts: exit 69 if it cannot run here.")


@cli.command(context_settings=PROGRAM_SETTINGS, epilog=EPILOG)
@click.option("-o", "--output", "archive", default="hrr-archive", show_default=True,
              type=click.Path(), help="Archive directory to create (must not exist or be empty).")
@click.option("--plugins", default=None, help="Comma list of plugins to run (default: every installed plugin).")
@BACKEND_OPTION
@click.option("--content", "content_flag", is_flag=True,
              help="Record content: the bytes the program copies (default: content unless the "
                   "privacy plugin runs and HIP_HRR_CAPTURE_CONTENT is unset).")
@click.option("--metadata-only", "metadata_only", is_flag=True,
              help="Record no content: calls, sizes and shapes only (not with --content).")
@click.option("--max-archive-bytes", type=click.IntRange(min=1), default=None, metavar="N",
              help="Stop recording a process once its pid directory would pass N bytes (each process "
                   "counts its own); its archive is marked incomplete, the program runs on. "
                   "Default: no cap, a warning past 1 GiB.")
@click.option("--pack-blobs/--loose-blobs", "pack_blobs", default=None,
              help="Store blobs under 64 KiB in pack files (the default: a long capture makes a "
                   "few files, not one per blob), or each in a file of its own (HRR_PACK_BLOBS=0).")
@KERNEL_TIMEOUT_OPTION
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@_friendly
def capture(archive: str, plugins: str | None, backend: str | None, content_flag: bool, metadata_only: bool,
            max_archive_bytes: int | None, pack_blobs: bool | None, kernel_timeout: float | None,
            command: tuple[str, ...]) -> None:
    """Run COMMAND as a child process and record every HIP call of every Python process
    it starts into ARCHIVE/pid-<pid>/ (modes 0700/0600 whatever the umask). Everything
    from COMMAND's first word on is COMMAND's, with or without `--`.

    Exits with COMMAND's exit status (128+N if signal N killed it), except 74 when
    COMMAND exited 0 but a process's recording stopped early (disk full, file-size
    limit): its archive keeps every call made before that and is marked incomplete."""
    from hrr.archive.fsutil import claim_empty_dir
    from hrr.errors import PluginError
    from hrr.pipeline.manager import load_plugins, parse_plugin_list, warn_broken

    if content_flag and metadata_only:
        raise UsageError("--content and --metadata-only contradict each other", hint="pass one of them")
    content = True if content_flag else False if metadata_only else None
    _check_sim_device()
    timeout_env = _kernel_timeout_env(kernel_timeout)
    try:  # a plugin named in --plugins that is unknown or broken: refuse to start, clearly
        loaded = load_plugins(parse_plugin_list(plugins))
    except PluginError as exc:
        raise UsageError(exc.what, hint=exc.hint) from None
    warn_broken(loaded.broken, lambda line: click.echo(line, err=True))
    path = os.path.abspath(archive)
    child_env = launch.child_env("capture", backend, {})
    launch.check_interpreter(command, child_env)
    existed = os.path.isdir(path)
    try:
        claim_empty_dir(path)
    except FileExistsError:
        raise UsageError(f"{archive} already exists and is not an empty directory",
                         hint="choose another -o, or remove it first") from None
    extra = {ARCHIVE_ENV: path}
    if plugins is not None:
        extra[PLUGINS_ENV] = plugins
    elif loaded.broken:  # the recorded processes run the usable ones, without warning again
        extra[PLUGINS_ENV] = ",".join(loaded.versions)
    if content is not None:
        extra[CONTENT_MODE_ENV] = "content" if content else "metadata-only"
    extra.update(launch.size_and_pack_env(max_archive_bytes, pack_blobs))
    extra.update(timeout_env)
    started: list[int] = []
    # the archive reader (for the summary after COMMAND) is imported while COMMAND starts
    status = launch.run_child(command, launch.child_env("capture", backend, extra), started,
                              while_running=lambda: importlib.import_module("hrr.archive.reader"))
    if status == exitcodes.NOT_STARTED and not existed and not os.listdir(path):
        os.rmdir(path)   # a process under COMMAND could not start hrr (it said why): leave nothing
        sys.exit(status)
    if started:
        launch.correct_the_ending(path, started[0], status)
    incomplete, unclosed = launch.report_capture_state(archive, path)
    launch.capture_summary(archive, path, status, plugins_on=sorted(loaded.versions), unclosed=unclosed)
    sys.exit(EXIT_INCOMPLETE if incomplete and status == 0 else status)


@cli.command(context_settings=PROGRAM_SETTINGS, epilog=EPILOG)
@BACKEND_OPTION
@KERNEL_TIMEOUT_OPTION
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@_friendly
def run(backend: str | None, kernel_timeout: float | None, command: tuple[str, ...]) -> None:
    """Run COMMAND with `from hip import hip, hiprtc` on the chosen backend, recording nothing.
    Everything from COMMAND's first word on is COMMAND's, with or without `--`."""
    _check_sim_device()
    env = launch.child_env("run", backend, _kernel_timeout_env(kernel_timeout))
    launch.check_interpreter(command, env)
    sys.exit(launch.run_child(command, env))


@cli.command(epilog=EPILOG)
@click.argument("archive", type=click.Path())
@click.option("--strict", is_flag=True, help="Also fail on anything not replayed faithfully: a refused "
              "record, an unreplayable API, a missing blob, an untranslated pointer, a metadata-only archive, "
              "an archive its program never closed, a process with no records, a program that ended "
              "abnormally (non-zero exit, signal, uncaught exception). Exit 1 when only --strict fails "
              "(the last line says `Result: REFUSED by --strict`).")
@click.option("--allow-abnormal-end", is_flag=True, help="With --strict, accept a program that ended "
              "abnormally (non-zero exit status, signal, uncaught exception): that was the point.")
@BACKEND_OPTION
@click.option("--plugins", default=None,
              help="Comma list of plugins to run (default: those the archive recorded with).")
@click.option("--max-file-bytes", type=int, default=None, help="Largest blob or code object read (bytes).")
@click.option("--max-events", type=int, default=None, help="Most records replayed per process.")
@click.option("--max-record-bytes", type=int, default=None,
              help="Largest record decoded (bytes; default 8 MiB, which bounds one record's decoding at "
                   "about 600 MiB of memory); a larger one is refused.")
@click.option("--max-host-bytes", type=int, default=None, help="Most host memory replay allocates for the archive.")
@click.option("--max-threads", type=int, default=None, help="Most replay threads the archive may ask for.")
@click.option("--max-seconds", type=float, default=600.0, show_default=True,
              help="Wall-clock limit for the whole replay; past it replay stops with exit 1.")
@click.option("--keep-going", is_flag=True, help="Go on after a divergence instead of stopping with exit 2.")
@click.option("--float-tolerance", type=float, default=None,
              help="Compare device-to-host results as float32 within this absolute tolerance "
                   "(default: byte for byte).")
@click.option("--trust-kernels", is_flag=True,
              help="Run the archive's HIP C++ kernels on the sim even where the sandbox that contains them "
                   "is not available (only for an archive you trust: its kernels then run as native code "
                   "of the replay process).")
@click.option("--calls", "calls", default=None, metavar="RANGE",
              help="Replay and check only records N (one), N:M (N to M-1), :M or N:, by sequence "
                   "number as `hrr dump` shows them. Every call before N is replayed first as "
                   "set-up, unchecked (pure queries skipped); nothing from M on is replayed.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the result as one JSON object (per process: checks, refusals, divergences, "
                   "plugin counters, outcome) instead of the summary; the exit code is the same.")
@progress_option
@_friendly
def replay(archive: str, strict: bool, allow_abnormal_end: bool, backend: str | None, plugins: str | None,
           max_file_bytes: int | None, max_events: int | None, max_record_bytes: int | None,
           max_host_bytes: int | None, max_threads: int | None, max_seconds: float, keep_going: bool,
           float_tolerance: float | None, trust_kernels: bool, calls: str | None, as_json: bool,
           progress: bool | None) -> None:
    """Replay ARCHIVE and check every device-to-host copy. Exit 0: every check passed;
    1: a failed check, a failure, a limit reached or --strict refused; 2: replay diverged
    and stopped early; 130: Ctrl-C, after a partial summary."""
    import attrs

    from hrr.archive import Limits
    from hrr.events.ranges import parse_range
    from hrr.pipeline.manager import parse_plugin_list
    from hrr.replay.engine import ReplayOptions
    from hrr.replay.run import WATCHDOG_GRACE_SECONDS, replay_archive, start_watchdog

    _check_sim_device()
    if not os.path.exists(archive):
        raise _no_archive(archive)
    if not (math.isfinite(max_seconds) and max_seconds > 0):
        raise UsageError(f"--max-seconds must be a positive number of seconds, got {max_seconds}")
    overrides = {k: v for k, v in {"max_file_bytes": max_file_bytes, "max_events": max_events,
                                   "max_record_bytes": max_record_bytes, "max_host_bytes": max_host_bytes,
                                   "max_threads": max_threads}.items()
                 if v is not None}
    limits = attrs.evolve(Limits(), **overrides)
    options = ReplayOptions(strict=strict, keep_going=keep_going, float_tolerance=float_tolerance,
                            max_seconds=max_seconds, trust_kernels=trust_kernels,
                            calls=parse_range(calls) if calls is not None else None)
    # Replay stops itself between records past --max-seconds; a single call that never
    # returns (a GPU wait nothing releases) is ended by the watchdog a little later.
    done = start_watchdog(max_seconds + WATCHDOG_GRACE_SECONDS,
                          f"replay did not finish within --max-seconds={max_seconds:g} "
                          f"(+{WATCHDOG_GRACE_SECONDS:g} s): a replayed call never returned; stopped")
    from hrr.cli.progress import progress_bar, wanted

    try:
        with progress_bar(wanted(progress)) as bar:
            # The summary is streamed, each process's lines once it is done; --json waits for the end.
            result = replay_archive(archive, backend=backend, limits=limits, options=options,
                                    plugins=parse_plugin_list(plugins), echo=None if as_json else _echo_on,
                                    progress=bar, allow_abnormal_end=allow_abnormal_end)
    finally:
        done.set()
    if as_json:
        _echo_on(json.dumps(result.to_json(), indent=2, allow_nan=False))
    sys.exit(result.exit_code)


@cli.command(epilog=EPILOG)
@click.argument("archive", type=click.Path())
@click.option("--events", "show_events", is_flag=True,
              help="Also list every record (text: streamed after the tables; with --json the list is "
                   "held in memory, so for big archives use `hrr dump --jsonl`).")
@click.option("--json", "as_json", is_flag=True, help="Print the same data as one JSON object.")
@progress_option
@_friendly
def info(archive: str, show_events: bool, as_json: bool, progress: bool | None) -> None:
    """Describe ARCHIVE in tables: processes, threads, streams, calls and errors per API,
    kernels with launch counts and grid/block shapes, blobs and dedup savings, pinned
    snapshots, graphs, unreplayable calls. One pass over the records, in bounded memory.
    Which HIP calls hrr records and how each replays: `hrr coverage`."""
    from hrr.cli.info import archive_info, iter_event_lines, render_info
    from hrr.cli.progress import progress_bar, wanted

    if not os.path.exists(archive):
        raise _no_archive(archive)
    try:
        with progress_bar(wanted(progress)) as bar:
            data = archive_info(archive, with_events=show_events and as_json, progress=bar)
        text = json.dumps(data, indent=2, allow_nan=False) if as_json else render_info(data)
        click.echo(text)
        stopped = data.get("interrupted")
        if stopped:
            click.echo(f"hrr: interrupted (Ctrl-C) in pid-{stopped['pid']} after {stopped['after_records']} "
                       "records: the tables above are partial; later processes were not read", err=True)
            sys.exit(exitcodes.INTERRUPTED)
        if show_events and not as_json:
            for line in iter_event_lines(archive):
                click.echo(line)
    except (HrrError, OSError):
        raise
    except Exception as exc:  # noqa: BLE001 -- info must survive any archive: one line, never a traceback
        raise ArchiveError(f"info could not describe this archive ({type(exc).__name__}: {str(exc)[:200]})",
                            where=archive, hint="this is a bug in hrr: please report it with the archive") from None


@cli.command(epilog=EPILOG)
@click.argument("archive", type=click.Path())
@progress_option
@_friendly
def repair(archive: str, progress: bool | None) -> None:
    """Close an archive that a killed capture left open, keeping every complete record."""
    from hrr.archive import repair as repair_archive

    if not os.path.exists(archive):
        raise _no_archive(archive)
    from hrr.cli.progress import progress_bar, wanted

    with progress_bar(wanted(progress)) as bar:
        report = repair_archive(archive, progress=bar)
    if report.interrupted:
        for proc in report.processes:
            click.echo(proc.describe())
        click.echo(report.summary())
        click.echo(f"hrr: interrupted (Ctrl-C) in {report.interrupted}: the processes above are done; "
                   f"run `hrr repair {archive}` again to finish", err=True)
        sys.exit(exitcodes.INTERRUPTED)
    if not report.processes:
        raise UsageError(f"{archive}: no pid-<pid> directories: not an hrr archive",
                         hint="pass the directory written by `hrr capture -o`")
    for proc in report.processes:
        click.echo(proc.describe())
    click.echo(report.summary())
    failed = [p for p in report.processes if p.action in ("failed", "partial")]
    if failed:
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        what = "cannot repair" if failed[0].action == "failed" else "could only partly repair"
        click.echo(f"hrr: error: {what} pid-{failed[0].pid}: {failed[0].error}{more}", err=True)
        sys.exit(EXIT_ERROR)


@cli.command(epilog=EPILOG)
@click.argument("archive", type=click.Path())
@_friendly
def pack(archive: str) -> None:
    """Move the small loose blob files of a closed ARCHIVE into pack files (one per process).

    Safe to interrupt: loose files are removed only after the pack and its index are on disk."""
    from hrr.archive.pack import pack_archive

    if not os.path.isdir(archive):
        raise _no_archive(archive)
    report = pack_archive(archive, say=lambda line: click.echo(line, err=True))
    for line in report.skipped:
        click.echo(f"hrr: left loose: {line}", err=True)
    click.echo(f"hrr: {report.packed} blobs ({report.bytes} bytes) packed in {archive}")


@cli.command(epilog=EPILOG)
@_friendly
def plugins() -> None:
    """List installed plugins, their versions and the hooks they implement. A plugin
    that cannot load is listed as BROKEN with the reason (capture and replay skip it
    unless it is asked for with --plugins)."""
    from hrr.pipeline.manager import BrokenPluginError, hook_implementations, installed_plugins, load_plugins

    available = installed_plugins()
    if not available:
        click.echo("no plugins installed")
        return
    for name, ep in available.items():
        dist = getattr(ep, "dist", None)
        origin = f"{ep.value}" + (f", from {dist.metadata['Name']}" if dist is not None else "")
        try:  # one at a time, so that a broken plugin does not hide the others
            loaded = load_plugins([name])
        except BrokenPluginError as exc:
            click.echo(f"{name} BROKEN ({origin})")
            click.echo(f"    reason: {exc.reason}")
            continue
        hooks = hook_implementations(loaded.pm)
        click.echo(f"{name} {loaded.versions.get(name, '?')} ({origin})")
        click.echo(f"    hooks: {', '.join(hooks.get(name, [])) or 'none'}")


@cli.command(epilog=EPILOG)
@_friendly
def coverage() -> None:
    """Print which HIP calls hrr records and how each replays, which backends offer them,
    and the installed hip-python's functions it does not cover (what docs/api-coverage.md
    holds, from this install). A call of one of those raises UncataloguedCall naming it."""
    from hrr.cli.coverage import render

    click.echo(render(), nl=False)


# -- inspection: export (timeline) and diff; the code lives in hrr.inspect ----------------
@cli.command(epilog=EPILOG)
@click.option("--chrome-trace", "chrome_trace", required=True, type=click.Path(dir_okay=False),
              help="Write a Trace Event Format JSON file (Perfetto, chrome://tracing) here; "
                   "a name ending .gz is written gzip-compressed.")
@click.option("--gzip", "gzip_flag", is_flag=True,
              help="Compress the trace with gzip whatever its name (Perfetto opens .json.gz as it is).")
@click.option("--calls", "calls", default=None, metavar="RANGE",
              help="Only draw records N (one), N:M (N to M-1), :M or N:, by sequence number as "
                   "`hrr dump` shows them (records before N are read, not drawn).")
@click.argument("archive", type=click.Path())
@progress_option
@_friendly
def export(chrome_trace: str, gzip_flag: bool, calls: str | None, archive: str, progress: bool | None) -> None:
    """Write ARCHIVE's timeline as a Chrome trace: a track per thread and per stream,
    kernels and copies as slices, syncs and pinned snapshots as instants, graph launches
    grouped. Records carry no time: the clock is virtual (record order). For a big archive:
    --calls draws a range, a .json.gz name (or --gzip) writes a tenth of the bytes."""
    from hrr.events.ranges import parse_range
    from hrr.inspect.timeline import export_chrome_trace, wants_gzip

    calls_range = parse_range(calls) if calls is not None else None
    if not os.path.exists(archive):
        raise _no_archive(archive)
    folder = os.path.dirname(os.path.abspath(chrome_trace))
    if not os.path.isdir(folder):
        raise UsageError(f"cannot write --chrome-trace {chrome_trace}: the folder {folder} does not exist",
                         hint="create it first, or name a file in an existing folder")
    from hrr.cli.progress import progress_bar, wanted

    with progress_bar(wanted(progress)) as bar:
        summary = export_chrome_trace(archive, chrome_trace, progress=bar, calls_range=calls_range,
                                      compress=wants_gzip(chrome_trace, gzip_flag))
    skipped = f", {summary['skipped_records']} unreadable record(s) skipped" if summary["skipped_records"] else ""
    click.echo(f"hrr: wrote {chrome_trace}: {summary['trace_events']} trace events from "
               f"{summary['records']} records in {summary['processes']} process(es){skipped}", err=True)


@cli.command(epilog=EPILOG)
@click.argument("archive_a", type=click.Path())
@click.argument("archive_b", type=click.Path())
@click.option("--context", default=3, show_default=True, type=click.IntRange(0, 1000),
              help="Equal records shown before the divergence.")
def diff(archive_a: str, archive_b: str, context: int) -> None:
    """Print the first divergence between two archives, comparing calls, arguments (capture
    addresses and handles normalised), errors and D2H digests. Exit 0: equal; 1: they
    differ; 4: an archive cannot be read."""
    from hrr.inspect.diff import EXIT_DIFFERENT, EXIT_EQUAL, EXIT_TROUBLE, diff_archives

    try:
        for path in (archive_a, archive_b):
            if not os.path.exists(path):
                raise _no_archive(path)
        result = diff_archives(archive_a, archive_b, context=context, echo=_echo_on)
    except (HrrError, OSError, ValueError) as exc:
        click.echo(f"hrr: error: {exc}", err=True)
        sys.exit(EXIT_TROUBLE)
    sys.exit(EXIT_EQUAL if result.equal else EXIT_DIFFERENT)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="hrr")


# -- hrr dump (hrr/inspect/dump.py); kept above the __main__ guard so `python -m` sees it --
@cli.command(epilog=EPILOG)
@click.argument("archive", type=click.Path())
@click.option("--calls", "calls", default=None, metavar="RANGE",
              help="Only calls N (one), N:M (N to M-1), :M or N:, by sequence number.")
@click.option("--api", "apis", multiple=True, metavar="NAME", help="Only this HIP call (repeat or comma list).")
@click.option("--thread", default=None, metavar="T",
              help="Only thread T: t1, t2, ... as dump numbers them, or a thread id.")
@click.option("--pid", type=int, default=None, metavar="P", help="Only process P.")
@click.option("--jsonl", is_flag=True, help="One JSON object per line instead of text.")
@progress_option
@_friendly
def dump(archive: str, calls: str | None, apis: tuple[str, ...], thread: str | None, pid: int | None,
         jsonl: bool, progress: bool | None) -> None:
    """Stream ARCHIVE's records, one line each: sequence number, thread, call, named
    parameters, enum and error names, outputs, kernel names, copies and snapshots.
    Reads as it prints, in flat memory; a closed pipe (`| head`) ends it with exit 0."""
    from hrr.events.ranges import parse_range
    from hrr.inspect.dump import DumpFilter, dump_to_stdout, parse_apis, parse_thread

    if not os.path.exists(archive):
        raise _no_archive(archive)
    filt = DumpFilter(calls=parse_range(calls) if calls is not None else None, apis=parse_apis(apis),
                      thread=parse_thread(thread) if thread is not None else None, pid=pid)
    from hrr.cli.progress import progress_bar, wanted

    # On by default only when stderr is a terminal and stdout is not (the lines are the progress).
    with progress_bar(wanted(progress, streaming_stdout=True)) as bar:
        code = dump_to_stdout(archive, jsonl=jsonl, filt=filt, progress=bar)
    sys.exit(code)


cli.add_command(cache_commands.cache)


if __name__ == "__main__":
    main()
