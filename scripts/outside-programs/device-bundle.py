#!/usr/bin/env python3
"""Make the folder the GPU machine's run of the outside programs needs (``gpu.sh`` there): the
machine reaches no package index and only the working tree travels, with at most 8 ignored
paths and 64 MiB in all.

    python scripts/outside-programs/device-bundle.py [--out .device_outside] [--cache DIR]
        [--device-wheels .device_wheels] [--offline] [--timeout S]

Run here (PyPI reachable, the programs in the cache: fetch.py). OUT (ignored by git) holds:

- ``cache/src/SOURCE/...``: the programs that run on the GPU, laid out as fetch.py's cache (each
  file's sha256 checked), and nothing else of their sources but the files a program's ``files``
  names (kernel_tuner's package and test helpers for its sdist tests), licence and ORIGIN.txt.
  They are the programs the sim passes (``sim = "pass"``) that do not need hip-python-interop;
- ``wheels/``: cp312 wheels for the venvs those programs run in (run.py ``--wheels``), less what
  the GPU machine's image has (IMAGE) and what ``--device-wheels`` already holds. hip-python 7.x's
  wheel (64 MiB) is there as ``NAME.whl.tree.tar.xz``: its ``hip`` package with the hip and hiprtc
  modules only (as scripts/gpu-examples.sh trims it), RECORD rewritten; run.py zips it back;
- ``archives/``: ``hrr capture --content`` on the sim, made here, of the programs that need
  hip-python-interop (its ``cuda.bindings`` is the package NVIDIA's cuda-bindings installs, so
  they cannot be captured on the cuda backend), with ``archives.json`` (each one's program and the
  sim's run, capture and replay --strict exit codes): ``run.py --replay-only`` replays them;
- ``bundle.json``: what is there, and the tree it was made from.

Prints the folder's size and the whole carry's (the working tree, --device-wheels and OUT); exits 1
when that is over 60 MiB or a program, wheel or capture is missing.
"""
from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import importlib.util
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
import fetch  # noqa: E402  (this folder's fetch.py)

_spec = importlib.util.spec_from_file_location("outside_run", HERE / "run.py")
assert _spec and _spec.loader
run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run)

PYTHON_TAGS = ["--only-binary=:all:", "--python-version", "3.12", "--implementation", "cp", "--abi", "cp312",
               "--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_17_x86_64",
               "--platform", "manylinux_2_28_x86_64"]
# What the GPU machine's image has (docs/cuda-backend.md, "Testing on the device machine"): not
# carried (numpy's and cupy's wheels are large, and the image's are the ones to use).
IMAGE = {"numpy", "cuda-bindings", "cuda-pathfinder", "cupy", "cupy-cuda12x", "cupy-cuda13x", "fastrlock"}
# hip-python 7.x's files left out of its wheel (scripts/gpu-examples.sh): the math libraries'
# and RCCL's bindings (the programs run here use none) and the Cython sources.
HIP7_LEFT_OUT = ("hip/*blas*", "hip/*sparse*", "hip/*solver*", "hip/*fft*", "hip/*rand*", "hip/*rccl*",
                 "hip/*.pyx", "hip/*.pxd")
CARRY_LIMIT_MIB = 60.0


def _project(filename: str) -> str:
    """A wheel file's project name, normalised (``rpds_py-...whl`` -> ``rpds-py``)."""
    return re.sub(r"[-_.]+", "-", filename.split("-")[0]).lower()


def _spec_name(spec: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[^A-Za-z0-9_.-]", spec, maxsplit=1)[0]).lower()


def _pip_download(specs: list[str], dest: Path, no_deps: bool = False) -> None:
    if not specs:
        return
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check",
                           *PYTHON_TAGS, *(["--no-deps"] if no_deps else []), "-d", str(dest), *specs],
                          capture_output=True, text=True, timeout=1800, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"pip download {' '.join(specs)}: "
                         + (proc.stderr.strip().splitlines() or ["failed"])[-1])


def _record_line(name: str, data: bytes) -> list[str]:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return [name, f"sha256={digest}", str(len(data))]


