"""Errors a user can cause: one clear `hrr: error:` line naming the problem, a non-zero
exit, never a traceback."""
from __future__ import annotations

import os

import pytest
from cli_helpers import (
    BASE_PLUGINS,
    app,
    assert_clean_error,
    capture,
    copy_archive,
    describe,
    hrr,
    only_pid_dir,
    only_process,
    replay_json,
    rewrite_events,
    set_format_version,
)


def _reasons(result: dict) -> list[str]:
    """Every refusal reason, failure and --strict reason of a ``--json`` replay result."""
    return [text for proc in result["processes"]
            for text in [r["reason"] for r in proc["refusals"]] + proc["failures"] + proc["strict_reasons"]]


@pytest.fixture(scope="module")
def good_archive(tmp_path_factory):
    root = tmp_path_factory.mktemp("good") / "archive"
    capture(root, *app("basic.py"), env={"HRR_PACK_BLOBS": "0"})  # tests tamper with a blob file
    return root


@pytest.mark.parametrize("command", ["replay", "info", "repair"])
def test_missing_archive(tmp_path, command):
    proc = hrr(command, tmp_path / "nope")
    assert_clean_error(proc, "nope", "no such archive")


@pytest.mark.parametrize("command", ["replay", "info", "repair"])
def test_not_an_archive(tmp_path, command):
    (tmp_path / "junk.txt").write_text("hello")
    proc = hrr(command, tmp_path)
    assert_clean_error(proc, "not an hrr archive")


