"""A minimal PEP 517 build backend for this test distribution.

It builds a pure-Python wheel (py3-none-any) from ``src/`` and the ``[project]`` table of
pyproject.toml: name, version, description, requires-python and entry points. It needs
nothing but the standard library, so ``pip install --no-build-isolation`` works offline
on a fresh machine (setuptools alone cannot build wheels without the ``wheel`` package).
"""
from __future__ import annotations

import base64
import hashlib
import os
try:
    import tomllib
except ImportError:  # Python 3.10: pip vendors a TOML reader
    from pip._vendor import tomli as tomllib
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _project() -> dict:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def _dist_name(project: dict) -> str:
    return project["name"].replace("-", "_")


def _metadata_files(project: dict) -> dict[str, bytes]:
    meta = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
    ]
    if project.get("description"):
        meta.append(f"Summary: {project['description']}")
    if project.get("requires-python"):
        meta.append(f"Requires-Python: {project['requires-python']}")
    for dep in project.get("dependencies", []):
        meta.append(f"Requires-Dist: {dep}")
    entry_points = []
    for group, eps in project.get("entry-points", {}).items():
        entry_points.append(f"[{group}]")
        entry_points.extend(f"{k} = {v}" for k, v in eps.items())
        entry_points.append("")
    return {
        "METADATA": ("\n".join(meta) + "\n").encode(),
        "WHEEL": b"Wheel-Version: 1.0\nGenerator: wheel_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        "entry_points.txt": "\n".join(entry_points).encode(),
    }


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    project = _project()
    dist_info = f"{_dist_name(project)}-{project['version']}.dist-info"
    os.makedirs(os.path.join(metadata_directory, dist_info), exist_ok=True)
    for name, data in _metadata_files(project).items():
        with open(os.path.join(metadata_directory, dist_info, name), "wb") as f:
            f.write(data)
    return dist_info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = _project()
    dist = _dist_name(project)
    dist_info = f"{dist}-{project['version']}.dist-info"
    wheel_name = f"{dist}-{project['version']}-py3-none-any.whl"
    files: list[tuple[str, bytes]] = []
    src = os.path.join(ROOT, "src")
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fn in sorted(filenames):
            if fn.endswith(".py"):
                full = os.path.join(dirpath, fn)
                with open(full, "rb") as f:
                    files.append((os.path.relpath(full, src).replace(os.sep, "/"), f.read()))
    files += [(f"{dist_info}/{n}", d) for n, d in _metadata_files(project).items()]
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as zf:
        for arcname, data in files:
            zf.writestr(arcname, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{arcname},sha256={digest},{len(data)}")
        record.append(f"{dist_info}/RECORD,,")
        zf.writestr(f"{dist_info}/RECORD", "\n".join(record) + "\n")
    return wheel_name
