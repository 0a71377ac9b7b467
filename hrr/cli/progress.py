"""One progress bar for the long commands (replay, info, dump, repair, export).

It is drawn with rich on stderr, so stdout (the command's real output) is byte for byte
the same with or without it. It is on when stderr is a terminal, off on a pipe or a file
unless ``--progress`` asks for it; ``--no-progress`` turns it off everywhere. Loops report
how many records they have done through a plain callback (``progress(done)``); this module
throttles those calls so a per-record callback costs a counter compare, not a redraw.
"""
from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from typing import IO, Any

import click

# Redraw at most every this many records or this many seconds, whichever comes first.
_EVERY_RECORDS = 1000
_EVERY_SECONDS = 0.1

progress_option = click.option(
    "--progress/--no-progress", "progress", default=None,
    help="Show a progress bar on stderr (default: only when stderr is a terminal).")


def wanted(flag: bool | None, *, streaming_stdout: bool = False) -> bool:
    """Whether to draw: ``--progress``/``--no-progress`` decide; unset, a terminal stderr
    does, unless the command streams its output to that terminal too (``hrr dump``)."""
    if flag is not None:
        return flag
    if streaming_stdout and _isatty(sys.stdout):
        return False
    return _isatty(sys.stderr)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or odd stream: no bar
        return False


class Bar:
    """A running bar. ``task(name, total)`` starts a line (ending the previous one), calling
    the bar with a count updates it (throttled), ``end()`` draws the line's final state and
    stops drawing, so that the command's own output can follow it. Disabled, all are no-ops."""

    def __init__(self, enabled: bool = False, stream: IO[str] | None = None) -> None:
        self.enabled = enabled
        self._stream = stream
        self._progress: Any = None
        self._task: Any = None
        self._done = self._drawn = 0
        self._drawn_at = 0.0

    def task(self, name: str, total: int | None = None, *, manifest: Any = None) -> None:
        """Start a new line named ``name``; ``total`` records when known, or the count a
        clean ``manifest`` states (else a count only)."""
        self.end()
        total = total if total is not None else manifest_total(manifest)
        if not self.enabled:
            return
        self._progress = _make_progress(self._stream if self._stream is not None else sys.stderr)
        self._progress.start()
        self._task = self._progress.add_task(name, total=total if total and total > 0 else None)
        self._done = self._drawn = 0
        self._drawn_at = time.monotonic()

    def __call__(self, done: int) -> None:
        """``done`` records so far in the current task."""
        self._done = done
        if self._progress is None:
            return
        if done - self._drawn >= _EVERY_RECORDS:
            self._flush()
        elif done != self._drawn:
            now = time.monotonic()
            if now - self._drawn_at >= _EVERY_SECONDS:
                self._flush(now)

    def end(self) -> None:
        """Draw the current line's final count and stop drawing (safe to call twice)."""
        progress, self._progress = self._progress, None
        if progress is None:
            return
        try:
            self._flush(progress=progress)
        finally:
            progress.stop()

    def _flush(self, now: float | None = None, progress: Any = None) -> None:
        progress = progress if progress is not None else self._progress
        if progress is None:
            return
        total = progress.tasks[-1].total
        if total is not None and self._done > total:  # the manifest's count was short: no total
            progress.update(self._task, total=None)
        progress.update(self._task, completed=self._done)
        self._drawn, self._drawn_at = self._done, now if now is not None else time.monotonic()


def _make_progress(out: IO[str]) -> Any:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.text import Text

    class RateColumn(ProgressColumn):
        """Records per second."""

        def render(self, task: Any) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"{speed:,.0f} rec/s" if speed else "- rec/s")

    # Forced on a non-terminal (--progress on a pipe), rich still draws: the user asked.
    console = Console(file=out, force_terminal=True)
    # stdout is never redirected through the bar: it stays the command's, byte for byte.
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("records"), RateColumn(), TimeElapsedColumn(),
                    console=console, transient=False, refresh_per_second=8,
                    redirect_stdout=False, redirect_stderr=False)


@contextlib.contextmanager
def progress_bar(enabled: bool, stream: IO[str] | None = None) -> Iterator[Bar]:
    """A :class:`Bar` drawing on ``stream`` (default stderr) when ``enabled``; ended on exit,
    also on an exception or Ctrl-C (so the terminal's cursor comes back)."""
    bar = Bar(enabled, stream)
    try:
        yield bar
    finally:
        bar.end()


def manifest_total(manifest: Any) -> int | None:
    """The record count a clean manifest states (``counts.events``), if any; else None."""
    if not isinstance(manifest, dict) or manifest.get("clean_shutdown") is not True:
        return None
    counts = manifest.get("counts")
    n = counts.get("events") if isinstance(counts, dict) else None
    return n if type(n) is int and n > 0 else None
