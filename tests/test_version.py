"""One version string: hrr/_version.py's, which pyproject.toml reads at build (so the package
metadata says it too), and which ``hrr.__version__``, ``hrr --version`` and the built-in plugins
(whose versions go into every manifest) give."""
from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import hrr

ROOT = Path(__file__).resolve().parents[1]


def _written_version() -> str:
    found = re.findall(r'^__version__ = "([^"]+)"$', (ROOT / "hrr" / "_version.py").read_text(), re.M)
    assert len(found) == 1, "hrr/_version.py writes the version once"
    return found[0]


def test_version_is_written_once_and_the_metadata_says_it():
    text = (ROOT / "pyproject.toml").read_text()
    project = text.split("[project]", 1)[1].split("\n[", 1)[0]
    assert not re.findall(r"^version\s*=", project, re.M) and 'dynamic = ["version"]' in project
    assert 'version = {attr = "hrr._version.__version__"}' in text
    assert hrr.__version__ == metadata.version("hrr") == _written_version()


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
    quoted = re.compile(r"""["']""" + re.escape(_written_version()) + r"""["']""")
    spelled = [str(p.relative_to(ROOT)) for top in ("hrr", "plugins") for p in sorted((ROOT / top).rglob("*.py"))
               if quoted.search(p.read_text()) and p != ROOT / "hrr" / "_version.py"]
    assert spelled == [], "read hrr.__version__ instead of writing the version out"


def test_import_hrr_and_its_version_do_not_scan_the_installed_metadata():
    # importlib.metadata's lookup costs tens of ms in every process hrr starts: never paid for it
    code = ("import sys; before = 'importlib.metadata' in sys.modules; import hrr; v = hrr.__version__; "
            "print(before, 'importlib.metadata' in sys.modules, v)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    before, after, version = out
    assert after == before
    assert version == hrr.__version__


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_thing"):
        hrr.no_such_thing  # noqa: B018 - the access is the test
