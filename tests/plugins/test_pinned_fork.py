"""Fork: the tracking lock is taken in the fork handler before the writer's locks, so no
child ever inherits it held."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent.parent


def test_fork_while_snapshotting(tmp_path):
    archive = tmp_path / "arch"
    proc = subprocess.run([sys.executable, str(HERE / "fork_workload.py"), str(archive), "8"],
                          cwd=ROOT, capture_output=True, text=True, check=False, timeout=240,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    children = [ln.split() for ln in lines if ln and not ln.startswith("parent")]
    parent = next(ln.split() for ln in lines if ln.startswith("parent"))
    assert len(children) == 8
    for pid, status, secs in children:
        assert status == "0", f"child {pid} did not exit cleanly within 10 s ({status})"
        assert float(secs) < 10
    pid_dir = archive / f"pid-{parent[1]}"
    total = sum(f.stat().st_size for f in (pid_dir / "blobs").rglob("*") if f.is_file())
    assert total >= 32 * 1024 * 1024
