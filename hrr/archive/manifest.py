"""manifest.json: the per-process summary, its defaults, encoding and validation."""
from __future__ import annotations

import json
from typing import Any

from hrr.archive.format import FORMAT_VERSION, READ_VERSIONS
from hrr.errors import FormatError

CONTENT_MODES = ("content", "metadata-only")
#: The manifest's ``recorder``: the record path that wrote events.bin (hrr/archive/native or writer.py).
RECORDERS = ("native", "python")
MAX_DEVICE_TEXT = 256   # a device's model, name or target id (hipDeviceProp_t.name holds 256 bytes)


def default_manifest(pid: int, backend: str) -> dict[str, Any]:
    """A manifest with every required field at its default (clean_shutdown false)."""
    return {
        "format_version": FORMAT_VERSION,
        "pid": pid,
        "backend": backend,
        "plugins": {},
        "content_mode": "content",
        "host_snapshots": False,
        "unreplayable_apis": [],
        "counts": {"events": 0, "blobs": 0, "blob_bytes": 0, "code_objects": 0},
        "clean_shutdown": False,
    }


def encode(manifest: dict[str, Any]) -> bytes:
    """Stable, human-readable JSON bytes of a manifest."""
    return (json.dumps(manifest, indent=2, sort_keys=True, allow_nan=False) + "\n").encode()


def _is_int(v: object) -> bool:
    return type(v) is int


def _check_unreplayable(v: object) -> bool:
    return isinstance(v, list) and all(
        isinstance(e, dict) and type(e.get("api")) is str and type(e.get("reason")) is str for e in v)


# field -> (check, description). Unknown fields are tolerated and kept.
REQUIRED: dict[str, tuple[Any, str]] = {
    "format_version": (_is_int, "an int"),
    "pid": (lambda v: _is_int(v) and v >= 0, "a non-negative int"),
    "backend": (lambda v: type(v) is str, "a string"),
    "plugins": (lambda v: isinstance(v, dict) and all(type(x) is str for x in v.values()),
                "a map of plugin name to version string"),
    "content_mode": (lambda v: v in CONTENT_MODES, f"one of {CONTENT_MODES}"),
    "host_snapshots": (lambda v: type(v) is bool, "a bool"),
    "unreplayable_apis": (_check_unreplayable, "a list of {api: str, reason: str, ...}"),
    "counts": (lambda v: isinstance(v, dict) and all(_is_int(x) and x >= 0 for x in v.values()),
               "a map of name to non-negative int"),
    "clean_shutdown": (lambda v: type(v) is bool, "a bool"),
}
OPTIONAL: dict[str, tuple[Any, str]] = {
    "repaired": (lambda v: type(v) is bool, "a bool"),
    "parent_pid": (lambda v: v is None or (_is_int(v) and v >= 0), "a non-negative int or null"),
    "created": (lambda v: type(v) in (int, float), "a number"),
    # recording stopped early (disk full, file-size limit): why, and what was kept
    "incomplete": (lambda v: isinstance(v, dict) and type(v.get("reason")) is str
                   and all(_is_int(x) and x >= 0 for k, x in v.items() if k != "reason"),
                   "a map with a string reason and non-negative int counts"),
    "closed_on_signal": (lambda v: type(v) is str, "a signal name"),
    # which record path wrote events.bin (the same bytes either way; older archives have none)
    "recorder": (lambda v: v in RECORDERS, f"one of {RECORDERS}"),
    # why content_mode is what it is: "--content", "--metadata-only", "plugin P vetoed content",
    # "plugin P allowed content" or "no running plugin vetoed content" (older archives have none)
    "content_why": (lambda v: type(v) is str and len(v) <= 1024, "a string of at most 1024 characters"),
    # hip-python's own modules the program reached past hrr: its calls through them are missing
    "bypassed_bindings": (lambda v: isinstance(v, list) and all(type(x) is str for x in v),
                          "a list of module names"),
    # the device the program saw (the sim's model: hrr.backends.devicemodels); older archives
    # have none
    "device": (lambda v: isinstance(v, dict) and type(v.get("model")) is str
               and all(type(x) is str and len(x) <= MAX_DEVICE_TEXT for x in v.values()),
               "a map with a string model (and name, arch), each at most 256 characters"),
}


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def decode(data: bytes, where: str) -> dict[str, Any]:
    """Parse and validate manifest bytes; raises FormatError naming the file and the field."""
    try:
        value = json.loads(data.decode("utf-8"), parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        raise FormatError(f"manifest is not valid JSON: {str(exc)[:200]}", where=where,
                          hint="run `hrr repair` to rebuild it") from None
    if not isinstance(value, dict):
        raise FormatError("manifest is not a JSON object", where=where, hint="run `hrr repair` to rebuild it")
    for table, required in ((REQUIRED, True), (OPTIONAL, False)):
        for field, (check, description) in table.items():
            if field not in value:
                if required:
                    raise FormatError(f"manifest field {field!r} is missing", where=where,
                                      hint="run `hrr repair` to rebuild it")
                continue
            if not check(value[field]):
                raise FormatError(f"manifest field {field!r} must be {description}, got {value[field]!r:.80}",
                                  where=where, hint="the archive is corrupt or was tampered with")
    if value["format_version"] not in READ_VERSIONS:
        raise FormatError(f"manifest names format version {value['format_version']}, "
                          f"this hrr reads versions {', '.join(map(str, READ_VERSIONS))}", where=where,
                          hint="read it with the hrr release that wrote it")
    return value


#: The most characters of a program's exception message ``describe_ended`` gives (capture keeps 1000).
MAX_ENDED_MESSAGE = 1000


def clip_words(text: str, limit: int, where: str = "") -> str:
    """``text`` cut to about ``limit`` characters at a word boundary, ending with an
    ellipsis (and `` where`` saying where the whole text is) when it was cut."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    if " " in cut[limit // 2:]:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip() + " …" + (f" {where}" if where else "")


def describe_ended(value: Any) -> str:
    """The manifest's ``ended`` in words ("exited with status 0", "killed by SIGTERM", ...).
    The manifest is untrusted: anything malformed says so; a message is bounded (cut at a
    word, saying where the whole one is)."""
    if not isinstance(value, dict):
        return "unknown (the manifest's ended is malformed)"
    how = value.get("how")
    if how == "exit" and isinstance(value.get("status"), int):
        return f"exited with status {value['status']}"
    if how == "signal" and isinstance(value.get("signal"), str):
        return f"killed by {value['signal'][:40]}"
    if how == "exception" and isinstance(value.get("exception"), str):
        message = value.get("message")
        return (f"ended by an uncaught {value['exception'][:100]}"
                + (f": {clip_words(str(message), MAX_ENDED_MESSAGE, '(all of it: manifest.json, ended.message)')}"
                   if message else ""))
    return "unknown (the manifest's ended is malformed)"


def abnormal_end(value: Any) -> str | None:
    """Why ``ended`` is not a clean exit (status 0), in words; None when it is."""
    if isinstance(value, dict) and value.get("how") == "exit" and value.get("status") == 0:
        return None
    return describe_ended(value)
