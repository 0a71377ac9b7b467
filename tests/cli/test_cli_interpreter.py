"""`hrr capture -- /other/python app.py` where that interpreter has no hrr: one line naming
the interpreter and how to install hrr there, the exit code the table gives (78), and no
archive folder left behind; the same when the interpreter is started by a script."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import hrr

from hrr import exitcodes

BOOTSTRAP = Path(__file__).resolve().parents[2] / "hrr" / "capture" / "bootstrap" / "sitecustomize.py"


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory) -> Path:
    """A venv without hrr (and without pip: a few kilobytes, in pytest's temp dir)."""
    root = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    return root / "bin" / "python"


def _one_error(proc: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("hrr: error:")]
    return line


def test_capture_with_an_interpreter_without_hrr(tmp_path, bare_python):
    (tmp_path / "app.py").write_text("print('ran')\n")
    proc = hrr("capture", "-o", "a.hrr", "--", bare_python, "app.py", cwd=tmp_path)
    assert proc.returncode == exitcodes.NOT_STARTED == 78
    line = _one_error(proc)
    assert str(bare_python) in line and f"{bare_python} -m pip install" in line
    assert "ran" not in proc.stdout
    assert not (tmp_path / "a.hrr").exists()
    proc = hrr("run", bare_python, "app.py", cwd=tmp_path)
    assert proc.returncode == 78 and str(bare_python) in _one_error(proc)


def test_a_script_starting_such_an_interpreter_stops_it_the_same_way(tmp_path, bare_python):
    (tmp_path / "app.py").write_text("print('ran')\n")
    script = tmp_path / "start.sh"
    script.write_text(f'#!/bin/sh\nexec "{bare_python}" "$@"\n')
    script.chmod(0o755)
    proc = hrr("capture", "-o", "a.hrr", "--", script, "app.py", cwd=tmp_path)
    assert proc.returncode == 78, proc.stderr
    line = _one_error(proc)
    assert str(bare_python) in line and "pip install" in line and "ran" not in proc.stdout
    assert not (tmp_path / "a.hrr").exists()


def test_the_bootstrap_exits_with_the_tables_code():
    assert f"EXIT_NOT_STARTED = {exitcodes.NOT_STARTED}\n" in BOOTSTRAP.read_text()
    assert any(code == exitcodes.NOT_STARTED for code, _ in exitcodes.TABLE)


def test_a_plugins_typo_is_a_usage_error_in_capture_and_replay(tmp_path):
    (tmp_path / "app.py").write_text("print('ran')\n")
    cap = hrr("capture", "--plugins", "privcy", "-o", "a.hrr", "--", "python", "app.py", cwd=tmp_path)
    hrr("capture", "--plugins", "privacy", "-o", "b.hrr", "--", "python", "app.py", cwd=tmp_path, check=0)
    rep = hrr("replay", "--plugins", "privcy", "b.hrr", cwd=tmp_path)
    assert cap.returncode == rep.returncode == exitcodes.USAGE, (cap.stderr, rep.stderr)
    assert "privcy" in _one_error(cap) and "privcy" in _one_error(rep)
