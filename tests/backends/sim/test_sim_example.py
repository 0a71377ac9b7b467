"""The bundled example app runs on the sim unchanged (``hip`` pointed at the sim)."""
from __future__ import annotations

import runpy
import sys
import types
from pathlib import Path

import pytest

from hrr.backends import sim

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "serving_step.py"


def test_serving_step_example_passes_on_sim(monkeypatch, capsys):
    shim = types.ModuleType("hip")
    shim.hip, shim.hiprtc = sim.hip, sim.hiprtc
    monkeypatch.setitem(sys.modules, "hip", shim)
    with pytest.raises(SystemExit) as exit_info:
        runpy.run_path(str(EXAMPLE), run_name="__main__")
    out = capsys.readouterr().out
    assert exit_info.value.code == 0, out
    assert "step 3:" in out and "all results correct" in out
