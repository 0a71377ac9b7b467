"""Both ways a hip-python program imports HIP are intercepted under `hrr run` and
`hrr capture`, and a program that reaches hip-python's own bindings past hrr never leaves
an archive that passes `replay --strict`."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hrr.backends.hiptypes import real_modules
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
from hrr.capture.activate import install_hip_package, bypassed_bindings
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
from hrr.backends.hiptypes import real_util
from hrr.capture.activate import install_hip_package
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
from hrr.capture.activate import install_hip_package
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
from hrr.backends import hiptypes as ht
assert ht.real_modules() == () and ht.ENUM_SOURCE == "hrr" and ht.TEXT_TYPE is str
from hrr.backends import load_backend
from hrr.capture.activate import install_hip_package, bypassed_bindings
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
