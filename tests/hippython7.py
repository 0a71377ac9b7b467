"""hip-python 7.x in a virtual environment of its own (the 7.x and 10.x releases cannot
share one), made once per test session; shared by the conformance test and the examples
test. ``venv_root`` says where every such venv of the tests goes: the temp dir, removed
when the session ends (tests/conftest.py) unless HRR_KEEP_TEST_VENVS=1 keeps them for the
next run, or the folder its own variable names, never removed."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: The test venvs made under the temp dir: removed at the end of the session.
MADE_HERE: set[Path] = set()


def venv_root(name: str, variable: str) -> Path:
    """Where the test venv ``name`` goes: the folder ``variable`` names (kept), else
    ``<tmp>/<name>-<uid>`` (listed in ``MADE_HERE``)."""
    given = os.environ.get(variable)
    if given:
        return Path(given)
    root = Path(tempfile.gettempdir()) / f"{name}-{os.getuid()}"
    MADE_HERE.add(root)
    return root


def remove_test_venvs(roots: set[Path]) -> None:
    """Remove the venvs the session made under the temp dir (HRR_KEEP_TEST_VENVS=1: keep)."""
    if os.environ.get("HRR_KEEP_TEST_VENVS") == "1":
        return
    for root in sorted(roots):
        shutil.rmtree(root, ignore_errors=True)
    roots.clear()

HP7_SPEC = "hip-python>=7,<8"
HP7_DEPS = ["numpy", "attrs", "msgpack", "pluggy", "xxhash", "click", "rich"]


def make_venv(root: Path) -> str:
    """Make an empty venv at ``root``: "" when made, else why not (a Python without ensurepip,
    as on some GPU machines' images, makes none)."""
    proc = subprocess.run([sys.executable, "-m", "venv", "--clear", str(root)], capture_output=True, text=True,
                          check=False)
    if proc.returncode == 0:
        return ""
    return f"{sys.executable} -m venv cannot make a venv here: " + \
        ((proc.stderr or proc.stdout).strip().splitlines() or ["no output"])[-1]


def venv_with_hip_python7(root: Path | None = None) -> tuple[Path | None, str]:
    """The python of a venv holding hip-python 7.x and hrr's runtime dependencies (hrr
    itself comes from PYTHONPATH), at ``root`` (default: HRR_HIP_PYTHON7_VENV, else under
    the temp dir); (None, pip's last words) when it cannot be installed."""
    if root is None:
        root = venv_root("hrr-hip-python7-venv", "HRR_HIP_PYTHON7_VENV")
    py, ready = root / "bin" / "python", root / "hrr-ready"
    if ready.exists():
        return py, ""
    why = make_venv(root)
    if why:
        return None, why
    proc = subprocess.run([str(py), "-m", "pip", "install", "-q", HP7_SPEC, *HP7_DEPS],
                          capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode != 0:
        return None, (proc.stderr.strip().splitlines() or ["no output"])[-1]
    ready.write_text("ok\n")
    return py, ""
