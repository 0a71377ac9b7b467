"""Opening a process's writer: the one place that chooses between the Python record path
(:class:`~hrr.archive.writer.ProcessWriter`) and the native one (``hrr/archive/native``),
so that neither writer module needs the other's name."""
from __future__ import annotations

import os
from typing import Any, Mapping

from hrr.archive import native as native_path
from hrr.archive.native.writer import native_writer
from hrr.archive.writer import ProcessWriter
from hrr.config import config


def open_process_writer(root: str | os.PathLike[str], pid: int, header: Mapping[str, Any], *,
                        manifest: Mapping[str, Any] | None = None,
                        max_bytes: int | None = -1,
                        warn_bytes: int | None = -1, pack_blobs: bool | None = None,
                        native: bool | None = None) -> "ProcessWriter":
    """Create ``root/pid-<pid>/`` and return a writer for it (manifest written, clean_shutdown false).

    ``header`` must name ``backend``; its msgpack-native fields go into the events.bin header.
    ``manifest`` gives initial manifest fields (plugins, content_mode, host_snapshots, ...).
    ``max_bytes``/``warn_bytes``: size cap and warning threshold of this pid directory
    (None: none; default: HRR_MAX_ARCHIVE_BYTES / HRR_WARN_ARCHIVE_BYTES via hrr.config).
    ``pack_blobs``: small blobs go into a pack file (default: HRR_PACK_BLOBS, on).
    ``native``: record through the native path (hrr/archive/native; default: HRR_NATIVE_RECORD,
    on), or the Python one; either writes the same bytes, and the manifest's ``recorder`` says which.
    """
    kind: type[ProcessWriter] = ProcessWriter
    if native is None:
        native = native_path.wanted()
    if native:
        kind = native_writer()
    return kind(os.fspath(root), pid, header, manifest or {},
                max_bytes=config().max_archive_bytes if max_bytes == -1 else max_bytes,
                warn_bytes=config().warn_archive_bytes if warn_bytes == -1 else warn_bytes,
                pack_blobs=config().pack_blobs if pack_blobs is None else pack_blobs)


__all__ = ["open_process_writer"]
