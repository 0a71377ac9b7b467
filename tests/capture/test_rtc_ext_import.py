"""hip-python's hiprtc extension module under `hrr run` and `hrr capture`: every spelling of
it is hrr's over the installed hiprtc, and what it makes is recorded and replays --strict."""
from __future__ import annotations

import sys

from hrr.archive import open_archive
from test_import_styles import APPS, captured, hrr, said


def test_run_gives_the_extension_over_hrrs_hiprtc():
    proc = hrr("run", "--", sys.executable, APPS / "rtc_ext.py")
    assert proc.returncode == 0, said(proc)
    assert "rtc_ext: ok" in proc.stdout


def test_capture_records_what_the_extension_makes(tmp_path):
    archive, proc = captured(tmp_path, "rtc_ext.py")
    assert proc.returncode == 0 and "rtc_ext: ok" in proc.stdout, said(proc)
    events = [item.value for item in open_archive(str(archive)).processes[0].events()]
    assert [ev[2] for ev in events if ev[2].startswith("hiprtcLink")] == [
        "hiprtcLinkCreate", "hiprtcLinkDestroy"] * 2
    assert "past hrr" not in proc.stderr, said(proc)
    replay = hrr("replay", "--strict", archive)
    assert replay.returncode == 0, said(replay)
