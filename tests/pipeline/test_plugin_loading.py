"""A broken plugin does not break hrr: one that fails to import, raises when constructed or
fails validation (an unknown hook, an argument the hookspec lacks, a wrapper where none is
allowed) is skipped with one warning line when it is merely installed, and is an error
when asked for by name. Real entry points: a .dist-info written into a directory on
sys.path, found by importlib.metadata like any installed distribution."""
from __future__ import annotations

import sys
import textwrap

import attrs
import numpy as np
import pytest

import hrr.pipeline.manager as manager
from hrr.archive import open_archive
from hrr.capture.session import CaptureSession
from hrr.config import config
from hrr.errors import PluginError
from hrr.pipeline.manager import BrokenPluginError, load_plugins, make_plugin_manager
from hrr.replay.engine import ReplayOptions
from hrr.replay.result import Outcome, ProcessResult
from hrr.replay.run import replay_archive

MODULE = "hrr_loadtest_plugins"
SOURCE = '''
import sys
import pluggy
hookimpl = pluggy.HookimplMarker("hrr")

class Good:
    __version__ = "2.0"
    @hookimpl
    def hrr_replay_summary(self, ctx):
        return ["good: replay summary"]

class Optional:
    @hookimpl(optionalhook=True)
    def hrr_some_future_hook(self, ctx):
        return None

class Misspelled:
    @hookimpl
    def hrr_capture_lanch(self, ctx, launch):
        return None

class BadArgs:
    @hookimpl
    def hrr_capture_launch(self, ctx, lnch):
        return None

class Wrapper:
    @hookimpl(hookwrapper=True)
    def hrr_capture_start(self, ctx):
        yield

class NotAGenerator:
    @hookimpl(wrapper=True)
    def hrr_replay_summary(self, ctx):
        return []

class Raises:
    def __init__(self):
        raise RuntimeError("needs a licence server")

class Exits:
    def __init__(self):
        sys.exit(3)
'''
GOOD = {"good": f"{MODULE}:Good", "optional": f"{MODULE}:Optional"}
BROKEN = {
    "misspelled": (f"{MODULE}:Misspelled", "unknown hook hrr_capture_lanch (did you mean hrr_capture_launch?)"),
    "badargs": (f"{MODULE}:BadArgs",
                "hrr_capture_launch takes lnch, which the hookspec does not pass (it passes: ctx, launch)"),
    "wrapper": (f"{MODULE}:Wrapper", "implements hrr_capture_start with hookwrapper=True; capture hooks "
                                     "cannot be wrappers (use a plain @hookimpl)"),
    "notagenerator": (f"{MODULE}:NotAGenerator", "PluginValidationError: Plugin 'notagenerator' for hook "
                      "'hrr_replay_summary' hookimpl definition: hrr_replay_summary(ctx) Declared as "
                      "wrapper=True or hookwrapper=True but function is not a generator function"),
    "raises": (f"{MODULE}:Raises", "constructing it raised RuntimeError: needs a licence server"),
    "exits": (f"{MODULE}:Exits", "constructing it raised SystemExit: 3"),
    "noattr": (f"{MODULE}:NoSuchClass", "import failed: AttributeError: module 'hrr_loadtest_plugins' has "
                                        "no attribute 'NoSuchClass'"),
    "noimport": ("hrr_loadtest_missing_module:Plugin",
                 "import failed: ModuleNotFoundError: No module named 'hrr_loadtest_missing_module'"),
}


def install(site, entry_points: dict[str, str], dist: str = "hrr_loadtest") -> None:
    """Write a distribution's metadata (and the plugin module) into ``site``."""
    info = site / f"{dist}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    lines = "\n".join(f"{k} = {v}" for k, v in entry_points.items())
    (info / "entry_points.txt").write_text(f"[{manager.ENTRY_POINT_GROUP}]\n{lines}\n")
    (site / f"{MODULE}.py").write_text(textwrap.dedent(SOURCE))


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.setattr(manager, "_warned", set())   # warnings are once per process
    yield
    sys.modules.pop(MODULE, None)


