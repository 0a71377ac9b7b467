"""Through the real CLI: hrr capture --plugins pinned_snapshot,graph_capture, then
hrr replay --strict (and with HIP_HRR_HOST_SNAPSHOTS=0 the strict replay fails)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
HRR = str(Path(sys.executable).parent / "hrr")


def _run(args, **env):
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False, timeout=120,
                          env={**os.environ, **env})


def test_cli_capture_and_strict_replay(tmp_path):
    arch = tmp_path / "arch"
    cap = _run([HRR, "capture", "-o", str(arch), "--plugins", "pinned_snapshot,graph_capture",
                "--", sys.executable, str(HERE / "cli_app.py")])
    assert cap.returncode == 0, cap.stdout + cap.stderr
    rep = _run([HRR, "replay", str(arch), "--strict"])
    assert rep.returncode == 0, rep.stdout + rep.stderr
    assert "Pinned host snapshots: 3 restored, 0 refused, 0 skipped (graph capture)" in rep.stdout


def test_cli_snapshots_off_fails_strict_replay(tmp_path):
    arch = tmp_path / "arch"
    cap = _run([HRR, "capture", "-o", str(arch), "--plugins", "pinned_snapshot,graph_capture",
                "--", sys.executable, str(HERE / "cli_app.py")], HIP_HRR_HOST_SNAPSHOTS="0")
    assert cap.returncode == 0, cap.stdout + cap.stderr
    rep = _run([HRR, "replay", str(arch), "--strict"])
    assert rep.returncode == 1
    assert "Pinned host snapshots: 0 restored" in rep.stdout
