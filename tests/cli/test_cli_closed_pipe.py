"""A closed stdout (`hrr diff A B | head`) ends a command quietly: no "Broken pipe", no
exit 4. diff and replay still exit with their verdict; dump, info and export with 0."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from cli_helpers import app, capture


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    base = tmp_path_factory.mktemp("pipe")
    one, two = base / "one.hrr", base / "two.hrr"
    capture(one, *app("fork_bad_free.py", 1))
    capture(two, *app("fork_bad_free.py", 2))
    return one, two


def _into_closed_pipe(*args):
    """Run `hrr ARGS` with stdout a pipe whose reader has already gone."""
    r, w = os.pipe()
    os.close(r)
    env = {k: v for k, v in os.environ.items() if k != "HRR_MODE"}
    try:
        proc = subprocess.run([sys.executable, "-m", "hrr.cli.main", *map(str, args)], stdout=w,
                              stderr=subprocess.PIPE, text=True, env=env, timeout=120, check=False)
    finally:
        os.close(w)
    return proc


@pytest.mark.parametrize("which, code", [("differ", 1), ("equal", 0)])
def test_diff_into_a_closed_pipe_exits_with_its_verdict(archives, which, code):
    one, two = archives
    proc = _into_closed_pipe("diff", one, two if which == "differ" else one)
    assert (proc.returncode, proc.stderr) == (code, "")


@pytest.mark.parametrize("args", [("info", "{a}", "--events"), ("info", "{a}", "--json"), ("dump", "{a}"),
                                  ("export", "--chrome-trace", "/dev/stdout", "{a}"),
                                  ("replay", "--strict", "{a}")])
def test_a_command_into_a_closed_pipe_ends_quietly_with_0(archives, args):
    proc = _into_closed_pipe(*(a.format(a=archives[1]) for a in args))
    assert proc.returncode == 0, proc.stderr
    assert "Broken pipe" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