@pytest.fixture
def site(tmp_path, monkeypatch):
    site = tmp_path / "site"
    install(site, GOOD | {name: value for name, (value, _) in BROKEN.items()})
    monkeypatch.syspath_prepend(str(site))
    return site


def warnings(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("hrr: warning: plugin ")]


def test_installed_broken_plugins_are_skipped_with_their_reasons(site):
    loaded = load_plugins()
    assert {b.name: b.reason for b in loaded.broken} == {name: reason for name, (_, reason) in BROKEN.items()}
    assert {b.name: b.entry for b in loaded.broken} == {name: value for name, (value, _) in BROKEN.items()}
    registered = {name for name, _ in loaded.pm.list_name_plugin()}
    assert registered == set(loaded.versions) == {"good", "optional", "graph_capture", "pinned_snapshot", "privacy"}
    assert loaded.versions["good"] == "2.0" and loaded.versions["optional"] == "1.0"


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_plugin_asked_for_by_name_is_an_error(site, name):
    value, reason = BROKEN[name]
    with pytest.raises(BrokenPluginError) as info:
        load_plugins(["good", name])
    assert info.value.what == f"plugin {name!r} ({value}) is broken: {reason}"
    assert "\n" not in str(info.value)
    assert isinstance(info.value, PluginError)
    with pytest.raises(BrokenPluginError):          # make_plugin_manager: the same rule
        make_plugin_manager([name])


def test_unknown_names_stay_unknown(site):
    with pytest.raises(PluginError, match=r"unknown plugin\(s\): nosuch"):
        load_plugins(["nosuch"], required=False)


def test_one_warning_line_per_broken_plugin_per_process(site, capsys):
    for _ in range(3):
        pm, versions = make_plugin_manager()
        assert "good" in versions and not set(BROKEN) & set(versions)
    lines = warnings(capsys.readouterr().err)
    assert lines == [f"hrr: warning: plugin {name!r} ({value}) is broken and was skipped: {reason}"
                     for name, (value, reason) in sorted(BROKEN.items())]


def _app(hip, be) -> list[int]:
    err, module = hip.hipModuleLoadData(be.builtin_code_object())
    err, fn = hip.hipModuleGetFunction(module, b"fill_u32")
    err, d = hip.hipMalloc(64)
    import ctypes
    args = [ctypes.c_void_p(int(d)), ctypes.c_uint32(7), ctypes.c_uint32(16)]
    hip.hipModuleLaunchKernel(fn, 1, 1, 1, 16, 1, 1, 0, None, [ctypes.addressof(a) for a in args], None)
    out = np.zeros(16, np.uint32)
    hip.hipMemcpy(out, d, 64, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
    hip.hipFree(d)
    return out.tolist()


def _capture(root, plugins=None) -> dict:
    from hrrtest import fresh_backend
    be = fresh_backend("sim")
    cfg = attrs.evolve(config(), backend="sim", content_mode="content", plugins=None)
    session = CaptureSession(be, cfg, str(root), plugins=plugins)
    try:
        assert _app(session.hip, be) == [7] * 16
    finally:
        session.close()
    return open_archive(str(root)).processes[0].manifest


def test_capture_with_every_installed_plugin_skips_the_broken_ones(site, tmp_path, capsys):
    manifest = _capture(tmp_path / "arch")
    assert set(manifest["plugins"]) == {"good", "optional", "graph_capture", "pinned_snapshot", "privacy"}
    assert len(warnings(capsys.readouterr().err)) == len(BROKEN)


def _replay(root, strict: bool, plugins=None) -> ProcessResult:
    (proc,) = replay_archive(str(root), options=ReplayOptions(strict=strict), plugins=plugins).processes
    return proc


def test_a_recorded_plugin_broken_at_replay_is_like_a_missing_one(tmp_path, monkeypatch, capsys):
    """Recorded where `flaky` worked; replayed where it raises when constructed."""
    there, here = tmp_path / "there", tmp_path / "here"
    install(there, {"flaky": f"{MODULE}:Good"})
    install(here, {"flaky": f"{MODULE}:Raises"})
    monkeypatch.syspath_prepend(str(there))
    root = tmp_path / "arch"
    assert _capture(root, plugins=["flaky"])["plugins"] == {"flaky": "2.0"}
    proc = _replay(root, strict=True)
    assert proc.exit_code == 0 and "good: replay summary" in proc.plugin_lines
    capsys.readouterr()

    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(there)])
    monkeypatch.syspath_prepend(str(here))
    proc = _replay(root, strict=False)
    assert proc.exit_code == 0 and proc.outcome is Outcome.OK and "good: replay summary" not in proc.plugin_lines
    proc = _replay(root, strict=True)
    assert proc.exit_code == 1
    assert ("recorded plugins not installed: flaky (broken here: constructing it raised "
            "RuntimeError: needs a licence server)") in proc.strict_reasons
    err = capsys.readouterr().err
    assert warnings(err) == [f"hrr: warning: plugin 'flaky' ({MODULE}:Raises) is broken and was skipped: "
                             "constructing it raised RuntimeError: needs a licence server"]
    with pytest.raises(BrokenPluginError):          # asked for by name: an error, as at capture
        _replay(root, strict=False, plugins=["flaky"])


