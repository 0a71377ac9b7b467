"""How a captured process ended: recorded in the manifest, printed by info and replay,
refused by --strict unless --allow-abnormal-end; capture's closing summary line."""
from __future__ import annotations

import signal

from cli_helpers import app, capture, describe, hrr, info_json, looping_capture, only_process, replay_json

from hrr import exitcodes


def _ended(root):
    (proc,) = info_json(root)["processes"]
    return proc["manifest"]["ended"]


def test_a_non_zero_exit_is_recorded_and_refused_by_strict_unless_allowed(tmp_path):
    root = tmp_path / "a"
    capture(root, *app("basic.py", 3), check=3)
    assert _ended(root) == {"how": "exit", "status": 3}
    assert "exited with status 3" in hrr("info", root, check=0).stdout
    proc, result = replay_json(root, "--strict")
    assert proc.returncode == exitcodes.STRICT_REFUSED, describe(proc)
    assert only_process(result)["ended"] == "exited with status 3"
    assert any(reason.startswith("the program exited with status 3 (pass --allow-abnormal-end")
               for reason in only_process(result)["strict_reasons"]), describe(proc)
    hrr("replay", "--strict", "--allow-abnormal-end", root, check=0)
    hrr("replay", root, check=0)   # without --strict an abnormal end is only reported


def test_a_bare_raise_systemexit_is_recorded_with_its_status(tmp_path):
    """The process itself cannot see a bare ``raise SystemExit(5)``; hrr capture saw the
    status COMMAND exited with and corrects the closed manifest."""
    root = tmp_path / "a"
    capture(root, *app("basic.py", 5, "--bare-raise"), check=5)
    assert _ended(root) == {"how": "exit", "status": 5}
    proc, result = replay_json(root, "--strict")
    assert proc.returncode == 1 and only_process(result)["ended"] == "exited with status 5", describe(proc)


def test_a_clean_exit_passes_strict(tmp_path):
    root = tmp_path / "a"
    capture(root, *app("basic.py"))
    assert _ended(root) == {"how": "exit", "status": 0}
    hrr("replay", "--strict", root, check=0)


def test_an_uncaught_exception_keeps_its_message_only_in_content_mode(tmp_path):
    content, meta = tmp_path / "c", tmp_path / "m"
    capture(content, *app("raises.py"), check=1)
    capture(meta, *app("raises.py"), content=False, check=1)
    assert _ended(content) == {"how": "exception", "exception": "ValueError", "message": "the secret 42"}
    assert _ended(meta) == {"how": "exception", "exception": "ValueError"}
    proc, result = replay_json(content, "--strict")
    assert proc.returncode == 1 and "ended by an uncaught ValueError" in only_process(result)["ended"], describe(proc)


def test_a_signal_is_recorded_and_capture_names_repair(tmp_path):
    root = tmp_path / "a"
    with looping_capture(root) as hrr_proc:
        hrr_proc.send_signal(signal.SIGTERM)   # hrr passes it on to COMMAND
        _, err = hrr_proc.communicate(timeout=30)
    assert hrr_proc.returncode == 128 + signal.SIGTERM, err
    # SIGTERM closes the archive on the program's way out: nothing to repair, and hrr says so
    assert "COMMAND ended on SIGTERM" in err and "hrr repair" not in err, err
    assert _ended(root) == {"how": "signal", "signal": "SIGTERM"}
    assert "killed by SIGTERM" in hrr("info", root, check=0).stdout


def test_capture_ends_with_one_summary_line_naming_the_content_flag(tmp_path):
    root = tmp_path / "m"
    proc = capture(root, *app("basic.py"), content=False)
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("hrr: archive ")]
    (pid,) = info_json(root)["processes"]
    calls = pid["manifest"]["counts"]["events"]
    assert f"1 process(es) recorded, {calls} calls, " in line and " blobs, " in line and " bytes on disk" in line, line
    assert "content: metadata-only" in line and "plugins: privacy" in line, line
    assert "--content" in line and "HIP_HRR_CAPTURE_CONTENT=1" in line, line
    proc = capture(tmp_path / "c", *app("basic.py"))
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("hrr: archive ")]
    assert "content: content" in line and "HIP_HRR_CAPTURE_CONTENT" not in line, line


def test_a_replay_that_verified_nothing_says_so(tmp_path):
    """The printed summary names why nothing was verified (a line of the CLI's own)."""
    root = tmp_path / "m"
    capture(root, *app("basic.py"), content=False)
    proc = hrr("replay", root, check=0)
    assert "Nothing was verified: the archive is metadata-only" in proc.stdout, describe(proc)
    assert proc.stdout.splitlines()[-1] == "Result: UNVERIFIED", describe(proc)   # exit 0 all the same
    assert replay_json(root, check=0)[1]["outcome"] == "UNVERIFIED"
    proc = hrr("replay", capture(tmp_path / "c", *app("basic.py")) and tmp_path / "c", check=0)
    assert "Nothing was verified" not in proc.stdout, describe(proc)
    assert proc.stdout.splitlines()[-1] == "Result: OK", describe(proc)


def test_capture_says_why_its_content_mode_is_what_it_is(tmp_path):
    """Without the privacy plugin nothing vetoes content: capture records it and says so
    (never silently), naming --metadata-only; a flag or privacy's veto is named too."""
    for name, plugins, content, why in (("p", "pinned_snapshot", None, "no running plugin vetoed content"),
                                        ("m", "privacy", None, "plugin privacy vetoed content"),
                                        ("c", "privacy", True, "--content"),
                                        ("x", "pinned_snapshot", False, "--metadata-only")):
        args = ["capture", "-o", tmp_path / name, "--plugins", plugins]
        args += [] if content is None else ["--content" if content else "--metadata-only"]
        proc = hrr(*args, "--", *app("basic.py"), check=0)
        (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("hrr: archive ")]
        assert f"({why})" in line, line
        assert ("--metadata-only records none" in line) == (name == "p"), line
        (pid,) = info_json(tmp_path / name)["processes"]
        assert pid["manifest"]["content_why"] == why
