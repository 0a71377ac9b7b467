"""Code object inputs read one way by every backend and by capture: the file ``hipModuleLoad``
names, and the image argument ``hipModuleLoadData`` takes (a buffer, or an address)."""
from __future__ import annotations

import os
from typing import Any

from hrr.backends.hiptypes import as_address


def buffer_or_address(image: Any) -> bytes | int:
    """A ``hipModuleLoadData`` image: its bytes when it is a buffer, else the address it names
    (how much to read there depends on the code object's format: each backend knows its own)."""
    try:
        return bytes(memoryview(image).cast("B"))
    except TypeError:
        return as_address(image)


def code_file_path(fname: Any) -> str:
    """``fname`` (str, bytes or a NUL-terminated buffer of them) as a path."""
    path = fname if isinstance(fname, str) else os.fsdecode(bytes(fname))
    return path.split("\0", 1)[0]


def read_code_file(fname: Any, limit: int | None = None) -> bytes:
    """The bytes of the file (at most ``limit + 1`` when a limit is given, so a caller can
    tell a larger file); OSError or ValueError when it cannot be read."""
    with open(code_file_path(fname), "rb") as f:
        return f.read() if limit is None else f.read(limit + 1)


__all__ = ["buffer_or_address", "code_file_path", "read_code_file"]
