"""The plugin manager: finds plugins through one entry-point group, built-ins included."""
from __future__ import annotations

from importlib import metadata
from typing import Any

import pluggy

from hrr.errors import PluginError
from hrr.pipeline import hookspecs

ENTRY_POINT_GROUP = "hrr.plugins"


def installed_plugins() -> dict[str, metadata.EntryPoint]:
    """Every plugin installed in this environment, by entry-point name."""
    eps = metadata.entry_points(group=ENTRY_POINT_GROUP)
    return {ep.name: ep for ep in sorted(eps, key=lambda e: e.name)}


def parse_plugin_list(text: str | None) -> list[str] | None:
    """``"a,b"`` → ``["a", "b"]``; None (no ``--plugins``) means every installed plugin."""
    if text is None:
        return None
    return [p.strip() for p in text.split(",") if p.strip()]


def _instantiate(obj: Any) -> Any:
    # An entry point may name a class (one fresh instance per pipeline, so state is
    # never shared between sessions) or a ready object such as a module.
    return obj() if isinstance(obj, type) else obj


def plugin_version(obj: Any, ep: metadata.EntryPoint) -> str:
    """A plugin's version: its ``__version__`` or else its distribution's."""
    version = getattr(obj, "__version__", None)
    if version:
        return str(version)
    dist = getattr(ep, "dist", None)
    return str(dist.version) if dist is not None else "unknown"


def make_plugin_manager(selected: list[str] | None = None) -> tuple[pluggy.PluginManager, dict[str, str]]:
    """A manager with the selected plugins registered (all installed when None) and
    the name → version map of what was loaded. Unknown names are a PluginError."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    available = installed_plugins()
    names = list(available) if selected is None else selected
    unknown = [n for n in names if n not in available]
    if unknown:
        listing = ", ".join(available) or "none"
        raise PluginError(f"unknown plugin(s): {', '.join(unknown)}",
                          hint=f"installed plugins: {listing}")
    versions: dict[str, str] = {}
    for name in names:
        ep = available[name]
        try:
            obj = _instantiate(ep.load())
            pm.register(obj, name=name)
        except Exception as exc:  # noqa: BLE001 - a broken plugin must name itself
            raise PluginError(f"plugin {name!r} ({ep.value}) failed to load: {exc}",
                              hint="fix or uninstall it, or leave it out with --plugins") from exc
        versions[name] = plugin_version(obj, ep)
        _refuse_capture_wrappers(pm, name, obj, ep)
    pm.check_pending()
    return pm, versions


def _refuse_capture_wrappers(pm: pluggy.PluginManager, name: str, obj: Any,
                             ep: metadata.EntryPoint) -> None:
    """hrr calls each capture hook implementation itself (one that raises is disabled, not
    the application's call), so a wrapper there could not wrap anything: refuse it now."""
    from hrr.pipeline.capture import CAPTURE_HOOKS

    for hook in CAPTURE_HOOKS:
        for impl in getattr(pm.hook, hook).get_hookimpls():
            if impl.plugin is obj and (impl.hookwrapper or getattr(impl, "wrapper", False)):
                kind = "hookwrapper=True" if impl.hookwrapper else "wrapper=True"
                pm.unregister(obj)
                raise PluginError(
                    f"plugin {name!r} ({ep.value}) implements {hook} with {kind}; "
                    f"capture hooks cannot be wrappers",
                    hint="use a plain @hookimpl (hrr calls each capture stage itself, "
                         "so that a failing stage never breaks the recorded program)")


def hook_implementations(pm: pluggy.PluginManager) -> dict[str, list[str]]:
    """For each registered plugin, the hooks it implements (for ``hrr plugins``)."""
    out: dict[str, list[str]] = {}
    for name, plugin in pm.list_name_plugin():
        hooks = [hc.name for hc in pm.get_hookcallers(plugin) or ()]
        out[name] = sorted(hooks)
    return out
