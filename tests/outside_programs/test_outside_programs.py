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
        if any(n.startswith("math:") or n in ("rccl", "amd-gpu") for n in p.get("needs", [])):
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
