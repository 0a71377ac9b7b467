#!/usr/bin/env python3
"""Run hip-python programs written by others (manifest.toml) unchanged under hrr: for each one,
``hrr run``, ``hrr capture --content`` and ``hrr replay --strict`` on one backend, in the
hip-python release it was written for.

    python scripts/outside-programs/run.py [--backend sim|cuda|hip] [--out DIR] [--only NAME,...]
        [--sim-pass] [--no-interop] [--cache DIR] [--mirror DIR] [--offline] [--timeout S]
        [--timeout-limit S] [--deadline S] [--venvs DIR] [--wheels DIR ...]
    python scripts/outside-programs/run.py --replay-only ARCHIVES --backend cuda --out DIR [--wheels DIR ...]

First fetch.py brings the programs into the cache (CACHE/src/). Each program runs in the venv
its manifest ``env`` names (CACHE/venvs/ENV, made once and kept; ``hp10`` is this interpreter
when it holds hip-python 10.x and hrr): that hip-python release, the extra packages the program
needs (hip-python-interop, kernel_tuner, pytest), hrr's runtime dependencies and hrr itself from
this checkout (editable, so its built-in plugins are found as in a user's install). The steps
are scripts/hip-python-examples.py's (``run_steps``), in the program's own folder (or its
``cwd``), with ``--timeout`` seconds each (a program's own ``timeout`` may raise it).

Writes OUT/results.json and OUT/results.md: per program its origin, licence, release, the exit
code, seconds and first and last error line of each step, and a class for what stopped it.
``--sim-pass`` runs only the programs the manifest expects the sim to pass (``sim = "pass"``),
``--no-interop`` leaves out those that need hip-python-interop (its ``cuda.bindings`` is the
package NVIDIA's cuda-bindings installs, which the cuda backend uses: such a program is captured
on the sim and its archive replayed, ``--replay-only``).

Without a package index (the GPU machine), ``--wheels DIR`` (repeatable) makes each venv with
``--system-site-packages`` (the machine's cuda-bindings and numpy; where this interpreter is
itself a venv, its site-packages are linked in by a ``.pth``), installs the venv's
``offline_pip`` (else ``pip``) and hrr's runtime dependencies but ziglang with ``pip --no-index``
from those folders only, its ``offline_no_deps`` with ``--no-deps``, and hrr with ``--no-deps -e``.
A ``NAME.whl.tree.tar.xz`` there (device-bundle.py's form of a wheel too big to carry) is zipped
back into NAME.whl first. ``--venvs`` moves the venvs out of the cache; ``--timeout-limit`` caps
every step's timeout (a program's own included) and ``--deadline`` the whole run (seconds; the
programs not begun by then are listed as not run).

``--replay-only ARCHIVES`` runs no program: it replays each archive that ARCHIVES/archives.json
lists (captures made on the sim by device-bundle.py) with ``hrr replay --strict --backend B`` in
the ``--replay-env`` venv (hp10: no interop there), and adds them to OUT/results.json and
results.md as "captured on sim, replayed on B" (run and capture are the sim's exit codes).
Exits 0 when every program that was run (every archive replayed) passed all three steps.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import importlib.util
import json
import os
import platform
import re
import site
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
import fetch  # noqa: E402  (this folder's fetch.py)

STEPS = ("run", "capture", "replay")


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


HARNESS = _load(REPO / "scripts" / "hip-python-examples.py", "hip_python_examples")


# -- venvs ---------------------------------------------------------------------------------------
# Not installed offline: ziglang is the sim's compiler for a program's own kernels (without it the
# sim uses the machine's g++; the cuda backend compiles with NVRTC), and each venv has its own
# hip-python release.
OFFLINE_LEFT_OUT = ("ziglang",)
TREE_SUFFIX = ".tree.tar.xz"
# Packages whose version each venv reports in results.json.
REPORTED = ("hip-python", "rocm-bindings-hip", "kernel_tuner", "python-constraint2", "jsonschema", "pytest",
            "numpy", "cuda-bindings", "cuda-pathfinder", "cupy", "click", "rich", "setuptools")


def hrr_runtime_deps(offline: bool = False) -> list[str]:
    """hrr's own runtime dependencies (pyproject.toml), less hip-python (each venv picks its
    release); ``offline``: less OFFLINE_LEFT_OUT too."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    left_out = ("hip-python", *(OFFLINE_LEFT_OUT if offline else ()))
    return [d for d in deps if re.split(r"[^A-Za-z0-9_.-]", d, maxsplit=1)[0].lower() not in left_out]


