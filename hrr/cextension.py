"""Build a small CPython extension from C sources that ship in a hrr package, at first use.

The record path's extension (``hrr/archive/native``), the cuda backend's replay launcher
(``hrr/backends/cuda/native``) and replay's run counter (``hrr/replay/native``) are built this
way, each package naming its sources once through ``extension_of``: compiled with the first C compiler that
works (``hrr.ccompilers``) against this Python's headers, and kept in hrr's image cache
(``hrr/imagecache.py``: owner and mode checks, atomic writes) under a key over the sources,
the compiler, and this Python's version and ABI, so later processes load it from there.
"""
from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from importlib import resources
from types import ModuleType
from typing import Callable

from hrr import imagecache
from hrr.ccompilers import c_compilers
from hrr.config import untraced_env

#: The most bytes a cached build may hold (each extension is tens of KB).
MAX_IMAGE = 8 << 20


def _identity(argv: list[str]) -> str:
    """What names a compiler in the cache key: its command line and binary (path, size, time)."""
    binary = shutil.which(argv[0]) or argv[0]
    try:
        st = os.stat(binary)
        return f"{argv!r}:{os.path.realpath(binary)}:{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        return repr(argv)


def cache_key(kind: str, argv: list[str], sources: dict[str, bytes]) -> str:
    """The image cache key of extension ``kind`` built from ``sources`` with ``argv``."""
    named = [("source " + name, text) for name, text in sources.items()]
    return imagecache.key([("kind", kind), *named, ("compiler", _identity(argv)),
                           ("python", sys.version), ("abi", str(sysconfig.get_config_var("SOABI")))])


def _compile(module: str, argv: list[str], sources: dict[str, bytes], include: str) -> tuple[bytes | None, str]:
    with tempfile.TemporaryDirectory(prefix="hrr-cext-") as tmp:
        out, paths = os.path.join(tmp, module + ".so"), []
        for name, text in sources.items():
            paths.append(os.path.join(tmp, name))
            with open(paths[-1], "wb") as f:
                f.write(text)
        try:
            done = subprocess.run([*argv, "-shared", "-fPIC", "-O2", "-I", include, "-o", out, *paths],
                                  capture_output=True, text=True, timeout=300, env=untraced_env())
        except (OSError, subprocess.SubprocessError) as exc:
            return None, f"{shlex.join(argv)}: {exc}"
        if done.returncode != 0:
            return None, f"{shlex.join(argv)}: {done.stderr.strip()[-500:]}"
        with open(out, "rb") as f:
            return f.read(), ""


def _load(module: str, image: bytes) -> ModuleType:
    """Import extension ``module`` from ``image`` (written to a private folder, removed once loaded)."""
    with tempfile.TemporaryDirectory(prefix="hrr-cext-load-") as tmp:
        path = os.path.join(tmp, module + ".so")
        with open(path, "wb") as f:
            f.write(image)
        loader = importlib.machinery.ExtensionFileLoader(module, path)
        spec = importlib.util.spec_from_file_location(module, path, loader=loader)
        assert spec is not None
        loaded = importlib.util.module_from_spec(spec)
        loader.exec_module(loaded)
        return loaded


def build(module: str, package: str, source_names: tuple[str, ...], kind: str,
          compilers: list[list[str]]) -> tuple[ModuleType | None, str]:
    """Extension ``module`` from ``package``'s C files ``source_names`` (built with the first of
    ``compilers`` that works, or taken from the cache), or None and why not."""
    include = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(include, "Python.h")):
        return None, f"this Python has no C headers ({include}/Python.h)"
    sources = {name: resources.files(package).joinpath(name).read_bytes() for name in source_names}
    logs = []
    for argv in compilers:
        key = cache_key(kind, argv, sources)
        image = imagecache.get(key, MAX_IMAGE)
        if image is None:
            image, log = _compile(module, argv, sources, include)
            if image is None:
                logs.append(log)
                continue
            imagecache.put(key, image)
        try:
            return _load(module, image), ""
        except (ImportError, OSError) as exc:
            logs.append(f"{shlex.join(argv)}: the built extension does not load: {exc}")
    return None, "no C compiler built it: " + (" | ".join(logs) or "none found (cc, gcc, clang, ziglang)")


def extension_of(module: str, package: str, source_names: tuple[str, ...],
                 kind: str) -> Callable[[], tuple[ModuleType | None, str]]:
    """The ``extension()`` of a package holding C sources: at its first call, extension
    ``module`` built with $HRR_CC or the usual C compilers (or taken from the cache), or None
    and why not; later calls return the same."""
    @functools.lru_cache(maxsize=None)
    def extension() -> tuple[ModuleType | None, str]:
        return build(module, package, source_names, kind, c_compilers("HRR_CC", "gnu"))
    extension.__doc__ = f"The {kind} extension (built or taken from the cache), or None and why not."
    return extension


__all__ = ["MAX_IMAGE", "build", "cache_key", "extension_of"]
