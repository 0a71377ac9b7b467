"""Shared helpers for the archive tests."""
from __future__ import annotations

import os

from hrr.archive import open_process_writer
from hrr.archive.format import FORMAT_VERSION, FRAME_HEADER
from old_formats import open_old_writer

RECORDS = [
    [0, "hipMalloc", {"size": 64}, None],
    [1, "hipMemcpy", {"dst": 1 << 40, "src": b"\x00\x01\x02", "kind": 1}, 3.5],
    (2, "hipModuleLaunchKernel", {"grid": [1, 1, 1], "name": "fill_u32", "ok": True}),
    [3, "hipDeviceSynchronize", {}, -7],
]


def write_archive(root: str, pid: int = 4242, records=RECORDS, close: bool = True,
                  version: int = FORMAT_VERSION, flush_each: bool = False, **manifest):
    """A small archive with ``records``; returns the writer (closed unless close=False).
    ``flush_each``: one frame per record in version 2 (the batch closed after each)."""
    if version == FORMAT_VERSION:
        w = open_process_writer(root, pid, {"backend": "sim"}, manifest=manifest)
    else:
        w = open_old_writer(root, pid, {"backend": "sim"}, manifest=manifest, format_version=version)
    for r in records:
        w.append(r)
        if flush_each:
            w.flush()
    w.flush()
    if close:
        w.close()
    return w


def pid_dir(root: str, pid: int = 4242) -> str:
    return os.path.join(root, f"pid-{pid}")


def as_lists(value):
    """msgpack reads tuples back as lists."""
    if isinstance(value, (list, tuple)):
        return [as_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: as_lists(v) for k, v in value.items()}
    return value


def frame_at(record, version: int) -> int:
    """Offset of the frame holding ``record`` when each record has its own frame: v1 records
    are named by their frame's offset, v2 records by their own bytes' offset."""
    return record.offset - (0 if version == 1 else FRAME_HEADER.size)


class LoggedMap:
    """Stands in for a writer's mapping (``w._mm``) and logs each write as (start, stop)."""

    def __init__(self, mm, log):
        self.mm, self.log = mm, log

    def __setitem__(self, key, value):
        start, stop = (key.start, key.stop) if isinstance(key, slice) else (key, key + 1)
        self.log.append((start, stop))
        self.mm[key] = value

    def __getitem__(self, key):
        return self.mm[key]
