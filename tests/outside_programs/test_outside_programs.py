"""scripts/outside-programs: hip-python programs written by others, run unchanged under hrr
(``hrr run``, ``hrr capture --content``, ``hrr replay --strict``) in the hip-python release each
was written for.

None of those programs is in this repository. The harness (manifest, fetch, classification,
runner) is tested here on programs of ours; then:

- kernel_tuner's own HIP tests come from its sdist on PyPI (the one source that CI reaches): that
  test runs wherever pip can download kernel_tuner (a venv with hip-python 7.x and kernel_tuner,
  made once under the cache folder: about two minutes the first time, then about one);
- the programs from GitHub run when fetch.py has brought them into the cache
  (``python scripts/outside-programs/fetch.py --mirror DIR`` with local git copies, or plain https
  where GitHub is reachable): every one the manifest expects the sim to pass must pass. Where the
  cache does not hold them (a fresh clone, CI), that test skips and says so.
"""
from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from hrr.hiptypes.mathlibs import LIBRARIES

REPO = Path(__file__).resolve().parents[2]
FOLDER = REPO / "scripts" / "outside-programs"
OURS = REPO / "tests" / "capture" / "apps" / "style_hip.py"   # `from hip import hip`, hip calls only
STEPS = ("run", "capture", "replay")
LICENCES = {"MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause"}


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"outside_{name}", FOLDER / f"{name}.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(FOLDER))
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(FOLDER))
    return mod


fetch = _load("fetch")
runner = _load("run")
bundle = _load("device-bundle")


def _run(*args: str, timeout: float = 3000) -> tuple[int, dict[str, dict], str]:
    out = Path(args[args.index("--out") + 1])
    proc = subprocess.run([sys.executable, str(FOLDER / "run.py"), *args], capture_output=True, text=True,
                          timeout=timeout, check=False)
    assert (out / "results.json").exists(), proc.stdout + proc.stderr
    data = json.loads((out / "results.json").read_text())
    return proc.returncode, {r["name"]: r for r in data["results"]}, proc.stdout + proc.stderr


# -- the manifest ----------------------------------------------------------------------------------
def test_manifest_names_origin_commit_licence_release_and_needs_of_every_program():
    m = fetch.load_manifest()
    names = [p["name"] for p in m["program"]]
    assert len(names) == len(set(names)) and len(names) >= 16
    for name, src in m["source"].items():
        assert src["license"] in LICENCES, name
        if src["kind"] == "github":
            assert re.fullmatch(r"[0-9a-f]{40}", src["commit"]) and "/" in src["repo"], name
        else:
            assert src["kind"] == "pypi-sdist" and re.fullmatch(r"[0-9a-f]{64}", src["sha256"]), name
    for p in m["program"]:
        assert p["source"] in m["source"] and p["env"] in m["venv"], p["name"]
        assert re.fullmatch(r"[0-9a-f]{64}", p["sha256"]), p["name"]
        assert p["release"] in ("7", "10"), p["name"]
        release = "10" if p["env"].startswith("hp10") else "7"
        assert p["release"] == release, f"{p['name']}: runs in {p['env']}"
        if p.get("run", True) is False:
            assert p.get("why") and p.get("sim") != "pass", p["name"]
        # a math library hrr has no family for (hrr.hiptypes.mathlibs.LIBRARIES), RCCL or an AMD GPU
        if any(n.startswith("math:") and n[5:] not in LIBRARIES or n in ("rccl", "amd-gpu")
               for n in p.get("needs", [])):
            assert p.get("why") and p.get("sim") != "pass", p["name"]
    # at least 16 programs are run (not only listed)
    assert sum(1 for p in m["program"] if p.get("run", True)) >= 16