def _hip_python_version(python: str) -> str | None:
    proc = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('hip-python'))"],
                          capture_output=True, text=True, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else None


def package_versions(python: str) -> dict[str, str]:
    """The REPORTED packages' versions in the environment of ``python`` ("-": not there)."""
    code = ("import importlib.metadata as m, json, sys\n"
            "def v(d):\n    try:\n        return m.version(d)\n    except m.PackageNotFoundError:\n        return '-'\n"
            "print(json.dumps({d: v(d) for d in sys.argv[1:]}))")
    proc = subprocess.run([python, "-c", code, *REPORTED], capture_output=True, text=True, check=False)
    try:
        return json.loads(proc.stdout)
    except ValueError:
        return {}


def wheel_dirs(wheels: list[Path], root: Path) -> list[Path]:
    """The folders pip is given offline: WHEELS, and ROOT/_wheels, where each wheel kept as an
    unpacked tree (NAME.whl.tree.tar.xz: device-bundle.py's form of a wheel too big to carry
    as it is) is zipped back into NAME.whl (once)."""
    built = root / "_wheels"
    for folder in wheels:
        for tree in sorted(folder.glob("*" + TREE_SUFFIX)):
            whl = built / tree.name[: -len(TREE_SUFFIX)]
            if whl.exists():
                continue
            built.mkdir(parents=True, exist_ok=True)
            part = whl.with_name(whl.name + ".part")
            with tarfile.open(tree, mode="r:xz") as tar, zipfile.ZipFile(part, "w", zipfile.ZIP_STORED) as z:
                for member in tar:
                    src = tar.extractfile(member) if member.isfile() else None
                    if src is None:
                        continue
                    info = zipfile.ZipInfo(member.name.removeprefix("./"), date_time=(2020, 1, 1, 0, 0, 0))
                    info.external_attr = (member.mode & 0xFFFF) << 16
                    z.writestr(info, src.read())
            part.rename(whl)
    return [*wheels, built] if built.is_dir() else list(wheels)


def _link_parent_site(python: Path) -> None:
    """Where this interpreter is itself a venv (the GPU machine's python3 is), a venv made from
    it with --system-site-packages reaches only the base interpreter's packages: link this one's
    site-packages in with a .pth (after the venv's own, so what the venv installs wins)."""
    if sys.prefix == sys.base_prefix:
        return
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / "_hrr_parent_site.pth").write_text("\n".join(site.getsitepackages()) + "\n")


