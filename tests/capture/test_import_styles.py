"""Both ways a hip-python program imports HIP are intercepted under `hrr run` and
`hrr capture`, each mirroring the release installed under it (7.x's `hip` beside 10.x's
`rocm.bindings`: one each), with every name hip-python has; and a program that reaches
hip-python's own bindings past hrr never leaves an archive that passes `replay --strict`."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hrr.hiptypes import real_modules
from hippython7 import HP7_DEPS, HP7_SPEC, venv_root
from hrrtest import cpu_backends

APPS = Path(__file__).resolve().parent / "apps"
STYLES = ["style_hip.py", "style_rocm.py", "style_rocm_dotted.py", "stream_rocm.py"]
NEEDS_HIP_PYTHON = pytest.mark.skipif(not real_modules(), reason="hip-python is not installed here")


def hrr(*args: object) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("HRR_MODE", None)
    return subprocess.run([sys.executable, "-m", "hrr.cli.main", *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def said(proc: subprocess.CompletedProcess) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


def captured(tmp_path: Path, app: str) -> tuple[Path, subprocess.CompletedProcess]:
    archive = tmp_path / "archive"
    proc = hrr("capture", "-o", archive, "--plugins", "privacy", "--content", "--",
               sys.executable, APPS / app)
    return archive, proc


def manifest(archive: Path) -> dict:
    (pid_dir,) = [p for p in archive.iterdir() if p.name.startswith("pid-")]
    return json.loads((pid_dir / "manifest.json").read_text())


@pytest.mark.parametrize("app", STYLES)
def test_run_intercepts_each_import_style(app):
    proc = hrr("run", "--", sys.executable, APPS / app)
    assert proc.returncode == 0, said(proc)
    assert f"{app[:-3]}: ok" in proc.stdout


@pytest.mark.parametrize("app", STYLES)
def test_capture_records_each_import_style_and_it_round_trips(tmp_path, app):
    archive, proc = captured(tmp_path, app)
    assert proc.returncode == 0, said(proc)
    assert f"{app[:-3]}: ok" in proc.stdout
    assert "past hrr" not in proc.stderr, said(proc)
    m = manifest(archive)
    assert m["counts"]["events"] >= 4 and "bypassed_bindings" not in m
    replay = hrr("replay", "--strict", archive)
    assert replay.returncode == 0, said(replay)


@NEEDS_HIP_PYTHON
def test_bindings_reached_past_hrr_are_named_and_fail_strict(tmp_path):
    archive, proc = captured(tmp_path, "bypass.py")
    assert proc.returncode == 0, said(proc)
    assert "bypass: imported rocm.bindings.hip" in proc.stdout
    warning = [ln for ln in proc.stderr.splitlines() if "past hrr" in ln]
    assert len(warning) == 1 and "rocm.bindings.hip" in warning[0], said(proc)
    assert "no HIP call was recorded" in warning[0]
    assert manifest(archive)["bypassed_bindings"] == ["rocm.bindings.hip"]
    replay = hrr("replay", "--strict", archive)
    assert replay.returncode != 0, said(replay)
    assert "hip-python's own bindings past hrr (rocm.bindings.hip)" in replay.stdout + replay.stderr


def test_an_archive_with_no_call_fails_strict(tmp_path):
    archive = tmp_path / "archive"
    proc = hrr("capture", "-o", archive, "--plugins", "privacy", "--content", "--",
               sys.executable, "-c", "from rocm.bindings import hip; print(hip.hipSuccess)")
    assert proc.returncode == 0, said(proc)
    assert "past hrr" not in proc.stderr     # imported through hrr: nothing bypassed
    replay = hrr("replay", "--strict", archive)
    assert replay.returncode != 0 and "recorded no calls" in replay.stdout + replay.stderr, said(replay)


@pytest.mark.parametrize("backend", cpu_backends("hrr.backends."))
def test_every_spelling_resolves_to_the_installed_module(backend):
    """Activation is backend-agnostic: for each backend's modules, every import spelling
    a program uses finds them (checked in a fresh interpreter, as a program would)."""
    code = f"""
