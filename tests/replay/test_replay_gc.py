"""Replay collects the youngest generation less often while a process replays (its record
lists are short-lived and acyclic), and puts the program's thresholds back after."""
from __future__ import annotations

import gc

from hrrtest import capture

from hrr.replay import run as replay_run
from hrr.replay.engine import ProcessReplayer, ReplayOptions
from hrr.replay.run import REPLAY_GC_THRESHOLD, replay_archive


def test_the_gc_threshold_is_raised_while_records_replay_and_restored_after(tmp_path, monkeypatch):
    capture(tmp_path, lambda hip, hiprtc, be: [hip.hipGetDevice() for _ in range(3)])
    seen = []
    real_run = ProcessReplayer.run

    def run(self, *a, **kw):
        seen.append(gc.get_threshold()[0])
        return real_run(self, *a, **kw)
    monkeypatch.setattr(ProcessReplayer, "run", run)
    before = gc.get_threshold()
    result = replay_archive(str(tmp_path), options=ReplayOptions(strict=True))
    assert result.exit_code == 0
    assert seen and all(t >= REPLAY_GC_THRESHOLD for t in seen)
    assert gc.get_threshold() == before


def test_a_higher_threshold_of_the_programs_own_is_kept(monkeypatch):
    before = gc.get_threshold()
    try:
        gc.set_threshold(REPLAY_GC_THRESHOLD * 2, *before[1:])
        with replay_run.fewer_collections():
            assert gc.get_threshold()[0] == REPLAY_GC_THRESHOLD * 2
    finally:
        gc.set_threshold(*before)
