"""The capture pipeline: the context capture stages receive, and hook dispatch.

Hook implementations are resolved once; calls that no stage watches cost nothing.

Isolation: capture must never change what the application's HIP call returns. Every
capture hook and watcher is called by hrr itself, one implementation at a time; one that
raises is recorded in the manifest's ``plugin_failures`` (plugin, hook, exception type;
the message only in content mode), its plugin is disabled for the rest of the capture
(its watchers, launch hook and records dropped) and the call goes on exactly as it
would have uncaptured. ``hrr replay --strict`` then fails naming the plugin.
"""
from __future__ import annotations

import json
import sys
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterable

import msgpack
import pluggy

from hrr.allocations import DEVICE
from hrr.api.roles import LAUNCH_ALL, LAUNCH_HOST, LAUNCH_NONE  # CaptureContext.launch_scope
from hrr.inventory import CONTENT_KINDS, KINDS_BY_NAME
from hrr.pipeline.context import CallInfo, LaunchInfo

if TYPE_CHECKING:
    from hrr.allocations import AllocationTable
    from hrr.config import Config

__all__ = ["AfterWatcher", "BeforeWatcher", "CaptureContext"]

#: ``before(call)``: runs before a watched call; returns a record (msgpack-native) to
#: attach to the call's event under the plugin's name, or None.
BeforeWatcher = Callable[[CallInfo], Any]
#: ``after(call, result)``: runs after a watched call returned ``result`` (its tuple).
AfterWatcher = Callable[[CallInfo, tuple], Any]
_MESSAGE_CHARS = 500


class RowWatchers:
    """The watchers of one call, as the recorder's wrapper for it reads them on every call
    (looked up once, when the call is wrapped): ``before`` and ``after`` are tuples of
    (plugin, watcher), kept current by ``watch`` and by a plugin's failure."""

    __slots__ = ("before", "after")

    def __init__(self) -> None:
        self.before: tuple[tuple[str, BeforeWatcher], ...] = ()
        self.after: tuple[tuple[str, AfterWatcher], ...] = ()


def _impls(pm: pluggy.PluginManager, hook: str) -> list[tuple[str, Callable, tuple[str, ...]]]:
    """(plugin name, function, argument names) in pluggy's call order."""
    return [(impl.plugin_name, impl.function, tuple(impl.argnames))
            for impl in reversed(getattr(pm.hook, hook).get_hookimpls())]


