#!/usr/bin/env python3
"""Run hip-python's own examples under hrr: run, capture --content, replay --strict.

    python scripts/hip-python-examples.py EXAMPLES_DIR [--backend sim|cuda|hip] [--out DIR]
        [--python PY] [--only NAME,...] [--rocm-bindings NAME,...]

EXAMPLES_DIR is a checkout of github.com/ROCm/hip-python's ``examples/`` (not part of this
repository). For each example that uses only hip and hiprtc, in the example's own folder:
``hrr run --backend B -- PY EX``, then ``hrr capture --content --backend B -o A -- PY EX``,
then ``hrr replay --strict --backend B A`` (with ``--float-tolerance`` where TOLERANCE says
why). PY (default: this interpreter) is the one hrr runs in and the example's too; with
``--python`` another environment (e.g. one holding hip-python 7.x) runs hrr from this
checkout. ``--rocm-bindings`` also runs the named examples with ``from hip import`` rewritten
to ``from rocm.bindings import`` (hip-python 10's layout), in a temporary copy of the folder.
Writes DIR/results.md and DIR/results.json (exit codes and the last error line of each
step); exits 0 when every step of every example passed.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The examples that use only hip and hiprtc (hipBLAS, hipFFT, hipRAND, RCCL ones left out).
EXAMPLES = ("hip_deviceattributes", "hip_deviceproperties", "hip_stream", "hiprtc_launch_kernel_args",
            "hiprtc_launch_kernel_no_args", "hip_jacobi", "hiprtc_linking_device_functions",
            "hiprtc_jit_with_llvm_ir", "hiprtc_linking_llvm_ir")
# They compile AMDGPU LLVM IR: only an AMD GPU (the hip backend) can run them.
AMD_ONLY = {"hiprtc_jit_with_llvm_ir", "hiprtc_linking_llvm_ir"}
# name: (absolute float32 tolerance for replay, why the results may differ between runs)
TOLERANCE: dict[str, tuple[float, str]] = {
    "hip_jacobi": (1e-3, "the kernel updates x in place while other threads of the same launch read it "
                         "(a racy Jacobi sweep, on purpose), so x depends on thread timing"),
}
STEPS = ("run", "capture", "replay")


def tolerance_for(example: str, backend: str) -> tuple[float, str] | None:
    """The replay tolerance an example needs on ``backend``: none on the sim, which runs a
    block's threads in a fixed order, so a race gives the same bytes every run."""
    return TOLERANCE.get(example) if backend != "sim" else None


ERROR_LINE = re.compile(r"^(hrr: error:|[A-Za-z_][\w.]*(Error|Exception|Call|Exit)\b)")


def _last_error_line(proc: subprocess.CompletedProcess) -> str:
    """For a step that failed, the last line of stderr (else stdout) that reads as an error
    (``hrr: error:``, ``SomeError: ...``), else its last non-empty line."""
    if proc.returncode == 0:
        return ""
    for text in (proc.stderr, proc.stdout):
        lines = [line.strip(" \t\x00") for line in (text or "").splitlines()]
        lines = [line for line in lines if line]
        if lines:
            return next((line for line in reversed(lines) if ERROR_LINE.match(line)), lines[-1])[:300]
    return ""


def _first_error_line(proc: subprocess.CompletedProcess) -> str:
    """For a step that failed, the first line of stderr, then stdout, that reads as an error
    (what stopped the program first, e.g. the first failed test of a pytest run), else ""."""
    if proc.returncode == 0:
        return ""
    for text in (proc.stderr, proc.stdout):
        for line in (text or "").splitlines():
            line = line.strip(" \t\x00")
            if line.startswith("E "):   # pytest's marked exception lines
                line = line[1:].strip()
            if ERROR_LINE.match(line):
                return line[:300]
    return ""


def _tail(proc: subprocess.CompletedProcess, lines: int = 15) -> str:
    """The last lines of a failed step's output (stderr after stdout), for the results file."""
    if proc.returncode == 0:
        return ""
    text = "\n".join(t for t in (proc.stdout, proc.stderr) if t)
    return "\n".join(text.splitlines()[-lines:])[-3000:]


def _find(examples: Path, name: str) -> Path | None:
    found = sorted(examples.rglob(f"{name}.py"))
    return found[0] if found else None


def _rocm_bindings_copy(script: Path, tmp: Path) -> Path:
    """A copy of the example's folder where ``from hip import ...`` reads
    ``from rocm.bindings import ...``; returns the rewritten script."""
    folder = tmp / script.parent.name
    shutil.copytree(script.parent, folder)
    text = re.sub(r"^(\s*)from hip import ", r"\1from rocm.bindings import ", script.read_text(), flags=re.M)
    out = folder / script.name
    out.write_text(text)
    return out


