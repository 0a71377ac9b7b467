"""One version string: pyproject.toml's, read through the package metadata by ``hrr.__version__``,
``hrr --version`` and the built-in plugins (whose versions go into every manifest)."""
from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import hrr

ROOT = Path(__file__).resolve().parents[1]


def _pyproject_version() -> str:
    text = (ROOT / "pyproject.toml").read_text()
    project = text.split("[project]", 1)[1].split("\n[", 1)[0]
    found = re.findall(r'^version\s*=\s*"([^"]+)"', project, re.M)
    assert len(found) == 1, "pyproject.toml's [project] has one version"
    return found[0]


def test_version_is_pyprojects_through_the_metadata():
    assert hrr.__version__ == metadata.version("hrr") == _pyproject_version()


def test_hrr_version_prints_it():
    proc = subprocess.run([sys.executable, "-m", "hrr.cli.main", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"hrr, version {hrr.__version__}"


def test_builtin_plugins_carry_hrrs_version():
    builtins = [ep for ep in metadata.entry_points(group="hrr.plugins")
                if ep.dist is not None and ep.dist.name == "hrr"]
    assert {ep.name for ep in builtins} >= {"pinned_snapshot", "graph_capture", "privacy"}
    for ep in builtins:
        assert getattr(ep.load(), "__version__", None) == hrr.__version__, ep.name


def test_no_other_file_spells_the_version():
    quoted = re.compile(r"""["']""" + re.escape(_pyproject_version()) + r"""["']""")
    spelled = [str(p.relative_to(ROOT)) for top in ("hrr", "plugins") for p in sorted((ROOT / top).rglob("*.py"))
               if quoted.search(p.read_text())]
    assert spelled == [], "read hrr.__version__ instead of writing the version out"


def test_uninstalled_source_tree_says_unknown(monkeypatch):
    def not_installed(name: str) -> str:
        raise metadata.PackageNotFoundError(name)
    monkeypatch.setattr(metadata, "version", not_installed)
    assert hrr.package_version() == hrr.UNKNOWN_VERSION


def test_import_hrr_does_not_look_the_version_up():
    # Importing importlib.metadata costs more than the rest of `import hrr`: only asking pays it.
    code = ("import sys; before = 'importlib.metadata' in sys.modules; import hrr; "
            "print(before, 'importlib.metadata' in sys.modules, hrr.__version__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    before, after, version = out
    assert after == before
    assert version == hrr.__version__


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_thing"):
        hrr.no_such_thing  # noqa: B018 - the access is the test