def _pip_steps(env: str, manifest: dict[str, Any], py: Path, wheels: list[Path] | None) -> list[list[str]]:
    """The pip installs that make venv ``env`` (after ``python -m venv``): online, the manifest's
    packages with hrr's dependencies, then hrr; offline (``wheels``), from those folders only."""
    venv = manifest["venv"][env]
    pip = [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    if wheels is None:
        return [[*pip, *sorted(list(venv["pip"]) + hrr_runtime_deps())], [*pip, "--no-deps", "-e", str(REPO)]]
    pip += ["--no-index", *(f"--find-links={w}" for w in wheels)]
    steps = [[*pip, *list(venv.get("offline_pip", venv["pip"])), *hrr_runtime_deps(offline=True)]]
    if venv.get("offline_no_deps"):
        steps.append([*pip, "--no-deps", *venv["offline_no_deps"]])
    # hrr editable, built by the setuptools there (the carried wheel when the machine has none)
    steps.append(["@setuptools", *pip, "setuptools>=64"])
    steps.append([*pip, "--no-deps", "--no-build-isolation", "-e", str(REPO)])
    return steps


def venv_python(env: str, manifest: dict[str, Any], root: Path, log: Any = print,
                wheels: list[Path] | None = None) -> tuple[str | None, str]:
    """The interpreter of venv ``env`` (made under ROOT/ENV on first use, kept while its package
    list is the same): the manifest's packages, hrr's runtime dependencies, and hrr itself
    installed from this checkout (editable, without dependencies), so that its plugins are found
    through their entry points as in a user's install. ``hp10`` is this interpreter when it
    already holds hip-python 10.x and hrr. ``wheels``: offline, from those folders only (module
    docstring). (None, why) when pip cannot make it."""
    if env == "hp10" and (_hip_python_version(sys.executable) or "").startswith("10.") \
            and importlib.util.find_spec("hrr_plugins") is not None:
        return sys.executable, ""
    target = root / env
    py, ready = target / "bin" / "python", target / "hrr-ready"
    if wheels is not None:
        wheels = wheel_dirs([w.resolve() for w in wheels], root.resolve())
    steps = _pip_steps(env, manifest, py, wheels)
    # online: the same stamp as before offline venvs existed, so venvs already made are kept
    key = [sorted(list(manifest["venv"][env]["pip"]) + hrr_runtime_deps()), str(REPO)] if wheels is None \
        else [steps, str(REPO), sys.executable]
    stamp = hashlib.sha256(json.dumps(key).encode()).hexdigest()
    if ready.exists() and ready.read_text().strip() == stamp and py.exists():
        return str(py), ""
    venv = manifest["venv"][env]
    what = venv["pip"] if wheels is None else [*venv.get("offline_pip", venv["pip"]), *venv.get("offline_no_deps", [])]
    log(f"venv {env}: pip install {' '.join(what)}, hrr's runtime dependencies and hrr (editable)"
        + (f", offline from {', '.join(map(str, wheels))}" if wheels is not None else ""))
    start = time.monotonic()
    target.parent.mkdir(parents=True, exist_ok=True)
    made = [sys.executable, "-m", "venv", "--clear", *(["--system-site-packages"] if wheels is not None else []),
            str(target)]
    subprocess.run(made, check=True, capture_output=True)
    if wheels is not None:
        _link_parent_site(py)
    for args in steps:
        if args[0] == "@setuptools":
            has = subprocess.run([str(py), "-c", "import setuptools"], capture_output=True, check=False)
            if has.returncode == 0:
                continue
            args = args[1:]
        proc = subprocess.run(args, capture_output=True, text=True, timeout=1800, check=False)
        if proc.returncode != 0:
            return None, (proc.stderr.strip().splitlines() or ["pip failed"])[-1]
    ready.write_text(stamp + "\n")
    log(f"venv {env}: made in {time.monotonic() - start:.0f} s")
    return str(py), ""


# -- classifying what stopped a program -----------------------------------------------------------
CLASSES = (
    ("timeout", r"timed out after"),
    ("amd-gpu only", r"unsupported GPU architecture|libamdhip64|LLVM IR|bitcode|hiprtcLink"),
    ("interop import", r"No module named '?cuda|cuda\.bindings|cuda\.cudart|hip-python-interop"
                       r"|'cuda' has no attribute"),
    ("math library", r"hipblas|hipfft|hiprand|rccl|hipsparse|hipsolver|librocblas"),
    ("DeviceArray member", r"DeviceArray"),
    ("gcnArchName/device identity", r"gcnArchName|offload-arch|gfx\d|can't concat str to bytes"
                                    r"|can only concatenate str"),
    ("uncatalogued call", r"UncataloguedCall|is not offered by hrr|api-coverage"),
    ("missing name on hrr's hip module", r"module '(hip|hip\.hip\w*|rocm\.bindings\.hip\w*|hrr\.backends\.[\w.]*)' "
                                         r"has no attribute|cannot import name"),
    ("signature of the installed hip-python", r"\(\) takes \d+ positional arguments? but \d+ (were|was) given"),
)
# Looked for in the output's last lines when the error line itself names no class: an archive
# with no call in it, an import of hip-python-interop's Cython modules (they cimport hip-python's
# types from the hip.hip module).
TAIL_CLASSES = (
    ("no HIP call (replay --strict refuses an empty archive)", r"recorded no calls"),
    ("interop import", r"in init cuda\.|from cuda(\.bindings)? import|from cuda\.cudart import"),
)


def classify(result: dict[str, Any], program: dict[str, Any]) -> str:
    """A class for what stopped the program: the first failed step's first (then last) error
    line matched against CLASSES, then its output's last lines against TAIL_CLASSES, else
    'other'; '' when it passed."""
    if result.get("ok"):
        return ""
    if result.get("skipped"):
        return "not run"
    for step in STEPS:
        r = result.get(step) or {}
        if r.get("exit") == 0:
            continue
        for text, classes in ((" ".join(filter(None, [r.get("first_error"), r.get("error")])), CLASSES),
                              (r.get("output_tail") or "", TAIL_CLASSES)):
            for name, pattern in classes:
                if re.search(pattern, text, re.I):
                    return f"{step}: {name}"
        return f"{step}: other"
    return "other"


# -- running ----------------------------------------------------------------------------------------
def _label(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")


def select_programs(programs: list[dict[str, Any]], only: set[str] | None = None, sim_pass: bool = False,
                    no_interop: bool = False) -> list[dict[str, Any]]:
    """The programs a run takes: ``only`` (names), ``sim_pass`` (``sim = "pass"``), ``no_interop``
    (not those needing hip-python-interop)."""
    return [p for p in programs if (only is None or p["name"] in only)
            and (not sim_pass or p.get("sim") == "pass")
            and (not no_interop or "interop" not in p.get("needs", []))]


def program_base(program: dict[str, Any], manifest: dict[str, Any]) -> dict[str, Any]:
    """A result's fields that come from the manifest: origin, commit, licence, release, needs."""
    source = manifest["source"][program["source"]]
    return {
        "name": program["name"], "source": program["source"], "path": program["path"],
        "origin": (f"https://github.com/{source['repo']}" if source["kind"] == "github"
                   else f"PyPI {source['package']} {source['version']} (sdist)"),
        "commit": source.get("commit") or f"{source['package']}=={source['version']}",
        "license": source["license"], "release": program["release"], "env": program["env"],
        "needs": program.get("needs", []), "why": program.get("why", ""), "sim": program.get("sim", ""),
    }


def tolerance_for(program: dict[str, Any], backend: str) -> tuple[float, str] | None:
    """The program's replay --float-tolerance off the sim (manifest ``float_tolerance``)."""
    if backend == "sim" or "float_tolerance" not in program:
        return None
    return float(program["float_tolerance"]), "its result depends on the threads' timing (manifest)"


def run_program(program: dict[str, Any], manifest: dict[str, Any], cache: Path, backend: str, out: Path,
                timeout: float, log: Any = print, venvs: Path | None = None,
                wheels: list[Path] | None = None) -> dict[str, Any]:
    """One program's three steps in its venv; ``timeout``: seconds per step (the caller has
    applied the program's own ``timeout``)."""
    base = program_base(program, manifest)
    if program.get("run", True) is False:
        return {**base, "skipped": True, "ok": False, "class": "not run",
                **{s: {"exit": None, "error": "not run: " + program.get("why", "")} for s in STEPS}}
    state = fetch.check_program(cache, program)
    if state != "ok":
        return {**base, "skipped": True, "ok": False, "class": "not fetched",
                **{s: {"exit": None, "error": f"program file {state} (fetch.py)"} for s in STEPS}}
    python, why = venv_python(program["env"], manifest, venvs or cache / "venvs", log, wheels)
    if python is None:
        return {**base, "skipped": True, "ok": False, "class": "venv",
                **{s: {"exit": None, "error": f"venv {program['env']}: {why}"} for s in STEPS}}
    base["hip_python"] = _hip_python_version(python)
    script = fetch.program_file(cache, program)
    cwd = (fetch.source_dir(cache, program["source"]) / program["cwd"]) if "cwd" in program else script.parent
    argv = [a.replace("{python}", python) for a in program.get("argv", ["{python}", script.name])]
    result = HARNESS.run_steps(_label(program["name"]), argv, cwd, backend, python, out, float(timeout),
                               tolerance_for(program, backend), extra_env=program.get("program_env"))
    result.pop("example", None)
    merged = {**base, **result}
    merged["class"] = classify(merged, program)
    return merged


def replay_archives(folder: Path, manifest: dict[str, Any], backend: str, python: str, timeout: float,
                    log: Any = print) -> list[dict[str, Any]]:
    """Replay --strict on ``backend`` each archive FOLDER/archives.json lists (captured on the
    sim by device-bundle.py); a result per archive, its run and capture steps the sim's."""
    listed = json.loads((folder / "archives.json").read_text())
    programs = {p["name"]: p for p in manifest["program"]}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    for var in ("HRR_MODE", "HRR_BACKEND", "HRR_CAPTURE_ARCHIVE"):
        env.pop(var, None)
    results = []
    for entry in listed["archives"]:
        program = programs[entry["name"]]
        tolerance = tolerance_for(program, backend)
        command = [python, "-m", "hrr.cli.main", "replay", "--strict", "--backend", backend,
                   *(["--float-tolerance", str(tolerance[0])] if tolerance else []), str(folder / entry["archive"])]
        start = time.monotonic()
        try:
            proc = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout,
                                  check=False)
            last = [line.strip() for line in (proc.stdout or "").splitlines() if line.strip()]
            replay: dict[str, Any] = {"exit": proc.returncode, "error": HARNESS._last_error_line(proc),
                                      "first_error": HARNESS._first_error_line(proc),
                                      "output_tail": HARNESS._tail(proc), "last_line": last[-1][:200] if last else ""}
        except subprocess.TimeoutExpired:
            replay = {"exit": None, "error": f"timed out after {timeout:.0f} s"}
        replay["seconds"] = round(time.monotonic() - start, 2)
        sim = entry["sim"]
        row = {**program_base(program, manifest), "mode": f"captured on sim, replayed on {backend}",
               "hip_python": entry.get("hip_python"), "captured": entry.get("captured", {}),
               "tolerance": list(tolerance) if tolerance else None,
               "run": sim["run"], "capture": sim["capture"], "replay": replay, "sim_replay": sim.get("replay")}
        row["ok"] = all((row[s] or {}).get("exit") == 0 for s in STEPS)
        row["class"] = classify(row, program)
        results.append(row)
        log(f"{row['name']} ({row['mode']}): replay={replay['exit']}" + (f"  [{row['class']}]" if row["class"] else ""))
    return results


def _tree() -> dict[str, Any]:
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=False).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no", "--", "hrr",
                            "plugins"], capture_output=True, text=True, check=False).stdout.strip()
    return {"commit": head, "hrr_code_modified": bool(dirty),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def machine() -> dict[str, Any]:
    """The machine a run was made on: the GPU (nvidia-smi, when there is one), the python."""
    gpu = ""
    try:
        proc = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30, check=False)
        gpu = proc.stdout.strip() if proc.returncode == 0 else ""
    except (OSError, subprocess.TimeoutExpired):
        pass
    return {"gpu": gpu, "python": platform.python_version(), "executable": sys.executable,
            "platform": platform.platform(), "cpus": os.cpu_count()}


