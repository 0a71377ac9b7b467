"""The built-in plugins are plugins like any other: they import the plugin API
(``hrr.pipeline``) and nothing else of hrr, and every call they watch or test an event
against comes from a catalogue query, so a new catalogue row is seen without editing them."""
from __future__ import annotations

import ast
import types
from pathlib import Path

import attrs
import pytest
from pinned_helpers import capture, pinned_array

import hrr.pipeline
from hrr.api import catalogue
from hrr.pipeline import Event

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"


def _imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every import in ``path``, at any depth, and of every
    ``importlib.import_module("...")`` / ``__import__("...")`` of a constant name."""
    found: list[tuple[int, str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            found.append((node.lineno, module, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                found.append((node.lineno, node.args[0].value, []))
    return found


def test_builtin_plugins_import_only_the_plugin_api():
    files = sorted(PLUGINS.rglob("*.py"))
    assert len(files) >= 5
    wrong = []
    for path in files:
        for line, module, names in _imports(path):
            where = f"{path.relative_to(PLUGINS.parent)}:{line}"
            top = module.split(".")[0]
            if module.startswith(".") or top == "plugins":
                wrong.append(f"{where}: imports {module} (import the built-ins as hrr_plugins.*)")
            elif top == "hrr" and module != "hrr.pipeline":
                wrong.append(f"{where}: imports {module}, not the plugin API hrr.pipeline")
            elif module == "hrr.pipeline":
                wrong += [f"{where}: hrr.pipeline has no public {n}" for n in names
                          if n not in hrr.pipeline.__all__]
    assert wrong == []


def test_the_checker_sees_every_way_of_importing(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import hrr.capture\nfrom hrr.api.catalogue import CATALOGUE\nfrom . import x\n"
                   "def f():\n    from hrr.backends import hiptypes\n"
                   "import importlib\nimportlib.import_module('hrr.replay.engine')\n")
    modules = sorted(m for _, m, _ in _imports(bad))
    assert modules == [".", "hrr.api.catalogue", "hrr.backends", "hrr.capture", "hrr.replay.engine", "importlib"]


def test_every_name_of_the_plugin_api_exists():
    missing = [n for n in hrr.pipeline.__all__ if not hasattr(hrr.pipeline, n)]
    assert missing == [] and len(set(hrr.pipeline.__all__)) == len(hrr.pipeline.__all__)
    for name in ("CaptureContext", "ReplayContext", "LaunchInfo", "CallInfo", "Event", "EventRefused",
                 "hookimpl"):
        assert name in hrr.pipeline.__all__
    doc = hrr.pipeline.CaptureContext.watch.__doc__ or ""
    assert "before(call)" in doc and "after(call, result)" in doc


def test_roles_names_every_role_by_its_class():
    """``hrr.pipeline.Roles`` holds every role hrr's roles register, so a plugin can name
    any role by class; a parameter role and an output role of one name stay apart."""
    from hrr.api.roles import OUT_ROLES, PARAM_ROLES
    from hrr.pipeline import Roles
    offered = {v for k, v in vars(Roles).items() if not k.startswith("_") and isinstance(v, type)}
    ours = {type(r) for r in (*PARAM_ROLES.values(), *OUT_ROLES.values())
            if type(r).__module__.startswith("hrr.api.roles.")}
    assert offered == ours
    assert all(getattr(Roles, c.__name__) is c for c in ours)
    with pytest.raises(TypeError):
        Roles()


def test_a_role_the_roles_package_gains_is_offered_without_an_entry_here():
    """A role class added to a module of ``hrr.api.roles`` reaches ``Roles`` by itself."""
    import importlib

    import hrr.pipeline.roles as plugin_roles
    from hrr.api.roles import Role, register, unregister

    class Stamp(Role):
        name = "test_stamp"
    Stamp.__module__ = "hrr.api.roles.test_stamp"
    register(Stamp)
    try:
        fresh = importlib.reload(plugin_roles)
        assert fresh.Roles.Stamp is Stamp
    finally:
        unregister(Stamp)
        importlib.reload(plugin_roles)


def test_catalogue_queries_take_role_classes_and_still_names():
    from hrr.pipeline import Roles, param_at, param_positions, result_at
    row = hrr.pipeline.api_row(next(iter(hrr.pipeline.creating("graph_exec"))))
    assert param_at(row, Roles.Handle, "graph") == param_at(row, "handle", "graph")
    assert result_at(row, Roles.HandleOut, "graph_exec") == result_at(row, "handle", "graph_exec")
    assert param_positions(row, Roles.Handle, "graph") == (param_at(row, Roles.Handle, "graph"),)
    assert param_positions(row, Roles.Dim3) == ()
    with pytest.raises(TypeError, match="Role class"):
        param_at(row, Roles.HandleOut)          # an output role where a parameter role belongs
    with pytest.raises(TypeError, match="OutRole class"):
        result_at(row, Roles.Handle)
    with pytest.raises(KeyError, match="no dim3 parameter"):
        param_at(row, Roles.Dim3)


# ---------------------------------------------------------------- rows the plugins were never told of
def _row_like(model: str, name: str) -> catalogue.Api:
    return attrs.evolve(catalogue.CATALOGUE[model], name=name)


@pytest.fixture
def extra_rows(monkeypatch):
    """Catalogue rows under new names, each like an existing call (the sim's function for
    it serves them too): the plugins must watch and recognise them from the rows alone."""
    def add(be: types.ModuleType | None = None, **like: str) -> None:
        for name, model in like.items():
            row = _row_like(model, name)
            monkeypatch.setattr(catalogue, "_ROWS", catalogue._ROWS + (row,))
            monkeypatch.setitem(catalogue.CATALOGUE, name, row)
            if be is not None:
                monkeypatch.setattr(be.hip, name, getattr(be.hip, model), raising=False)
    return add


def test_a_new_pinned_allocation_row_is_tracked_and_snapshotted(tmp_path, extra_rows):
    from hrr.backends import load_backend
    extra_rows(load_backend("sim"), hipTestHostAlloc="hipHostMalloc", hipTestFreeHost="hipHostFree")

    def app(hip, be, session):
        tracker = session.ctx.shared["pinned_snapshot"].tracker
        err, host = hip.hipTestHostAlloc(256, 0)
        assert err == 0
        addr = int(host)
        assert tracker.is_tracked(addr)                  # seen through the new row alone
        pinned_array(addr, 64)[:] = 5
        record = tracker.snapshot(session.ctx, [addr + 8], 0, False)
        assert [(s["base"], s["length"]) for s in record["snaps"]] == [(addr, 256)]
        assert hip.hipTestFreeHost(host)[0] == 0
        assert not tracker.is_tracked(addr)              # a new releasing row is seen too

    capture(tmp_path / "arch", app, plugins=["pinned_snapshot", "graph_capture"])


def test_new_capture_and_launch_rows_are_followed(tmp_path, extra_rows):
    from hrr.backends import load_backend
    extra_rows(load_backend("sim"), hipTestBeginCapture="hipStreamBeginCapture",
               hipTestEndCapture="hipStreamEndCapture")

    def app(hip, be, session):
        state = session.ctx.shared["graph_capture"].state
        err, s = hip.hipStreamCreate()
        mode = hip.hipStreamCaptureMode.hipStreamCaptureModeGlobal
        assert hip.hipTestBeginCapture(s, mode)[0] == 0
        assert state.capture_of(int(s)) is not None
        err, graph = hip.hipTestEndCapture(s)
        assert err == 0 and state.capture_of(int(s)) is None
        hip.hipGraphDestroy(graph)
        hip.hipStreamDestroy(s)

    capture(tmp_path / "arch", app, plugins=["pinned_snapshot", "graph_capture"])


def test_replay_side_tables_come_from_the_rows(extra_rows):
    """Replay recognises events by the same queries (a launch row's stream position, the
    capture transitions), built when replay starts."""
    from hrr_plugins.graph_capture import GraphCapturePlugin
    from hrr_plugins.pinned_snapshot import PinnedSnapshotPlugin
    extra_rows(hipTestLaunch="hipModuleLaunchKernel", hipTestRecord="hipEventRecord",
               hipTestGraphLaunch="hipGraphLaunch", hipTestBeginCapture="hipStreamBeginCapture",
               hipTestEndCapture="hipStreamEndCapture", hipTestWaitEvent="hipStreamWaitEvent")
    watched: dict[str, set[str]] = {}
    ctx = types.SimpleNamespace(hip=None, shared={},
                                watch=lambda plugin, apis, **_: watched.setdefault(plugin, set()).update(apis))
    pinned, graphs = PinnedSnapshotPlugin(), GraphCapturePlugin()
    pinned.hrr_replay_start(ctx)
    graphs.hrr_replay_start(ctx)
    # Their per-event hooks see the new rows too (ctx.watch names calls by the same queries).
    assert "hipTestLaunch" in watched["pinned_snapshot"]
    assert {"hipTestGraphLaunch", "hipTestBeginCapture"} <= watched["graph_capture"]
    assert "hipTestLaunch" not in watched["graph_capture"]   # a kernel launch changes no capture state
    assert pinned.launch_streams["hipTestLaunch"] == catalogue.CATALOGUE["hipModuleLaunchKernel"].param_index("stream")
    assert "hipTestGraphLaunch" in graphs._graph_launch_stream

    def replayed(api: str, *args: int) -> None:
        graphs.hrr_replay_after_event(ctx, Event(1, 0, api, args), (0,))

    replayed("hipTestBeginCapture", 5, 0)           # stream 5 captures
    replayed("hipTestRecord", 7, 5)                 # event 7 recorded on it
    replayed("hipTestWaitEvent", 6, 7, 0)           # stream 6 joins the capture
    assert graphs.is_capturing(5) and graphs.is_capturing(6)
    replayed("hipTestEndCapture", 5)
    assert not graphs.is_capturing(5) and not graphs.is_capturing(6)