def test_classify_names_what_stopped_a_program():
    def step(first: str, tail: str = "") -> dict:
        return {"ok": False, "run": {"exit": 1, "first_error": first, "error": first, "output_tail": tail}}
    cases = {
        "RuntimeError: failed to dlopen 'b'libhipblas.so''": "run: math library",
        "hrr.backends.hiptypes.UncataloguedCall: hip.hipTexObjectDestroy is not offered by hrr's sim backend":
            "run: uncatalogued call",
        "AttributeError: module 'hip.hip' has no attribute 'hipFooBar_t'": "run: missing name on hrr's hip module",
        "AttributeError: module 'hrr.backends.sim.hip' has no attribute 'hipFooBar'":
            "run: missing name on hrr's hip module",
        "AttributeError: 'DeviceArray' object has no attribute 'configure'": "run: DeviceArray member",
        "TypeError: can't concat str to bytes": "run: gcnArchName/device identity",
        "ModuleNotFoundError: No module named 'cuda'": "run: interop import",
        "ERROR: unsupported GPU architecture 'gfx942' (supported: 'gfx90a')": "run: amd-gpu only",
        "TypeError: hipGetDeviceProperties() takes 1 positional argument but 2 were given":
            "run: signature of the installed hip-python",
        "ValueError: something else": "run: other",
    }
    for line, want in cases.items():
        assert runner.classify(step(line), {}) == want, line
    assert runner.classify(step("KeyError: '__pyx_vtable__'", '  File "cuda/cuda.pyx", line 1, in init cuda.cuda\n'),
                           {}) == "run: interop import"
    empty = {"ok": False, "run": {"exit": 0}, "capture": {"exit": 0},
             "replay": {"exit": 1, "error": "Result: REFUSED by --strict",
                        "output_tail": "STRICT: the process recorded no calls: there was nothing to replay"}}
    assert runner.classify(empty, {}) == "replay: no HIP call (replay --strict refuses an empty archive)"
    assert runner.classify({"ok": True}, {}) == ""
    capture_only = {"ok": False, "run": {"exit": 0}, "capture": {"exit": 1, "error": "timed out after 5 s"}}
    assert runner.classify(capture_only, {}) == "capture: timeout"


# -- fetching --------------------------------------------------------------------------------------
def _tar(members: list[tuple[str, bytes | None, str | None]]) -> tarfile.TarFile:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data, link in members:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
            else:
                info.size = len(data or b"")
                tar.addfile(info, io.BytesIO(data or b""))
    buf.seek(0)
    return tarfile.open(fileobj=buf)


def test_extract_keeps_only_regular_files_inside_the_wanted_folders(tmp_path):
    tar = _tar([("top/examples/a.py", b"a", None), ("top/examples/../../evil.py", b"x", None),
                ("top/examples/link.py", None, "/etc/passwd"), ("top/other/b.py", b"b", None),
                ("top/LICENSE", b"MIT", None)])
    fetch._extract(tar, tmp_path / "d", strip=1, keep=["examples", "LICENSE"])
    got = sorted(str(p.relative_to(tmp_path / "d")) for p in (tmp_path / "d").rglob("*") if p.is_file())
    assert got == ["LICENSE", "examples/a.py"]
    assert not (tmp_path / "evil.py").exists()


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout.strip()


