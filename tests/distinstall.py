"""Test helpers: install a test-only plugin distribution for real (pip, offline, into a
temporary target directory) and run the `hrr` CLI with it importable."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def describe(proc: subprocess.CompletedProcess) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


def pip_install_target(source: Path, tmp_path_factory: Any, dist: str) -> Path:
    """``pip install --target`` of ``source`` (no index, no build isolation: the build
    backend is in-tree); returns the target, checked to hold ``dist``'s entry points."""
    target = tmp_path_factory.mktemp("site")
    build = tmp_path_factory.mktemp("build")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "--no-cache-dir", "--target", str(target), str(source)],
        check=False, capture_output=True, text=True, timeout=120,
        env={**os.environ, "TMPDIR": str(build), "PIP_NO_INPUT": "1"})
    assert proc.returncode == 0, describe(proc)
    assert list(target.glob(f"{dist}-*.dist-info/entry_points.txt"))
    return target


def hrr_with(site: Path, *args: Any, check: int | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m hrr.cli.main ARGS`` with ``site`` importable; never a traceback."""
    env = dict(os.environ)
    env.pop("HRR_MODE", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), env.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, "-m", "hrr.cli.main", *map(str, args)], env=env,
                          check=False, capture_output=True, text=True, timeout=60)
    assert "Traceback" not in proc.stderr + proc.stdout, describe(proc)
    if check is not None:
        assert proc.returncode == check, describe(proc)
    return proc
