"""pinned_snapshot: snapshots of pinned host memory that kernels read directly.

A kernel can read pinned host memory (what the catalogue's ``allocating("pinned")`` and
``registering()`` calls make) directly, so no HIP call carries those bytes. At each
launch, under the tracking lock, capture hashes each fixed-size chunk of every pinned
allocation the launch points into straight from the live memory; a chunk whose digest
changed is copied, and the *copy* is hashed and written as a blob. The launch event gets
a record listing the chunks changed since the allocation's last record (all of them the
first time). Replay validates the record and queues a host function on the launch
stream that writes the chunks back ahead of the kernel. Records: ``records.py``; design:
docs/pinned-snapshots.md.

Like any plugin, it imports the plugin API (``hrr.pipeline``) and nothing else of hrr.
"""
from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Iterable
from typing import Any

from xxhash import xxh3_128_hexdigest

from hrr.pipeline import (
    DEVICE,
    adding_kernel_nodes,
    PINNED,
    REGISTERED,
    AfterWatcher,
    Allocation,
    AllocationTable,
    Api,
    CallInfo,
    CaptureContext,
    Event,
    LaunchInfo,
    ReplayContext,
    Roles,
    address_or_zero,
    aliasing,
    allocating,
    api_row,
    backend_stream_capturing,
    destroying,
    hookimpl,
    launching,
    param_at,
    registering,
    releasing,
    result_at,
    hrr_version,
)
from hrr_plugins.pinned_snapshot.records import CHUNK_BYTES, MAX_SNAPS_PER_RECORD, make_record, restore

NAME = "pinned_snapshot"
KIND = "pinned_snapshot"
UNREPLAYABLE_API = "pinned host snapshot"
_NODE_REASON = ("a kernel node of a graph reads pinned host memory when the graph is launched; "
                "without the graph_capture plugin those bytes are not recorded")
MAX_MB_VAR = "HIP_HRR_HOST_SNAPSHOT_MAX_MB"
# A changed record lists runs of changed chunks: runs this many unchanged chunks apart are
# merged (a listed chunk costs less than a snap's header), and past MAX_RUNS runs one snap
# spans the first to the last change.
MERGE_GAP = 1
MAX_RUNS = 64


class _Entry:
    """Capture's state for one tracked host allocation."""

    __slots__ = ("base", "contended", "freeing", "inflight", "kind", "last", "names", "size", "views")

    def __init__(self, base: int, size: int, kind: str) -> None:
        self.base, self.size, self.kind = base, size, kind
        self.views: list[memoryview] | None = None      # the live chunks, made at the first snapshot
        self.names: tuple[str | None, ...] | None = None  # each chunk's blob name when last snapshotted
        self.last: tuple | None = None            # (chunk names, stream) of the last record
        self.inflight = 0                         # records whose call has not returned, any thread
        self.contended = False                    # a record was made while another was in flight
        self.freeing = 0                          # frees in flight: snapshot nothing

    def forget_content(self) -> None:
        self.names, self.last, self.inflight, self.contended = None, None, 0, False