def test_non_empty_output_directory(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("precious")
    proc = hrr("capture", "-o", out, "--plugins", BASE_PLUGINS, "--", "python", "-c", "pass")
    assert_clean_error(proc, "not an empty directory")
    assert os.listdir(out) == ["keep.txt"]


def test_output_is_a_file(tmp_path):
    out = tmp_path / "file"
    out.write_text("x")
    assert_clean_error(hrr("capture", "-o", out, "--", "python", "-c", "pass"), "not an empty directory")


def test_unknown_plugin_lists_installed(tmp_path):
    proc = hrr("capture", "-o", tmp_path / "a", "--plugins", f"{BASE_PLUGINS},no_such_plugin",
               "--", "python", "-c", "pass")
    line = assert_clean_error(proc, "unknown plugin", "no_such_plugin", "installed plugins:")
    for name in ("privacy", "pinned_snapshot", "graph_capture"):
        assert name in line
    assert not (tmp_path / "a").exists() or not os.listdir(tmp_path / "a")


def test_unknown_plugin_at_replay(good_archive):
    proc = hrr("replay", good_archive, "--plugins", "no_such_plugin")
    assert_clean_error(proc, "unknown plugin", "no_such_plugin", "privacy")


def test_no_command(tmp_path):
    assert_clean_error(hrr("capture", "-o", tmp_path / "a"), "no command")
    assert_clean_error(hrr("run"), "no command")


def test_command_not_found(tmp_path):
    assert_clean_error(hrr("run", "--", "no-such-program-hrr"), "command not found")


@pytest.mark.parametrize("command", [["replay"], ["info"], ["info", "--events", "--json"], ["repair"]])
def test_unknown_format_version(good_archive, tmp_path, command):
    bad = copy_archive(good_archive, tmp_path / "bad")
    set_format_version(only_pid_dir(bad), 99)
    proc = hrr(*command, bad)
    assert_clean_error(proc, "events.bin", "unknown format version 99")


def test_bad_magic(good_archive, tmp_path):
    bad = copy_archive(good_archive, tmp_path / "bad")
    events = only_pid_dir(bad) / "events.bin"
    events.write_bytes(b"NOTHRR!!" + events.read_bytes()[8:])
    assert_clean_error(hrr("replay", bad), "bad magic")


def _blobs(pid_dir):
    return sorted(p for p in (pid_dir / "blobs").rglob("*") if p.is_file())


def _corrupted_blobs_copy(good_archive, tmp_path):
    """A copy of the archive whose every blob no longer matches its name."""
    bad = copy_archive(good_archive, tmp_path / "bad")
    for blob in _blobs(only_pid_dir(bad)):
        data = bytearray(blob.read_bytes())
        data[0] ^= 0xFF
        blob.write_bytes(bytes(data))
    return bad


def test_corrupted_blob_strict(good_archive, tmp_path):
    bad = _corrupted_blobs_copy(good_archive, tmp_path)
    proc, result = replay_json(bad, "--strict")
    assert proc.returncode == 1, describe(proc)
    assert "Traceback" not in proc.stderr + proc.stdout
    assert any("not to its name" in why for why in _reasons(result)), describe(proc)


def test_corrupted_blob_fails_replay(good_archive, tmp_path):
    bad = _corrupted_blobs_copy(good_archive, tmp_path)
    proc, result = replay_json(bad)
    assert "Traceback" not in proc.stderr + proc.stdout
    assert any("not to its name" in why for why in _reasons(result)), describe(proc)
    assert proc.returncode == 1, describe(proc)


def test_truncated_event_stream(good_archive, tmp_path):
    bad = copy_archive(good_archive, tmp_path / "bad")
    events = only_pid_dir(bad) / "events.bin"
    os.truncate(events, events.stat().st_size - 100)
    proc, result = replay_json(bad)
    assert proc.returncode == 1, describe(proc)
    assert "Traceback" not in proc.stderr + proc.stdout
    assert any("torn" in f and "hrr repair" in f for f in only_process(result)["failures"]), describe(proc)
    info = hrr("info", bad, check=0).stdout
    assert "NOT closed" in info and "torn" in info


def test_file_limit(good_archive):
    proc, result = replay_json(good_archive, "--strict", "--max-file-bytes", "8")
    assert proc.returncode == 1, describe(proc)
    assert "Traceback" not in proc.stderr + proc.stdout
    assert any("over max_file_bytes=8" in why and "--max-file-bytes" in why for why in _reasons(result)), \
        describe(proc)


def test_event_limit(good_archive):
    proc = hrr("replay", good_archive, "--max-events", "3")
    assert proc.returncode != 0, describe(proc)
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "max_events" in proc.stdout + proc.stderr or "max-events" in proc.stdout + proc.stderr, describe(proc)


@pytest.mark.parametrize("value", ["0", "-5"])
def test_bad_limit_value(good_archive, value):
    proc = hrr("replay", good_archive, "--max-file-bytes", value)
    assert_clean_error(proc, "max_file_bytes")


@pytest.mark.parametrize("value", ["0", "nan"])
def test_bad_max_seconds(good_archive, value):
    proc = hrr("replay", good_archive, "--max-seconds", value)
    assert_clean_error(proc, "--max-seconds must be a positive number of seconds", str(float(value)))


def test_strict_replay_of_an_archive_its_capture_never_closed(good_archive, tmp_path):
    """The trailer gone and the manifest as a killed capture leaves it: the complete records
    replay, the summary says the archive was not closed, and --strict fails on it."""
    import json

    from hrr.archive import open_archive

    bad = copy_archive(good_archive, tmp_path / "open")
    pid_dir = only_pid_dir(bad)
    with open_archive(bad) as archive:
        trailer_at = archive.processes[0].scan().trailer_offset
    os.truncate(pid_dir / "events.bin", trailer_at)
    manifest = json.loads((pid_dir / "manifest.json").read_text())
    manifest["clean_shutdown"] = False
    (pid_dir / "manifest.json").write_text(json.dumps(manifest))
    plain, result = replay_json(bad)
    assert plain.returncode == 0, describe(plain)
    assert any(note.startswith("Archive: NOT closed (no trailer, manifest clean_shutdown false)")
               for note in only_process(result)["notes"]), describe(plain)
    strict, result = replay_json(bad, "--strict")
    assert strict.returncode == 1 and "Traceback" not in strict.stdout + strict.stderr, describe(strict)
    assert any(reason.startswith("the archive was not closed")
               for reason in only_process(result)["strict_reasons"]), describe(strict)


def test_records_cut_out_behind_the_trailer_fail_replay(good_archive, tmp_path):
    bad = copy_archive(good_archive, tmp_path / "cut")
    rewrite_events(only_pid_dir(bad), lambda events: events[:3])   # keeps the trailer
    proc, result = replay_json(bad)
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr, describe(proc)
    assert any("events.bin holds 3: records were lost or removed" in f
               for f in only_process(result)["failures"]), describe(proc)
