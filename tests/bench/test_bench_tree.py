"""scripts/bench.sh makes or reuses .venv as scripts/test.sh does (never the system
python3), and the figures' meta.commit names the tree measured, not a repository around it."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _bench():
    spec = importlib.util.spec_from_file_location("hrr_bench_tree", os.path.join(REPO, "bench", "bench.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _git(cwd, *args):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def _repo(path):
    path.mkdir(parents=True, exist_ok=True)
    _git(path, "init", "-q")
    (path / "f").write_text(str(path))
    _git(path, "add", "f")
    _git(path, "commit", "-q", "-m", "x")
    return _git(path, "rev-parse", "--short", "HEAD")


pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def test_a_tree_with_its_own_git_names_its_own_commit(tmp_path):
    head = _repo(tmp_path / "tree")
    assert _bench().tree_commit(str(tmp_path / "tree")) == head


def test_a_tree_laid_over_an_older_commits_git_names_the_stamped_commit(tmp_path):
    """A device machine's copy: the working tree of a newer commit over the git metadata of
    the last landed one. Its tracked files differ from HEAD: TREE_COMMIT names it, and
    without one the answer says it is not HEAD's tree."""
    head = _repo(tmp_path / "tree")
    (tmp_path / "tree" / "f").write_text("a newer tree")
    bench = _bench()
    assert bench.tree_commit(str(tmp_path / "tree")) == f"{head}-dirty"
    (tmp_path / "tree" / bench.TREE_COMMIT).write_text("abc1234\n")
    assert bench.tree_commit(str(tmp_path / "tree")) == "abc1234"


def test_a_copy_inside_another_repository_does_not_name_that_repository(tmp_path):
    outer = _repo(tmp_path / "outer")
    tree = tmp_path / "outer" / "copy"
    tree.mkdir()
    bench = _bench()
    assert bench.tree_commit(str(tree)) == "unknown"
    assert outer != "unknown"
    (tree / bench.TREE_COMMIT).write_text("abc1234\n")    # written where the copy was made
    assert bench.tree_commit(str(tree)) == "abc1234"
    (tree / bench.TREE_COMMIT).write_text("not a commit\n")
    assert bench.tree_commit(str(tree)) == "unknown"


def test_bench_sh_makes_the_venv_and_never_falls_back_to_python3(tmp_path):
    """A fresh clone has no .venv: bench.sh runs scripts/venv.sh (stubbed here: it makes a
    .venv whose python says who it is) and runs the bench with that python."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(os.path.join(REPO, "scripts", "bench.sh"), tmp_path / "scripts" / "bench.sh")
    (tmp_path / "scripts" / "venv.sh").write_text(
        "cd \"$(dirname \"$0\")/..\"\nmkdir -p .venv/bin\necho made >> venv-calls\n"
        "printf '#!/bin/sh\\necho \"venv python $*\"\\n' > .venv/bin/python\nchmod +x .venv/bin/python\n")
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "bench.py").write_text("import sys\nprint('system python', sys.argv[1:])\n")
    proc = subprocess.run(["bash", str(tmp_path / "scripts" / "bench.sh"), "--tiny"], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "venv python bench/bench.py --tiny", proc.stdout
    assert (tmp_path / "venv-calls").read_text() == "made\n"
    (tmp_path / "scripts" / "venv.sh").write_text("exit 1\n")   # no environment can be made
    proc = subprocess.run(["bash", str(tmp_path / "scripts" / "bench.sh")], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 1 and "system python" not in proc.stdout
    assert "scripts/venv.sh" in proc.stderr
