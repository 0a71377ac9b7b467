"""scripts/hip-python-examples.py: hip-python's own examples under hrr run, capture
--content and replay --strict. The examples are not part of this repository: the test on
them runs when HRR_HIP_PYTHON_EXAMPLES names a checkout of hip-python's ``examples/``; the
harness itself is exercised on a program of ours laid out the same way."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hippython7 import HP7_SPEC, venv_with_hip_python7

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "hip-python-examples.py"
OURS = REPO / "tests" / "capture" / "apps" / "style_hip.py"   # `from hip import hip`, hip calls only
ENV_VAR = "HRR_HIP_PYTHON_EXAMPLES"


def _harness():
    spec = importlib.util.spec_from_file_location("hip_python_examples", SCRIPT)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(examples: Path, out: Path, *args: str, python: str = sys.executable) -> dict:
    proc = subprocess.run([sys.executable, str(SCRIPT), str(examples), "--backend", "sim", "--out", str(out),
                           "--python", python, *args], capture_output=True, text=True, timeout=900, check=False)
    assert (out / "results.md").exists(), proc.stdout + proc.stderr
    data = json.loads((out / "results.json").read_text())
    return {r["example"]: r for r in data["results"]} | {"_rc": proc.returncode}


def test_harness_on_a_program_laid_out_as_the_examples(tmp_path):
    examples = tmp_path / "examples" / "0_Basic_Usage"
    examples.mkdir(parents=True)
    shutil.copy(OURS, examples / "hip_stream.py")
    (examples / "hip_deviceattributes.py").write_text("from hip import hip\nhip.hipTexObjectDestroy(0)\n")
    res = _run(tmp_path / "examples", tmp_path / "out", "--only", "hip_stream,hip_deviceattributes,hip_nothere",
               "--rocm-bindings", "hip_stream")
    assert res["_rc"] == 1   # not all passed
    for name in ("hip_stream", "hip_stream (rocm.bindings)"):
        assert [res[name][s]["exit"] for s in ("run", "capture", "replay")] == [0, 0, 0], res[name]
    bad = res["hip_deviceattributes"]
    assert bad["run"]["exit"] == 1 and bad["replay"]["exit"] is None
    assert bad["run"]["error"].startswith("hrr.hiptypes.UncataloguedCall: hip.hipTexObjectDestroy"), bad
    assert "not found" in res["hip_nothere"]["run"]["error"]
    table = (tmp_path / "out" / "results.md").read_text()
    assert "| hip_stream | 0 | 0 | 0 |  |" in table
    assert "| hip_deviceattributes | 1 | 1 | — | run: hrr.hiptypes.UncataloguedCall" in table


def test_an_example_with_a_float_tolerance_replays_with_it(tmp_path):
    # hip_jacobi races on purpose: on a GPU its replay step takes --float-tolerance (a replay
    # option); on the sim, which runs a block's threads in a fixed order, it needs none
    harness = _harness()
    assert harness.tolerance_for("hip_jacobi", "cuda")[0] > 0
    assert harness.tolerance_for("hip_jacobi", "sim") is None and harness.tolerance_for("hip_stream", "cuda") is None
    examples = tmp_path / "examples" / "2_Advanced"
    examples.mkdir(parents=True)
    shutil.copy(OURS, examples / "hip_jacobi.py")
    res = _run(tmp_path / "examples", tmp_path / "out", "--only", "hip_jacobi")
    assert res["hip_jacobi"]["tolerance"] is None
    assert [res["hip_jacobi"][s]["exit"] for s in ("run", "capture", "replay")] == [0, 0, 0], res["hip_jacobi"]


def test_rocm_bindings_copy_rewrites_only_the_imports(tmp_path):
    src = tmp_path / "ex" / "a.py"
    src.parent.mkdir()
    src.write_text("from hip import hip, hiprtc\nx = 'from hip import hip'\n    from hip import hip\n")
    out = _harness()._rocm_bindings_copy(src, tmp_path / "copy")
    assert out.read_text() == ("from rocm.bindings import hip, hiprtc\nx = 'from hip import hip'\n"
                               "    from rocm.bindings import hip\n")
    assert src.read_text().startswith("from hip import")   # the checkout is left alone


def _examples() -> Path:
    where = os.environ.get(ENV_VAR)
    if not where or not Path(where).is_dir():
        pytest.skip(f"{ENV_VAR} does not name a checkout of hip-python's examples/ (they are not "
                    "redistributed here)")
    return Path(where)


SIM_EXAMPLES = ("hip_stream", "hip_deviceproperties", "hip_deviceattributes", "hiprtc_launch_kernel_args",
                "hiprtc_launch_kernel_no_args", "hiprtc_linking_device_functions", "hip_jacobi")


@pytest.mark.slow
def test_the_examples_on_the_sim_with_hip_python_7(tmp_path):
    """Every example hrr runs (7.x programs), unchanged, on the sim: their HIP C++ kernels
    compiled for the CPU; the Jacobi solver's racy sweep replays byte for byte (no tolerance)."""
    examples = _examples()
    py, why = venv_with_hip_python7()
    if py is None:
        pytest.skip(f"pip cannot install {HP7_SPEC} here: {why}")
    res = _run(examples, tmp_path / "out", "--only", ",".join(SIM_EXAMPLES), python=str(py))
    for name in SIM_EXAMPLES:
        assert [res[name][s]["exit"] for s in ("run", "capture", "replay")] == [0, 0, 0], res[name]
    assert res["hip_jacobi"]["tolerance"] is None
    for name in SIM_EXAMPLES:   # one process each: hrr's own compiler and worker are not recorded
        assert len(list((tmp_path / "out" / f"{name}.hrr").glob("pid-*"))) == 1, name


@pytest.mark.slow
def test_hip_stream_in_the_rocm_bindings_style_with_hip_python_10(tmp_path):
    examples = _examples()
    res = _run(examples, tmp_path / "out", "--only", "", "--rocm-bindings", "hip_stream")
    r = res["hip_stream (rocm.bindings)"]
    assert [r[s]["exit"] for s in ("run", "capture", "replay")] == [0, 0, 0], r
