"""The process writer whose ``append_call`` is the native core's (record.c).

The core is the writer's state lock and holds the counters the hot path touches; the
writer reads and sets them through properties, so every other method of
:class:`~hrr.archive.writer.ProcessWriter` (the slow paths, growth, the cap, close, fork)
runs unchanged on the same state, and the core calls those methods back for anything but
the common record.
"""
from __future__ import annotations

import functools
import mmap
import os
from typing import Any

from hrr.archive import native
from hrr.archive.writer import ProcessWriter


def _counter(name: str, doc: str) -> Any:
    return property(lambda self: getattr(self._core, name), lambda self, v: setattr(self._core, name, v), doc=doc)


class NativeProcessWriter(ProcessWriter):
    """A :class:`ProcessWriter` recording through the native core (its bytes are the same)."""

    RECORDER = native.NATIVE
    _core_type: Any = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._core = self._core_type()
        self._mapping: Any = None
        super().__init__(*args, **kwargs)
        self._core.bind(self, self._threads)
        self.append_call = self._core.append_call   # type: ignore[method-assign]

    def _new_lock(self) -> Any:
        return self._core

    seq = _counter("seq", "the next call's sequence number")
    _pos = _counter("pos", "end of the last whole frame")
    _limit = _counter("limit", "append_call's fast path writes a record ending here or before")
    _events = _counter("events", "records written")
    _batch_full = _counter("batch_full", "the open batch is full once _events reaches this")

    @property
    def _mm(self) -> Any:
        return self._mapping

    @_mm.setter
    def _mm(self, mapping: Any) -> None:
        # Its address; None (unmapped), or an object with no buffer (a test's stand-in),
        # sends every record through the Python _place, which writes through ``mapping``.
        self._core.set_base(mapping if isinstance(mapping, mmap.mmap) else None)
        self._mapping = mapping


@functools.lru_cache(maxsize=None)
def native_writer() -> type[ProcessWriter]:
    """NativeProcessWriter when the extension builds and loads, else ProcessWriter (said once on stderr)."""
    module, why = native.extension()
    if module is None:
        line = (f"hrr: the native record path is not available ({why[:300]}); recording with the Python "
                f"path (set HRR_NATIVE_RECORD=0 to choose it without this notice)\n")
        try:
            os.write(2, line.encode(errors="replace"))
        except OSError:
            pass
        return ProcessWriter
    return type("NativeProcessWriter", (NativeProcessWriter,), {"_core_type": module.Core})
