"""Every shell command README.md shows in a fenced block runs as written, in order, in a
fresh folder holding README's own programs (app.py, saxpy.py, ...: each saved under the name
README gives it), the walkthroughs' commands included. A command
is skipped only for a reason listed in SKIPPED (a GPU, or the network); one that matches
no rule fails the test, so a new command in README gets run here or a listed reason."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SHELL_FENCE = re.compile(r"^```(?:sh|bash|shell|console)\n(.*?)^```", re.S | re.M)

# Commands not run here, each with why (a GPU, or the package index).
SKIPPED = {
    "pip install /path/to/hrr": "network: installs hrr's dependencies (ziglang, numpy, hip-python, ...) "
                                "from the package index",
}
# scripts/venv.sh (under demo.sh and test.sh) runs pip, which needs the package index unless
# .venv already holds hrr: those two run where .venv is the interpreter running these tests.
USES_VENV = ("bash scripts/demo.sh", "bash scripts/test.sh")
# test.sh runs the whole suite, this test among it: here it runs one small file (README:
# "args go to pytest").
TEST_SH_ARGS = ["tests/test_version.py", "-q", "-p", "no:cacheprovider"]


def readme_commands() -> list[str]:
    """Every command line of README's shell blocks, comments stripped, in order."""
    out = []
    for block in SHELL_FENCE.findall(README.read_text()):
        for line in block.splitlines():
            cmd = line.split(" #", 1)[0].strip()
            if cmd and not cmd.startswith("#"):
                out.append(cmd)
    return out


def readme_programs() -> dict[str, str]:
    """README's programs, by the file name it says to save each as ("Save it as `app.py`:"
    just before its block)."""
    found = re.findall(r"[Ss]ave it as `([\w.]+)`\)?:?\s*\n\s*<!-- readme-[\w-]+:begin -->\n```python\n(.*?)```",
                       README.read_text(), re.S)
    return dict(found)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HRR_MODE", "HIP_HRR_CAPTURE_CONTENT")}
    env["PATH"] = os.pathsep.join((os.path.dirname(sys.executable), env.get("PATH", "")))   # hrr, python
    return env


def _venv_is_ours() -> bool:
    return Path(sys.prefix).resolve() == (ROOT / ".venv").resolve()


def how_to_run(cmd: str, work: Path) -> tuple[list[str] | None, Path, str]:
    """(argv, cwd, why skipped): argv None when skipped, with the listed reason."""
    if cmd in SKIPPED:
        return None, work, SKIPPED[cmd]
    if cmd in USES_VENV:
        if not _venv_is_ours():
            return None, work, "network: scripts/venv.sh installs hrr into .venv with pip (these tests run elsewhere)"
        argv = shlex.split(cmd)
        return argv + (TEST_SH_ARGS if cmd.endswith("test.sh") else []), ROOT, ""
    if cmd.startswith("hrr "):
        return [sys.executable, "-m", "hrr.cli.main", *shlex.split(cmd)[1:]], work, ""
    if cmd.startswith("python3 -m venv "):
        return ["bash", "-c", cmd], work, ""
    raise AssertionError(f"README command {cmd!r} matches no rule here: run it in this test or list why not")


def test_every_readme_shell_command_has_a_rule(tmp_path):
    commands = readme_commands()
    assert "bash scripts/demo.sh" in commands and "hrr replay --strict app.hrr" in commands, commands
    for cmd in commands:
        how_to_run(cmd, tmp_path)


def test_every_readme_shell_command_runs(tmp_path):
    programs = readme_programs()
    assert "app.py" in programs, programs.keys()
    for name, source in programs.items():
        (tmp_path / name).write_text(source)
    env, ran, skipped = _env(), [], []
    for cmd in readme_commands():
        argv, cwd, why = how_to_run(cmd, tmp_path)
        if argv is None:
            skipped.append(f"{cmd}: {why}")
            continue
        proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)
        assert proc.returncode == 0, f"{cmd}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        assert "Traceback" not in proc.stderr, f"{cmd}\n{proc.stderr}"
        ran.append(cmd)
        if cmd.startswith("hrr replay --strict") or cmd == "bash scripts/demo.sh":
            assert proc.stdout.splitlines()[-1] == "Result: OK", proc.stdout
        if cmd.startswith("python3 -m venv"):
            assert (tmp_path / ".venv" / "bin" / "activate").exists()
    assert ran, skipped
    print("ran:", *ran, "skipped:", *skipped, sep="\n  ")
