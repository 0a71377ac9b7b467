"""The environment variables through the real path: `hrr capture` starts the app with
them set, the app's own process reads them (hrr.config, once), and the archive shows the
effect; `hrr replay --strict` then passes or fails as it must."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hrr.archive import open_archive

HERE = Path(__file__).parent
APP = HERE / "env_app.py"
PLUGINS = "pinned_snapshot,graph_capture"
VARS = ("HIP_HRR_HOST_SNAPSHOTS", "HIP_HRR_HOST_SNAPSHOT_MAX_MB", "HIP_HRR_CAPTURE_CONTENT",
        "HRR_CONTENT_MODE", "HRR_MODE", "HRR_PLUGINS")


def _hrr(*args, **env) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in VARS}
    full.update(env)
    return subprocess.run([sys.executable, "-m", "hrr.cli.main", *map(str, args)], env=full,
                          capture_output=True, text=True, check=False, timeout=120)


def _capture(arch: Path, plugins: str, **env) -> dict:
    proc = _hrr("capture", "-o", arch, "--plugins", plugins, "--", sys.executable, APP, **env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok" in proc.stdout
    return open_archive(str(arch)).processes[0]


def _replay(arch: Path) -> tuple[subprocess.CompletedProcess, dict]:
    """`hrr replay --strict --json ARCH`: the process and its one process's result."""
    rep = _hrr("replay", arch, "--strict", "--json")
    (replayed,) = json.loads(rep.stdout)["processes"]
    return rep, replayed


def _snapshot_sizes(proc) -> list[int]:
    """The length of every pinned snapshot the archive's launches carry."""
    sizes = []
    for item in proc.events():
        extra = item.value[6] if isinstance(item.value[6], dict) else {}
        for rec in (extra.get("records") or {}).get("pinned_snapshot", []):
            sizes += [snap["length"] for snap in rec["snaps"]]
    return sizes


def test_max_mb_from_environment_is_the_cap(tmp_path):
    # 0.004 MB = 4194 bytes: the 512-byte buffer is snapshotted, the 8 KiB one is not.
    arch = tmp_path / "arch"
    proc = _capture(arch, PLUGINS, HIP_HRR_HOST_SNAPSHOT_MAX_MB="0.004")
    assert proc.manifest["host_snapshot"]["max_bytes"] == 4194
    assert _snapshot_sizes(proc) == [512, 512]
    listed = [u for u in proc.manifest["unreplayable_apis"] if u["api"] == "pinned host snapshot"]
    assert listed and {u["size"] for u in listed} == {8192}
    assert listed[0]["variable"] == "HIP_HRR_HOST_SNAPSHOT_MAX_MB"
    rep, replayed = _replay(arch)
    assert rep.returncode == 1, rep.stdout + rep.stderr
    assert (replayed["checks_passed"], replayed["checks_failed"]) == (2, 2)   # the 8 KiB launches
    assert "the manifest lists unreplayable APIs" in replayed["strict_reasons"]
    assert replayed["pinned"] == {"restored": 2, "refused": 0, "skipped_graph_capture": 0}


def test_default_cap_snapshots_both(tmp_path):
    arch = tmp_path / "arch"
    proc = _capture(arch, PLUGINS)
    assert proc.manifest["host_snapshot"]["max_bytes"] == 64 * 1024 * 1024
    assert sorted(_snapshot_sizes(proc)) == [512, 512, 8192, 8192]
    rep = _hrr("replay", arch, "--strict")
    assert rep.returncode == 0, rep.stdout + rep.stderr


def test_capture_content_from_environment_with_privacy_on(tmp_path):
    arch = tmp_path / "arch"
    proc = _capture(arch, "privacy," + PLUGINS, HIP_HRR_CAPTURE_CONTENT="1")
    assert proc.manifest["content_mode"] == "content"
    assert proc.manifest["host_snapshots"] is True
    assert proc.manifest["privacy"]["content_requested"] is True
    assert len(_snapshot_sizes(proc)) == 4
    rep = _hrr("replay", arch, "--strict")
    assert rep.returncode == 0, rep.stdout + rep.stderr


def test_privacy_without_capture_content_is_metadata_only(tmp_path):
    arch = tmp_path / "arch"
    proc = _capture(arch, "privacy," + PLUGINS, HIP_HRR_CAPTURE_CONTENT="0")
    assert proc.manifest["content_mode"] == "metadata-only"
    assert proc.manifest["host_snapshots"] is False
    assert _snapshot_sizes(proc) == []


def test_host_snapshots_true_means_on(tmp_path):
    arch = tmp_path / "arch"
    proc = _capture(arch, PLUGINS, HIP_HRR_HOST_SNAPSHOTS="true")
    assert proc.manifest["host_snapshots"] is True
    assert len(_snapshot_sizes(proc)) == 4
    rep, replayed = _replay(arch)
    assert rep.returncode == 0, rep.stdout + rep.stderr
    assert replayed["pinned"]["restored"] == 4


def test_host_snapshots_false_means_off(tmp_path):
    arch = tmp_path / "arch"
    proc = _capture(arch, PLUGINS, HIP_HRR_HOST_SNAPSHOTS="false")
    assert proc.manifest["host_snapshots"] is False
    assert _snapshot_sizes(proc) == []
    rep = _hrr("replay", arch, "--strict")
    assert rep.returncode == 1, rep.stdout + rep.stderr
