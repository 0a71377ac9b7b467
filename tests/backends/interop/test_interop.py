"""hip-python's CUDA interop layer (``hip-python-interop``) under hrr, unchanged: a program
written for cuda-python's API runs on hrr's ``hip`` through it, is recorded as the HIP calls
the interop makes, and replays --strict on the sim. One venv per hip-python release
(tests/interop_venvs.py), each running the program written for that release's layout:
``cuda.bindings`` (10.x) and ``from cuda import cuda, cudart, nvrtc`` (7.x)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from interop_venvs import INTEROP_SPECS, UNREACHABLE, venv_with_interop

REPO = Path(__file__).resolve().parents[3]
APPS = Path(__file__).parent / "apps"
# release -> (the program, the import the release's interop spells, the hip module it binds)
PROGRAMS = {
    "10": ("saxpy_bindings.py", "from cuda.bindings import driver, nvrtc, runtime as api", "rocm.bindings.hip"),
    "7": ("saxpy_cuda.py", "from cuda import cuda, nvrtc, cudart as api", "hip.hip"),
}

pytestmark = pytest.mark.slow   # the first run builds two venvs (a minute or two, cached after)


@pytest.fixture(scope="module", params=sorted(PROGRAMS), ids=lambda r: f"hip-python{r}")
def interop(request, tmp_path_factory) -> tuple[str, Path, dict]:
    """(release, the venv's python, the environment hrr runs in: hrr and its plugins from
    this checkout, through PYTHONPATH)."""
    release = request.param
    py, why = venv_with_interop(release)
    if py is None:
        if why.startswith(UNREACHABLE):
            pytest.skip(f"pip cannot install {' '.join(INTEROP_SPECS[release])}: {why}")
        pytest.fail(f"the hip-python {release} interop venv could not be built: {why}")
    # the built-in plugins install as hrr_plugins (pyproject's package-dir): a link gives
    # them that name from this checkout, so capture runs with every plugin, as installed
    links = tmp_path_factory.mktemp("pythonpath")
    (links / "hrr_plugins").symlink_to(REPO / "plugins", target_is_directory=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("HRR_MODE", "HRR_BACKEND", "HRR_CAPTURE_ARCHIVE", "PYTHONPATH")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(links)])
    return release, py, env


def _hrr(interop, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    _release, py, env = interop
    return subprocess.run([str(py), "-m", "hrr.cli.main", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=600, check=False)


def _said(proc: subprocess.CompletedProcess) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


def test_the_interop_imports_onto_hrrs_hip(interop):
    """`from cuda.bindings import runtime` (10.x) / `from cuda import cudart` (7.x) under
    `hrr run`: the interop's CUDA names are hrr's HIP functions (Python functions, where
    hip-python's are Cython's), its enums keep hip-python's values."""
    release, py, _env = interop
    _program, imports, hip_name = PROGRAMS[release]
    code = (f"import sys; {imports}; hip = sys.modules[{hip_name!r}]; "
            "print(api.cudaMalloc is hip.hipMalloc, type(hip.hipMalloc).__name__ == 'function', "
            "api.cudaMemcpyKind.cudaMemcpyHostToDevice == 1)")
    proc = _hrr(interop, "run", "--backend", "sim", "--", str(py), "-c", code)
    assert proc.returncode == 0, _said(proc)
    assert proc.stdout.split() == ["True", "True", "True"], _said(proc)


def _run_capture_replay(interop, program: Path, tmp_path: Path) -> tuple[dict, dict, str]:
    """``program`` under hrr run, hrr capture --content and hrr replay --strict on the sim,
    each asserted to exit 0; (the archive's calls, its manifest, the replay summary)."""
    _release, py, _env = interop
    run = _hrr(interop, "run", "--backend", "sim", "--", str(py), str(program), cwd=tmp_path)
    assert run.returncode == 0, _said(run)
    assert "WRONG" not in run.stdout and ": ok" in run.stdout, _said(run)
    archive = tmp_path / f"{program.stem}.hrr"
    cap = _hrr(interop, "capture", "--backend", "sim", "--content", "-o", str(archive), "--",
               str(py), str(program), cwd=tmp_path)
    assert cap.returncode == 0, _said(cap)
    assert run.stdout == cap.stdout   # recorded, the program computes the same
    info = _hrr(interop, "info", "--json", str(archive))
    assert info.returncode == 0, _said(info)
    (proc,) = json.loads(info.stdout)["processes"]
    assert proc["manifest"]["unreplayable_apis"] == []
    assert not any(name.startswith("@uncatalogued") for name in proc["calls"]), proc["calls"]
    replay = _hrr(interop, "replay", "--strict", str(archive))
    assert replay.returncode == 0 and "Result: OK" in replay.stdout, _said(replay)
    return proc["calls"], proc["manifest"], replay.stdout


def test_a_cuda_python_program_records_as_hip_calls_and_replays_strict(interop, tmp_path):
    release = interop[0]
    calls, manifest, replayed = _run_capture_replay(interop, APPS / PROGRAMS[release][0], tmp_path)
    # the CUDA calls as the interop made them: HIP and hiprtc calls, every one replayable
    for name in ("hipMalloc", "hipModuleLoadData", "hipModuleGetFunction", "hipModuleLaunchKernel",
                 "hipEventRecord", "hipStreamSynchronize", "hiprtcCompileProgram", "hipDevicePrimaryCtxRetain"):
        assert calls.get(name), (name, calls)
    assert manifest["counts"]["code_objects"] == 1   # cuModuleLoadData(ptx.ctypes.data): read at its address
    if release == "7":   # its kernel reads x from pinned host memory, rewritten between launches
        assert "Pinned host snapshots: 2 restored, 0 refused" in replayed, replayed


def test_cuda_core_objects_record_as_hip_calls_and_replay_strict(interop, tmp_path):
    if interop[0] != "10":
        pytest.skip("hip-python 7.x's interop layer has no cuda.core")
    calls, _manifest, _replayed = _run_capture_replay(interop, APPS / "core_buffer.py", tmp_path)
    for name in ("hipStreamCreateWithFlags", "hipDeviceGetMemPool", "hipMallocFromPoolAsync", "hipFreeAsync"):
        assert calls.get(name), (name, calls)


def test_the_cuda_backend_names_the_interop_it_cannot_share_an_environment_with(interop, tmp_path):
    """NVIDIA's cuda-bindings and the interop are both ``cuda.bindings``: in the interop's
    venv --backend cuda stops at once (69), naming it, on any machine, GPU or not."""
    _release, py, _env = interop
    proc = _hrr(interop, "run", "--backend", "cuda", "--", str(py), "-c", "pass", cwd=tmp_path)
    assert proc.returncode == 69, _said(proc)
    assert "hip-python's interop layer" in proc.stderr and "record on the sim" in proc.stderr, _said(proc)
