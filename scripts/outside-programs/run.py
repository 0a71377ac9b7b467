#!/usr/bin/env python3
"""Run hip-python programs written by others (manifest.toml) unchanged under hrr: for each one,
``hrr run``, ``hrr capture --content`` and ``hrr replay --strict`` on one backend, in the
hip-python release it was written for.

    python scripts/outside-programs/run.py [--backend sim|cuda|hip] [--out DIR] [--only NAME,...]
        [--sim-pass] [--cache DIR] [--mirror DIR] [--offline] [--timeout S]

First fetch.py brings the programs into the cache (CACHE/src/). Each program runs in the venv
its manifest ``env`` names (CACHE/venvs/ENV, made once and kept; ``hp10`` is this interpreter
when it holds hip-python 10.x and hrr): that hip-python release, the extra packages the program
needs (hip-python-interop, kernel_tuner, pytest), hrr's runtime dependencies and hrr itself from
this checkout (editable, so its built-in plugins are found as in a user's install). The steps
are scripts/hip-python-examples.py's (``run_steps``), in the program's own folder (or its
``cwd``), with ``--timeout`` seconds each (a program's own ``timeout`` may raise it).

Writes OUT/results.json and OUT/results.md: per program its origin, licence, release, the exit
code, seconds and first and last error line of each step, and a class for what stopped it.
``--sim-pass`` runs only the programs the manifest expects the sim to pass (``sim = "pass"``).
Exits 0 when every program that was run passed all three steps.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import importlib.util
import json
import re
import subprocess
import sys
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
def hrr_runtime_deps() -> list[str]:
    """hrr's own runtime dependencies (pyproject.toml), less hip-python (each venv picks its
    release)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    return [d for d in deps if not re.match(r"hip-python\b", d)]


def _hip_python_version(python: str) -> str | None:
    proc = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('hip-python'))"],
                          capture_output=True, text=True, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else None


def venv_python(env: str, manifest: dict[str, Any], root: Path, log: Any = print) -> tuple[str | None, str]:
    """The interpreter of venv ``env`` (made under ROOT/ENV on first use, kept while its package
    list is the same): the manifest's packages, hrr's runtime dependencies, and hrr itself
    installed from this checkout (editable, without dependencies), so that its plugins are found
    through their entry points as in a user's install. ``hp10`` is this interpreter when it
    already holds hip-python 10.x and hrr. (None, why) when pip cannot make it."""
    specs = list(manifest["venv"][env]["pip"])
    if env == "hp10" and (_hip_python_version(sys.executable) or "").startswith("10.") \
            and importlib.util.find_spec("hrr_plugins") is not None:
        return sys.executable, ""
    target = root / env
    py, ready = target / "bin" / "python", target / "hrr-ready"
    wanted = sorted(specs + hrr_runtime_deps())
    stamp = hashlib.sha256(json.dumps([wanted, str(REPO)]).encode()).hexdigest()
    if ready.exists() and ready.read_text().strip() == stamp and py.exists():
        return str(py), ""
    log(f"venv {env}: pip install {' '.join(specs)}, hrr's runtime dependencies and hrr (editable)")
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(target)], check=True, capture_output=True)
    for args in (wanted, ["--no-deps", "-e", str(REPO)]):
        proc = subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", *args],
                              capture_output=True, text=True, timeout=1800, check=False)
        if proc.returncode != 0:
            return None, (proc.stderr.strip().splitlines() or ["pip failed"])[-1]
    ready.write_text(stamp + "\n")
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


def run_program(program: dict[str, Any], manifest: dict[str, Any], cache: Path, backend: str, out: Path,
                timeout: float, log: Any = print) -> dict[str, Any]:
    source = manifest["source"][program["source"]]
    base: dict[str, Any] = {
        "name": program["name"], "source": program["source"], "path": program["path"],
        "origin": (f"https://github.com/{source['repo']}" if source["kind"] == "github"
                   else f"PyPI {source['package']} {source['version']} (sdist)"),
        "commit": source.get("commit") or f"{source['package']}=={source['version']}",
        "license": source["license"], "release": program["release"], "env": program["env"],
        "needs": program.get("needs", []), "why": program.get("why", ""), "sim": program.get("sim", ""),
    }
    if program.get("run", True) is False:
        return {**base, "skipped": True, "ok": False, "class": "not run",
                **{s: {"exit": None, "error": "not run: " + program.get("why", "")} for s in STEPS}}
    state = fetch.check_program(cache, program)
    if state != "ok":
        return {**base, "skipped": True, "ok": False, "class": "not fetched",
                **{s: {"exit": None, "error": f"program file {state} (fetch.py)"} for s in STEPS}}
    python, why = venv_python(program["env"], manifest, cache / "venvs", log)
    if python is None:
        return {**base, "skipped": True, "ok": False, "class": "venv",
                **{s: {"exit": None, "error": f"venv {program['env']}: {why}"} for s in STEPS}}
    base["hip_python"] = _hip_python_version(python)
    script = fetch.program_file(cache, program)
    cwd = (fetch.source_dir(cache, program["source"]) / program["cwd"]) if "cwd" in program else script.parent
    argv = [a.replace("{python}", python) for a in program.get("argv", ["{python}", script.name])]
    result = HARNESS.run_steps(_label(program["name"]), argv, cwd, backend, python, out,
                               float(max(timeout, program.get("timeout", 0))),
                               extra_env=program.get("program_env"))
    result.pop("example", None)
    merged = {**base, **result}
    merged["class"] = classify(merged, program)
    return merged


