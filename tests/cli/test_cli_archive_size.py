"""hrr capture --max-archive-bytes (recording stops cleanly, the app runs on), the size
warning, --pack-blobs (few files, replay --strict OK) and `hrr pack` on a loose archive."""
from __future__ import annotations

import json
import os

from tests.cli.cli_helpers import app, capture, describe, hrr, info_json, replay_json


def _files(root) -> int:
    return sum(len(files) for _, _, files in os.walk(root))


def test_size_cap_stops_recording_not_the_program(tmp_path):
    root = tmp_path / "a"
    args = ["capture", "-o", root, "--plugins", "privacy", "--content", "--max-archive-bytes", 400_000, "--"]
    proc = hrr(*args, *app("fill.py", 65536, 20))
    assert proc.returncode == 74, describe(proc)
    assert "fill: ok" in proc.stdout and "Traceback" not in proc.stderr, describe(proc)
    assert "INCOMPLETE: archive size cap of 400000 bytes reached" in proc.stderr, describe(proc)
    (p,) = info_json(root)["processes"]
    stopped = p["manifest"]["incomplete"]
    assert p["clean"] is True and stopped["events_recorded"] == sum(p["calls"].values()) > 0
    assert stopped["calls_not_recorded"] > 0
    used = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs
               if f != "manifest.json")
    assert used <= 400_000
    replayed = hrr("replay", root)
    assert replayed.returncode == 0, describe(replayed)


def test_no_cap_warns_once_past_the_threshold(tmp_path):
    root = tmp_path / "a"
    proc = capture(root, *app("fill.py", 65536, 8), env={"HRR_WARN_ARCHIVE_BYTES": "200000"})
    warnings = [ln for ln in proc.stderr.splitlines() if "has passed 200000 bytes" in ln]
    assert len(warnings) == 1 and "--max-archive-bytes" in warnings[0], describe(proc)
    assert "INCOMPLETE" not in proc.stderr


def test_packed_capture_replays_strict_with_few_files(tmp_path):
    root = tmp_path / "a"
    proc = hrr("capture", "-o", root, "--plugins", "privacy", "--content", "--pack-blobs", "--",
               *app("fill.py", 512, 150), check=0)
    (p,) = info_json(root)["processes"]
    assert p["manifest"]["blob_store"] == {"packs": 1}
    assert p["manifest"]["counts"]["blobs"] >= 150
    assert _files(root) <= 6, sorted(os.walk(root))   # events, manifest, pack .dat/.idx, code
    replayed = hrr("replay", "--strict", root)
    assert replayed.returncode == 0, describe(replayed) + describe(proc)


def test_hrr_pack_on_a_loose_archive_then_replay(tmp_path):
    root = tmp_path / "a"
    capture(root, *app("fill.py", 512, 150), env={"HRR_PACK_BLOBS": "0"})
    before = _files(root)
    packed = hrr("pack", root, check=0)
    assert "blobs" in packed.stdout and _files(root) <= 6 < before, describe(packed)
    manifest = json.loads(next(root.glob("pid-*/manifest.json")).read_text())
    assert manifest["blob_store"] == {"packs": 1}
    replayed = hrr("replay", "--strict", root)
    assert replayed.returncode == 0, describe(replayed)
    again = hrr("pack", root, check=0)          # nothing loose is left: a no-op
    assert again.stdout.startswith("hrr: 0 blobs"), describe(again)


def test_killed_packed_capture_repairs_and_replays(tmp_path):
    root = tmp_path / "a"
    proc = hrr("capture", "-o", root, "--plugins", "privacy", "--content", "--pack-blobs", "--",
               *app("fill.py", 1024, 40, "--die"))
    assert proc.returncode == 137 and "fill: ok" in proc.stdout, describe(proc)
    hrr("repair", root, check=0)
    replayed, result = replay_json(root)
    assert replayed.returncode == 0 and result["outcome"] == "OK", describe(replayed)
