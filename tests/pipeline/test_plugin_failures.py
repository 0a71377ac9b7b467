"""A plugin cannot break the program it records: a capture hook or watcher that raises is
recorded in the manifest, its plugin is disabled, --strict fails naming it, and every HIP
call returns what it returns uncaptured. Wrapper implementations are refused at load."""
from __future__ import annotations

import ctypes
import json
from importlib import metadata

import attrs
import numpy as np
import pytest
from failing_plugins import ERROR, FAILING, HOOK, SECRET
from forkcheck import run_child
from hrrtest import fresh_backend, only, replay, text

import hrr.pipeline.manager as manager
from hrr.archive import open_archive
from hrr.capture.session import CaptureSession
from hrr.config import config
from hrr.errors import PluginError

EXTRA = {name: f"failing_plugins:{cls.__name__}" for name, cls in FAILING.items()} | {
    "good": "failing_plugins:Good", "wrapper": "failing_plugins:Wrapper",
    "hookwrapper": "failing_plugins:HookWrapper"}


@pytest.fixture(autouse=True)
def test_plugins(monkeypatch):
    real = manager.installed_plugins

    def installed():
        eps = dict(real())
        for name, value in EXTRA.items():
            eps[name] = metadata.EntryPoint(name, value, manager.ENTRY_POINT_GROUP)
        return eps
    monkeypatch.setattr(manager, "installed_plugins", installed)


def app(hip, be) -> list:
    """Every call's error and outputs that do not depend on where memory landed."""
    out = []
    err, module = hip.hipModuleLoadData(be.builtin_code_object())
    err, fn = hip.hipModuleGetFunction(module, b"add_u32")
    n = 64
    a = np.arange(n, dtype=np.uint32)
    res = []
    ptrs = []
    for _ in range(3):
        err, d = hip.hipMalloc(n * 4)
        res.append(int(err))
        ptrs.append(d)
    dc, da, db = ptrs
    res.append(int(hip.hipMemcpy(da, a, n * 4, hip.hipMemcpyKind.hipMemcpyHostToDevice)[0]))
    res.append(int(hip.hipMemcpy(db, a, n * 4, hip.hipMemcpyKind.hipMemcpyHostToDevice)[0]))
    for grid in (1, 1, 0):                     # the last is invalid: error 9
        args = [ctypes.c_void_p(int(dc)), ctypes.c_void_p(int(da)), ctypes.c_void_p(int(db)),
                ctypes.c_uint32(n)]
        res.append(hip.hipModuleLaunchKernel(fn, grid, 1, 1, 64, 1, 1, 0, None,
                                             [ctypes.addressof(x) for x in args], None))
    c = np.zeros(n, np.uint32)
    res.append(int(hip.hipMemcpy(c, dc, n * 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost)[0]))
    res += [hip.hipFree(p) for p in ptrs]
    res.append(hip.hipFree(0xDEAD))            # a failing call returns its error, too
    res.append(hip.hipGetLastError())
    out.append(res)
    out.append(c.tolist())
    return out


def uncaptured() -> list:
    be = fresh_backend("sim")
    return app(be.hip, be)


def captured(root, plugins, content: bool | None = True) -> tuple[list, CaptureSession]:
    be = fresh_backend("sim")
    mode = {True: "content", False: "metadata-only", None: None}[content]  # None: plugins decide
    cfg = attrs.evolve(config(), backend="sim", content_mode=mode)
    session = CaptureSession(be, cfg, str(root), plugins=plugins)
    try:
        return app(session.hip, be), session
    finally:
        session.close()


def manifest(root) -> dict:
    return open_archive(str(root)).processes[0].manifest


