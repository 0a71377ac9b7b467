#!/usr/bin/env python3
"""Bring the outside hip-python programs of manifest.toml into a cache folder, each source at its
pinned commit (or PyPI release), and check every program file against its sha256.

    python scripts/outside-programs/fetch.py [--cache DIR] [--mirror DIR ...] [--only NAME,...]

None of these programs is part of this repository (their code stays with their authors); this
script fetches them at run time. For a GitHub source it tries, in order:

1. the cache (CACHE/src/SOURCE/, kept between runs): every program file already there with the
   right sha256 is used as it is, whoever put it there;
2. ``--mirror DIR``: a local git copy of the repository (DIR/OWNER+NAME/repo, DIR/OWNER+NAME.git,
   DIR/OWNER/NAME or DIR/NAME, bare or not) that holds the commit: ``git archive COMMIT PATHS``;
3. GitHub over https: the tarball of the commit (plain https, no git needed).

A PyPI source is the package's sdist, downloaded with pip and checked against its sha256. Each
source folder gets ORIGIN.txt (repository, commit, licence, how it came). Prints one line per
program (ok, missing, or sha256 mismatch); exits 1 when ``--strict`` and any is not ok.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.toml"
DEFAULT_CACHE = Path(os.environ.get("HRR_OUTSIDE_PROGRAMS_CACHE") or HERE / "cache")
NETWORK_TIMEOUT = 30.0


def load_manifest(path: Path = MANIFEST) -> dict[str, Any]:
    """The manifest as a dict: ``venv``, ``source`` and ``program`` (a list)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    with open(path, "rb") as f:
        data = tomllib.load(f)
    data.setdefault("program", [])
    return data


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def source_dir(cache: Path, source: str) -> Path:
    return cache / "src" / source


def program_file(cache: Path, program: dict[str, Any]) -> Path:
    return source_dir(cache, program["source"]) / program["path"]


def check_program(cache: Path, program: dict[str, Any]) -> str:
    """"ok", "missing" or "sha256 mismatch" for the program's file in the cache."""
    path = program_file(cache, program)
    if not path.is_file():
        return "missing"
    return "ok" if sha256_file(path) == program["sha256"] else "sha256 mismatch"


def _origin_note(dest: Path, name: str, spec: dict[str, Any], how: str) -> None:
    where = (f"https://github.com/{spec['repo']} at commit {spec['commit']}" if spec["kind"] == "github"
             else f"PyPI {spec['package']}=={spec['version']} (sdist sha256 {spec['sha256']})")
    licence = spec["license"] + (f" (see {spec['license_file']})" if spec.get("license_file") else
                                 " (the licence header of each file)")
    (dest / "ORIGIN.txt").write_text(
        f"source: {name}\norigin: {where}\nlicence: {licence}\nfetched: {how}\n"
        "Not part of hrr: fetched by scripts/outside-programs/fetch.py, never committed.\n")


def _wanted(spec: dict[str, Any]) -> list[str]:
    paths = list(spec.get("paths") or [])
    if spec.get("license_file"):
        paths.append(spec["license_file"])
    return paths


def _mirror_candidates(mirror: Path, repo: str) -> list[Path]:
    owner, name = repo.split("/")
    return [mirror / f"{owner}+{name}" / "repo", mirror / f"{owner}+{name}.git", mirror / f"{owner}+{name}",
            mirror / owner / name, mirror / name, mirror]


def _from_mirror(spec: dict[str, Any], mirrors: list[Path], dest: Path) -> str | None:
    """Extract the source's paths at its commit from a local git copy; how, or None."""
    for mirror in mirrors:
        for cand in _mirror_candidates(mirror, spec["repo"]):
            if not cand.is_dir():
                continue
            git = ["git", f"--git-dir={cand / '.git' if (cand / '.git').is_dir() else cand}"]
            probe = subprocess.run([*git, "cat-file", "-e", f"{spec['commit']}^{{commit}}"],
                                   capture_output=True, check=False)
            if probe.returncode != 0:
                continue
            paths = [p for p in _wanted(spec)
                     if subprocess.run([*git, "cat-file", "-e", f"{spec['commit']}:{p}"],
                                       capture_output=True, check=False).returncode == 0]
            archive = subprocess.run([*git, "archive", "--format=tar", spec["commit"], "--", *paths],
                                     capture_output=True, check=False)
            if archive.returncode != 0:
                continue
            with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
                _extract(tar, dest, strip=0, keep=_wanted(spec))
            return f"git archive {spec['commit']} from the local copy {cand}"
    return None


def _from_github(spec: dict[str, Any], dest: Path) -> tuple[str | None, str]:
    """Download the commit's tarball over https; (how, "") or (None, why not)."""
    url = f"https://codeload.github.com/{spec['repo']}/tar.gz/{spec['commit']}"
    try:
        with urllib.request.urlopen(url, timeout=NETWORK_TIMEOUT) as response:  # noqa: S310 - fixed https URL
            data = response.read()
    except Exception as exc:  # noqa: BLE001 - any network failure: say it, try the next way
        return None, f"{url}: {exc}"
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        _extract(tar, dest, strip=1, keep=_wanted(spec))
    return f"{url} (https)", ""


