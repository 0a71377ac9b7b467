"""Helpers for the CLI tests: run `hrr` as a real subprocess, find apps, tamper archives."""
from __future__ import annotations

import contextlib

import json
import os
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Iterator


from hrr.archive.format import (
    EVENTS_FILE,
    join_events,
    split_events,
)

HERE = Path(__file__).resolve().parent
APPS = HERE / "apps"
REPO = HERE.parent.parent
EXAMPLE = REPO / "examples" / "serving_step.py"
# Plugins that exist today and that these tests do not depend on; tests that need no
# plugin behaviour pin the selection so that they do not depend on every plugin loading.
BASE_PLUGINS = "privacy"


def hrr(*args: Any, env: dict | None = None, cwd: Any = None, timeout: float = 60,
        check: int | None = None) -> subprocess.CompletedProcess:
    """Run `python -m hrr.cli.main ARGS...`; returns the completed process (text)."""
    full_env = dict(os.environ)
    full_env.pop("HRR_MODE", None)
    if env:
        full_env.update(env)
    proc = subprocess.run([sys.executable, "-m", "hrr.cli.main", *map(str, args)], env=full_env,
                          cwd=cwd, check=False, capture_output=True, text=True, timeout=timeout)
    if check is not None:
        assert proc.returncode == check, describe(proc)
    return proc


def describe(proc: subprocess.CompletedProcess) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


def assert_clean_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    """Non-zero exit, no traceback, and one `hrr: error:` line that names the problem."""
    assert proc.returncode != 0, describe(proc)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, describe(proc)
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("hrr: error:")]
    assert len(errors) == 1, describe(proc)
    for needle in needles:
        assert needle in errors[0], describe(proc)
    return errors[0]


def capture(archive: Path, *command: Any, plugins: str | None = BASE_PLUGINS, content: bool = True,
            env: dict | None = None, check: int | None = 0) -> subprocess.CompletedProcess:
    args = ["capture", "-o", archive]
    if plugins is not None:
        args += ["--plugins", plugins]
    args.append("--content" if content else "--metadata-only")
    return hrr(*args, "--", *command, env=env, check=check)


def app(name: str, *args: Any) -> list[str]:
    return ["python", str(APPS / name), *map(str, args)]


def info_json(archive: Path, *, events: bool = False, env: dict | None = None) -> dict:
    proc = hrr("info", archive, "--json", *(["--events"] if events else []), env=env, check=0)
    return json.loads(proc.stdout)


def replay_json(archive: Path, *args: Any, env: dict | None = None,
                check: int | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    """`hrr replay --json ARGS ARCHIVE`: the finished process and the result object it printed."""
    proc = hrr("replay", "--json", *args, archive, env=env, check=check)
    try:
        return proc, json.loads(proc.stdout)
    except ValueError:
        raise AssertionError(f"hrr replay --json printed no JSON object\n{describe(proc)}") from None


def only_process(result: dict) -> dict:
    """The one process of a ``--json`` replay result."""
    (proc,) = result["processes"]
    return proc


def pid_dirs(archive: Path) -> list[Path]:
    return sorted(p for p in Path(archive).iterdir() if p.name.startswith("pid-"))


def only_pid_dir(archive: Path) -> Path:
    dirs = pid_dirs(archive)
    assert len(dirs) == 1, dirs
    return dirs[0]


def copy_archive(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    for root, _dirs, files in os.walk(dst):
        for f in files:
            os.chmod(os.path.join(root, f), 0o600)
    return dst


def rewrite_events(pid_dir: Path, change: Callable[[list], list]) -> None:
    """Decode every event record of ``pid_dir``'s events.bin, let ``change`` edit the list
    of event values, and write the stream back with valid checksums (a careful tamperer)."""
    path = Path(pid_dir) / EVENTS_FILE
    head, version, values, trailer = split_events(path.read_bytes())
    path.write_bytes(join_events(head, change(values), trailer, version))


def set_format_version(pid_dir: Path, version: int) -> None:
    path = Path(pid_dir) / EVENTS_FILE
    data = bytearray(path.read_bytes())
    struct.pack_into("<I", data, 8, version)
    path.write_bytes(bytes(data))


@contextlib.contextmanager
def looping_capture(root: Path) -> Iterator[subprocess.Popen]:
    """`hrr capture` of ``basic.py --loop`` (all base plugins, content), yielded once the
    app has printed READY (5 whole steps made); killed on the way out if still running."""
    env = dict(os.environ)
    env.pop("HRR_MODE", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "hrr.cli.main", "capture", "-o", str(root), "--plugins", BASE_PLUGINS,
         "--content", "--", *app("basic.py", "--loop")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.strip() == "READY", line
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