@pytest.mark.parametrize("name", sorted(FAILING))
def test_a_failing_plugin_changes_nothing_the_app_sees(tmp_path, name, capsys):
    expected = uncaptured()
    root = tmp_path / "arch"
    got, session = captured(root, [name, "good"], content=None if name == "contentallowed" else True)
    assert got == expected
    plugin = dict(session.pm.list_name_plugin())[name]
    if name != "forkchild":
        assert plugin.calls == 1                      # disabled after its first failure
        failures = manifest(root)["plugin_failures"]
        assert len(failures) == 1
        assert {k: failures[0][k] for k in ("plugin", "hook", "error")} == {
            "plugin": name, "hook": HOOK[name], "error": ERROR[name]}
        assert f"plugin {name!r} raised" in capsys.readouterr().err
        # its watchers are gone, so calls only it watched take the unwatched fast path again
        for table in (session.ctx.before_watchers, session.ctx.after_watchers):
            assert all(p != name for entries in table.values() for p, _ in entries)
            assert all(entries for entries in table.values())
    else:
        assert "plugin_failures" not in manifest(root)
    # the good plugin kept recording: both successful launches and the failed one carry its record
    launches = [r.value for r in open_archive(str(root)).processes[0].events()
                if r.value[2] == "hipModuleLaunchKernel"]
    assert [ev[6]["records"]["good"] for ev in launches] == [[{"n": 1}], [{"n": 2}], [{"n": 3}]]
    events = [r.value for r in open_archive(str(root)).processes[0].events()]
    assert all(name not in ev[6].get("records", {}) for ev in events)   # nothing of the failed one


@pytest.mark.parametrize("name", ["launch", "before", "after", "start", "manifest", "badrecord"])
def test_strict_replay_fails_naming_the_plugin(tmp_path, name):
    root = tmp_path / "arch"
    captured(root, [name])
    result = replay(root, strict=True, plugins=[])
    assert result.exit_code == 1
    assert any(repr(name) in reason and HOOK[name] in reason
               for reason in only(result).strict_reasons), text(result)
    result = replay(root, strict=False, plugins=[])
    assert result.exit_code == 0, text(result)


def test_the_message_is_kept_only_in_content_mode(tmp_path):
    captured(tmp_path / "c", ["launch"], content=True)
    assert SECRET in manifest(tmp_path / "c")["plugin_failures"][0]["message"]
    captured(tmp_path / "m", ["launch"], content=False)
    failures = manifest(tmp_path / "m")["plugin_failures"]
    assert failures == [{"plugin": "launch", "hook": "hrr_capture_launch", "error": "ValueError"}]
    assert SECRET not in json.dumps(manifest(tmp_path / "m"))


def test_fork_child_hook_failure_is_named_in_the_childs_manifest(tmp_path):
    root = tmp_path / "arch"
    be = fresh_backend("sim")
    cfg = attrs.evolve(config(), backend="sim", content_mode="content")
    session = CaptureSession(be, cfg, str(root), plugins=["forkchild", "good"])

    def child() -> int:
        session.after_fork_in_child()
        ok = app(session.hip, be) == app(fresh_backend("sim").hip, be)
        session.close()
        return 0 if ok else 3
    try:
        assert run_child(child) == 0
    finally:
        session.close()
    procs = {p.pid: p for p in open_archive(str(root)).processes}
    child_manifest = next(p.manifest for pid, p in procs.items() if pid != session._pid)
    assert child_manifest["plugin_failures"][0]["plugin"] == "forkchild"
    assert child_manifest["plugin_failures"][0]["hook"] == "hrr_capture_fork_child"
    assert "plugin_failures" not in procs[session._pid].manifest


@pytest.mark.parametrize("name,kind", [("wrapper", "wrapper=True"), ("hookwrapper", "hookwrapper=True")])
def test_wrapper_launch_hooks_are_refused_at_load(tmp_path, name, kind):
    with pytest.raises(PluginError) as info:
        manager.make_plugin_manager([name, "good"])
    assert repr(name) in str(info.value) and "hrr_capture_launch" in str(info.value)
    assert kind in str(info.value)
    be = fresh_backend("sim")
    cfg = attrs.evolve(config(), backend="sim", content_mode="content")
    with pytest.raises(PluginError):
        CaptureSession(be, cfg, str(tmp_path / "arch"), plugins=[name])
    assert not (tmp_path / "arch").exists()     # refused before anything is recorded


def test_malformed_plugin_failures_in_a_hostile_manifest_fail_strict(tmp_path):
    from hrr.replay.run import _plugin_failure_reasons
    assert _plugin_failure_reasons(None) == [] and _plugin_failure_reasons([]) == []
    assert _plugin_failure_reasons(7) == ["the manifest's plugin_failures is malformed"]
    assert _plugin_failure_reasons([3]) == ["the manifest's plugin_failures holds a malformed entry"]
    assert len(_plugin_failure_reasons([{"plugin": "x"}] * 30)) == 11
