"""A real, small file system for disk-fault tests: a tmpfs of a given size, mounted in a
private user + mount namespace (`unshare -rm`), so no root is needed and nothing outside
sees it. Everything that must see the mount runs inside the namespace, as one command."""
from __future__ import annotations

import functools
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_MOUNT = 'mount -t tmpfs -o size="$1" hrr-test "$2" && shift 2 && exec "$@"'


@functools.lru_cache(maxsize=1)
def unavailable_reason() -> str | None:
    """Why a tmpfs cannot be mounted here (None when it can)."""
    if shutil.which("unshare") is None:
        return "no `unshare` command (util-linux) to mount a private tmpfs"
    with tempfile.TemporaryDirectory() as mnt:
        try:
            proc = subprocess.run(["unshare", "-rm", "sh", "-c", _MOUNT, "sh", "64k", mnt, "true"],
                                  capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"`unshare -rm` cannot run: {exc}"
    if proc.returncode != 0:
        return f"cannot mount a tmpfs in a user namespace (`unshare -rm`): {proc.stderr.strip()[:200]}"
    return None


def run_python_on_tmpfs(size: str, mountpoint: Path, script: str, *args: str,
                        timeout: float = 120) -> subprocess.CompletedProcess:
    """Mount a tmpfs of ``size`` (e.g. "2m") on ``mountpoint`` in a private namespace and run
    ``python -c script mountpoint args...`` there; returns the completed process (text)."""
    mountpoint.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["unshare", "-rm", "sh", "-c", _MOUNT, "sh", size, str(mountpoint),
                           sys.executable, "-c", script, str(mountpoint), *args],
                          capture_output=True, text=True, timeout=timeout)