def _extract(tar: tarfile.TarFile, dest: Path, strip: int, keep: list[str] | None) -> None:
    """Extract regular files only (no links, no absolute or parent paths), ``strip`` leading
    folders removed, only those under one of ``keep`` (None: all)."""
    for member in tar.getmembers():
        parts = Path(member.name).parts[strip:]
        if not member.isfile() or not parts or any(p in ("..", "") for p in parts) or Path(member.name).is_absolute():
            continue
        rel = "/".join(parts)
        if keep is not None and not any(rel == k or rel.startswith(k.rstrip("/") + "/") for k in keep):
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        src = tar.extractfile(member)
        if src is not None:
            target.write_bytes(src.read())


def _from_pypi(spec: dict[str, Any], dest: Path, python: str) -> tuple[str | None, str]:
    """pip download the sdist, check its sha256, unpack it whole; (how, "") or (None, why)."""
    with tempfile.TemporaryDirectory(prefix="hrr-sdist-") as tmp:
        proc = subprocess.run([python, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                               "-d", tmp, f"{spec['package']}=={spec['version']}"],
                              capture_output=True, text=True, timeout=600, check=False)
        files = sorted(Path(tmp).glob("*.tar.gz"))
        if proc.returncode != 0 or not files:
            return None, (proc.stderr.strip().splitlines() or ["pip download failed"])[-1]
        digest = sha256_file(files[0])
        if digest != spec["sha256"]:
            return None, f"{files[0].name}: sha256 {digest}, the manifest says {spec['sha256']}"
        with tarfile.open(files[0], mode="r:gz") as tar:
            _extract(tar, dest, strip=1, keep=None)
        return f"pip download {spec['package']}=={spec['version']} (sdist sha256 checked)", ""


def fetch_source(name: str, spec: dict[str, Any], cache: Path, mirrors: list[Path],
                 python: str = sys.executable, network: bool = True) -> str:
    """Bring one source into CACHE/src/NAME/; returns how (or why it could not)."""
    dest = source_dir(cache, name)
    dest.mkdir(parents=True, exist_ok=True)
    if spec["kind"] == "pypi-sdist":
        if (dest / "ORIGIN.txt").exists():
            return "cached"
        how, why = _from_pypi(spec, dest, python) if network else (None, "network off")
    elif spec["kind"] == "github":
        if (dest / "ORIGIN.txt").exists():
            return "cached"
        how = _from_mirror(spec, mirrors, dest)
        why = "no local copy holds the commit"
        if how is None and network:
            how, why2 = _from_github(spec, dest)
            why = f"{why}; {why2}"
    else:
        raise ValueError(f"source {name}: unknown kind {spec['kind']!r}")
    if how is None:
        return f"not fetched ({why})"
    _origin_note(dest, name, spec, how)
    return how


def fetch(manifest: dict[str, Any], cache: Path, mirrors: list[Path], only: set[str] | None = None,
          network: bool = True, python: str = sys.executable, log: Any = print) -> dict[str, str]:
    """Fetch every source a (selected) program needs; returns {program name: check result}.
    A source is fetched only when one of its programs' files is missing or wrong, so files laid
    into the cache by other means (a copy made elsewhere) are used as they are."""
    programs = [p for p in manifest["program"] if only is None or p["name"] in only]
    needed = sorted({p["source"] for p in programs if check_program(cache, p) != "ok"})
    for name in needed:
        spec = manifest["source"][name]
        if (source_dir(cache, name) / "ORIGIN.txt").exists():
            (source_dir(cache, name) / "ORIGIN.txt").unlink()   # a stale or partial fetch: again
        log(f"fetch {name}: {fetch_source(name, spec, cache, mirrors, python=python, network=network)}")
    return {p["name"]: check_program(cache, p) for p in programs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--mirror", type=Path, action="append", default=[],
                    help="a folder holding local git copies of the repositories (repeatable)")
    ap.add_argument("--only", default=None, help="comma list of program names")
    ap.add_argument("--offline", action="store_true", help="use the cache and mirrors only")
    ap.add_argument("--strict", action="store_true", help="exit 1 unless every program file is there")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--manifest", type=Path, default=MANIFEST, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    manifest = load_manifest(args.manifest)
    only = set(args.only.split(",")) if args.only else None
    status = fetch(manifest, args.cache, args.mirror, only, network=not args.offline)
    if args.json:
        print(json.dumps(status, indent=2))
    else:
        for name, state in status.items():
            print(f"{state:16} {name}")
    return 1 if args.strict and any(s != "ok" for s in status.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
