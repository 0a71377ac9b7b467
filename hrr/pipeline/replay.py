"""The replay pipeline's context: what replay stages see, and the services they use."""
from __future__ import annotations

import collections
import ctypes
from typing import Any, Callable, Iterable

import pluggy

from hrr.errors import HrrError
from hrr.pipeline.context import EventRefused

HOST_FN_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
#: What ``ReplayContext.watch(only=...)`` takes.
WATCH_MODES = ("all", "records", "failed")
# Host-function callbacks a finished process replay left queued: a device may call them
# at any later time, so they live as long as the replay process does.
_UNFINISHED_HOST_FNS: list[Any] = []


class ReplayContext:
    """What every replay stage sees (``ctx`` in the replay hooks), one per process archive.

    Attributes a stage reads: ``hip`` (the replay backend's HIP module), ``backend``,
    ``manifest`` (the process archive's manifest, as recorded: untrusted), ``limits``,
    ``shared`` (a dict stages share, each under its plugin's name) and ``counters``
    (named counts that summaries and the replay result read; stages add to them)."""

    def __init__(self, pm: pluggy.PluginManager, engine: Any) -> None:
        self.pm = pm
        self._engine = engine
        self.backend: Any = engine.backend
        self.hip: Any = engine.backend.hip
        self.manifest: dict = engine.manifest
        self.limits: Any = engine.limits
        self.shared: dict[str, Any] = {}
        # Counters every summary line reads; stages add to them (e.g. pinned restores).
        self.counters: collections.Counter[str] = collections.Counter()
        self._host_fns: list[Any] = []
        self.host_fn_errors: list[str] = []
        # plugin name -> {call it watches: the events of it it wants ("all", "records", "failed")}
        self.watched: dict[str, dict[str, set[str]]] = {}
        # replay hooks that raised: {plugin, hook, error, message}; their plugins are disabled
        self.plugin_failures: list[dict[str, str]] = []
        self._disabled: set[str] = set()
        self._isolate_hooks()

    # ------------------------------------------------------------------ isolation
    def _isolate_hooks(self) -> None:
        """Guard every replay hook implementation: one that raises anything but what hrr's
        own services raise (``EventRefused``, hrr's errors about the archive) is a bug of
        its plugin, reported once (``plugin_failures``) and its plugin disabled for the
        rest of this process's replay, never a refused record per event. Wrapper
        implementations (generators) run as pluggy runs them."""
        for name in dir(self.pm.hook):
            if not name.startswith("hrr_replay_"):
                continue
            for impl in getattr(self.pm.hook, name).get_hookimpls():
                if not (impl.wrapper or impl.hookwrapper):
                    impl.function = self._guarded(impl.plugin_name, name, impl.function)

    def _guarded(self, plugin: str, hook: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        disabled, failures = self._disabled, self.plugin_failures

        def guarded(*args: Any) -> Any:
            if plugin in disabled:
                return None
            try:
                return fn(*args)
            except (EventRefused, HrrError):
                raise
            except Exception as exc:  # noqa: BLE001 - a plugin's bug: reported once, the plugin disabled
                disabled.add(plugin)
                failures.append({"plugin": plugin, "hook": hook, "error": type(exc).__name__,
                                 "message": " ".join(str(exc).split())[:300]})
                return None
        return guarded

    def plugin_failure_lines(self) -> list[str]:
        """One summary line per plugin whose replay hook raised."""
        return [f"Plugin {f['plugin']} failed during replay ({f['error']} in {f['hook']}"
                + (f": {f['message']}" if f["message"] else "")
                + "); it was disabled for the rest of this process's replay" for f in self.plugin_failures]

    def watch(self, plugin: str, apis: Iterable[str], *, only: str = "all") -> None:
        """Deliver ``plugin``'s ``hrr_replay_before_event`` and ``hrr_replay_after_event``
        only for the calls named in ``apis`` (call it from ``hrr_replay_start``; name the
        calls by a catalogue query such as ``launching()``; several calls add up). A plugin
        that never calls it gets every event, so a call nobody watches goes through pluggy
        only when some plugin implements a per-event hook without watching.
        ``only="records"``: just the events that carry records of ``plugin``'s own
        (``event.records(plugin)``); ``only="failed"``: just ``hrr_replay_after_event``,
        and only when the call replayed with an error (its result's first item non-zero)."""
        if only not in WATCH_MODES:
            raise ValueError(f"watch(only={only!r}): one of {', '.join(WATCH_MODES)}")
        calls = self.watched.setdefault(plugin, {})
        for api in apis:
            calls.setdefault(api, set()).add(only)

    def wants(self, plugin: str, api: str, hook: str, records: frozenset[str], failed: bool) -> bool:
        """Whether ``plugin``'s per-event ``hook`` ("before" or "after") is called for an
        event of ``api`` carrying the records of ``records``' plugins, ``failed`` or not."""
        calls = self.watched.get(plugin)
        if calls is None:
            return True
        modes = calls.get(api)
        return modes is not None and ("all" in modes or ("records" in modes and plugin in records)
                                      or ("failed" in modes and hook == "after" and failed))

    def translate(self, addr: int) -> int | None:
        """Replay's address for a capture address inside a live allocation, or None."""
        return self._engine.memory.translate(addr)

    def allocation(self, capture_addr: int) -> Any:
        """The replay allocation containing a capture address (see ReplayMemory)."""
        return self._engine.memory.find(capture_addr)

    def read_blob(self, name: str) -> bytes:
        """A blob's bytes, checked against its name and the size limit (raises BlobError).
        Stages read blobs to queue them for a restore, so the bytes count against
        --max-host-bytes until the next device synchronisation (EventRefused when over)."""
        return self._engine.read_queued_blob(name)

    def blob_size(self, name: str) -> int:
        """A blob's size in bytes, without reading it (raises BlobError or OSError)."""
        return self._engine.process.blob_size(name)

    def stream_of(self, capture_value: int) -> Any:
        """Replay's stream for a capture stream handle value (None: the null stream)."""
        return self._engine.handles.lookup("stream", capture_value)

    def enqueue_host_fn(self, stream: Any, fn: Callable[[], None]) -> int:
        """Queue ``fn`` on replay's ``stream`` (ordered with its work, never waiting for
        it); returns the backend's error code. An exception in ``fn`` is recorded."""
        def run(_user_data: Any) -> None:
            try:
                fn()
            except Exception as exc:  # noqa: BLE001 - a callback must never raise into C
                self.host_fn_errors.append(f"{type(exc).__name__}: {exc}")
        cb = HOST_FN_TYPE(run)
        self._host_fns.append(cb)  # alive until the device has run it
        addr = ctypes.cast(cb, ctypes.c_void_p).value
        return int(self.hip.hipLaunchHostFunc(stream, addr, None)[0])

    def release_finished_host_fns(self) -> None:
        """Called after a device-wide synchronisation: every queued callback has run."""
        self._host_fns.clear()

    def close(self) -> None:
        """The replay of this process ends: callbacks the device may still hold (work
        never synchronised) are kept for the life of the process, never freed under it."""
        _UNFINISHED_HOST_FNS.extend(self._host_fns)
        self._host_fns = []

    def refuse(self, reason: str, category: str = "refused") -> None:
        """End the current event before it runs (counted and named in the summary)."""
        raise EventRefused(reason, category=category)
