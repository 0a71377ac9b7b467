"""Fixtures shared by the replay tests."""
import pytest

from hrr.replay import engine, launches


class Paths(dict):
    """``{"fast": n, "general": n}``; ``runs``: of the fast ones, those taken as runs of equal launches."""
    runs = 0


@pytest.fixture
def paths(monkeypatch):
    """Counts of launch records replayed by the fast runner and by the general path."""
    seen = Paths(fast=0, general=0)
    make = launches.launch_runner

    def counting_runner(*a, **k):
        run = make(*a, **k)
        if run is None:
            return None

        def counted(v):
            done = run(v)
            seen["fast"] += done
            return done

        def counted_rest(records, limit):
            taken, after = run.rest(records, limit)
            seen["fast"] += taken
            seen.runs += taken
            return taken, after
        counted.rest = counted_rest if run.rest is not None else None
        return counted

    general = engine.ProcessReplayer._replay_call

    def counting_general(self, plan, v):
        if plan.row.launch is not None:
            seen["general"] += 1
        return general(self, plan, v)

    monkeypatch.setattr(engine, "launch_runner", counting_runner)
    monkeypatch.setattr(engine.ProcessReplayer, "_replay_call", counting_general)
    return seen
