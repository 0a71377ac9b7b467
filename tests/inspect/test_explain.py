"""``python -m hrr.inspect.explain NAME`` prints every part hrr generates for a row."""
from __future__ import annotations

import subprocess
import sys

import pytest

from hrr.inspect.explain import PARTS


def _explain(name: str) -> str:
    run = subprocess.run([sys.executable, "-m", "hrr.inspect.explain", name], capture_output=True, text=True,
                         timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    return run.stdout


@pytest.mark.parametrize("name", ["hipMemcpy", "hipModuleLaunchKernel"])
def test_every_part_is_printed(name: str) -> None:
    out = _explain(name)
    for title in PARTS:
        assert f"=== {title} ===" in out
    assert f"def {name}(" in out                      # the sim's surface function
    assert "def wrapper(*args, **kwargs):" in out     # capture's wrapper
    assert "append_call(_num, wire, err, outs, extra)" in out
    assert "args[0] " in out                          # the replay plan, by parameter
    assert "def make(most_args" in out                # the schema's fast check
    assert "def schema_problem(v):" in out            # the schema's check naming the field


def test_a_launch_shows_its_runner_and_launch_checks() -> None:
    out = _explain("hipModuleLaunchKernel")
    assert "def ok(a0" in out and "def run(v):" in out
    assert "def launch_list(v):" in out and "def launch_list_problem(v):" in out
    assert "(ptrs) must be a list of [offset, base, delta] int triples" in out


def test_a_copy_has_no_runner() -> None:
    out = _explain("hipMemcpy")
    assert "hipMemcpy has no launch runner" in out and "def launch_list(v):" not in out


def test_an_unknown_name_is_one_line() -> None:
    run = subprocess.run([sys.executable, "-m", "hrr.inspect.explain", "hipNoSuchCall"], capture_output=True,
                         text=True, timeout=120, check=False)
    assert run.returncode == 2 and "hipNoSuchCall is not in the HIP API catalogue" in run.stderr