class CaptureContext:
    """What every capture stage sees (``ctx`` in the capture hooks), one per process.

    Attributes a stage reads: ``hip`` (the raw backend's HIP module: calls made on it are
    not recorded, and must not change the application's state), ``backend`` (the
    backend module), ``config`` (the capture configuration), ``allocations`` (capture's
    table of live allocations), ``shared`` (a dict stages share, each under its plugin's
    name) and ``content_mode``."""

    def __init__(self, pm: pluggy.PluginManager, session: Any) -> None:
        self.pm = pm
        self._session = session
        self.backend: Any = session.backend
        self.hip: Any = session.backend.hip     # the raw backend: calls here are not recorded
        self.config: Config = session.config
        self.allocations: AllocationTable = session.allocations
        self.shared: dict[str, Any] = {}
        self.before_watchers: dict[str, list[tuple[str, BeforeWatcher]]] = {}
        self.after_watchers: dict[str, list[tuple[str, AfterWatcher]]] = {}
        self._rows: dict[str, RowWatchers] = {}
        #: Held while the watcher tables change: a plugin may subscribe on any thread once
        #: it has work (the session registers it as a fork lock; it is held briefly and
        #: nothing else is taken under it).
        self.watch_lock = threading.Lock()
        self._content: dict[str, bool] = {}
        self.content_why = ""   # set by start()
        self.disabled: set[str] = set()
        self.plugin_failures: list[dict[str, str]] = []
        # Resolved once, in pluggy's call order: launches are a hot path.
        self._launch_impls = [(plugin, fn, "ctx" in args)
                              for plugin, fn, args in _impls(pm, "hrr_capture_launch")]
        self._host_only: set[str] = set()   # see launches_into_host_memory_only
        #: What launches the enabled launch hooks see (read per launch, kept by _rescope):
        #: LAUNCH_NONE, LAUNCH_HOST (only those pointing into host memory) or LAUNCH_ALL.
        self.launch_scope = LAUNCH_ALL if self._launch_impls else LAUNCH_NONE

    # -- set-up -----------------------------------------------------------------------
    def start(self) -> None:
        """Decide the content policy once (``--content`` / ``--metadata-only`` override
        the stages' answers), then let every stage set itself up."""
        forced = self.config.content_mode
        vetoes: list[str] = []
        allowers: list[str] = []
        for kind in CONTENT_KINDS:
            if forced in ("content", "metadata-only"):
                self._content[kind] = forced == "content"
                continue
            plugin, answer = self._first_answer_from("hrr_capture_content_allowed", ctx=self, kind=kind)
            self._content[kind] = True if answer is None else bool(answer)
            said = vetoes if answer is not None and not answer else allowers if answer else []
            if plugin is not None and plugin not in said:
                said.append(plugin)
        #: Why the content mode is what it is, in words (the manifest's ``content_why``).
        self.content_why = (f"--{forced}" if forced in ("content", "metadata-only")
                            else f"plugin {', '.join(vetoes)} vetoed content" if vetoes
                            else f"plugin {', '.join(allowers)} allowed content" if allowers
                            else "no running plugin vetoed content")
        self._call_each("hrr_capture_start", ctx=self)

    def watch(self, plugin: str, apis: Iterable[str], *, before: BeforeWatcher | None = None,
              after: AfterWatcher | None = None) -> None:
        """Subscribe ``plugin`` to the calls named in ``apis`` (call it from
        ``hrr_capture_start``; name the calls by a catalogue query such as
        ``launching()`` or ``allocating("pinned")``, so a new catalogue row is seen too).

        ``before(call)`` runs on the calling thread just before the call reaches the
        backend; ``call`` is a :class:`CallInfo` (the catalogue row and the arguments,
        positional, defaults filled in). A non-None return is a record attached to the
        call's event under ``plugin`` (it must be msgpack-native). ``after(call, result)``
        runs once the call returned ``result``, its return tuple (error code first),
        after the event was recorded. A watcher that raises disables its plugin for the
        rest of the capture (see the module's docstring); the call itself is unaffected.
        Watchers of one call run in the order they were registered; a name that is not
        a catalogued call is never called."""
        if plugin in self.disabled:
            return
        with self.watch_lock:
            for api in apis:
                if before is not None:
                    self.before_watchers.setdefault(api, []).append((plugin, before))
                if after is not None:
                    self.after_watchers.setdefault(api, []).append((plugin, after))
                self._refresh(api)

    def row_watchers(self, api: str) -> RowWatchers:
        """The live watchers of ``api`` (one object per call, updated in place)."""
        with self.watch_lock:
            cell = self._rows.get(api)
            if cell is None:
                cell = self._rows[api] = RowWatchers()
                self._refresh(api)
            return cell

    def _refresh(self, api: str) -> None:   # under watch_lock
        cell = self._rows.get(api)
        if cell is not None:
            cell.before = tuple(self.before_watchers.get(api, ()))
            cell.after = tuple(self.after_watchers.get(api, ()))

    @property
    def launch_watched(self) -> bool:
        """Whether an enabled stage implements ``hrr_capture_launch`` (else capture builds
        no LaunchInfo)."""
        return bool(self._launch_impls)

    def launches_into_host_memory_only(self, plugin: str) -> None:
        """Declare that ``plugin``'s ``hrr_capture_launch`` does nothing for a launch none of
        whose pointer words points into a non-device allocation (``launch.pointers``, kind
        other than DEVICE): such launches are not handed to it, and while every enabled
        launch hook says so, capture builds no LaunchInfo for them."""
        self._host_only.add(plugin)
        self._rescope()

    def _rescope(self) -> None:
        impls = self._launch_impls
        self.launch_scope = (LAUNCH_NONE if not impls else LAUNCH_HOST
                             if all(i[0] in self._host_only for i in impls) else LAUNCH_ALL)

    # -- services for stages -----------------------------------------------------------
    def content_allowed(self, kind: str) -> bool:
        """Whether bytes of data kind ``kind`` may be written (decided at start)."""
        if kind not in KINDS_BY_NAME:
            raise KeyError(f"{kind!r} is not a data kind registered in hrr.inventory")
        return self._content.get(kind, True)

    @property
    def content_mode(self) -> str:
        """``"content"`` when every content kind is allowed, else ``"metadata-only"``."""
        return "content" if all(self._content.values()) else "metadata-only"

    def put_blob(self, kind: str, data: bytes) -> str | None:
        """Write ``data`` (a private copy) as a blob of data kind ``kind``; returns its
        name, or None when the content policy vetoes that kind."""
        if not self.content_allowed(kind):
            return None
        return self._session.put_blob(data)

    def add_unreplayable(self, api: str, reason: str, **detail: Any) -> None:
        """List something the archive cannot replay faithfully in the manifest (``api``:
        the call, or a short name for what cannot be replayed; ``detail``: JSON fields)."""
        self._session.add_unreplayable(api, reason, **detail)

    def register_fork_lock(self, lock: Any) -> None:
        """Have a ``fork()`` take ``lock`` before the archive writer's locks and release
        it on both sides, so that a child never inherits it held by a thread it lacks.
        Take it only briefly, and never while taking another registered lock."""
        from hrr.archive.forking import RANK_PLUGIN, register_fork_lock

        register_fork_lock(lock, RANK_PLUGIN)

    # -- failures ----------------------------------------------------------------------
    def plugin_failed(self, plugin: str, hook: str, exc: BaseException) -> None:
        """Record that ``plugin`` raised ``exc`` in ``hook`` and disable it for the rest of
        the capture; the manifest names it at once (a later crash keeps the entry)."""
        if plugin in self.disabled:
            return
        self.disabled.add(plugin)
        entry = {"plugin": plugin, "hook": hook, "error": type(exc).__name__}
        if self._content and self.content_mode == "content":
            entry["message"] = str(exc)[:_MESSAGE_CHARS]   # may hold app data: content only
        self.plugin_failures.append(entry)
        self._drop_watchers(plugin)
        self._launch_impls = [i for i in self._launch_impls if i[0] != plugin]
        self._rescope()
        sys.stderr.write(f"hrr: plugin {plugin!r} raised {type(exc).__name__} in {hook}; "
                         f"it is disabled for the rest of this capture "
                         f"(the manifest's plugin_failures names it)\n")
        writer = getattr(self._session, "writer", None)
        if writer is not None:
            try:
                writer.update_manifest(plugin_failures=list(self.plugin_failures))
            except Exception:  # noqa: BLE001 - the close writes it again; never fail the app
                pass

    def _drop_watchers(self, plugin: str) -> None:
        """Remove every watcher of ``plugin`` (new lists, so a thread iterating the old
        one is unaffected)."""
        tables: tuple[dict[str, list[Any]], ...] = (self.before_watchers, self.after_watchers)
        with self.watch_lock:
            for table in tables:
                for api, entries in list(table.items()):
                    kept = [e for e in entries if e[0] != plugin]
                    if len(kept) != len(entries):
                        if kept:
                            table[api] = kept
                        else:
                            table.pop(api, None)
                        self._refresh(api)

    def _record_ok(self, plugin: str, hook: str, rec: Any) -> bool:
        """A record must be msgpack-native (the archive writer would otherwise raise out
        of the application's call): one that is not counts as the plugin's failure."""
        try:
            msgpack.packb(rec, use_bin_type=True)
        except Exception as exc:  # noqa: BLE001 - TypeError, OverflowError, ValueError...
            self.plugin_failed(plugin, hook, TypeError(f"returned a record that is not "
                                                       f"msgpack-native: {exc}"))
            return False
        return True

    def _call_each(self, hook: str, **kwargs: Any) -> list[tuple[str, Any]]:
        """Call every enabled implementation of ``hook``; (plugin, result) for each."""
        results = []
        for plugin, fn, argnames in _impls(self.pm, hook):
            if plugin in self.disabled:
                continue
            try:
                results.append((plugin, fn(**{k: kwargs[k] for k in argnames})))
            except Exception as exc:  # noqa: BLE001 - a stage must never break the app
                self.plugin_failed(plugin, hook, exc)
        return [(p, r) for p, r in results if p not in self.disabled]

    def _first_answer(self, hook: str, **kwargs: Any) -> Any:
        """firstresult: the first enabled implementation's non-None answer."""
        return self._first_answer_from(hook, **kwargs)[1]

    def _first_answer_from(self, hook: str, **kwargs: Any) -> tuple[str | None, Any]:
        """firstresult: the first enabled implementation's non-None answer, and its plugin."""
        for plugin, fn, argnames in _impls(self.pm, hook):
            if plugin in self.disabled:
                continue
            try:
                answer = fn(**{k: kwargs[k] for k in argnames})
            except Exception as exc:  # noqa: BLE001
                self.plugin_failed(plugin, hook, exc)
                continue
            if answer is not None:
                return plugin, answer
        return None, None

    # -- dispatch (called by the capture engine) ----------------------------------------
    def run_before(self, api: str, call: CallInfo, entries: Iterable[tuple[str, BeforeWatcher]] | None = None
                   ) -> dict[str, list] | None:
        """The ``before`` watchers of ``api`` (``entries``: as ``row_watchers(api).before``
        holds them); the records they made, by plugin."""
        records: dict[str, list] | None = None
        for plugin, fn in self.before_watchers.get(api, ()) if entries is None else entries:
            if plugin in self.disabled:
                continue
            try:
                rec = fn(call)
            except Exception as exc:  # noqa: BLE001 - a stage must never break the app
                self.plugin_failed(plugin, f"watch before {api}", exc)
                continue
            if rec is not None and self._record_ok(plugin, f"watch before {api}", rec):
                records = records or {}
                records.setdefault(plugin, []).append(rec)
        return self._enabled(records) if records else None

    def run_after(self, api: str, call: CallInfo, result: Any,
                  entries: Iterable[tuple[str, AfterWatcher]] | None = None) -> None:
        """The ``after`` watchers of ``api`` (``entries``: as ``row_watchers(api).after``)."""
        for plugin, fn in self.after_watchers.get(api, ()) if entries is None else entries:
            if plugin in self.disabled:
                continue
            try:
                fn(call, result)
            except Exception as exc:  # noqa: BLE001
                self.plugin_failed(plugin, f"watch after {api}", exc)

    def run_launch(self, launch: LaunchInfo) -> dict[str, list] | None:
        """Every ``hrr_capture_launch``; the records they made, by plugin."""
        records: dict[str, list] | None = None
        host_only = self._host_only
        into_host: bool | None = None   # asked once, only if a hook needs to know
        for plugin, fn, wants_ctx in self._launch_impls:
            if plugin in host_only:
                if into_host is None:
                    into_host = any(p.kind != DEVICE for p in launch.pointers)
                if not into_host:
                    continue
            try:
                rec = fn(ctx=self, launch=launch) if wants_ctx else fn(launch=launch)
            except Exception as exc:  # noqa: BLE001
                self.plugin_failed(plugin, "hrr_capture_launch", exc)
                continue
            if rec is not None and self._record_ok(plugin, "hrr_capture_launch", rec):
                records = records or {}
                records.setdefault(plugin, []).append(rec)
        return self._enabled(records) if records else None

    def _enabled(self, records: dict[str, list] | None) -> dict[str, list] | None:
        """Drop the records of a plugin that failed later in the same call."""
        if records and self.disabled:
            records = {p: r for p, r in records.items() if p not in self.disabled} or None
        return records

    def manifest_fields(self) -> dict[str, Any]:
        """Every ``hrr_capture_manifest``'s fields, merged, and the plugin failures."""
        fields: dict[str, Any] = {}
        for plugin, part in self._call_each("hrr_capture_manifest", ctx=self):
            if not part:
                continue
            try:   # the manifest is JSON: a part that is not would fail the close
                if not isinstance(part, dict):
                    raise TypeError(f"returned {type(part).__name__}, not a dict")
                json.dumps(part, allow_nan=False, sort_keys=True)
            except (TypeError, ValueError) as exc:
                self.plugin_failed(plugin, "hrr_capture_manifest", exc)
                continue
            fields.update(part)
        if self.plugin_failures:
            fields["plugin_failures"] = list(self.plugin_failures)
        return fields

    def fork_child(self) -> None:
        """Every ``hrr_capture_fork_child``."""
        self._call_each("hrr_capture_fork_child", ctx=self)