def test_fetch_takes_the_pinned_commit_from_a_local_git_copy_and_checks_sha256(tmp_path):
    repo = tmp_path / "mirrors" / "someone+progs"
    (repo / "examples").mkdir(parents=True)
    (repo / "examples" / "app.py").write_text("print('pinned')\n")
    (repo / "LICENSE").write_text("MIT License\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "pinned")
    pinned = _git(repo, "rev-parse", "HEAD")
    (repo / "examples" / "app.py").write_text("print('later')\n")
    _git(repo, "commit", "-qam", "later")
    digest = hashlib.sha256(b"print('pinned')\n").hexdigest()
    manifest = {"source": {"s": {"kind": "github", "repo": "someone/progs", "commit": pinned, "license": "MIT",
                                 "license_file": "LICENSE", "paths": ["examples"]}},
                "program": [{"name": "p", "source": "s", "path": "examples/app.py", "sha256": digest},
                            {"name": "q", "source": "s", "path": "examples/app.py", "sha256": "0" * 64}]}
    cache = tmp_path / "cache"
    status = fetch.fetch(manifest, cache, [tmp_path / "mirrors"], network=False, log=lambda *_: None)
    assert status == {"p": "ok", "q": "sha256 mismatch"}
    origin = (cache / "src" / "s" / "ORIGIN.txt").read_text()
    assert pinned in origin and "MIT" in origin
    assert (cache / "src" / "s" / "LICENSE").exists()
    # nothing to fetch from: the program is missing, and says so
    empty = fetch.fetch(manifest, tmp_path / "cache2", [], network=False, log=lambda *_: None)
    assert empty == {"p": "missing", "q": "missing"}


# -- the runner on programs of ours ----------------------------------------------------------------
def _our_manifest(tmp_path: Path) -> tuple[Path, Path]:
    cache = tmp_path / "cache"
    folder = cache / "src" / "ours" / "examples"
    folder.mkdir(parents=True)
    shutil.copy(OURS, folder / "style_hip.py")
    (folder / "bad.py").write_text("from hip import hip\nhip.hipTexObjectDestroy(0)\n")   # not catalogued
    (cache / "src" / "ours" / "ORIGIN.txt").write_text("ours\n")
    digest = {n: hashlib.sha256((folder / n).read_bytes()).hexdigest() for n in ("style_hip.py", "bad.py")}
    manifest = tmp_path / "manifest.toml"
    manifest.write_text(
        '[venv.hp10]\npip = ["hip-python==10.0.0.0.1.2"]\n'
        '[source.ours]\nkind = "github"\nrepo = "us/ours"\ncommit = "' + "0" * 40 + '"\nlicense = "MIT"\n'
        'license_file = ""\npaths = ["examples"]\n'
        '[[program]]\nname = "ours/style_hip"\nsource = "ours"\npath = "examples/style_hip.py"\n'
        f'sha256 = "{digest["style_hip.py"]}"\nrelease = "10"\nenv = "hp10"\nsim = "pass"\n'
        '[[program]]\nname = "ours/bad"\nsource = "ours"\npath = "examples/bad.py"\n'
        f'sha256 = "{digest["bad.py"]}"\nrelease = "10"\nenv = "hp10"\n'
        '[[program]]\nname = "ours/listed"\nsource = "ours"\npath = "examples/bad.py"\n'
        f'sha256 = "{digest["bad.py"]}"\nrelease = "10"\nenv = "hp10"\nrun = false\nwhy = "only listed"\n')
    return manifest, cache


def test_runner_runs_captures_and_replays_each_program_and_classifies_the_failures(tmp_path):
    if not (runner._hip_python_version(sys.executable) or "").startswith("10."):
        pytest.skip("this interpreter holds no hip-python 10.x (the hp10 venv would be built)")
    manifest, cache = _our_manifest(tmp_path)
    rc, res, log = _run("--manifest", str(manifest), "--cache", str(cache), "--offline", "--out",
                        str(tmp_path / "out"), timeout=600)
    assert rc == 1, log   # not every program passed
    good = res["ours/style_hip"]
    assert [good[s]["exit"] for s in STEPS] == [0, 0, 0] and good["ok"] and good["class"] == "", good
    assert good["license"] == "MIT" and good["release"] == "10" and good["hip_python"].startswith("10.")
    assert all(good[s]["seconds"] >= 0 for s in STEPS)
    bad = res["ours/bad"]
    assert bad["run"]["exit"] == 1 and bad["replay"]["exit"] is None
    assert bad["class"] == "run: uncatalogued call", bad
    assert res["ours/listed"]["class"] == "not run" and "only listed" in res["ours/listed"]["run"]["error"]
    table = (tmp_path / "out" / "results.md").read_text()
    assert "1 of 2 programs run pass" in table and "| ours/bad | 10" in table


# -- the GPU machine's run (device-bundle.py, run.py --wheels / --replay-only, gpu.sh) ---------------
def test_the_gpu_run_takes_the_programs_the_sim_passes_and_replays_the_interop_ones_captures():
    m = fetch.load_manifest()
    on_gpu = runner.select_programs(m["program"], sim_pass=True, no_interop=True)
    interop = [p for p in runner.select_programs(m["program"], sim_pass=True) if p not in on_gpu]
    assert on_gpu and all("interop" not in p.get("needs", []) and p.get("sim") == "pass" for p in on_gpu)
    assert interop and all("interop" in p["needs"] for p in interop)
    # offline, no venv a GPU program runs in installs kernel_tuner with its dependencies (scipy,
    # pandas, scikit-learn: over the carry) and none installs ziglang (the sim's compiler)
    for env in {p["env"] for p in on_gpu}:
        venv = m["venv"][env]
        assert not any(s.startswith("kernel_tuner") for s in venv.get("offline_pip", venv["pip"])), env
    assert "ziglang" in " ".join(runner.hrr_runtime_deps())
    assert not any(d.startswith(("ziglang", "hip-python")) for d in runner.hrr_runtime_deps(offline=True))
    jacobi = next(p for p in m["program"] if p["name"] == "hip-python7/hip_jacobi")
    assert runner.tolerance_for(jacobi, "sim") is None and runner.tolerance_for(jacobi, "cuda")[0] == 0.001


def test_a_trimmed_wheel_tree_is_zipped_back_into_a_wheel_with_its_record(tmp_path):
    wheel = tmp_path / "hip_python-7.0.0-cp312-cp312-manylinux_2_28_x86_64.whl"
    files = {"hip/__init__.py": b"x = 1\n", "hip/hip.cpython-312-x86_64-linux-gnu.so": b"\x7fELF hip",
             "hip/hipblas.cpython-312-x86_64-linux-gnu.so": b"\x7fELF blas", "hip/hip.pyx": b"# cython",
             "hip/_util/types.pyx": b"# kept", "hip_python-7.0.0.dist-info/METADATA": b"Name: hip-python\n",
             "hip_python-7.0.0.dist-info/RECORD": b"stale\n"}
    import zipfile
    with zipfile.ZipFile(wheel, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    tree = bundle.trimmed_tree(wheel, tmp_path)
    assert tree.name == wheel.name + ".tree.tar.xz"
    (tmp_path / "wheels").mkdir()
    tree.rename(tmp_path / "wheels" / tree.name)
    dirs = runner.wheel_dirs([tmp_path / "wheels"], tmp_path / "venvs")
    rebuilt = tmp_path / "venvs" / "_wheels" / wheel.name
    assert dirs[-1] == rebuilt.parent and rebuilt.exists()
    with zipfile.ZipFile(rebuilt) as z:
        names = sorted(z.namelist())
        record = z.read("hip_python-7.0.0.dist-info/RECORD").decode()
    assert names == ["hip/__init__.py", "hip/_util/types.pyx", "hip/hip.cpython-312-x86_64-linux-gnu.so",
                     "hip_python-7.0.0.dist-info/METADATA", "hip_python-7.0.0.dist-info/RECORD"]
    assert "hip/hip.cpython-312-x86_64-linux-gnu.so,sha256=" in record and "hipblas" not in record


def test_replay_only_replays_sim_captures_and_adds_them_to_the_results(tmp_path):
    if not (runner._hip_python_version(sys.executable) or "").startswith("10."):
        pytest.skip("this interpreter holds no hip-python 10.x (the hp10 venv would be built)")
    manifest, cache = _our_manifest(tmp_path)
    rc, res, log = _run("--manifest", str(manifest), "--cache", str(cache), "--offline", "--only", "ours/style_hip",
                        "--out", str(tmp_path / "out"), timeout=600)
    assert rc == 0, log
    archives = tmp_path / "archives"
    archives.mkdir()
    shutil.move(str(tmp_path / "out" / "ours_style_hip.hrr"), archives / "ours_style_hip.hrr")
    r = res["ours/style_hip"]
    (archives / "archives.json").write_text(json.dumps({"archives": [{
        "name": "ours/style_hip", "archive": "ours_style_hip.hrr", "env": "hp10", "hip_python": r["hip_python"],
        "sim": {s: r[s] for s in STEPS}}]}))
    rc, res, log = _run("--manifest", str(manifest), "--cache", str(cache), "--replay-only", str(archives),
                        "--out", str(tmp_path / "out"), timeout=600)
    assert rc == 0, log
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    rows = [(x["name"], x.get("mode")) for x in data["results"]]
    assert rows == [("ours/style_hip", None), ("ours/style_hip", "captured on sim, replayed on sim")], rows
    replayed = data["results"][1]
    assert replayed["ok"] and replayed["replay"]["exit"] == 0 and replayed["replay"]["last_line"] == "Result: OK"
    table = (tmp_path / "out" / "results.md").read_text()
    assert "1 of 1 archives captured on the sim" in table and "(captured on sim, replayed on sim) | 10" in table


# -- the real programs -----------------------------------------------------------------------------
def _pypi_reachable() -> bool:
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                           "-d", str(fetch.DEFAULT_CACHE / "probe"), "kernel_tuner==1.5.0"],
                          capture_output=True, text=True, timeout=300, check=False)
    shutil.rmtree(fetch.DEFAULT_CACHE / "probe", ignore_errors=True)
    return proc.returncode == 0