import importlib, sys
from hrr.capture.bindings import install_hip_package, bypassed_bindings
b = importlib.import_module({backend!r})
install_hip_package(b.hip, b.hiprtc)
from hip import hip, hiprtc
import hip.hip as dotted
from rocm.bindings import hip as rhip, hiprtc as rhiprtc
import rocm.bindings.hip
from rocm.bindings.hip import hipMalloc
from hip.hip import hipFree
assert hipMalloc is b.hip.hipMalloc and hipFree is b.hip.hipFree
assert sys.modules["rocm.bindings.hip"] is b.hip and sys.modules["hip.hip"] is b.hip
assert hip is b.hip is dotted is rhip is rocm.bindings.hip and hiprtc is b.hiprtc is rhiprtc
assert bypassed_bindings() == []
print("ok")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", said(proc)


@NEEDS_HIP_PYTHON
def test_hip_util_is_hip_pythons_own():
    code = """
from hrr.backends import load_backend
from hrr.hiptypes import real_util
from hrr.capture.bindings import install_hip_package
b = load_backend("sim"); install_hip_package(b.hip, b.hiprtc)
from hip._util.types import Pointer
import hip
assert Pointer is real_util().types.Pointer and hip._util.types.Pointer is Pointer
print("ok")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", said(proc)


@NEEDS_HIP_PYTHON
def test_hip_package_keeps_hip_pythons_other_names():
    """`hip.HIP_VERSION` and the rest of hip-python's package stay; only hip/hiprtc change."""
    code = """
import hip as real
names = {n for n in dir(real) if not n.startswith("__")}
from hrr.backends import load_backend
from hrr.capture.bindings import install_hip_package
b = load_backend("sim"); install_hip_package(b.hip, b.hiprtc)
import hip
assert hip is not real and hip.hip is b.hip and hip.hiprtc is b.hiprtc
missing = names - set(dir(hip))
assert not missing, missing
assert hip.HIP_VERSION == real.HIP_VERSION
print("ok")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", said(proc)


def test_both_spellings_without_hip_python():
    """Where hip-python is absent hrr provides the rocm and rocm.bindings packages itself
    (hip-python is hidden here by blocking its import)."""
    code = """
import sys
sys.modules["rocm"] = None          # as if hip-python were not installed
sys.modules["hip"] = None
from hrr import hiptypes as ht
assert ht.real_modules() == () and ht.ENUM_SOURCE == "hrr" and ht.TEXT_TYPE is str
from hrr.backends import load_backend
from hrr.capture.bindings import install_hip_package, bypassed_bindings
b = load_backend("sim"); install_hip_package(b.hip, b.hiprtc)
from rocm.bindings import hip, hiprtc
import rocm.bindings.hip as dotted
from hip import hip as classic
assert hip is dotted is classic is b.hip and hiprtc is b.hiprtc
err, props = hip.hipGetDeviceProperties(0)
assert props.gcnArchName == "gfx942:sramecc+:xnack-" and hip.dim3(x=2)[0] == 2 and bypassed_bindings() == []
print("ok")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", said(proc)


NAMES_CHECK = """
from hrr.hiptypes import RELEASES
import hip.hip, hip.hiprtc, rocm.bindings.hip, rocm.bindings.hiprtc
where = {"hip.hip": (hip.hip, RELEASES.get(7, RELEASES.get(10)).hip),
         "hip.hiprtc": (hip.hiprtc, RELEASES.get(7, RELEASES.get(10)).hiprtc),
         "rocm.bindings.hip": (rocm.bindings.hip, RELEASES.get(10, RELEASES.get(7)).hip),
         "rocm.bindings.hiprtc": (rocm.bindings.hiprtc, RELEASES.get(10, RELEASES.get(7)).hiprtc)}
for spelling, (ours, real) in where.items():
    names = [n for n in dir(real) if not (n.startswith("__") and n.endswith("__"))]
    missing = [n for n in names if not hasattr(ours, n)]
    print(spelling, real.__name__, len(names), "missing:", missing[:10])
"""


