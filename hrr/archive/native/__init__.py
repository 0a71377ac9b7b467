"""The native record path: ``record.c`` (ProcessWriter.append_call's fast path) and ``launch.c``
(a launch row's capture wrapper for the common launch), one extension built at first use.

It is a CPython extension compiled with the first C compiler that works ($HRR_CC, cc, gcc,
clang, then the ziglang hrr depends on) against this Python's headers, and kept in hrr's
image cache (``hrr/imagecache.py``: owner and mode checks, atomic writes) under a key over
the source, the compiler, and this Python's version and ABI; later processes load it from
there. ``HRR_NATIVE_RECORD=0`` selects the Python path; when the extension cannot be built
or loaded, capture says so in one line and records with the Python path, never failing.
"""
from __future__ import annotations

import os

from hrr import cextension
from hrr.archive.manifest import RECORDERS
from hrr.config import NATIVE_RECORD_ENV, env_flag_on

#: The extension's C sources, compiled together (record.c holds the module's init).
SOURCES = ("record.c", "launch.c")
MODULE = "hrr_record"
#: What the manifest's ``recorder`` field says for each path.
NATIVE, PYTHON = RECORDERS


def wanted() -> bool:
    """Whether this process asks for the native path (HRR_NATIVE_RECORD unset, true or non-zero)."""
    return env_flag_on(os.environ.get(NATIVE_RECORD_ENV), default=True)


extension = cextension.extension_of(MODULE, __package__, SOURCES, "native record path")

__all__ = ["NATIVE", "PYTHON", "extension", "wanted"]
