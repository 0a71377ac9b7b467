"""The tests' own venvs (hip-python 7.x, the interop layers: a few hundred MB each) are made
once per session under the temp dir and removed when it ends, unless HRR_KEEP_TEST_VENVS=1
keeps them or a variable names a folder of the user's own (never removed)."""
from __future__ import annotations

import tempfile
from pathlib import Path

import hippython7
from hippython7 import remove_test_venvs, venv_root


def test_default_venvs_are_listed_for_removal_and_named_ones_are_not(monkeypatch, tmp_path):
    monkeypatch.setattr(hippython7, "MADE_HERE", set())
    monkeypatch.delenv("HRR_X_VENV", raising=False)
    root = venv_root("hrr-x-venv", "HRR_X_VENV")
    assert root.parent == Path(tempfile.gettempdir()) and root in hippython7.MADE_HERE
    monkeypatch.setenv("HRR_X_VENV", str(tmp_path / "mine"))
    assert venv_root("hrr-x-venv", "HRR_X_VENV") == tmp_path / "mine"
    assert hippython7.MADE_HERE == {root}


def test_the_session_end_removes_them_unless_asked_to_keep(monkeypatch, tmp_path):
    made = {tmp_path / "a", tmp_path / "b"}
    for d in made:
        (d / "bin").mkdir(parents=True)
    monkeypatch.setenv("HRR_KEEP_TEST_VENVS", "1")
    remove_test_venvs(set(made))
    assert all(d.exists() for d in made)
    monkeypatch.delenv("HRR_KEEP_TEST_VENVS")
    roots = set(made)
    remove_test_venvs(roots)
    assert not any(d.exists() for d in made) and not roots
