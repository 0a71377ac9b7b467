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
from collections.abc import Callable, Iterator
from typing import IO, Any

import click

# Redraw at most every this many records or this many seconds, whichever comes first.
_EVERY_RECORDS = 1000
_EVERY_SECONDS = 0.1

progress_option = click.option(
    "--progress/--no-progress", "progress", default=None,
    help="Show a progress bar on stderr (default: only when stderr is a terminal).")


def wanted(flag: bool | None, stream: IO[str] | None = None) -> bool:
    """Whether to draw: ``--progress``/``--no-progress`` decide; unset, a terminal stderr does."""
    if flag is not None:
        return flag
    stream = stream if stream is not None else sys.stderr
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or odd stream: no bar
        return False


class Bar:
    """A running bar: ``task(name, total)`` starts a line, calling the bar with a count
    updates it (throttled), and leaving the ``progress_bar`` block draws the final state."""

    def __init__(self, progress: Any) -> None:
        self._progress = progress
        self._task: Any = None
        self._done = 0
        self._drawn = 0
        self._drawn_at = 0.0

    def task(self, name: str, total: int | None = None) -> None:
        """Start a new line named ``name``; ``total`` records when known (else a count only)."""
        if self._progress is None:
            return
        self._flush()
        self._task = self._progress.add_task(name, total=total if total and total > 0 else None)
        self._done = self._drawn = 0

    def __call__(self, done: int) -> None:
        """``done`` records so far in the current task."""
        self._done = done
        if self._progress is None or self._task is None:
            return
        if done - self._drawn >= _EVERY_RECORDS:
            self._flush()
        elif done != self._drawn:
            now = time.monotonic()
            if now - self._drawn_at >= _EVERY_SECONDS:
                self._flush(now)

    def _flush(self, now: float | None = None) -> None:
        if self._progress is None or self._task is None:
            return
        task = self._progress.tasks[-1]
        total = task.total
        if total is not None and self._done > total:  # the manifest's count was short: grow
            self._progress.update(self._task, total=None)
        self._progress.update(self._task, completed=self._done)
        self._drawn, self._drawn_at = self._done, now if now is not None else time.monotonic()


@contextlib.contextmanager
def progress_bar(enabled: bool, stream: IO[str] | None = None) -> Iterator[Bar]:
    """A :class:`Bar` drawing on ``stream`` (stderr) when ``enabled``; a no-op one otherwise."""
    if not enabled:
        yield Bar(None)
        return
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

    out = stream if stream is not None else sys.stderr
    # Forced on a non-terminal (--progress on a pipe), rich still draws: the user asked.
    console = Console(file=out, force_terminal=True, stderr=out is sys.stderr)
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("records"), RateColumn(), TimeElapsedColumn(),
                        console=console, transient=False, refresh_per_second=8)
    bar = Bar(progress)
    with progress:
        try:
            yield bar
        finally:
            bar._flush()


def manifest_total(manifest: Any) -> int | None:
    """The record count a clean manifest states (``counts.events``), if any; else None."""
    if not isinstance(manifest, dict) or manifest.get("clean_shutdown") is not True:
        return None
    counts = manifest.get("counts")
    n = counts.get("events") if isinstance(counts, dict) else None
    return n if type(n) is int and n > 0 else None

