"""README.md's "Record your own program" is real: its app, its commands and its kernel
library example are read out of README.md (between <!-- readme-NAME:begin/end --> markers)
and run as a new user would, through the `hrr` command line."""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def block(name: str) -> str:
    """The fenced code block between the ``readme-NAME`` markers."""
    text = README.read_text()
    found = re.search(rf"<!-- readme-{name}:begin -->\n```[a-z]*\n(.*?)```\n<!-- readme-{name}:end -->",
                      text, re.S)
    assert found, f"README.md has no readme-{name} block"
    return found.group(1)


def hrr(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in ("HRR_MODE", "HIP_HRR_CAPTURE_CONTENT")}
    full.update(env or {})
    proc = subprocess.run([sys.executable, "-m", "hrr.cli.main", *args], cwd=cwd, env=full,
                          check=False, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "app.py").write_text(block("app"))
    return tmp_path


def test_the_readme_commands_run_as_written(workdir):
    commands = [ln.split("#", 1)[0].strip() for ln in block("commands").splitlines()]
    commands = [shlex.split(c) for c in commands if c]
    assert [c[:2] for c in commands] == [["hrr", "run"], ["hrr", "capture"], ["hrr", "info"], ["hrr", "replay"]]
    assert ["--content"] == [a for a in commands[1] if a == "--content"]
    outputs = []
    for cmd in commands:
        proc = hrr(workdir, *cmd[1:])
        assert proc.returncode == 0, f"{cmd}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        outputs.append(proc.stdout)
    assert outputs[0].strip() == "app: ok" and outputs[1].strip() == "app: ok"
    assert outputs[3].splitlines()[-1] == "Result: OK"
    assert "Device-to-host checks: 1 passed, 0 failed, 0 unverifiable" in outputs[3]


def test_without_content_strict_fails_and_says_how_to_ask_for_it(workdir):
    """Under the privacy plugin (on by default) capture is metadata-only; --strict fails
    with the line README quotes, naming --content and HIP_HRR_CAPTURE_CONTENT."""
    assert hrr(workdir, "capture", "-o", "meta.hrr", "--", "python", "app.py").returncode == 0
    assert hrr(workdir, "replay", "meta.hrr").returncode == 0          # plain replay runs it
    proc = hrr(workdir, "replay", "--strict", "meta.hrr")
    assert proc.returncode == 1
    (line,) = [ln for ln in proc.stdout.splitlines() if "metadata-only" in ln and ln.startswith("STRICT:")]
    assert "--content" in line and "HIP_HRR_CAPTURE_CONTENT=1" in line
    assert line in " ".join(README.read_text().split())               # README quotes it exactly

    # The environment variable README names asks for content, too.
    assert hrr(workdir, "capture", "-o", "env.hrr", "--", "python", "app.py",
               env={"HIP_HRR_CAPTURE_CONTENT": "1"}).returncode == 0
    assert hrr(workdir, "replay", "--strict", "env.hrr").returncode == 0


KERNEL_APP = """
import ctypes
import numpy as np
from hip import hip
import mykernels

n = 64
host = np.arange(n, dtype=np.uint32)
err, d = hip.hipMalloc(n * 4)
hip.hipMemcpy(d, host, n * 4, hip.hipMemcpyKind.hipMemcpyHostToDevice)
err, module = hip.hipModuleLoadData(mykernels.LIBRARY.code_object())
assert err == 0, err
err, fn = hip.hipModuleGetFunction(module, b"scale_u32")
args = (ctypes.c_void_p(int(d)), ctypes.c_uint32(3), ctypes.c_uint32(n))
err, = hip.hipModuleLaunchKernel(fn, 1, 1, 1, 64, 1, 1, 0, None, [ctypes.addressof(a) for a in args], None)
out = np.zeros(n, dtype=np.uint32)
hip.hipMemcpy(out, d, n * 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
assert err == 0 and (out == host * 3).all(), (err, out[:4])
print("scaled: ok")
"""


