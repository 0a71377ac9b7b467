"""The code object file ``hipModuleLoad`` names, read one way by every backend and by capture."""
from __future__ import annotations

import os
from typing import Any


def code_file_path(fname: Any) -> str:
    """``fname`` (str, bytes or a NUL-terminated buffer of them) as a path."""
    path = fname if isinstance(fname, str) else os.fsdecode(bytes(fname))
    return path.split("\0", 1)[0]


def read_code_file(fname: Any, limit: int | None = None) -> bytes:
    """The bytes of the file (at most ``limit + 1`` when a limit is given, so a caller can
    tell a larger file); OSError or ValueError when it cannot be read."""
    with open(code_file_path(fname), "rb") as f:
        return f.read() if limit is None else f.read(limit + 1)


__all__ = ["code_file_path", "read_code_file"]
