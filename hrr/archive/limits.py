"""Limits the reader and replay enforce on an untrusted archive (all with safe defaults)."""
from __future__ import annotations

import attrs

MiB = 1 << 20
GiB = 1 << 30
#: A record is decoded whole, and its worst shape (a list of empty maps) costs about 74 bytes
#: of Python memory per payload byte (``python bench/record_decode.py``): 8 MiB bounds one
#: record's decode at about 600 MiB. hrr's own records are far smaller (a launch's pinned
#: snapshot list is about 40 bytes per 64 KiB chunk); the writer refuses larger ones.
DEFAULT_MAX_RECORD_BYTES = 8 * MiB


def _positive(instance: object, attribute: attrs.Attribute, value: object) -> None:
    if type(value) is not int or value <= 0:
        raise ValueError(f"Limits.{attribute.name} must be a positive int, got {value!r}")


@attrs.frozen
class Limits:
    """Caps on what an archive may make hrr read, allocate or start. Defaults are safe."""

    #: Largest single file read whole: a blob, a code object (checked with fstat first).
    max_file_bytes: int = attrs.field(default=256 * MiB, validator=_positive)
    #: Largest manifest.json read.
    max_manifest_bytes: int = attrs.field(default=4 * MiB, validator=_positive)
    #: Largest msgpack payload of one frame (and of the file header); larger ends the stream.
    max_record_bytes: int = attrs.field(default=DEFAULT_MAX_RECORD_BYTES, validator=_positive)
    #: Most event frames read from one process's events.bin.
    max_events: int = attrs.field(default=50_000_000, validator=_positive)
    #: Host memory replay may allocate on the archive's behalf (enforced by replay).
    max_host_bytes: int = attrs.field(default=16 * GiB, validator=_positive)
    #: Replay threads the archive may ask for (enforced by replay).
    max_threads: int = attrs.field(default=256, validator=_positive)
    #: pid-* directories in one archive.
    max_processes: int = attrs.field(default=1024, validator=_positive)
