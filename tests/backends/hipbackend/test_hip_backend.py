"""The ``hip`` backend: hip-python's real Cython modules, driven through a stand-in
``libamdhip64.so`` (``standin_amdhip64.c``, built here with gcc) that hip-python loads
from ``$ROCM_PATH/lib`` as it would load ROCm's. ``nodevice`` mode answers like a HIP
runtime on a machine without an AMD GPU; ``ok`` mode runs the fixture kernel ``vadd`` on
the host, so capture's whole launch path (layout from the code object, kernarg bytes,
pinned snapshot) and replay run through hip-python's own calls."""
from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hrr.archive import open_archive
from hrr.backends.amdgpu import kernel_layouts
from hrr.backends.hip.modules import Layouts
from hrr.hiptypes.kernargs import KernelLayout
from hrr.exitcodes import BACKEND_UNAVAILABLE
from hrr.events.launch import launch_map
from hrr.events.model import PSEUDO_UNCATALOGUED, UNCATALOGUED_REASON

HERE = Path(__file__).resolve().parent
APP = HERE / "apps" / "hip_vadd.py"
FIXTURES = HERE.parent / "amdgpu" / "fixtures"
CODE_OBJECT = FIXTURES / "hip_gfx90a.co"


@pytest.fixture(scope="module")
def rocm_path(tmp_path_factory) -> Path:
    """A ROCm tree holding only the stand-in runtime, built from its C source."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is absent: the stand-in libamdhip64.so cannot be built")
    root = tmp_path_factory.mktemp("rocm")
    (root / "lib").mkdir()
    subprocess.run([gcc, "-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o", str(root / "lib" / "libamdhip64.so"),
                    str(HERE / "standin_amdhip64.c")], check=True, capture_output=True, text=True)
    return root


def hrr(*args: object, env: dict[str, str]) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("HRR_", "ROCM_"))}
    full.update(env)
    return subprocess.run([sys.executable, "-m", "hrr.cli.main", *map(str, args)], env=full,
                          capture_output=True, text=True, timeout=120, check=False)


def said(proc: subprocess.CompletedProcess) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


def calls(archive: Path) -> list[list]:
    (process,) = open_archive(str(archive)).processes
    return [r.value for r in process.events()]


def manifest(archive: Path) -> dict:
    (path,) = archive.glob("pid-*/manifest.json")
    return json.loads(path.read_text())


# ---------------------------------------------------------------- no HIP runtime


@pytest.mark.skipif(ctypes.util.find_library("amdhip64") is not None, reason="a HIP runtime is installed here")
@pytest.mark.parametrize("how", ["run", "capture", "replay", "env"])
def test_without_a_runtime_one_line_names_the_library_and_the_working_backends(tmp_path, how):
    env = {"ROCM_PATH": str(tmp_path)}      # a ROCm tree with no library in it
    command = ["--", sys.executable, "-c", "print('ran')"]
    if how == "run":
        proc = hrr("run", "--backend", "hip", *command, env=env)
    elif how == "capture":
        proc = hrr("capture", "--backend", "hip", "-o", tmp_path / "a", *command, env=env)
    elif how == "env":
        proc = hrr("capture", "-o", tmp_path / "a", *command, env={**env, "HRR_BACKEND": "hip"})
    else:
        hrr("capture", "-o", tmp_path / "a", *command, env={}).check_returncode()
        proc = hrr("replay", tmp_path / "a", "--backend", "hip", env=env)
    assert proc.returncode == BACKEND_UNAVAILABLE, said(proc)
    assert "ran" not in proc.stdout and "Traceback" not in proc.stderr, said(proc)
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("hrr: error:") and "libamdhip64.so" in line, line
    assert line.endswith("backends that work here: sim") or "backends that work here: cuda, sim" in line, line


@pytest.mark.skipif(ctypes.util.find_library("amdhip64") is not None, reason="a HIP runtime is installed here")
def test_replaying_a_hip_archive_without_a_runtime_ends_with_one_line(tmp_path, rocm_path):
    """The backend taken from the archive's manifest is checked as --backend is."""
    archive = tmp_path / "a"
    hrr("capture", "--backend", "hip", "-o", archive, "--", sys.executable, APP, CODE_OBJECT,
        env={"ROCM_PATH": str(rocm_path)})
    assert manifest(archive)["backend"] == "hip"
    proc = hrr("replay", archive, env={"ROCM_PATH": str(tmp_path)})
    assert proc.returncode == BACKEND_UNAVAILABLE and "Traceback" not in proc.stderr, said(proc)
    (line,) = proc.stderr.strip().splitlines()
    assert "libamdhip64.so cannot be loaded" in line and "backends that work here: " in line, line


# ---------------------------------------------------------------- a device-less runtime