def test_the_readme_kernel_library_installs_and_replays(tmp_path):
    """The README's library, "installed" as a distribution (a .dist-info with its
    entry point) on PYTHONPATH: captured, then replayed --strict; without it, replay fails."""
    site = tmp_path / "site"
    (site / "mykernels").mkdir(parents=True)
    (site / "mykernels" / "__init__.py").write_text(block("kernels"))
    toml = block("kernels-toml")
    assert '[project.entry-points."hrr.kernel_libraries"]' in toml
    entry = [f"{k.strip()} = {v.strip().strip(chr(34))}" for k, v in
             (ln.split("=", 1) for ln in toml.splitlines() if "=" in ln and not ln.startswith("["))]
    assert entry == ["mykernels = mykernels:LIBRARY"]
    info = site / "mykernels-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mykernels\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[hrr.kernel_libraries]\n" + "\n".join(entry) + "\n")
    (tmp_path / "app.py").write_text(KERNEL_APP)
    env = {"PYTHONPATH": os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)}
    proc = hrr(tmp_path, "capture", "--content", "-o", "k.hrr", "--", "python", "app.py", env=env)
    assert proc.returncode == 0 and proc.stdout.strip() == "scaled: ok", proc.stderr
    proc = hrr(tmp_path, "replay", "--strict", "--json", "k.hrr", env=env)
    assert proc.returncode == 0, proc.stdout
    (replayed,) = json.loads(proc.stdout)["processes"]
    assert (replayed["checks_passed"], replayed["checks_failed"], replayed["checks_unverifiable"]) == (1, 0, 0)
    proc = hrr(tmp_path, "replay", "--strict", "--json", "k.hrr")          # not installed here
    assert proc.returncode != 0            # diverged where the library is missing, as README says
    (replayed,) = json.loads(proc.stdout)["processes"]
    assert [(d["api"], d["replayed_name"].split()[0]) for d in replayed["divergences"]] == [
        ("hipModuleLoadData", "hipErrorNoBinaryForGpu")], proc.stdout


def test_own_hiprtc_kernel_walkthrough_names_its_arguments(tmp_path):
    """README's own hiprtc kernel (saxpy), captured, replayed and dumped with the README's
    commands on the sim: dump names the kernel's parameters from its signature and shows
    the float as a float; diff of a run with another ``a`` names the argument and both values."""
    (tmp_path / "saxpy.py").write_text(block("rtc-app"))
    commands = [shlex.split(ln.split("#", 1)[0]) for ln in block("rtc-commands").splitlines() if ln.strip()]
    assert [c[:2] for c in commands] == [["hrr", "capture"], ["hrr", "replay"], ["hrr", "dump"]]
    outputs = []
    for cmd in commands:
        proc = hrr(tmp_path, *cmd[1:])
        assert proc.returncode == 0, f"{cmd}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        outputs.append(proc.stdout)
    assert outputs[0].strip() == "saxpy: ok" and outputs[1].splitlines()[-1] == "Result: OK"
    (launch,) = [ln for ln in outputs[2].splitlines() if "hipModuleLaunchKernel" in ln]
    assert re.search(r"kernel=saxpy\(a=2\.5,x=0x[0-9a-f]+,y=0x[0-9a-f]+,n=1024\) ", launch), launch
    dump = hrr(tmp_path, "dump", "saxpy.hrr", "--api", "hipModuleGetFunction").stdout
    assert 'params="float a, float* x, float* y, unsigned int n"' in dump, dump

    (tmp_path / "saxpy35.py").write_text(block("rtc-app").replace("n, a = 1024, 2.5", "n, a = 1024, 3.5"))
    assert hrr(tmp_path, "capture", "--content", "-o", "b.hrr", "--", "python", "saxpy35.py").returncode == 0
    diff = hrr(tmp_path, "diff", "saxpy.hrr", "b.hrr")
    assert diff.returncode == 1, diff.stdout + diff.stderr
    first = diff.stdout.splitlines()[0]
    assert first.endswith("launch.args.a: 2.5 != 3.5"), diff.stdout
    a_line, b_line = (ln for ln in diff.stdout.splitlines() if ln.startswith(("  A #", "  B #")))
    assert "a: 2.5" in a_line and "a: 3.5" in b_line
    assert "kind=hipMemcpyHostToDevice" in diff.stdout and "kind=1" not in diff.stdout