def trimmed_tree(wheel: Path, dest: Path) -> Path:
    """hip-python 7.x's wheel as DEST/WHEEL.tree.tar.xz: its files less HIP7_LEFT_OUT, RECORD
    rewritten for what is left (made once; kept beside the downloaded wheel)."""
    out = dest / (wheel.name + run.TREE_SUFFIX)
    if out.exists():
        return out
    part = out.with_name(out.name + ".part")
    with zipfile.ZipFile(wheel) as z, tarfile.open(part, "w:xz") as tar:
        names = [n for n in sorted(z.namelist()) if not n.endswith("/")
                 and not any(PurePosixPath(n).match(pattern) for pattern in HIP7_LEFT_OUT)]   # as a shell glob
        record_name = next(n for n in names if n.endswith(".dist-info/RECORD"))
        rows = []
        for name in names:
            if name == record_name:
                continue
            data = z.read(name)
            rows.append(_record_line(name, data))
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), (z.getinfo(name).external_attr >> 16) or 0o644
            tar.addfile(info, io.BytesIO(data))
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows([*rows, [record_name, "", ""]])
        record = buf.getvalue().encode()
        info = tarfile.TarInfo(record_name)
        info.size, info.mode = len(record), 0o644
        tar.addfile(info, io.BytesIO(record))
    part.rename(out)
    return out


def bundle_wheels(manifest: dict[str, Any], envs: list[str], dest: Path, downloads: Path,
                  device_wheels: Path) -> list[str]:
    """The wheels the offline venvs ENVS need into DEST (what IMAGE and DEVICE_WHEELS have left
    out); hip-python 7.x as its trimmed tree. Returns DEST's file names."""
    dest.mkdir(parents=True, exist_ok=True)
    carried = {p.name for p in device_wheels.glob("*.whl")} if device_wheels.is_dir() else set()
    resolve: set[str] = {"setuptools>=64", *run.hrr_runtime_deps(offline=True)}
    no_deps: set[str] = set()
    hip7: set[str] = set()
    for env in envs:
        venv = manifest["venv"][env]
        for spec in venv.get("offline_pip", venv["pip"]):
            if _spec_name(spec) == "hip-python" and re.search(r"==\s*7\.", spec):
                hip7.add(spec)
            else:
                resolve.add(spec)
        no_deps.update(venv.get("offline_no_deps", []))
    with tempfile.TemporaryDirectory(prefix="hrr-bundle-wheels-") as tmp:
        got = Path(tmp)
        _pip_download(sorted(resolve), got)
        _pip_download(sorted(no_deps), got, no_deps=True)
        for whl in sorted(got.glob("*.whl")):
            if _project(whl.name) in IMAGE or whl.name in carried:
                continue
            shutil.copy2(whl, dest / whl.name)
        others = sorted(p.name for p in got.iterdir() if not p.name.endswith(".whl"))
        if others:
            raise SystemExit(f"not wheels (an sdist would need building on the GPU machine): {others}")
    for spec in sorted(hip7):
        downloads.mkdir(parents=True, exist_ok=True)
        _pip_download([spec], downloads, no_deps=True)   # a wheel already there is kept
        version = spec.split("==")[1].strip()
        wheel = next(p for p in sorted(downloads.glob(f"hip_python-{version}-cp312-*.whl")))
        print(f"hip-python 7.x: {wheel.name} ({wheel.stat().st_size / 2**20:.1f} MiB) trimmed to the hip and "
              "hiprtc modules", flush=True)
        tree = trimmed_tree(wheel, downloads)
        shutil.copy2(tree, dest / tree.name)
    return sorted(p.name for p in dest.iterdir())


