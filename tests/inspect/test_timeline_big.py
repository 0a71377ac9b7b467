"""`hrr export --chrome-trace` for big archives: gzip output (a .gz name or --gzip) and a
--calls range; an output folder that does not exist is a usage error, not an unreadable archive."""
from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

from inspect_helpers import describe, hrr_cli

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dump_archive_gen import write_archive  # noqa: E402


def _trace(path: Path) -> dict:
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def test_gz_name_and_gzip_flag_write_the_same_trace_compressed(tmp_path):
    archive = write_archive(str(tmp_path / "a"), 2000)
    plain, named, flagged = tmp_path / "t.json", tmp_path / "t.json.gz", tmp_path / "t2.json"
    for out, extra in ((plain, ()), (named, ()), (flagged, ("--gzip",))):
        proc = hrr_cli("export", *extra, "--chrome-trace", out, archive)
        assert proc.returncode == 0, describe(proc)
    assert plain.read_bytes()[:2] != b"\x1f\x8b"
    assert named.read_bytes()[:2] == b"\x1f\x8b" and flagged.read_bytes()[:2] == b"\x1f\x8b"
    assert _trace(named) == _trace(flagged) == _trace(plain)
    assert named.stat().st_size * 5 < plain.stat().st_size


def test_calls_range_draws_only_those_records(tmp_path):
    archive = write_archive(str(tmp_path / "a"), 2000)
    out = tmp_path / "part.json"
    proc = hrr_cli("export", "--calls", "1000:1010", "--chrome-trace", out, archive)
    assert proc.returncode == 0, describe(proc)
    assert "from 10 records" in proc.stderr
    data = _trace(out)
    drawn = [e for e in data["traceEvents"] if e["ph"] in ("X", "i") and "seq" in e.get("args", {})]
    seqs = {e["args"]["seq"] for e in drawn}
    assert seqs and min(seqs) >= 1000 and max(seqs) < 1010, sorted(seqs)
    # The tracks the range draws on are named, though they were made before it.
    named = {e["tid"] for e in data["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {e["tid"] for e in drawn} <= named
    assert data["otherData"]["calls"] == [1000, 1010]
    assert hrr_cli("export", "--calls", "5:2", "--chrome-trace", out, archive).returncode == 64


def test_output_folder_missing_is_a_usage_error(tmp_path):
    archive = write_archive(str(tmp_path / "a"), 20)
    proc = hrr_cli("export", "--chrome-trace", tmp_path / "no" / "such" / "t.json", archive)
    assert proc.returncode == 64, describe(proc)
    assert "does not exist" in proc.stderr and "Traceback" not in proc.stderr
