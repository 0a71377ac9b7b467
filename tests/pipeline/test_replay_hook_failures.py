"""A replay hook implementation that raises is a bug of its plugin: reported once, naming
the plugin and the hook, and the plugin is disabled for the rest of the process's replay;
the records replay on (never a bad_record per event), and --strict fails naming it."""
from __future__ import annotations

from importlib import metadata

import numpy as np
import pytest
from hrrtest import capture, only, replay, text

import hrr.pipeline.manager as manager
from hrr.pipeline import EventRefused, hookimpl
from hrr.replay.result import Outcome

CALLS: list[str] = []


class RaisesBefore:
    __version__ = "1.0"

    @hookimpl
    def hrr_replay_before_event(self, ctx, event, stream):
        CALLS.append(event.api)
        raise RuntimeError("before went wrong")


class RaisesAtStart:
    __version__ = "1.0"

    @hookimpl
    def hrr_replay_start(self, ctx):
        CALLS.append("start")
        raise KeyError("start went wrong")

    @hookimpl
    def hrr_replay_after_event(self, ctx, event, result):
        CALLS.append(event.api)    # never: the plugin was disabled at start


class Refuses:
    """EventRefused is how a stage ends an event: a refusal, not a plugin failure."""
    __version__ = "1.0"

    @hookimpl
    def hrr_replay_before_event(self, ctx, event, stream):
        if event.api == "hipFree":
            raise EventRefused("no frees today")


class Counts:
    __version__ = "1.0"

    @hookimpl
    def hrr_replay_after_event(self, ctx, event, result):
        CALLS.append(f"counted {event.api}")


PLUGINS = {"raises_before": RaisesBefore, "raises_at_start": RaisesAtStart, "refuses": Refuses,
           "counts": Counts}


@pytest.fixture(autouse=True)
def test_plugins(monkeypatch):
    real = manager.installed_plugins

    def installed():
        eps = dict(real())
        for name, cls in PLUGINS.items():
            eps[name] = metadata.EntryPoint(name, f"{__name__}:{cls.__name__}", manager.ENTRY_POINT_GROUP)
        return eps
    monkeypatch.setattr(manager, "installed_plugins", installed)
    CALLS.clear()


def _app(hip, hiprtc, be):
    out = np.zeros(16, np.uint8)
    for _ in range(5):
        err, d = hip.hipMalloc(16)
        hip.hipMemset(d, 7, 16)
        hip.hipMemcpy(out, d, 16, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
        hip.hipFree(d)


@pytest.fixture
def archive(tmp_path):
    capture(tmp_path / "a", _app)
    return tmp_path / "a"


@pytest.mark.parametrize("name, hook, error", [("raises_before", "hrr_replay_before_event", "RuntimeError"),
                                               ("raises_at_start", "hrr_replay_start", "KeyError")])
def test_a_raising_hook_is_reported_once_and_its_plugin_disabled(archive, name, hook, error):
    result = replay(archive, strict=False, plugins=[name, "counts"])
    proc = only(result)
    assert proc.outcome is Outcome.OK and not proc.refusals, text(result)
    assert proc.calls_replayed == 20 and proc.checks_passed == 5, text(result)
    assert len([c for c in CALLS if not c.startswith("counted")]) == 1, CALLS   # called once, then disabled
    assert len([c for c in CALLS if c.startswith("counted")]) == 20   # the other plugin still runs
    lines = [ln for ln in text(result).splitlines() if "failed during replay" in ln]
    assert lines == [f"Plugin {name} failed during replay ({error} in {hook}: "
                     f"{'before went wrong' if error == 'RuntimeError' else repr('start went wrong')}); "
                     "it was disabled for the rest of this process's replay"], text(result)
    strict = only(replay(archive, strict=True, plugins=[name]))
    assert strict.outcome is Outcome.REFUSED
    assert f"plugin '{name}' failed during replay ({error} in {hook})" in strict.strict_reasons, strict.strict_reasons


def test_event_refused_is_still_a_refusal(archive):
    proc = only(replay(archive, strict=False, plugins=["refuses"]))
    assert [r.category for r in proc.refusals] == ["refused"] * 5
    assert not any("failed during replay" in ln for ln in proc.plugin_lines)