class Tracker:
    """The tracked pinned ranges and their snapshot state, under one tracking lock.

    The lock is held while a snapshot hashes, copies and writes (so a free of the same
    allocation cannot unmap it mid-copy); it is taken in the fork handler before the
    archive writer's locks (``hrr.archive.forking.register_fork_lock``)."""

    #: Test seam: called as ``after_copy(base, size)`` right after the changed chunks are
    #: copied and before the copies are hashed (the concurrent-writer test mutates the
    #: live buffer here).
    after_copy: Callable[[int, int], None] | None = None

    def __init__(self, max_bytes: int, chunk_bytes: int = CHUNK_BYTES) -> None:
        self.lock = threading.Lock()
        self.table = AllocationTable()
        self.entries: dict[int, _Entry] = {}
        self.max_bytes = max_bytes
        self.chunk_bytes = chunk_bytes
        self.chunks_written = 0
        #: Called once, under the lock, when the first allocation is tracked (the plugin
        #: subscribes to launches then: until there is one, a launch leaves nothing pending).
        self.first_tracked: Callable[[], None] | None = None
        # This thread's call in flight: the records it made, which become their
        # allocations' last only once the call has returned success (see end_call).
        self._pending = threading.local()

    # -- tracking -------------------------------------------------------------------------
    def add(self, base: int, size: int, kind: str) -> None:
        if not base:
            return
        with self.lock:
            first, self.first_tracked = self.first_tracked, None
            if first is not None:   # before the entry exists: no launch snapshots it unwatched
                first()
            stale = self.table.find(base)
            if stale is not None:  # memory freed behind capture's back: evict
                self._drop(stale.owner or stale.base)
            self.table.add(Allocation(base, max(size, 1), kind))
            self.entries[base] = _Entry(base, max(size, 1), kind)

    def add_alias(self, host: int, dev: int) -> None:
        with self.lock:
            owner = self.table.find(host)
            if owner is not None and (owner.owner or owner.base) in self.entries:
                self.table.add_alias(host, dev)

    def _drop(self, base: int) -> None:
        self.table.remove(base)
        self.entries.pop(base, None)

    def begin_free(self, addr: int) -> None:
        with self.lock:  # always taken: a free waits for a snapshot of its memory to end
            entry = self.entries.get(addr)
            if entry is not None:
                entry.freeing += 1

    def end_free(self, addr: int, ok: bool) -> None:
        with self.lock:
            entry = self.entries.get(addr)
            if entry is None:
                return
            entry.freeing = max(0, entry.freeing - 1)
            if ok:
                self._drop(addr)

    def clear(self) -> None:
        """The device was reset: every pinned allocation is gone (a later launch that
        points at one must not make capture copy unmapped memory)."""
        with self.lock:
            self.table.clear()
            self.entries.clear()

    def is_tracked(self, addr: int) -> bool:
        with self.lock:
            return self.table.find(addr) is not None

    def reset_after_fork(self) -> None:
        """A forked child's archive holds none of the parent's blobs: start over."""
        self._pending.items = []
        for entry in self.entries.values():
            entry.forget_content()
            entry.freeing = 0

    # -- the call in flight ----------------------------------------------------------------
    def begin_call(self) -> None:
        """A launch (or graph launch) begins on this thread: forget what an earlier call
        that never returned (it raised) left pending."""
        stale = getattr(self._pending, "items", None)
        self._pending.items = []
        if stale:
            self._settle(stale, False)

    def end_call(self, ok: bool) -> None:
        """The call returned. Only a call that succeeded enqueued the kernel that reads the
        bytes (replay skips the restores of a failed one), so only then do its records
        become their allocations' last: a failed launch must not deduplicate the next."""
        items = getattr(self._pending, "items", None)
        self._pending.items = []
        if items:
            self._settle(items, ok)

    def _settle(self, items: list[tuple[_Entry, tuple]], ok: bool) -> None:
        with self.lock:
            for entry, key in items:
                entry.inflight = max(0, entry.inflight - 1)
                if ok and self.entries.get(entry.base) is entry:  # still tracked, not re-allocated
                    # Records made while another was in flight may reach the archive in
                    # either order: the next one lists the whole allocation again.
                    entry.last = None if entry.contended else key
                if not entry.inflight:
                    entry.contended = False

    # -- snapshots ------------------------------------------------------------------------
    def snapshot(self, ctx: Any, addrs: Iterable[int], stream: int, during_capture: bool,
                 kind: str = KIND) -> dict | None:
        """Snapshot every tracked allocation that ``addrs`` point into; return the record
        for the event (None when no allocation needs one)."""
        if not ctx.content_allowed(kind):
            return None
        made: list[tuple[_Entry, tuple[str | None, ...], tuple[str | None, ...] | None]] = []
        with self.lock:
            seen: set[int] = set()
            for addr in addrs:
                a = self.table.find(addr)
                if a is None:
                    continue
                base = a.owner or a.base
                if base in seen:
                    continue
                seen.add(base)
                entry = self.entries.get(base)
                if entry is None or entry.freeing:
                    continue
                one = self._snapshot_one(ctx, entry, stream, during_capture, kind)
                if one is not None:
                    made.append((entry, *one))
        if not made:
            return None
        c = self.chunk_bytes
        snaps = [s for e, names, since in made for s in snaps_of(e.base, e.size, c, names, since)]
        if len(snaps) > MAX_SNAPS_PER_RECORD:   # replay refuses longer lists: one span each
            snaps = [s for e, names, since in made for s in snaps_of(e.base, e.size, c, names, since, 1)]
        return make_record(stream, during_capture, snaps)

    def _snapshot_one(self, ctx: Any, entry: _Entry, stream: int, during_capture: bool,
                      kind: str) -> tuple[tuple[str | None, ...], tuple[str | None, ...] | None] | None:
        """(every chunk's blob name, the names of the last record to list changes against
        or None to list them all) for one allocation; None: nothing to record."""
        if entry.size > self.max_bytes:
            ctx.add_unreplayable(UNREPLAYABLE_API,
                                 f"a {entry.size}-byte pinned allocation is over the snapshot "
                                 f"cap of {self.max_bytes} bytes; raise {MAX_MB_VAR}",
                                 variable=MAX_MB_VAR, address=f"0x{entry.base:x}", size=entry.size)
            return None
        views = entry.views
        if views is None:   # made once: views of the live memory, nothing copied
            whole = memoryview((ctypes.c_char * entry.size).from_address(entry.base))
            c = self.chunk_bytes
            views = entry.views = [whole[off:off + c] for off in range(0, entry.size, c)]
        # Hashed in place; only a chunk whose digest changed is copied, and the blob is
        # named by the hash of the copy (the app may write the buffer meanwhile). A blob's
        # name is the xxh3-128 hex of its bytes, so an unchanged chunk's digest is its name.
        live = tuple(map(xxh3_128_hexdigest, views))
        names = entry.names
        if live != names:
            names = self._store_changed(ctx, entry, views, live, kind)
            if names is None:
                return None
        contended = entry.inflight > 0 and not during_capture
        key = (names, stream)
        if not during_capture and not contended and entry.last == key:
            return None
        last = entry.last
        since = last[0] if last is not None and last[1] == stream and not (during_capture or contended) else None
        if not during_capture:
            pending = getattr(self._pending, "items", None)
            if pending is None:
                pending = self._pending.items = []
            pending.append((entry, key))
            entry.inflight += 1
            entry.contended = entry.contended or contended
        return names, since

    def _store_changed(self, ctx: Any, entry: _Entry, views: list[memoryview], live: tuple[str, ...],
                       kind: str) -> tuple[str | None, ...] | None:
        """Copy the chunks whose live digest differs from the last snapshot's, write the
        copies as blobs and return every chunk's name (None: the allocation is dropped
        from this launch, and its next record lists it whole)."""
        known = entry.names
        if known is None:
            changed: Iterable[int] = range(len(views))
            names: list[str | None] = [None] * len(views)
        else:
            changed = [i for i, (a, b) in enumerate(zip(live, known, strict=True)) if a != b]
            names = list(known)
        try:
            copies = [(i, views[i].tobytes()) for i in changed]   # the private copies
        except Exception as exc:  # noqa: BLE001 - MemoryError and the like
            ctx.add_unreplayable(UNREPLAYABLE_API, f"the pinned allocation could not be copied: {exc}",
                                 variable=MAX_MB_VAR, address=f"0x{entry.base:x}", size=entry.size)
            return None
        if self.after_copy is not None:
            self.after_copy(entry.base, entry.size)
        ok = True
        for i, data in copies:
            try:
                name = ctx.put_blob(kind, data)
            except Exception:  # noqa: BLE001 - the archive is failing: write it again next time
                name = None
            if name is None:
                ok = False
            else:
                self.chunks_written += 1
            names[i] = name
        entry.names = tuple(names)
        if not ok:
            entry.last = None
            return None
        return entry.names