def test_device_less_runtime_every_call_fails_is_recorded_and_replays_into_the_same_errors(tmp_path, rocm_path):
    env = {"ROCM_PATH": str(rocm_path), "HRR_STANDIN_MODE": "nodevice"}
    archive = tmp_path / "a"
    proc = hrr("capture", "--content", "--backend", "hip", "-o", archive, "--", sys.executable, APP, CODE_OBJECT,
               env=env)
    assert proc.returncode == 3, said(proc)          # the app saw its calls fail, and said so
    assert "Traceback" not in proc.stderr, said(proc)
    assert proc.stdout.count("hipErrorNoDevice") == 13, said(proc)
    records = calls(archive)
    assert len(records) == 13 and {r[4] for r in records} == {100}, records
    assert manifest(archive)["backend"] == "hip"
    replay = hrr("replay", archive, "--backend", "hip", env=env)
    assert replay.returncode == 0, said(replay)
    assert "Errors reproduced: 12; divergences: 0" in replay.stdout, said(replay)
    # No function handle came back, so the launch has no layout and replay says so.
    assert "hipModuleLaunchKernel [bad_record]" in replay.stdout, said(replay)


# ---------------------------------------------------------------- the launch path


@pytest.fixture(scope="module")
def vadd_archive(rocm_path, tmp_path_factory) -> tuple[Path, dict[str, str], str]:
    """vadd captured on the stand-in (with one uncatalogued call); the kernargs it received."""
    tmp = tmp_path_factory.mktemp("vadd")
    log = tmp / "launches.log"
    env = {"ROCM_PATH": str(rocm_path), "HRR_STANDIN_MODE": "ok", "HRR_STANDIN_LOG": str(log)}
    proc = hrr("capture", "--content", "--backend", "hip", "-o", tmp / "a", "--", sys.executable, APP, CODE_OBJECT,
               "--uncatalogued", env=env)
    assert proc.returncode == 0, said(proc)
    assert "result ok" in proc.stdout, said(proc)
    (line,) = log.read_text().splitlines()
    log.unlink()
    return tmp / "a", env, line


def test_the_layout_comes_from_the_code_object_and_the_kernargs_are_what_hip_python_passed(vadd_archive):
    archive, _env, logged = vadd_archive
    by_api = {r[2]: r for r in calls(archive)}
    expected = kernel_layouts(CODE_OBJECT.read_bytes())["vadd"]
    assert KernelLayout.from_wire(by_api["hipModuleGetFunction"][6]["layout"]) == expected
    launch = launch_map(by_api["hipModuleLaunchKernel"][6]["launch"])
    name, hex_args = logged.split()
    assert name == "vadd" and launch["kernargs"] == bytes.fromhex(hex_args)
    assert [off for off, _base, _delta in launch["ptrs"]] == [0, 8, 16]   # the three pointers, not n
    assert "pinned_snapshot" in by_api["hipModuleLaunchKernel"][6]["records"]


def test_an_uncatalogued_call_passes_through_and_is_listed_unreplayable(vadd_archive):
    archive, _env, _ = vadd_archive
    records = calls(archive)
    assert [r[3] for r in records if r[2] == PSEUDO_UNCATALOGUED] == [["hipExtGetLastError"]]
    assert manifest(archive)["unreplayable_apis"] == [{"api": "hipExtGetLastError", "reason": UNCATALOGUED_REASON}]


def test_replay_on_hip_restores_the_pinned_input_and_checks_the_result(vadd_archive):
    archive, env, _ = vadd_archive
    proc = hrr("replay", archive, "--backend", "hip", env=env)
    assert proc.returncode == 0, said(proc)
    assert "Device-to-host checks: 1 passed, 0 failed" in proc.stdout, said(proc)
    assert "Pinned host snapshots: 1 restored, 0 refused" in proc.stdout, said(proc)
    assert f"hipExtGetLastError [unreplayable]: {UNCATALOGUED_REASON}" in proc.stdout, said(proc)
    strict = hrr("replay", archive, "--backend", "hip", "--strict", env=env)
    assert strict.returncode == 1 and "REFUSED by --strict" in strict.stdout, said(strict)


def test_without_the_uncatalogued_call_strict_replay_passes(rocm_path, tmp_path):
    env = {"ROCM_PATH": str(rocm_path), "HRR_STANDIN_MODE": "ok"}
    proc = hrr("capture", "--content", "--backend", "hip", "-o", tmp_path / "a", "--", sys.executable, APP,
               CODE_OBJECT, env=env)
    assert proc.returncode == 0, said(proc)
    assert manifest(tmp_path / "a")["unreplayable_apis"] == []
    strict = hrr("replay", tmp_path / "a", "--backend", "hip", "--strict", env=env)
    assert strict.returncode == 0, said(strict)


def test_hrr_run_leaves_the_program_its_results(rocm_path):
    env = {"ROCM_PATH": str(rocm_path), "HRR_STANDIN_MODE": "ok"}
    proc = hrr("run", "--backend", "hip", "--", sys.executable, APP, CODE_OBJECT, "--uncatalogued", env=env)
    assert proc.returncode == 0 and "result ok" in proc.stdout, said(proc)


