"""The plugin manager: finds plugins through one entry-point group, built-ins included.

A plugin that cannot load (its entry point fails to import, its constructor raises, or
it fails validation: an unknown hook, an argument the hookspec does not have, a wrapper
where none is allowed) is *broken*. Asked for by name it is an error; found only because
it is installed, it is skipped with one warning line, so it never breaks hrr itself."""
from __future__ import annotations

import difflib
import inspect
import os
import sys
import threading
from importlib import metadata
from typing import Any, Callable

import attrs
import pluggy

from hrr.errors import PluginError
from hrr.pipeline import hookspecs

ENTRY_POINT_GROUP = "hrr.plugins"
_HOOK_NAMES = hookspecs.HOOK_NAMES
_warned: set[tuple[str, str]] = set()   # (plugin, reason) already warned about in this process
# Entry-point objects (a plugin class or module) whose hooks passed validation in this
# process, with the type of the object they made: validation reads only the class's hooks.
_validated: dict[Any, type] = {}


class BrokenPluginError(PluginError):
    """A plugin that is installed but cannot be used; ``reason`` is one line."""

    def __init__(self, name: str, entry: str, reason: str) -> None:
        self.name, self.entry, self.reason = name, entry, reason
        super().__init__(f"plugin {name!r} ({entry}) is broken: {reason}",
                         hint="fix or uninstall it, or leave it out with --plugins")


@attrs.frozen
class BrokenPlugin:
    """An installed plugin that cannot be used here, and why (one line)."""

    name: str
    entry: str
    reason: str

    def warning(self) -> str:
        """The one line printed when it is skipped."""
        return (f"hrr: warning: plugin {self.name!r} ({self.entry}) is broken and was skipped: "
                f"{self.reason}")


@attrs.frozen
class LoadedPlugins:
    """A plugin manager with the usable plugins registered, and what was skipped."""

    pm: pluggy.PluginManager
    versions: dict[str, str]
    broken: list[BrokenPlugin]


def _path_state() -> tuple:
    # What an installation changes: the import path and each entry's modification time
    # (installing or removing a distribution rewrites its site directory).
    state: list[tuple] = []
    for entry in sys.path:
        try:
            st = os.stat(entry or ".")
            state.append((entry, st.st_mtime_ns, st.st_nlink, st.st_size))
        except OSError:
            state.append((entry, None))
    return tuple(state)


_installed: list[Any] = [None, {}]   # [path state, plugins]: the last scan, reused until it changes


def installed_plugins() -> dict[str, metadata.EntryPoint]:
    """Every plugin installed in this environment, by entry-point name. The scan of every
    distribution's metadata is kept until the import path or a directory on it changes."""
    state = _path_state()
    if _installed[0] != state:
        eps = metadata.entry_points(group=ENTRY_POINT_GROUP)
        _installed[:] = [state, {ep.name: ep for ep in sorted(eps, key=lambda e: e.name)}]
    return dict(_installed[1])


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


