"""The capture pipeline: the context capture stages receive, and hook dispatch.

Hook implementations are resolved once; calls that no stage watches cost nothing.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

import pluggy

from hrr.inventory import CONTENT_KINDS, KINDS_BY_NAME
from hrr.pipeline.context import CallInfo, LaunchInfo


class CaptureContext:
    """What every capture stage sees (``ctx`` in the capture hooks)."""

    def __init__(self, pm: pluggy.PluginManager, session: Any) -> None:
        self.pm = pm
        self._session = session
        self.backend = session.backend
        self.hip = session.backend.hip          # the raw backend: calls here are not recorded
        self.config = session.config
        self.allocations = session.allocations
        self.shared: dict[str, Any] = {}
        self.before_watchers: dict[str, list[tuple[str, Callable]]] = {}
        self.after_watchers: dict[str, list[tuple[str, Callable]]] = {}
        self._content: dict[str, bool] = {}
        # Resolved once, in pluggy's call order: launches are a hot path.
        self._launch_impls = [(impl.plugin_name, impl.function, "ctx" in impl.argnames)
                              for impl in reversed(pm.hook.hrr_capture_launch.get_hookimpls())]

    # -- set-up -----------------------------------------------------------------------
    def start(self) -> None:
        """Decide the content policy once (``--content`` / ``--metadata-only`` override
        the stages' answers), then let every stage set itself up."""
        forced = self.config.content_mode
        for kind in CONTENT_KINDS:
            if forced in ("content", "metadata-only"):
                self._content[kind] = forced == "content"
                continue
            answer = self.pm.hook.hrr_capture_content_allowed(ctx=self, kind=kind)
            self._content[kind] = True if answer is None else bool(answer)
        self.pm.hook.hrr_capture_start(ctx=self)

    def watch(self, plugin: str, apis: Iterable[str], *, before: Callable | None = None,
              after: Callable | None = None) -> None:
        """See calls of ``apis``: ``before(call) -> record|None`` runs before the call
        (a record is attached to its event under ``plugin``); ``after(call, result)``
        runs after it returns."""
        for api in apis:
            if before is not None:
                self.before_watchers.setdefault(api, []).append((plugin, before))
            if after is not None:
                self.after_watchers.setdefault(api, []).append((plugin, after))

    # -- services for stages -----------------------------------------------------------
    def content_allowed(self, kind: str) -> bool:
        """Whether bytes of data kind ``kind`` may be written (decided at start)."""
        if kind not in KINDS_BY_NAME:
            raise KeyError(f"{kind!r} is not a data kind registered in hrr.inventory")
        return self._content.get(kind, True)

    @property
    def content_mode(self) -> str:
        return "content" if all(self._content.values()) else "metadata-only"

    def put_blob(self, kind: str, data: bytes) -> str | None:
        """Write ``data`` (a private copy) as a blob of data kind ``kind``; returns its
        name, or None when the content policy vetoes that kind."""
        if not self.content_allowed(kind):
            return None
        return self._session.put_blob(data)

    def add_unreplayable(self, api: str, reason: str, **detail: Any) -> None:
        """List something the archive cannot replay faithfully in the manifest."""
        self._session.add_unreplayable(api, reason, **detail)

    # -- dispatch (called by the capture engine) ----------------------------------------
    def run_before(self, api: str, call: CallInfo) -> dict[str, list] | None:
        records: dict[str, list] | None = None
        for plugin, fn in self.before_watchers.get(api, ()):
            rec = fn(call)
            if rec is not None:
                records = records or {}
                records.setdefault(plugin, []).append(rec)
        return records

    def run_after(self, api: str, call: CallInfo, result: Any) -> None:
        for _plugin, fn in self.after_watchers.get(api, ()):
            fn(call, result)

    def run_launch(self, launch: LaunchInfo) -> dict[str, list] | None:
        records: dict[str, list] | None = None
        for plugin, fn, wants_ctx in self._launch_impls:
            rec = fn(ctx=self, launch=launch) if wants_ctx else fn(launch=launch)
            if rec is not None:
                records = records or {}
                records.setdefault(plugin, []).append(rec)
        return records

    def manifest_fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        for part in self.pm.hook.hrr_capture_manifest(ctx=self):
            if part:
                fields.update(part)
        return fields

    def fork_child(self) -> None:
        self.pm.hook.hrr_capture_fork_child(ctx=self)