def _tree() -> dict[str, Any]:
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=False).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no", "--", "hrr",
                            "plugins"], capture_output=True, text=True, check=False).stdout.strip()
    return {"commit": head, "hrr_code_modified": bool(dirty),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def _cell(r: dict[str, Any], step: str) -> str:
    s = r.get(step) or {}
    if s.get("exit") is None:
        return "—"
    return f"{s['exit']} ({s.get('seconds', 0):.0f} s)"


def markdown(results: list[dict[str, Any]], backend: str, tree: dict[str, Any]) -> str:
    run = [r for r in results if not r.get("skipped")]
    passed = [r for r in run if r["ok"]]
    lines = [f"# Outside hip-python programs under hrr (backend `{backend}`)", "",
             f"Tree {tree['commit']}{' (with uncommitted changes under hrr/)' if tree['hrr_code_modified'] else ''}, "
             f"{tree['date']}: {len(passed)} of {len(run)} programs run pass run, capture and replay --strict "
             f"({len(results) - len(run)} listed, not run).", "",
             "| program | release | run | capture | replay | class | first error |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        step = next((s for s in STEPS if (r.get(s) or {}).get("exit") != 0), None)
        err = ""
        if step is not None:
            s = r[step]
            err = s.get("first_error") or s.get("error") or ""
        rel = r["release"] + (f" ({r['hip_python']})" if r.get("hip_python") else "")
        lines.append(f"| {r['name']} | {rel} | " + " | ".join(_cell(r, s) for s in STEPS)
                     + f" | {r.get('class', '')} | " + err.replace("|", "\\|")[:240] + " |")
    return "\n".join(lines) + "\n"


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
        step = next((s for s in STEPS if (r.get(s) or {}).get("exit") != 0), None)
        if r.get("ok"):
            reason = ""
        elif r.get("skipped"):
            reason = f"not run: {r.get('why', '')}"
        else:
            first = (r[step].get("first_error") or r[step].get("error") or "") if step else ""
            reason = f"{r.get('class', '')}: `{first[:160]}`" + (f" ({r['why']})" if r.get("why") else "")
        lines.append(f"| {r['name']} | {origin} | {r['license']} | {r['release']} | " + " | ".join(codes)
                     + " | " + reason.replace("|", "\\|") + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--backend", default="sim", help="sim, cuda or hip (default sim)")
    ap.add_argument("--out", type=Path, default=Path("outside-programs-results"))
    ap.add_argument("--only", default=None, help="comma list of program names (default: all)")
    ap.add_argument("--sim-pass", action="store_true", help='only the programs with sim = "pass"')
    ap.add_argument("--cache", type=Path, default=fetch.DEFAULT_CACHE)
    ap.add_argument("--mirror", type=Path, action="append", default=[], help="local git copies (fetch.py)")
    ap.add_argument("--offline", action="store_true", help="fetch nothing over the network")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per step")
    ap.add_argument("--manifest", type=Path, default=fetch.MANIFEST, help=argparse.SUPPRESS)
    ap.add_argument("--doc-table", type=Path, default=None, metavar="RESULTS_JSON",
                    help="print docs/outside-programs.md's table from a results.json, run nothing")
    args = ap.parse_args(argv)
    if args.doc_table is not None:
        print(doc_table(json.loads(args.doc_table.read_text())["results"]), end="")
        return 0
    manifest = fetch.load_manifest(args.manifest)
    programs = manifest["program"]
    if args.only:
        names = set(args.only.split(","))
        unknown = names - {p["name"] for p in programs}
        if unknown:
            ap.error(f"unknown program(s): {', '.join(sorted(unknown))}")
        programs = [p for p in programs if p["name"] in names]
    if args.sim_pass:
        programs = [p for p in programs if p.get("sim") == "pass"]
    fetch.fetch(manifest, args.cache, args.mirror, {p["name"] for p in programs}, network=not args.offline)
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out.resolve()
    tree = _tree()
    results = []
    for program in programs:
        r = run_program(program, manifest, args.cache, args.backend, out, args.timeout)
        results.append(r)
        print(f"{r['name']}: " + " ".join(f"{s}={r[s]['exit']}" for s in STEPS)
              + (f"  [{r['class']}]" if r.get("class") else ""), flush=True)
        (out / "results.json").write_text(json.dumps({"backend": args.backend, "tree": tree, "results": results},
                                                     indent=2) + "\n")
    (out / "results.md").write_text(markdown(results, args.backend, tree))
    print(f"wrote {out / 'results.md'} and {out / 'results.json'}")
    return 0 if all(r["ok"] for r in results if not r.get("skipped")) else 1


if __name__ == "__main__":
    sys.exit(main())