# ---------------------------------------------------------------- layouts, in process


def module(value: int):
    """A module handle as hip-python returns one."""
    from rocm.bindings import hip
    return hip.ihipModule_t.fromObj(value)


def function(value: int):
    """A function handle as hip-python returns one."""
    from rocm.bindings import hip
    return hip.ihipModuleSymbol_t.fromObj(value)


@pytest.mark.parametrize("fixture", ["hip_gfx90a.co", "hip_gfx90a.hipfb", "hip_multi_zlib.hipfb"])
def test_function_handles_map_to_their_kernels_user_arguments(fixture):
    data = (FIXTURES / fixture).read_bytes()
    layouts = Layouts()
    layouts.loaded(module(0x10), data)
    for i, name in enumerate(kernel_layouts(data)):
        layouts.got_function(module(0x10), name.encode(), function(0x100 + i))
        assert layouts.layout(function(0x100 + i)) == kernel_layouts(data)[name]
    with pytest.raises(KeyError):
        layouts.layout(function(0x999))


def test_hidden_arguments_are_not_user_arguments():
    layouts = Layouts()
    layouts.loaded(module(1), CODE_OBJECT.read_bytes())
    layouts.got_function(module(1), "strided", function(2))
    assert [(p.offset, p.size) for p in layouts.layout(function(2)).params] == [(0, 8), (8, 16)]


def test_an_image_given_by_address_is_read_to_the_end_of_its_headers():
    data = CODE_OBJECT.read_bytes()
    buf = ctypes.create_string_buffer(data + b"\xff" * 64, len(data) + 64)
    layouts = Layouts()
    layouts.loaded(module(1), ctypes.addressof(buf))
    layouts.got_function(module(1), b"vadd", function(2))
    assert layouts.layout(function(2)) == kernel_layouts(data)["vadd"]


def test_a_code_object_hrr_cannot_read_leaves_the_function_without_a_layout():
    layouts = Layouts()
    layouts.loaded(module(1), b"not a code object")
    layouts.got_function(module(1), b"vadd", function(2))
    assert "cannot be read" in layouts.errors[1]
    with pytest.raises(KeyError):
        layouts.layout(function(2))
    layouts.unloaded(module(1))
    assert not layouts.errors


def test_a_function_handle_reused_by_an_unreadable_module_loses_its_old_layout():
    layouts = Layouts()
    layouts.loaded(module(1), CODE_OBJECT.read_bytes())
    layouts.got_function(module(1), b"vadd", function(2))
    layouts.unloaded(module(1))
    layouts.loaded(module(3), b"not a code object")
    layouts.got_function(module(3), b"vadd", function(2))     # the runtime gave the same value again
    with pytest.raises(KeyError):
        layouts.layout(function(2))


def test_the_backend_is_hip_pythons_own_modules():
    """Every function is hip-python's own object, except the module calls, which call it
    and keep its signature; hiprtc is hip-python's module itself."""
    import inspect

    from hrr.backends import hip as backend
    from hrr.hiptypes import real_modules
    real_hip, real_hiprtc = real_modules()
    assert backend.hiprtc is real_hiprtc
    differ = []
    for name, value in vars(real_hip).items():
        if name.startswith("__"):
            continue
        ours = getattr(backend.hip, name)
        if ours is not value:
            differ.append(name)
            assert ours.__wrapped__ is value and inspect.signature(ours) == inspect.signature(value)
    assert sorted(differ) == ["hipDeviceReset", "hipModuleGetFunction", "hipModuleLoad", "hipModuleLoadData",
                              "hipModuleLoadDataEx", "hipModuleUnload"]


@pytest.mark.parametrize("name, category", [("hipExtGetLastError", "unreplayable"),
                                            ("hip\nResult: OK", "bad_record"), ("x" * 65, "bad_record")])
def test_replay_names_an_uncatalogued_record_only_when_its_name_is_a_plain_identifier(tmp_path, name, category):
    """The name comes from an untrusted archive: it reaches the summary only as an identifier."""
    from hrr.archive import open_process_writer
    from hrr.archive.limits import Limits
    from hrr.backends import sim
    from hrr.pipeline.manager import make_plugin_manager
    from hrr.replay.engine import ProcessReplayer, ReplayOptions
    w = open_process_writer(str(tmp_path), 4242, {"backend": "sim"}, manifest={"content_mode": "content"})
    w.append([0, 1, PSEUDO_UNCATALOGUED, [name], 0, [], {}])
    w.close()
    proc = open_archive(str(tmp_path), Limits()).processes[0]
    pm, _versions = make_plugin_manager([])
    stats = ProcessReplayer(proc, sim, pm, Limits(), ReplayOptions(strict=True, keep_going=True)).run()
    assert [(r.api if category == "unreplayable" else "", r.category) for r in stats.refusals] == \
        [(name if category == "unreplayable" else "", category)]
    assert stats.unreplayable == (1 if category == "unreplayable" else 0)