def test_the_entry_point_scan_is_reused_until_a_distribution_is_installed(site, monkeypatch):
    # Every capture session and replay asks which plugins are installed: the metadata of
    # every distribution is read once, and again only once something is installed.
    scans = []
    real = manager.metadata.entry_points
    monkeypatch.setattr(manager.metadata, "entry_points", lambda **kw: scans.append(kw) or real(**kw))
    first = manager.installed_plugins()
    assert manager.installed_plugins() == first and len(scans) == 1
    install(site, {"late": f"{MODULE}:Good"}, dist="hrr_loadtest_late")
    assert "late" in manager.installed_plugins() and len(scans) == 2


def test_a_plugin_class_is_validated_once_and_a_broken_one_every_time(site, monkeypatch):
    checked = []
    real = manager._hook_problems
    monkeypatch.setattr(manager, "_hook_problems", lambda pm, obj: checked.append(type(obj).__name__) or real(pm, obj))
    for _ in range(3):
        load_plugins(["good"])
        with pytest.raises(BrokenPluginError):
            load_plugins(["misspelled"])
    assert checked.count("Good") == 1 and checked.count("Misspelled") == 3


def test_plugins_are_validated_one_at_a_time_in_one_scratch_manager(site, monkeypatch):
    # Each manager parses hrr's hookspecs (milliseconds of a recorded process's start-up):
    # validation reuses one, left empty after each plugin, and a plugin that failed in it
    # (registered, then refused) never stays in it to fail the next one.
    monkeypatch.setattr(manager, "_validated", {})
    monkeypatch.setattr(manager, "_scratch", [None])
    made = []
    real = manager.new_plugin_manager
    monkeypatch.setattr(manager, "new_plugin_manager", lambda: made.append(1) or real())
    loaded = load_plugins(["good", "optional", "graph_capture", "pinned_snapshot", "privacy"])
    assert len(made) == 2   # the scratch manager and the one returned
    assert manager._scratch[0] is not None and manager._scratch[0].get_plugins() == set()
    assert set(loaded.versions) == {"good", "optional", "graph_capture", "pinned_snapshot", "privacy"}
    for name in ("notagenerator", "wrapper"):   # refused after registering in the scratch manager
        with pytest.raises(BrokenPluginError):
            load_plugins([name])
    assert manager._scratch[0] is None   # the manager a refused plugin was registered in is dropped
    manager._validated.clear()
    assert set(load_plugins(["good"]).versions) == {"good"}
    assert manager._scratch[0] is not None and manager._scratch[0].get_plugins() == set()