def snaps_of(base: int, size: int, chunk: int, names: tuple[str | None, ...],
             since: tuple[str | None, ...] | None, max_runs: int = MAX_RUNS) -> list[dict]:
    """The snaps (version-1 form) listing the chunks of ``names`` that differ from
    ``since`` (all of them when None): one snap per run of changed chunks, runs a chunk
    apart merged, and one snap from the first to the last change past ``max_runs`` runs."""
    if since is None:
        runs = [(0, len(names))]
    else:
        runs = []
        for i, (a, b) in enumerate(zip(names, since, strict=True)):
            if a == b:
                continue
            if runs and i - runs[-1][1] <= MERGE_GAP:
                runs[-1] = (runs[-1][0], i + 1)
            else:
                runs.append((i, i + 1))
        if len(runs) > max_runs:
            runs = [(runs[0][0], runs[-1][1])]
    snaps = []
    for lo, hi in runs:
        chunks = [[names[i], min(chunk, size - i * chunk)] for i in range(lo, hi)]
        snaps.append({"base": base, "offset": lo * chunk, "length": min(hi * chunk, size) - lo * chunk,
                      "chunks": chunks})
    return snaps


class PinnedSnapshotPlugin:
    """Tracks pinned host ranges; snapshots them at launches; restores them at replay."""

    __version__ = hrr_version()  # built-ins ship with hrr and carry its version

    def __init__(self) -> None:
        self.tracker: Tracker | None = None
        self.enabled = False
        self.launch_streams: dict[str, int] = {}   # replay: launch call → stream position
        self.node_rows: frozenset[str] = frozenset()  # calls that put a kernel into a graph

    # ------------------------------------------------------------------ capture
    @hookimpl
    def hrr_capture_start(self, ctx: CaptureContext) -> None:
        # Its launch hook has nothing to do for a launch pointing into no host memory (and
        # nothing at all when snapshots are off).
        ctx.launches_into_host_memory_only(NAME)
        self.enabled = bool(ctx.config.host_snapshots)
        if not self.enabled:
            return
        tracker = self.tracker = Tracker(int(ctx.config.host_snapshot_max_bytes))
        self.node_rows = adding_kernel_nodes()
        ctx.register_fork_lock(tracker.lock)
        ctx.shared[NAME] = self
        # One watcher per row, its argument positions looked up here, not per call.
        for name in sorted(allocating(PINNED)):
            ctx.watch(NAME, (name,), after=_alloc_watcher(tracker, api_row(name)))
        for name in sorted(registering()):
            ctx.watch(NAME, (name,), after=_register_watcher(tracker, api_row(name)))
        for name in sorted(aliasing()):
            ctx.watch(NAME, (name,), after=_alias_watcher(tracker, api_row(name)))
        # A release's first parameter is the allocation it releases (see releasing()).
        ctx.watch(NAME, releasing(), before=lambda call: tracker.begin_free(address_or_zero(call.args[0])),
                  after=lambda call, result: tracker.end_free(address_or_zero(call.args[0]),
                                                              int(result[0]) == 0))
        # A launch's records wait for its return (end_call): watched from the first
        # tracked allocation on, as no launch before it can make one.
        tracker.first_tracked = lambda: ctx.watch(
            NAME, launching(), before=lambda call: tracker.begin_call(),
            after=lambda call, result: tracker.end_call(int(result[0]) == 0))
        ctx.watch(NAME, destroying("device"), after=_reset_watcher(tracker))

    def begin_call(self) -> None:
        """Another stage's snapshotting call (graph_capture's hipGraphLaunch) begins."""
        if self.tracker is not None:
            self.tracker.begin_call()

    def end_call(self, ok: bool) -> None:
        """That call returned: its records become their allocations' last if ``ok``."""
        if self.tracker is not None:
            self.tracker.end_call(ok)

    def stream_capturing(self, ctx: CaptureContext, stream_value: int, stream_handle: Any) -> bool:
        """Whether the launch stream itself is capturing a graph (graph_capture's state
        when it runs, else the raw backend's answer for that stream)."""
        gc = ctx.shared.get("graph_capture")
        if gc is not None:
            return gc.is_capturing(stream_value, stream_handle)
        if not stream_value:
            return False
        return backend_stream_capturing(ctx.hip, stream_handle)

    def snapshot(self, ctx: CaptureContext, addrs: Iterable[int], stream_value: int, stream_handle: Any,
                 kind: str = KIND) -> dict | None:
        """The snapshot routine other stages reuse (graph_capture at graph launches)."""
        if self.tracker is None:
            return None
        capturing = self.stream_capturing(ctx, stream_value, stream_handle)
        return self.tracker.snapshot(ctx, addrs, stream_value, capturing, kind)

    @hookimpl
    def hrr_capture_launch(self, ctx: CaptureContext, launch: LaunchInfo) -> dict | None:
        if self.tracker is None:
            return None
        addrs = [p.base + p.delta for p in launch.pointers if p.kind != DEVICE]
        if not addrs:
            return None
        if launch.api in self.node_rows:
            # A kernel put into a graph node reads the memory at each launch of the graph:
            # graph_capture snapshots it there, nothing is read now.
            if "graph_capture" not in ctx.shared:
                ctx.add_unreplayable(UNREPLAYABLE_API, _NODE_REASON)
            return None
        capturing = self.stream_capturing(ctx, launch.stream, launch.stream_handle)
        if capturing and "graph_capture" not in ctx.shared:
            ctx.add_unreplayable(UNREPLAYABLE_API,
                                 "a kernel captured into a graph reads pinned host memory when the "
                                 "graph is launched; without the graph_capture plugin those bytes "
                                 "are not recorded")
        return self.tracker.snapshot(ctx, addrs, launch.stream, capturing, KIND)

    @hookimpl
    def hrr_capture_manifest(self, ctx: CaptureContext) -> dict:
        on = self.enabled and ctx.content_allowed(KIND)
        fields: dict = {"host_snapshots": bool(on)}
        if on and self.tracker is not None:
            fields["host_snapshot"] = {"chunk_bytes": self.tracker.chunk_bytes,
                                       "max_bytes": self.tracker.max_bytes,
                                       "chunks_written": self.tracker.chunks_written}
        return fields

    @hookimpl
    def hrr_capture_fork_child(self, ctx: CaptureContext) -> None:
        if self.tracker is not None:
            self.tracker.reset_after_fork()

    # ------------------------------------------------------------------ replay
    @hookimpl
    def hrr_replay_start(self, ctx: ReplayContext) -> None:
        self.launch_streams = launch_streams()
        # its per-event hook acts only on launches that carry its records
        ctx.watch(NAME, self.launch_streams, only="records")

    @hookimpl
    def hrr_replay_before_event(self, ctx: ReplayContext, event: Event, stream: Any) -> None:
        stream_at = self.launch_streams.get(event.api)
        if stream_at is None:
            return
        records = event.records(NAME)
        if not records:
            return
        if event.err:
            return  # the launch failed when recorded: its kernel never read the bytes
        skip = replay_stream_capturing(ctx, event, stream, stream_at)
        restore(ctx, event, stream, records, label="pinned snapshot", skip_capture=skip)


