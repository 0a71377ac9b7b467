"""The archive: a versioned, crash-resilient, content-addressed store of one capture.

Writing: :func:`open_process_writer`. Reading (untrusted input, under :class:`Limits`):
:func:`open_archive`. Closing what a killed capture left open: :func:`repair`.
Fork safety: :func:`register_fork_lock` (see :mod:`hrr.archive.forking` for the order).

Each name below is imported at its first use: ``hrr capture`` needs only ``fsutil`` before
it starts the program, and imports the reader (its event codec, the catalogue's checks)
while the program runs.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from hrr.lazynames import lazy_names

if TYPE_CHECKING:
    from hrr.archive.format import FORMAT_VERSION, MAGIC, content_name, is_valid_name
    from hrr.archive.forking import register_fork_lock
    from hrr.archive.limits import Limits
    from hrr.archive.opening import open_process_writer
    from hrr.archive.reader import Archive, BadRecord, ProcessArchive, Record, StreamState, open_archive
    from hrr.archive.recovery import ProcessRepair, RepairReport, repair
    from hrr.archive.writer import ProcessWriter

_WHERE = {
    "hrr.archive.format": ("FORMAT_VERSION", "MAGIC", "content_name", "is_valid_name"),
    "hrr.archive.forking": ("register_fork_lock",),
    "hrr.archive.limits": ("Limits",),
    "hrr.archive.reader": ("Archive", "BadRecord", "ProcessArchive", "Record", "StreamState", "open_archive"),
    "hrr.archive.recovery": ("ProcessRepair", "RepairReport", "repair"),
    "hrr.archive.opening": ("open_process_writer",),
    "hrr.archive.writer": ("ProcessWriter",),
}
__getattr__, __dir__ = lazy_names(globals(), _WHERE)

__all__ = [
    "FORMAT_VERSION", "MAGIC", "content_name", "is_valid_name", "register_fork_lock", "Limits",
    "Archive", "BadRecord", "ProcessArchive", "Record", "StreamState", "open_archive",
    "ProcessRepair", "RepairReport", "repair", "ProcessWriter", "open_process_writer",
]