def new_plugin_manager() -> pluggy.PluginManager:
    """An empty manager that knows hrr's hookspecs."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def _required_args(fn: Any) -> list[str]:
    # The arguments pluggy passes by name: those without a default (self already bound).
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    names = [p.name for p in params if p.default is p.empty
             and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return names[1:] if names[:1] == ["self"] else names


def _hook_problems(pm: pluggy.PluginManager, obj: Any) -> list[str]:
    """Misspelled hooks and arguments the hookspec lacks, said the way a plugin author
    fixes them (pluggy's own messages span lines and name the object's repr)."""
    problems = []
    for attr in sorted(dir(obj)):
        try:
            fn = getattr(obj, attr)
        except Exception:  # noqa: BLE001 - a property that raises is not a hook
            continue
        opts = pm.parse_hookimpl_opts(obj, attr) if callable(fn) else None
        if opts is None:
            continue
        hook = opts.get("specname") or attr   # pluggy's specname: a method named otherwise
        spec = getattr(hookspecs, hook, None)
        if hook not in _HOOK_NAMES or spec is None:
            if not opts.get("optionalhook"):
                near = difflib.get_close_matches(hook, _HOOK_NAMES, n=1)
                problems.append(f"unknown hook {hook}" + (f" (did you mean {near[0]}?)" if near else ""))
            continue
        allowed = set(inspect.signature(spec).parameters)
        extra = [a for a in _required_args(fn) if a not in allowed]
        if extra:
            problems.append(f"{hook} takes {', '.join(extra)}, which the hookspec does not pass "
                            f"(it passes: {', '.join(sorted(allowed))})")
    return problems


def _one_line(exc: BaseException) -> str:
    text = " ".join(part.strip() for part in str(exc).splitlines() if part.strip())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# One manager with hrr's hookspecs for validating plugins one at a time (each registered,
# checked, unregistered): parsing the hookspecs costs milliseconds per manager.
_scratch: list[pluggy.PluginManager | None] = [None]
_scratch_lock = threading.Lock()


def _validate(scratch: pluggy.PluginManager, name: str, obj: Any,
              broken: Callable[[str], BrokenPluginError]) -> None:
    problems = _hook_problems(scratch, obj)
    if problems:
        raise broken("; ".join(problems))
    try:
        scratch.register(obj, name=name)
        scratch.check_pending()
    except Exception as exc:  # noqa: BLE001 - pluggy's other checks, said in one line
        raise broken(_one_line(exc)) from exc


def load_plugin(name: str, ep: metadata.EntryPoint) -> tuple[Any, str]:
    """Import, construct and validate one plugin on its own manager; return the object
    and its version. Anything wrong is a PluginError whose ``what`` is one line."""
    def broken(reason: str) -> BrokenPluginError:
        return BrokenPluginError(name, ep.value, reason)
    try:
        loaded = ep.load()
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a broken plugin must name itself
        raise broken(f"import failed: {_one_line(exc)}") from exc
    try:
        obj = _instantiate(loaded)
    except (Exception, SystemExit) as exc:  # noqa: BLE001
        raise broken(f"constructing it raised {_one_line(exc)}") from exc
    if _validated.get(loaded) is not type(obj):  # once per plugin class and process
        with _scratch_lock:
            scratch = _scratch[0] or new_plugin_manager()
            _scratch[0] = None   # taken: a plugin left registered in it must not stay
            _validate(scratch, name, obj, broken)
            _refuse_capture_wrappers(scratch, name, obj, ep)
            scratch.unregister(obj)
            _scratch[0] = scratch   # empty again: the next plugin is checked on its own
        try:
            _validated[loaded] = type(obj)
        except TypeError:  # an unhashable entry-point object: validated every time
            pass
    try:
        return obj, plugin_version(obj, ep)
    except Exception as exc:  # noqa: BLE001
        raise broken(f"its version cannot be read: {_one_line(exc)}") from exc


def load_plugins(selected: list[str] | None = None, *, required: bool | None = None) -> LoadedPlugins:
    """Register ``selected`` (every installed plugin when None). A broken plugin is a
    PluginError when ``required`` (default: when named in ``selected``), else skipped and
    listed in ``broken``. An unknown name is always a PluginError."""
    required = selected is not None if required is None else required
    pm = new_plugin_manager()
    available = installed_plugins()
    names = list(available) if selected is None else selected
    unknown = [n for n in names if n not in available]
    if unknown:
        listing = ", ".join(available) or "none"
        raise PluginError(f"unknown plugin(s): {', '.join(unknown)}",
                          hint=f"installed plugins: {listing}")
    versions: dict[str, str] = {}
    broken: list[BrokenPlugin] = []
    for name in names:
        ep = available[name]
        try:
            obj, version = load_plugin(name, ep)
        except BrokenPluginError as exc:
            if required:
                raise
            broken.append(BrokenPlugin(name, ep.value, exc.reason))
            continue
        pm.register(obj, name=name)
        versions[name] = version
    pm.check_pending()
    return LoadedPlugins(pm, versions, broken)


def warn_broken(broken: list[BrokenPlugin], write: Callable[[str], Any] | None = None) -> None:
    """One warning line per broken plugin, once per process however often it is skipped."""
    for b in broken:
        if (b.name, b.reason) in _warned:
            continue
        _warned.add((b.name, b.reason))
        (write or (lambda line: sys.stderr.write(line + "\n")))(b.warning())


def make_plugin_manager(selected: list[str] | None = None) -> tuple[pluggy.PluginManager, dict[str, str]]:
    """A manager with the selected plugins registered (all installed when None) and
    the name → version map of what was loaded. An unknown or broken name is a
    PluginError; with None, broken plugins are skipped with one warning line each."""
    loaded = load_plugins(selected)
    warn_broken(loaded.broken)
    return loaded.pm, loaded.versions


def _refuse_capture_wrappers(pm: pluggy.PluginManager, name: str, obj: Any,
                             ep: metadata.EntryPoint) -> None:
    """hrr calls each capture hook implementation itself (one that raises is disabled, not
    the application's call), so a wrapper there could not wrap anything: refuse it now."""
    for hook in hookspecs.CAPTURE_HOOKS:
        for impl in getattr(pm.hook, hook).get_hookimpls():
            if impl.plugin is obj and (impl.hookwrapper or getattr(impl, "wrapper", False)):
                kind = "hookwrapper=True" if impl.hookwrapper else "wrapper=True"
                pm.unregister(obj)
                # A plain @hookimpl is the fix: hrr calls each capture stage itself, so
                # that a failing stage never breaks the recorded program.
                raise BrokenPluginError(name, ep.value, f"implements {hook} with {kind}; capture "
                                        f"hooks cannot be wrappers (use a plain @hookimpl)")


def hook_implementations(pm: pluggy.PluginManager) -> dict[str, list[str]]:
    """For each registered plugin, the hooks it implements (for ``hrr plugins``)."""
    out: dict[str, list[str]] = {}
    for name, plugin in pm.list_name_plugin():
        hooks = [hc.name for hc in pm.get_hookcallers(plugin) or ()]
        out[name] = sorted(hooks)
    return out
