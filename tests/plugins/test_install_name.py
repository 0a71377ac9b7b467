"""The built-in plugins install as ``hrr_plugins.*``, never as a top-level ``plugins``
package (which would collide with any other project's): in the editable install that
scripts/test.sh makes, and in a wheel built from this tree and installed with pip."""
from __future__ import annotations

import json
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from distinstall import describe

ROOT = Path(__file__).resolve().parents[2]
BUILTIN = {"graph_capture", "pinned_snapshot", "privacy"}

# Run in a fresh interpreter, from a directory outside the tree (so that the tree itself
# is not importable through the current directory): where does each name come from?
PROBE = """
import importlib, importlib.util, json
from importlib import metadata
from hrr.pipeline.manager import load_plugins
loaded = load_plugins(None)
eps = {ep.name: ep.value for ep in metadata.entry_points(group="hrr.plugins")}
print(json.dumps({
    "plugins_spec": importlib.util.find_spec("plugins") is not None,
    "entry_points": eps,
    "loaded": sorted(loaded.versions),
    "broken": [b.warning() for b in loaded.broken],
    "files": {name: importlib.import_module(value.split(":")[0]).__file__ for name, value in eps.items()},
    "hrr": importlib.util.find_spec("hrr").origin,
}))
"""


def probe(cwd: Path, pythonpath: str | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "HRR_MODE")}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, describe(proc)
    return json.loads(proc.stdout)


def test_the_package_list_covers_the_tree():
    """pyproject.toml lists the packages (setuptools' find cannot rename plugins/): every
    folder of Python files under hrr/ and plugins/ is listed, under its installed name."""
    tomllib = pytest.importorskip("tomllib")   # Python 3.11+
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"] == {"hrr_plugins": "plugins"}
    expected = set()
    for top, name in (("hrr", "hrr"), ("plugins", "hrr_plugins")):
        for d in [ROOT / top, *(p for p in (ROOT / top).rglob("*") if p.is_dir())]:
            if "__pycache__" not in d.parts and any(d.glob("*.py")):
                expected.add(".".join([name, *d.relative_to(ROOT / top).parts]))
    assert set(config["packages"]) == expected
    assert "plugins" not in {p.split(".")[0] for p in config["packages"]}


def test_the_editable_install_has_no_top_level_plugins_package(tmp_path):
    seen = probe(tmp_path)
    assert not seen["plugins_spec"]
    assert seen["entry_points"] == {name: f"hrr_plugins.{name}:plugin" for name in BUILTIN}
    assert set(seen["loaded"]) >= BUILTIN and seen["broken"] == []
    for name in BUILTIN:   # the editable install maps hrr_plugins onto the plugins/ folder
        assert Path(seen["files"][name]) == ROOT / "plugins" / name / "__init__.py"


def _can_build_offline() -> bool:
    """setuptools >= 70.1 (bdist_wheel built in) or setuptools with wheel is importable here."""
    if importlib.util.find_spec("setuptools") is None:
        return False
    if importlib.util.find_spec("wheel") is not None:
        return True
    version = importlib.metadata.version("setuptools").split(".")
    return tuple(int(x) for x in version[:2] if x.isdigit()) >= (70, 1)


@pytest.mark.slow
def test_a_wheel_installs_hrr_plugins_and_no_plugins_package(tmp_path):
    """Build a wheel from a copy of the tree (pip, as a user would), check what it holds,
    install it into a target directory and load the built-in plugins from there."""
    src = tmp_path / "src"
    for part in ("hrr", "plugins"):
        shutil.copytree(ROOT / part, src / part, ignore=shutil.ignore_patterns("__pycache__"))
    for part in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / part, src / part)
    dist, target = tmp_path / "dist", tmp_path / "site"
    env = {**os.environ, "PIP_NO_INPUT": "1", "TMPDIR": str(tmp_path)}
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-cache-dir"]
    # Where setuptools is already importable (an offline GPU machine's venv) build with it;
    # elsewhere pip fetches the build backend into an isolated environment, as for a user.
    isolation = ["--no-build-isolation"] if _can_build_offline() else []
    proc = subprocess.run([*pip, "wheel", "--no-deps", *isolation, "-w", str(dist), str(src)], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, describe(proc)
    (wheel,) = dist.glob("hrr-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert "plugins" not in tops and "hrr_plugins" in tops
    for name in BUILTIN:
        assert f"hrr_plugins/{name}/__init__.py" in names
    assert "hrr_plugins/pinned_snapshot/records.py" in names
    assert "hrr/capture/bootstrap/sitecustomize.py" in names       # package data still ships
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "plugins." not in text.replace("hrr_plugins.", "")

    proc = subprocess.run([*pip, "install", "--no-deps", "--no-index", "--target", str(target), str(wheel)],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, describe(proc)
    assert not (target / "plugins").exists() and (target / "hrr_plugins").is_dir()
    seen = probe(tmp_path, pythonpath=str(target))
    assert Path(seen["hrr"]).is_relative_to(target)           # the installed copy, not the tree
    assert not seen["plugins_spec"]
    assert set(seen["loaded"]) >= BUILTIN and seen["broken"] == []
    for name in BUILTIN:
        assert Path(seen["files"][name]) == target / "hrr_plugins" / name / "__init__.py"