@pytest.mark.slow
def test_kernel_tuner_hip_tests_from_its_pypi_sdist_run_unchanged_on_the_sim(tmp_path):
    """kernel_tuner 1.5.0's test/test_hip_functions.py (its hip backend: ``from hip import hip,
    hiprtc``, hip-python 7.x), fetched from PyPI: every test passes under hrr run and hrr
    capture, and the archive replays --strict."""
    name = "kernel_tuner/test_hip_functions (pytest)"
    if os.environ.get("HRR_OUTSIDE_PROGRAMS") == "0":
        pytest.skip("HRR_OUTSIDE_PROGRAMS=0")
    if fetch.check_program(fetch.DEFAULT_CACHE, next(p for p in fetch.load_manifest()["program"]
                                                     if p["name"] == name)) != "ok" and not _pypi_reachable():
        pytest.skip("PyPI is not reachable: kernel_tuner's sdist cannot be fetched")
    rc, res, log = _run("--only", name, "--out", str(tmp_path / "out"))
    r = res[name]
    assert [r[s]["exit"] for s in STEPS] == [0, 0, 0], (r, log[-3000:])


@pytest.mark.slow
def test_every_program_the_sim_is_expected_to_pass_passes(tmp_path):
    """The GitHub-sourced programs with ``sim = "pass"``, from the cache (fetch.py): each one
    passes run, capture --content and replay --strict on the sim."""
    manifest = fetch.load_manifest()
    programs = [p for p in manifest["program"] if p.get("sim") == "pass"
                and manifest["source"][p["source"]]["kind"] == "github"]
    present = [p for p in programs if fetch.check_program(fetch.DEFAULT_CACHE, p) == "ok"]
    if not present:
        pytest.skip("the GitHub-sourced programs are not in the cache: run scripts/outside-programs/fetch.py "
                    "(--mirror DIR with local git copies, or where GitHub is reachable)")
    rc, res, log = _run("--offline", "--only", ",".join(p["name"] for p in present), "--out", str(tmp_path / "out"))
    failed = {n: r["class"] + ": " + next((r[s].get("first_error") or r[s].get("error") or "" for s in STEPS
                                             if r[s]["exit"] != 0), "") for n, r in res.items() if not r["ok"]}
    assert not failed, failed