def _reset_watcher(tracker: Tracker) -> AfterWatcher:
    def after(call: CallInfo, result: tuple) -> None:
        if int(result[0]) == 0:
            tracker.clear()
    return after


def _alloc_watcher(tracker: Tracker, row: Api) -> AfterWatcher:
    at = result_at(row, Roles.AllocOut)
    out = row.outs[at - 1]
    size_at, kind = row.param_index(out.size or ""), out.kind or PINNED

    def after(call: CallInfo, result: tuple) -> None:
        if int(result[0]) == 0 and result[at] is not None:
            tracker.add(address_or_zero(result[at]), int(call.args[size_at] or 0), kind)
    return after


def _register_watcher(tracker: Tracker, row: Api) -> AfterWatcher:
    at = param_at(row, Roles.HostRange)
    size_at = row.param_index(row.params[at].size or "")

    def after(call: CallInfo, result: tuple) -> None:
        if int(result[0]) == 0:
            tracker.add(address_or_zero(call.args[at]), int(call.args[size_at] or 0), REGISTERED)
    return after


def _alias_watcher(tracker: Tracker, row: Api) -> AfterWatcher:
    host_at, alias_at = param_at(row, Roles.Ptr), result_at(row, Roles.AliasOut)

    def after(call: CallInfo, result: tuple) -> None:
        if int(result[0]) == 0 and result[alias_at] is not None:
            tracker.add_alias(address_or_zero(call.args[host_at]), address_or_zero(result[alias_at]))
    return after


def launch_streams() -> dict[str, int]:
    """Every launch call's name → where its stream argument sits (-1: it has none)."""
    rows = [api_row(name) for name in launching()]
    return {row.name: row.param_index(row.stream) if row.stream else -1 for row in rows}


def replay_stream_capturing(ctx: ReplayContext, event: Event, stream: Any, stream_at: int) -> bool:
    """At replay: is the event's own stream capturing (or would work on the null stream
    join/invalidate an open capture)? Asks graph_capture's state when it runs.
    ``stream_at``: where the event's stream argument sits (-1: it has none)."""
    gc = ctx.shared.get("graph_capture")
    value = 0
    if stream_at >= 0 and len(event.args) == len(api_row(event.api).params):
        v = event.args[stream_at]
        value = v if isinstance(v, int) else 0
    if gc is not None:
        return bool(gc.is_capturing(value, stream))
    return backend_stream_capturing(ctx.hip, stream)


plugin = PinnedSnapshotPlugin

__all__ = ["CHUNK_BYTES", "PinnedSnapshotPlugin", "Tracker", "plugin"]
