"""The C compilers hrr can build its own native pieces with (the record path's extension,
the sim's kernel worker): a command line from the environment first, then cc, gcc and
clang on PATH, then the ziglang hrr depends on, so a fresh install always has one."""
from __future__ import annotations

import importlib.util
import os
import platform
import shlex
import shutil
import sys


def c_compilers(env_var: str, libc: str) -> list[list[str]]:
    """Command lines to try, in order: ``$env_var`` (shell-split), cc, gcc, clang, and
    ziglang's ``cc`` targeting this machine with ``libc`` (``gnu`` or ``musl``)."""
    found: list[list[str]] = []
    named = os.environ.get(env_var)
    if named:
        found.append(shlex.split(named))
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path:
            found.append([path])
    if importlib.util.find_spec("ziglang") is not None:
        arch = "aarch64" if platform.machine().lower() in ("aarch64", "arm64") else "x86_64"
        found.append([sys.executable, "-m", "ziglang", "cc", "-target", f"{arch}-linux-{libc}"])
    return found


__all__ = ["c_compilers"]
