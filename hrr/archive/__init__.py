"""The archive: a versioned, crash-resilient, content-addressed store of one capture.

Writing: :func:`open_process_writer`. Reading (untrusted input, under :class:`Limits`):
:func:`open_archive`. Closing what a killed capture left open: :func:`repair`.
Fork safety: :func:`register_fork_lock` (see :mod:`hrr.archive.forking` for the order).
"""
from hrr.archive.format import FORMAT_VERSION, MAGIC, content_name, is_valid_name
from hrr.archive.forking import register_fork_lock
from hrr.archive.limits import Limits
from hrr.archive.reader import Archive, BadRecord, ProcessArchive, Record, StreamState, open_archive
from hrr.archive.repair import ProcessRepair, RepairReport, repair
from hrr.archive.opening import open_process_writer
from hrr.archive.writer import ProcessWriter

__all__ = [
    "FORMAT_VERSION", "MAGIC", "content_name", "is_valid_name", "register_fork_lock", "Limits",
    "Archive", "BadRecord", "ProcessArchive", "Record", "StreamState", "open_archive",
    "ProcessRepair", "RepairReport", "repair", "ProcessWriter", "open_process_writer",
]