def _cell(r: dict[str, Any], step: str) -> str:
    s = r.get(step) or {}
    if s.get("exit") is None:
        return "—"
    if r.get("mode") and step != "replay":
        return f"{s['exit']} (sim)"
    return f"{s['exit']} ({s.get('seconds', 0):.0f} s)"


def markdown(results: list[dict[str, Any]], backend: str, tree: dict[str, Any],
             info: dict[str, Any] | None = None) -> str:
    programs = [r for r in results if not r.get("mode")]
    replayed = [r for r in results if r.get("mode")]
    run = [r for r in programs if not r.get("skipped")]
    passed = [r for r in run if r["ok"]]
    lines = [f"# Outside hip-python programs under hrr (backend `{backend}`)", "",
             f"Tree {tree['commit']}{' (with uncommitted changes under hrr/)' if tree['hrr_code_modified'] else ''}, "
             f"{tree['date']}: {len(passed)} of {len(run)} programs run pass run, capture and replay --strict "
             f"({len(programs) - len(run)} listed, not run)."]
    if replayed:
        lines += ["", f"{sum(1 for r in replayed if r['ok'])} of {len(replayed)} archives captured on the sim "
                      f"(programs that need hip-python-interop) replay --strict on `{backend}`; their run and "
                      "capture columns are the sim's."]
    m = (info or {}).get("machine")
    if m:
        lines += ["", f"Machine: {m.get('gpu') or 'no GPU'}; Python {m.get('python')}; {m.get('cpus')} CPUs."]
    lines += ["", "| program | release | run | capture | replay | class | first error |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        step = next((s for s in STEPS if (r.get(s) or {}).get("exit") != 0), None)
        err = ""
        if step is not None:
            s = r[step]
            err = s.get("first_error") or s.get("error") or ""
        rel = r["release"] + (f" ({r['hip_python']})" if r.get("hip_python") else "")
        name = r["name"] + (f" ({r['mode']})" if r.get("mode") else "")
        lines.append(f"| {name} | {rel} | " + " | ".join(_cell(r, s) for s in STEPS)
                     + f" | {r.get('class', '')} | " + err.replace("|", "\\|")[:240] + " |")
    notes = [f"- {r['name']}: replay --float-tolerance {r['tolerance'][0]}: {r['tolerance'][1]}"
             for r in results if r.get("tolerance")]
    venvs = (info or {}).get("venvs") or {}
    if venvs:
        notes += [f"- venv {env}: " + ", ".join(f"{k} {v}" for k, v in versions.items() if v != "-")
                  for env, versions in sorted(venvs.items())]
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


def doc_table(results: list[dict[str, Any]]) -> str:
    """The table docs/outside-programs.md carries: program, origin (repository at commit, or the
    PyPI release), licence, release, the three steps' exit codes, and what stopped it."""
    lines = ["| program | origin | licence | release | run | capture | replay | what stopped it |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        commit = r["commit"] if "==" in r["commit"] else r["commit"][:10]
        where = (f"[{r['origin'].split('/', 3)[-1]}]({r['origin']}) `{commit}`" if r["origin"].startswith("https://")
                 else r["origin"])
        origin = f"{where} `{r['path']}`"
        codes = [("—" if (r.get(s) or {}).get("exit") is None else str(r[s]["exit"])) for s in STEPS]
        if r.get("mode"):
            codes = [f"{c} (sim)" if s != "replay" and c != "—" else c for c, s in zip(codes, STEPS, strict=True)]
        step = next((s for s in STEPS if (r.get(s) or {}).get("exit") != 0), None)
        if r.get("ok"):
            reason = ""
        elif r.get("skipped"):
            reason = f"not run: {r.get('why', '')}"
        else:
            first = (r[step].get("first_error") or r[step].get("error") or "") if step else ""
            reason = f"{r.get('class', '')}: `{first[:160]}`" + (f" ({r['why']})" if r.get("why") else "")
        name = r["name"] + (f" ({r['mode']})" if r.get("mode") else "")
        lines.append(f"| {name} | {origin} | {r['license']} | {r['release']} | " + " | ".join(codes)
                     + " | " + reason.replace("|", "\\|") + " |")
    return "\n".join(lines) + "\n"


def _write(out: Path, backend: str, tree: dict[str, Any], results: list[dict[str, Any]],
           info: dict[str, Any]) -> None:
    (out / "results.json").write_text(json.dumps({"backend": backend, "tree": tree, **info, "results": results},
                                                 indent=2) + "\n")
    (out / "results.md").write_text(markdown(results, backend, tree, info))


def _not_begun(program: dict[str, Any], manifest: dict[str, Any], why: str) -> dict[str, Any]:
    return {**program_base(program, manifest), "skipped": True, "ok": False, "class": "not run",
            **{s: {"exit": None, "error": why} for s in STEPS}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--backend", default="sim", help="sim, cuda or hip (default sim)")
    ap.add_argument("--out", type=Path, default=Path("outside-programs-results"))
    ap.add_argument("--only", default=None, help="comma list of program names (default: all)")
    ap.add_argument("--sim-pass", action="store_true", help='only the programs with sim = "pass"')
    ap.add_argument("--no-interop", action="store_true", help="leave out the programs that need hip-python-interop")
    ap.add_argument("--cache", type=Path, default=fetch.DEFAULT_CACHE)
    ap.add_argument("--mirror", type=Path, action="append", default=[], help="local git copies (fetch.py)")
    ap.add_argument("--offline", action="store_true", help="fetch nothing over the network")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per step")
    ap.add_argument("--timeout-limit", type=float, default=None, metavar="S",
                    help="no step's timeout above S (a program's own timeout included)")
    ap.add_argument("--deadline", type=float, default=None, metavar="S",
                    help="begin no program after S seconds (they are listed as not run)")
    ap.add_argument("--venvs", type=Path, default=None, help="where the venvs are made (default CACHE/venvs)")
    ap.add_argument("--wheels", type=Path, action="append", default=None, metavar="DIR",
                    help="offline venvs: pip --no-index from these folders, --system-site-packages (repeatable)")
    ap.add_argument("--replay-only", type=Path, default=None, metavar="ARCHIVES",
                    help="replay --strict the archives ARCHIVES/archives.json lists, add them to OUT's results")
    ap.add_argument("--replay-env", default="hp10", help="the venv --replay-only replays in (default hp10)")
    ap.add_argument("--manifest", type=Path, default=fetch.MANIFEST, help=argparse.SUPPRESS)
    ap.add_argument("--doc-table", type=Path, default=None, metavar="RESULTS_JSON",
                    help="print docs/outside-programs.md's table from a results.json, run nothing")
    args = ap.parse_args(argv)
    if args.doc_table is not None:
        print(doc_table(json.loads(args.doc_table.read_text())["results"]), end="")
        return 0
    manifest = fetch.load_manifest(args.manifest)
    venvs = (args.venvs or args.cache / "venvs").resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out.resolve()
    tree = _tree()
    previous = json.loads((out / "results.json").read_text()) if (out / "results.json").exists() else {}
    if args.replay_only is not None:
        if previous.get("backend", args.backend) != args.backend:
            previous = {}
        python, why = venv_python(args.replay_env, manifest, venvs, print, args.wheels)
        if python is None:
            print(f"venv {args.replay_env}: {why}", file=sys.stderr)
            return 3
        replayed = replay_archives(args.replay_only.resolve(), manifest, args.backend, python,
                                   args.timeout_limit or args.timeout)
        results = [r for r in previous.get("results", []) if not r.get("mode")] + replayed
        merged = {"machine": previous.get("machine") or machine(),
                  "venvs": {**previous.get("venvs", {}), args.replay_env: package_versions(python)}}
        _write(out, args.backend, previous.get("tree") or tree, results, merged)
        print(f"wrote {out / 'results.md'} and {out / 'results.json'}")
        return 0 if all(r["ok"] for r in replayed) else 1
    programs = manifest["program"]
    if args.only:
        names = set(args.only.split(","))
        unknown = names - {p["name"] for p in programs}
        if unknown:
            ap.error(f"unknown program(s): {', '.join(sorted(unknown))}")
    programs = select_programs(programs, set(args.only.split(",")) if args.only else None, args.sim_pass,
                               args.no_interop)
    fetch.fetch(manifest, args.cache, args.mirror, {p["name"] for p in programs},
                network=not args.offline and args.wheels is None)
    info: dict[str, Any] = {"machine": machine(), "venvs": {}}
    start = time.monotonic()
    results = []
    for program in programs:
        timeout = max(args.timeout, program.get("timeout", 0))
        if args.timeout_limit:
            timeout = min(timeout, args.timeout_limit)
        left = None if args.deadline is None else args.deadline - (time.monotonic() - start)
        if left is not None and left <= 0:
            r = _not_begun(program, manifest, f"not run: the run's --deadline ({args.deadline:.0f} s) had passed")
        else:
            if left is not None:
                timeout = min(timeout, max(left, 20.0))
            r = run_program(program, manifest, args.cache, args.backend, out, timeout, venvs=venvs,
                            wheels=args.wheels)
            env_python = venvs / program["env"] / "bin" / "python"
            if program["env"] not in info["venvs"] and not r.get("skipped") and env_python.exists():
                info["venvs"][program["env"]] = package_versions(str(env_python))
        results.append(r)
        print(f"{r['name']}: " + " ".join(f"{s}={r[s]['exit']}" for s in STEPS)
              + (f"  [{r['class']}]" if r.get("class") else ""), flush=True)
        _write(out, args.backend, tree, results, info)
    _write(out, args.backend, tree, results, info)
    print(f"wrote {out / 'results.md'} and {out / 'results.json'}")
    return 0 if all(r["ok"] for r in results if not r.get("skipped")) else 1


if __name__ == "__main__":
    sys.exit(main())
