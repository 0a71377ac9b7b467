"""pluggy's semantics where hrr calls hooks itself, and where pluggy does.

Replay hooks go through pluggy: a ``wrapper=True`` or ``hookwrapper=True`` implementation
wraps the others (it sees their results and exceptions, and may change them). Capture
hooks are called by hrr one implementation at a time, so a wrapper there is refused when
its plugin loads, with an error naming the plugin and the hook, whatever the method is
called (pluggy's ``specname``). Real entry points: a .dist-info written into a directory
put on sys.path."""
from __future__ import annotations

import ctypes
import sys
import textwrap

import numpy as np
import pytest
from hrrtest import capture, replay

import hrr.pipeline.manager as manager
from hrr.pipeline.manager import BrokenPluginError, load_plugins

MODULE = "hrr_wrappertest_plugins"
SOURCE = '''
import pluggy
from hrr.pipeline import EventRefused, launching
hookimpl = pluggy.HookimplMarker("hrr")
SEEN = []

class Refuser:
    """Refuses every launch at replay and always fails --strict."""
    @hookimpl
    def hrr_replay_before_event(self, ctx, event, stream):
        if event.api in launching():
            raise EventRefused("the refuser refuses every launch", category="refuser")

    @hookimpl
    def hrr_replay_strict_failures(self, ctx):
        return ["the refuser says no"]

class Forgiver:
    """Wraps the other plugins' replay hooks: swallows their refusals and strict failures."""
    @hookimpl(wrapper=True)
    def hrr_replay_before_event(self, ctx, event, stream):
        try:
            return (yield)
        except EventRefused as exc:
            SEEN.append(("forgiven", event.api, exc.category))
            return None

    @hookimpl(hookwrapper=True)
    def hrr_replay_after_event(self, ctx, event, result):
        outcome = yield
        SEEN.append(("after", event.api, outcome.get_result()))

    @hookimpl(wrapper=True)
    def hrr_replay_strict_failures(self, ctx):
        parts = yield
        SEEN.append(("strict", parts))
        return [part for part in parts if part != ["the refuser says no"]]

class Renamed:
    """A plain implementation under another method name (pluggy's specname)."""
    @hookimpl(specname="hrr_replay_summary")
    def summary(self, ctx):
        SEEN.append(("renamed summary",))
        return None

class RenamedCaptureWrapper:
    @hookimpl(specname="hrr_capture_launch", wrapper=True)
    def around_launches(self, ctx, launch):
        return (yield)
'''
ENTRY_POINTS = {"refuser": "Refuser", "forgiver": "Forgiver", "renamed": "Renamed",
                "renamedwrapper": "RenamedCaptureWrapper"}


@pytest.fixture
def seen(tmp_path, monkeypatch):
    site = tmp_path / "site"
    info = site / "hrr_wrappertest-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hrr_wrappertest\nVersion: 1.0\n")
    lines = "\n".join(f"{name} = {MODULE}:{cls}" for name, cls in ENTRY_POINTS.items())
    (info / "entry_points.txt").write_text(f"[{manager.ENTRY_POINT_GROUP}]\n{lines}\n")
    (site / f"{MODULE}.py").write_text(textwrap.dedent(SOURCE))
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(manager, "_warned", set())
    yield __import__(MODULE).SEEN
    sys.modules.pop(MODULE, None)


def _app(hip, hiprtc, be) -> list[int]:
    err, module = hip.hipModuleLoadData(be.builtin_code_object())
    err, fn = hip.hipModuleGetFunction(module, b"fill_u32")
    err, d = hip.hipMalloc(64)
    args = [ctypes.c_void_p(int(d)), ctypes.c_uint32(7), ctypes.c_uint32(16)]
    for _ in range(2):
        hip.hipModuleLaunchKernel(fn, 1, 1, 1, 16, 1, 1, 0, None, [ctypes.addressof(a) for a in args], None)
    out = np.zeros(16, np.uint32)
    hip.hipMemcpy(out, d, 64, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
    hip.hipFree(d)
    return out.tolist()


def test_replay_wrappers_wrap_the_other_implementations(seen, tmp_path):
    root = tmp_path / "arch"
    assert capture(root, _app) == [7] * 16
    code = replay(root, plugins=["refuser"]).exit_code    # without the wrapper: refused, strict fails
    assert code != 0
    seen.clear()
    code = replay(root, plugins=["refuser", "forgiver"]).exit_code
    assert code == 0                                     # every refusal and strict failure swallowed
    assert [s for s in seen if s[0] == "forgiven"] == [("forgiven", "hipModuleLaunchKernel", "refuser")] * 2
    after = [s for s in seen if s[0] == "after"]        # the old-style wrapper saw every event
    assert len(after) >= 7 and all(s[2] == [] for s in after)
    assert ("strict", [["the refuser says no"]]) in seen


def test_specname_implementations_load_and_run(seen, tmp_path):
    loaded = load_plugins(["renamed"])
    assert loaded.versions == {"renamed": "1.0"} and loaded.broken == []
    root = tmp_path / "arch"
    capture(root, _app)
    assert replay(root, plugins=["renamed"]).exit_code == 0
    assert ("renamed summary",) in seen


def test_a_capture_wrapper_under_another_name_is_refused_naming_the_hook(seen):
    with pytest.raises(BrokenPluginError) as info:
        load_plugins(["renamedwrapper"])
    assert info.value.reason == ("implements hrr_capture_launch with wrapper=True; capture hooks "
                                 "cannot be wrappers (use a plain @hookimpl)")
    assert "'renamedwrapper'" in info.value.what