def run_steps(label: str, argv: list[str], cwd: Path, backend: str, python: str, out: Path, timeout: float,
              tolerance: tuple[float, str] | None = None, extra_env: dict[str, str] | None = None) -> dict:
    """``hrr run``, ``hrr capture --content`` and ``hrr replay --strict`` for one program
    (``argv``, run in ``cwd``; the archive is OUT/LABEL.hrr); a step after a failed capture is
    not run. Each step's exit code, last error line (empty when it passed) and seconds;
    ``extra_env``: variables the program itself needs."""
    hrr = [python, "-m", "hrr.cli.main"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    for var in ("HRR_MODE", "HRR_BACKEND", "HRR_CAPTURE_ARCHIVE"):
        env.pop(var, None)
    env.update(extra_env or {})
    archive = out / f"{label}.hrr"
    shutil.rmtree(archive, ignore_errors=True)
    tolerance_option = ["--float-tolerance", str(tolerance[0])] if tolerance else []
    commands = {
        "run": [*hrr, "run", "--backend", backend, "--", *argv],
        "capture": [*hrr, "capture", "--content", "--backend", backend, "-o", str(archive), "--", *argv],
        "replay": [*hrr, "replay", "--strict", "--backend", backend, *tolerance_option, str(archive)],
    }
    result: dict = {"example": label, "tolerance": list(tolerance) if tolerance else None}
    for step in STEPS:
        if step == "replay" and result["capture"]["exit"] != 0:
            result[step] = {"exit": None, "error": "not run: capture failed", "seconds": 0.0}
            continue
        start = time.monotonic()
        try:
            proc = subprocess.run(commands[step], cwd=cwd, env=env, capture_output=True,
                                  text=True, timeout=timeout, check=False)
            last = [line.strip() for line in (proc.stdout or "").splitlines() if line.strip()]
            result[step] = {"exit": proc.returncode, "error": _last_error_line(proc),
                            "first_error": _first_error_line(proc), "output_tail": _tail(proc),
                            "last_line": last[-1][:200] if last else ""}
        except subprocess.TimeoutExpired:
            result[step] = {"exit": None, "error": f"timed out after {timeout:.0f} s"}
        result[step]["seconds"] = round(time.monotonic() - start, 2)
    result["ok"] = all(result[s]["exit"] == 0 for s in STEPS)
    return result


def run_example(script: Path, label: str, backend: str, python: str, out: Path, timeout: float) -> dict:
    """The three steps for one example, in its own folder (``PY EX``)."""
    return run_steps(label, [python, script.name], script.parent, backend, python, out, timeout,
                     tolerance_for(script.stem, backend))


def markdown(results: list[dict], backend: str, python: str) -> str:
    """The results as a Markdown table (exit codes, then the last error line of a failed step)."""
    lines = [f"# hip-python examples under hrr (backend `{backend}`, python `{python}`)", "",
             "| example | run | capture | replay | last error |", "| --- | --- | --- | --- | --- |"]
    for r in results:
        codes = [("—" if r[s]["exit"] is None else str(r[s]["exit"])) for s in STEPS]
        error = next((f"{s}: {r[s]['error']}" for s in STEPS if r[s]["exit"] != 0), "")
        lines.append(f"| {r['example']} | " + " | ".join(codes) + " | " + error.replace("|", "\\|") + " |")
    notes = [f"- {r['example']}: replay --float-tolerance {r['tolerance'][0]}: {r['tolerance'][1]}"
             for r in results if r.get("tolerance")]
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run the examples and write the results; exit 0 when all passed."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("examples", type=Path, help="hip-python's examples/ directory")
    ap.add_argument("--backend", default="sim", help="sim, cuda or hip (default sim)")
    ap.add_argument("--out", type=Path, default=Path("hip-python-examples-results"))
    ap.add_argument("--python", default=sys.executable, help="the interpreter hrr and the examples run in")
    ap.add_argument("--only", default=None, help="comma list of example names (default: every hip/hiprtc one)")
    ap.add_argument("--rocm-bindings", default="", help="comma list of examples also run in the rocm.bindings style")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per step")
    args = ap.parse_args(argv)
    names = [n for n in (args.only.split(",") if args.only is not None else EXAMPLES) if n]
    if args.backend != "hip" and args.only is None:
        names = [n for n in names if n not in AMD_ONLY]
    args.out.mkdir(parents=True, exist_ok=True)
    results: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="hrr-examples-") as tmp:
        jobs = [(n, n, False) for n in names]
        jobs += [(n, f"{n} (rocm.bindings)", True) for n in args.rocm_bindings.split(",") if n]
        for name, label, rewrite in jobs:
            script = _find(args.examples, name)
            if script is None:
                missing: dict = {"exit": None, "error": f"{name}.py not found under {args.examples}"}
                results.append({"example": label, "tolerance": None, "ok": False, **{s: missing for s in STEPS}})
                continue
            if rewrite:
                script = _rocm_bindings_copy(script, Path(tempfile.mkdtemp(dir=tmp)))
            results.append(run_example(script, label.replace(" ", "_").replace("(", "").replace(")", ""),
                                       args.backend, args.python, args.out.resolve(), args.timeout))
            results[-1]["example"] = label
            print(f"{label}: " + " ".join(f"{s}={results[-1][s]['exit']}" for s in STEPS), flush=True)
    (args.out / "results.json").write_text(json.dumps(
        {"backend": args.backend, "python": args.python, "results": results}, indent=2) + "\n")
    (args.out / "results.md").write_text(markdown(results, args.backend, args.python))
    print(f"wrote {args.out / 'results.md'} and {args.out / 'results.json'}")
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
