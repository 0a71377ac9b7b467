"""The math libraries' modules against hip-python 7.x's own (``from hip import hipblas``),
whose names, argument order and conventions are the reference (issue 22): in a venv of
hip-python 7.x, every catalogued library call has hip-python's parameter names in its order
and returns the outputs hip-python documents (after the status), the enums are hip-python's own classes,
and a program using hipBLAS is captured and replays with ``--strict`` there."""
from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from hippython7 import HP7_SPEC, venv_with_hip_python7

REPO = Path(__file__).resolve().parents[2]

CHECK7 = r"""
import re
from hrr.api.catalogue import rows
from hrr.backends import sim
from hrr.hiptypes.mathlibs import LIBRARIES, TYPES
import importlib
bad = []
count = 0
for name in LIBRARIES:
    real = importlib.import_module(f"hip.{name}")
    ours = sim.library(name)
    if TYPES[name].real is not real:
        bad.append(f"{name}: hrr's types do not come from hip.{name}")
    for enum_type in TYPES[name].enums:
        if getattr(ours, enum_type.__name__) is not getattr(real, enum_type.__name__):
            bad.append(f"{name}.{enum_type.__name__} is not hip-python's class")
    for alias, value in vars(real).items():   # hip-python's other names of those enums
        if any(value is e for e in TYPES[name].enums) and TYPES[name].aliases.get(alias, value) is not value:
            bad.append(f"{name}.{alias}: hrr's alias names another class")
        if any(value is e for e in TYPES[name].enums) and alias not in TYPES[name].aliases \
                and alias != value.__name__:
            bad.append(f"{name}.{alias}: hip-python's name of {value.__name__} is not among hrr's aliases")
    for row in (r for r in rows() if r.module == name):
        count += 1
        fn = getattr(real, row.name, None)
        if fn is None:
            bad.append(f"hip-python has no {row.name}")
            continue
        first = (fn.__doc__ or "").split("\n")[0]
        theirs = [part.split()[-1] for part in first[first.index("(") + 1:first.rindex(")")].split(",") if part.strip()]
        if [p.name for p in row.params] != theirs:
            bad.append(f"{row.name}: {[p.name for p in row.params]} != {theirs}")
        # a library's docstring lists the outputs after the status: "* handle (...)"; hipFFT's
        # and hipRAND's list them by type only ("* `~.hipfftHandle_t`:"), the status among them
        returns = (fn.__doc__ or "").partition("Returns:")[2]
        outs = re.findall(r"^\s*\* (\w+) \(", returns, re.M)
        typed = [t for t in re.findall(r"^\s*\* `~\.(\w+)`", returns, re.M) if t != TYPES[name].status.__name__]
        if outs != [o.name for o in row.outs] and (outs or len(typed) != len(row.outs)):
            bad.append(f"{row.name}: hip-python returns {outs or typed}, hrr {[o.name for o in row.outs]}")
print(count, bad)
"""


@pytest.fixture(scope="module")
def python7():
    py, why = venv_with_hip_python7()
    if py is None:
        pytest.skip(f"pip cannot install {HP7_SPEC} here (the package index lacks it?): {why}")
    return py


def test_library_rows_match_hip_python_7(python7):
    proc = subprocess.run([str(python7), "-c", CHECK7], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)
    assert proc.returncode == 0, proc.stderr
    count, bad = proc.stdout.strip().splitlines()[-1].split(" ", 1)
    assert int(count) >= 7 and bad == "[]", proc.stdout


def test_a_hipblas_program_replays_strictly_under_hip_python_7(python7):
    """``from hip import hipblas`` resolves to hrr's module where hip-python's own is installed."""
    archive = Path(tempfile.mkdtemp()) / "a"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("HRR_MODE", None)
    app = REPO / "tests" / "cli" / "apps" / "hipblas_app.py"
    cap = subprocess.run([str(python7), "-m", "hrr.cli.main", "capture", "-o", str(archive), "--plugins", "",
                          "--content", "--", str(python7), str(app)], capture_output=True, text=True,
                         timeout=300, env=env, check=False)
    assert cap.returncode == 0 and "hipblas: ok" in cap.stdout, cap.stdout + cap.stderr
    rep = subprocess.run([str(python7), "-m", "hrr.cli.main", "replay", "--strict", str(archive)],
                         capture_output=True, text=True, timeout=300, env=env, check=False)
    assert rep.returncode == 0 and "1 passed, 0 failed" in rep.stdout, rep.stdout + rep.stderr


@pytest.mark.parametrize("family, alias, name", [
    ("hipfft", "hipfftResult", "hipfftResult_t"), ("hipfft", "hipfftType", "hipfftType_t"),
    ("hipfft", "hipfftLibraryPropertyType", "hipfftLibraryPropertyType_t"),
    ("hiprand", "hiprandStatus_t", "hiprandStatus"), ("hiprand", "hiprandRngType_t", "hiprandRngType"),
    ("hiprand", "hiprandOrdering_t", "hiprandOrdering")])
@pytest.mark.parametrize("backend", ["sim", "cuda"])
def test_hip_pythons_other_enum_names_are_offered(family, alias, name, backend):
    """hip-python's modules name some enums twice (hipfftResult is hipfftResult_t): hrr's
    module offers both, also where hip-python is not installed (AMD's hipfft_numpy_example
    reads ``hipfft.hipfftResult``: on a GPU machine without hip-python it stopped there)."""
    from hrr.backends import load_backend
    from hrr.hiptypes.mathlibs import TYPES
    try:
        be = load_backend(backend)
    except Exception as exc:  # noqa: BLE001 - the cuda extra is absent here
        pytest.skip(f"{backend} backend does not import: {exc}")
    module = be.library(family)
    assert getattr(module, alias) is getattr(module, name)
    assert TYPES[family].aliases[alias] is getattr(module, name)