@NEEDS_HIP_PYTHON
@pytest.mark.parametrize("command", ["run", "capture"])
def test_every_hip_python_name_under_run_and_capture(tmp_path, command):
    """What a program imports under `hrr run`, and the recorder's module under `hrr capture`,
    has every name of hip-python's own modules (the interop layer reads ~800 at import)."""
    extra = ["-o", tmp_path / "a", "--plugins", ""] if command == "capture" else []
    proc = hrr(command, *extra, "--", sys.executable, "-c", NAMES_CHECK)
    assert proc.returncode == 0, said(proc)
    lines = [line for line in proc.stdout.splitlines() if "missing:" in line]
    assert len(lines) == 4 and all(line.endswith("missing: []") for line in lines), said(proc)


# hip-python 7.x installed over a hip-python 10.x install (`pip install hrr`, then `pip install
# 'hip-python<8'`): 7.x's `hip` package replaces 10.x's, 10.x's `rocm.bindings` stays.
BOTH_SPECS = (["hip-python>=10,<11", *HP7_DEPS], [HP7_SPEC])


def venv_with_both_releases() -> tuple[Path | None, str]:
    """The python of a venv holding hip-python 7.x's `hip` package beside 10.x's
    `rocm.bindings` (installed in that order, as a user would), under HRR_HIP_PYTHON_BOTH_VENV
    (kept) or the temp dir (removed when the session ends); (None, pip's last words) when pip cannot."""
    root = venv_root("hrr-hip-python-both-venv", "HRR_HIP_PYTHON_BOTH_VENV")
    py, ready = root / "bin" / "python", root / "hrr-ready"
    if ready.exists():
        return py, ""
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(root)], check=True, capture_output=True)
    for specs in BOTH_SPECS:
        proc = subprocess.run([str(py), "-m", "pip", "install", "-q", *specs], capture_output=True, text=True,
                              timeout=900, check=False)
        if proc.returncode != 0:
            return None, (proc.stderr.strip().splitlines() or ["no output"])[-1]
    ready.write_text("ok\n")
    return py, ""


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("HRR_SKIP_HIP_PYTHON7") == "1", reason="HRR_SKIP_HIP_PYTHON7=1")
def test_7x_beside_10x_each_spelling_mirrors_its_release(tmp_path):
    """With 7.x's `hip` beside 10.x's `rocm.bindings`, a 7.x program's `from hip import hip`
    gets 7.x's spelling (hipGetDeviceProperties(prop, deviceId), bytes arch, 7.x's enums)
    and a 10.x one's `from rocm.bindings import hip` 10.x's, under run and capture, and the
    archive replays --strict."""
    py, why = venv_with_both_releases()
    if py is None:
        pytest.skip(f"pip cannot install hip-python 7.x beside 10.x here: {why}")
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    env.pop("HRR_MODE", None)

    def run(*args: object) -> subprocess.CompletedProcess:
        return subprocess.run([str(py), "-m", "hrr.cli.main", *map(str, args)], capture_output=True, text=True,
                              timeout=300, env=env, check=False)
    probe = subprocess.run([str(py), "-c", "from hrr import hiptypes as ht; print(sorted(ht.RELEASES))"],
                           capture_output=True, text=True, timeout=120, env=env, check=False)
    assert probe.stdout.strip() == "[7, 10]", probe.stdout + probe.stderr
    names = run("run", "--", py, "-c", NAMES_CHECK)
    assert names.returncode == 0 and names.stdout.count("missing: []") == 4, said(names)
    props7 = repo / "tests" / "backends" / "apps" / "props7.py"
    for app in (props7, APPS / "both_releases.py", APPS / "style_rocm.py", APPS / "style_hip.py"):
        ran = run("run", "--", py, app)
        assert ran.returncode == 0 and ": ok" in ran.stdout, said(ran)
        archive = tmp_path / app.stem
        cap = run("capture", "-o", archive, "--plugins", "", "--content", "--", py, app)
        assert cap.returncode == 0 and ": ok" in cap.stdout, said(cap)
        rep = run("replay", "--strict", archive)
        assert rep.returncode == 0, said(rep)
