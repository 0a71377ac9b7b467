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

from hrr import imagecache
from hrr.archive.manifest import RECORDERS
from hrr.ccompilers import c_compilers
from hrr.config import NATIVE_RECORD_ENV, env_flag_on, untraced_env

#: The extension's C sources, compiled together (record.c holds the module's init).
SOURCES = ("record.c", "launch.c")
MODULE = "hrr_record"
#: The most bytes a cached build may hold (the extension is about 30 KB).
MAX_IMAGE = 8 << 20
#: What the manifest's ``recorder`` field says for each path.
NATIVE, PYTHON = RECORDERS


def wanted() -> bool:
    """Whether this process asks for the native path (HRR_NATIVE_RECORD unset, true or non-zero)."""
    return env_flag_on(os.environ.get(NATIVE_RECORD_ENV), default=True)


def compilers() -> list[list[str]]:
    """C compiler command lines to try, in order: $HRR_CC, cc, gcc, clang, ziglang's."""
    return c_compilers("HRR_CC", "gnu")


def _identity(argv: list[str]) -> str:
    """What names a compiler in the cache key: its command line and binary (path, size, time)."""
    binary = shutil.which(argv[0]) or argv[0]
    try:
        st = os.stat(binary)
        return f"{argv!r}:{os.path.realpath(binary)}:{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        return repr(argv)


def _cache_key(argv: list[str], sources: dict[str, bytes]) -> str:
    named = [("source " + name, text) for name, text in sources.items()]
    return imagecache.key([("kind", "native record path"), *named, ("compiler", _identity(argv)),
                           ("python", sys.version), ("abi", str(sysconfig.get_config_var("SOABI")))])


def _compile(argv: list[str], sources: dict[str, bytes], include: str) -> tuple[bytes | None, str]:
    with tempfile.TemporaryDirectory(prefix="hrr-record-") as tmp:
        out, paths = os.path.join(tmp, MODULE + ".so"), []
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


def _load(image: bytes) -> ModuleType:
    """Import the extension from ``image`` (written to a private folder, removed once loaded)."""
    with tempfile.TemporaryDirectory(prefix="hrr-record-load-") as tmp:
        path = os.path.join(tmp, MODULE + ".so")
        with open(path, "wb") as f:
            f.write(image)
        loader = importlib.machinery.ExtensionFileLoader(MODULE, path)
        spec = importlib.util.spec_from_file_location(MODULE, path, loader=loader)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        return module


@functools.lru_cache(maxsize=None)
def extension() -> tuple[ModuleType | None, str]:
    """The native record extension (built or taken from the cache), or None and why not."""
    include = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(include, "Python.h")):
        return None, f"this Python has no C headers ({include}/Python.h)"
    sources = {name: resources.files(__package__).joinpath(name).read_bytes() for name in SOURCES}
    logs = []
    for argv in compilers():
        key = _cache_key(argv, sources)
        image = imagecache.get(key, MAX_IMAGE)
        if image is None:
            image, log = _compile(argv, sources, include)
            if image is None:
                logs.append(log)
                continue
            imagecache.put(key, image)
        try:
            return _load(image), ""
        except (ImportError, OSError) as exc:
            logs.append(f"{shlex.join(argv)}: the built extension does not load: {exc}")
    return None, "no C compiler built it: " + (" | ".join(logs) or "none found (cc, gcc, clang, ziglang)")


__all__ = ["NATIVE", "PYTHON", "compilers", "extension", "wanted"]