def bundle_programs(manifest: dict[str, Any], programs: list[dict[str, Any]], cache: Path, dest: Path) -> None:
    """Each program's file, the files its ``files`` names, its source's licence and ORIGIN.txt,
    from CACHE into DEST laid out as fetch.py's cache."""
    for program in programs:
        state = fetch.check_program(cache, program)
        if state != "ok":
            raise SystemExit(f"{program['name']}: program file {state} in {cache} (run fetch.py)")
        src, out = fetch.source_dir(cache, program["source"]), fetch.source_dir(dest, program["source"])
        spec = manifest["source"][program["source"]]
        for rel in [program["path"], *program.get("files", []), spec.get("license_file") or "", "ORIGIN.txt"]:
            if not rel or not (src / rel).exists():
                continue
            target = out / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if (src / rel).is_dir():
                shutil.copytree(src / rel, target, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                shutil.copy2(src / rel, target)
        assert fetch.check_program(dest, program) == "ok", program["name"]


def sim_captures(manifest: dict[str, Any], programs: list[dict[str, Any]], cache: Path, dest: Path,
                 timeout: float) -> list[dict[str, Any]]:
    """Run, capture --content and replay --strict each program on the sim (run.py's venvs in
    CACHE, online); the archives stay in DEST. Returns archives.json's entries."""
    dest.mkdir(parents=True, exist_ok=True)
    entries = []
    for program in programs:
        r = run.run_program(program, manifest, cache, "sim", dest, timeout)
        steps = {s: {k: v for k, v in (r.get(s) or {}).items() if k != "output_tail"} for s in run.STEPS}
        print(f"sim capture {program['name']}: " + " ".join(f"{s}={steps[s].get('exit')}" for s in run.STEPS),
              flush=True)
        archive = run._label(program["name"]) + ".hrr"
        if steps["capture"].get("exit") != 0 or not (dest / archive).is_dir():
            raise SystemExit(f"{program['name']}: the sim capture failed: {steps['capture']}")
        entries.append({"name": program["name"], "archive": archive, "env": program["env"],
                        "hip_python": r.get("hip_python"), "sim": steps,
                        "captured": {"backend": "sim", "command": "hrr capture --content --backend sim",
                                     **run._tree()}})
    return entries


def _tree_bytes() -> int:
    """The working tree as the device tool carries it: tracked files and untracked ones git does
    not ignore."""
    proc = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                          capture_output=True, check=True)
    return sum((REPO / n).stat().st_size for n in proc.stdout.decode().split("\0")
               if n and (REPO / n).is_file() and not (REPO / n).is_symlink())


def _bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--out", type=Path, default=REPO / ".device_outside")
    ap.add_argument("--cache", type=Path, default=fetch.DEFAULT_CACHE, help="fetch.py's cache (the programs)")
    ap.add_argument("--device-wheels", type=Path, default=REPO / ".device_wheels",
                    help="the wheels already carried (hip-python 10.x, click, rich, ...)")
    ap.add_argument("--offline", action="store_true", help="fetch no program over the network")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per sim step")
    ap.add_argument("--manifest", type=Path, default=fetch.MANIFEST, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    manifest = fetch.load_manifest(args.manifest)
    on_gpu = run.select_programs(manifest["program"], sim_pass=True, no_interop=True)
    interop = [p for p in run.select_programs(manifest["program"], sim_pass=True) if p not in on_gpu]
    fetch.fetch(manifest, args.cache, [], {p["name"] for p in on_gpu + interop}, network=not args.offline)
    out = args.out.resolve()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    bundle_programs(manifest, on_gpu, args.cache, out / "cache")
    envs = sorted({p["env"] for p in on_gpu} | {"hp10"})   # hp10: --replay-only's venv
    wheels = bundle_wheels(manifest, envs, out / "wheels", args.cache / "device-downloads", args.device_wheels)
    entries = sim_captures(manifest, interop, args.cache, out / "archives", args.timeout)
    (out / "archives" / "archives.json").write_text(json.dumps({"archives": entries}, indent=2) + "\n")
    (out / "bundle.json").write_text(json.dumps({
        "tree": run._tree(), "programs": [p["name"] for p in on_gpu], "venvs": envs, "wheels": wheels,
        "archives": [e["name"] for e in entries],
        "left_out_of_wheels": {"image": sorted(IMAGE), "hip-python 7.x": list(HIP7_LEFT_OUT)}}, indent=2) + "\n")
    mib = {"bundle": _bytes(out) / 2**20, "tree": _tree_bytes() / 2**20,
           "device_wheels": _bytes(args.device_wheels) / 2**20}
    total = sum(mib.values())
    print(f"{out}: {mib['bundle']:.1f} MiB ({len(on_gpu)} programs, {len(wheels)} wheels, "
          f"{len(entries)} sim captures)")
    print(f"carry: working tree {mib['tree']:.1f} MiB + {args.device_wheels.name} {mib['device_wheels']:.1f} MiB "
          f"+ {out.name} {mib['bundle']:.1f} MiB = {total:.1f} MiB (limit 64, aim under {CARRY_LIMIT_MIB:.0f})")
    return 0 if total < CARRY_LIMIT_MIB else 1


if __name__ == "__main__":
    sys.exit(main())
