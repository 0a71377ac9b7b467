"""A capture session: one process recording into its own ``pid-<pid>/`` of an archive.

It owns the allocation table, the known kernel functions, the event sequence and the
archive writer, and keeps the bookkeeping that catalogue roles imply (allocations made
and freed, asynchronous device-to-host copies checked when their stream is synchronised).
"""
from __future__ import annotations

import ctypes
import bisect
import os
import struct
import sys
import threading
from typing import Any

from hrr.allocations import Allocation, AllocationTable
from hrr.api.catalogue import Api
from hrr.api.roles import gather_rows, param_role
from hrr.backends.contract import Backend
from hrr.backends.hiprtc_ext import attach as attach_hiprtc_ext
from hrr.hiptypes import HANDLE_TYPES, address_or_zero, buffer_nbytes, handle_or_zero
from hrr.hiptypes.kernargs import KernelLayout, WordOffsets, pointer_word_offsets
from hrr.hiptypes.mathlibs import LIBRARIES
from hrr.archive import open_process_writer
from hrr.archive.forking import RANK_SESSION, register_fork_lock, unregister_fork_lock
from hrr.capture.bindings import bypassed_bindings
from hrr.capture.exits import ended
from hrr.capture.recorder import Recorder
from hrr.config import Config
from hrr.events.model import PSEUDO_D2H_CHECK
from hrr.pipeline.capture import CaptureContext
from hrr.pipeline.context import PointerWord
from hrr.pipeline.manager import make_plugin_manager, parse_plugin_list


_u64 = struct.Struct("<Q").unpack_from
_bisect = bisect.bisect_right


_new = tuple.__new__   # a named tuple made without its Python-level __new__
_HANDLES = frozenset(HANDLE_TYPES.values())


def _index(row: Api, name: str | None) -> int | None:
    return row.param_index(name) if name else None


def _first_handle(row: Api, kind: str) -> int | None:
    return next((i for i, p in enumerate(row.params) if param_role(p.role).names_handle and p.kind == kind), None)


class CaptureSession:
    """Records one process's HIP calls made through ``self.hip``."""

    def __init__(self, backend: Backend, config: Config, archive_root: str,
                 plugins: list[str] | None = None, *, writer_factory: Any = None) -> None:
        self.backend = backend
        self.config = config
        self.archive_root = archive_root
        self._writer_factory = writer_factory or open_process_writer
        self.allocations = AllocationTable()
        self.find_allocation = self.allocations.find   # a role service, looked up per copy
        self.run_launch: Any = None   # the role service: the plugins' records for a launch (set below)
        self.functions: dict[int, tuple[str, KernelLayout | None, tuple[int, ...]]] = {}
        self._register_fork_locks()
        self._tls = threading.local()
        self._pending_d2h: dict[int, list[tuple[int, ...]]] = {}
        self._event_streams: dict[int, tuple[int, int]] = {}
        self._pid = os.getpid()
        self.closed = False
        self.pm, self.plugin_versions = make_plugin_manager(
            plugins if plugins is not None else parse_plugin_list(config.plugins))
        self.writer = self._open_writer()
        self.ctx = CaptureContext(self.pm, self)
        self._register_fork_locks()   # its watch lock too: plugins may subscribe on any thread
        self.run_launch = self.ctx.run_launch   # a role service, called per launch
        self.ctx.start()
        self.writer.update_manifest(**self._manifest_fields())
        self.hip = Recorder(self).wrapped_module()
        # hip-python's hiprtc extensions over the recorded calls: hiprtcLinkCreate2 is
        # recorded as the hiprtcLinkCreate it makes
        self.hiprtc = attach_hiprtc_ext(Recorder(self, "hiprtc").wrapped_module())
        # each math library the backend offers (``from hip import hipblas``), recorded alike
        self.libraries = {name: Recorder(self, name).wrapped_module() for name in LIBRARIES
                          if backend.library(name) is not None}

    # ------------------------------------------------------------------ archive
    def _open_writer(self) -> Any:
        header = {"backend": self.backend.NAME, "pid": os.getpid()}
        return self._writer_factory(self.archive_root, os.getpid(), header)

    def _manifest_fields(self) -> dict[str, Any]:
        # The writer keeps the counts and the unreplayable_apis list itself.
        fields = {
            "backend": self.backend.NAME,
            "plugins": dict(self.plugin_versions),
            "content_mode": self.ctx.content_mode,
            "content_why": self.ctx.content_why,
            "host_snapshots": False,
        }
        device = self.backend.device_manifest()
        if device is not None:   # the device the program saw, which replay is again (the sim's model)
            fields["device"] = device
        fields.update(self.ctx.manifest_fields())
        return fields

    def record(self, api: str, args: list, err: int, outs: list, extra: dict) -> int:
        """Append the call's event; returns its sequence number (the writer gives it under
        its one lock: the recorder's wrappers call ``writer.append_call`` directly)."""
        writer = self.writer
        return writer.append_call(writer.api_number(api), args, err, outs, extra)

    def put_blob(self, data: bytes) -> str:
        return self.writer.put_blob(data)

    def put_code_object(self, image: Any) -> str | None:
        if isinstance(image, (bytes, bytearray, memoryview)):
            return self.writer.put_code_object(bytes(image))
        return None  # an address with no size: replay refuses the load, and says so

    def add_unreplayable(self, api: str, reason: str, **detail: Any) -> None:
        """List it once under the manifest's ``unreplayable_apis``."""
        self.writer.add_unreplayable(api, reason, **detail)

    def close(self, signal_name: str | None = None) -> None:
        """Close the archive cleanly (idempotent; never raises). Asynchronous device-to-host
        copies whose stream was never synchronised stay unchecked. ``signal_name``: called
        from the handler of that signal, in a process about to die of it."""
        if self.closed:
            return
        self.closed = True
        try:
            fields = self._manifest_fields()
        except Exception:  # noqa: BLE001 - a plugin failing at exit must not leave the archive open
            fields = {}
        fields["ended"] = ended(signal_name, content=fields.get("content_mode") == "content")
        bypassed = self._bypassed_bindings()
        if bypassed:
            fields["bypassed_bindings"] = bypassed
        if signal_name is None:
            self.writer.close(**fields)
        else:
            self.writer.close_on_signal(signal_name, **fields)
        for lock in self._fork_locks():
            unregister_fork_lock(lock)

    def _bypassed_bindings(self) -> list[str]:
        """hip-python's own modules the program reached past hrr (asked once, at close),
        said on stderr: an archive missing those calls must not pass as complete."""
        try:
            names = bypassed_bindings()
        except Exception:  # noqa: BLE001 - closing the archive comes first
            return []
        if names:
            what = "no HIP call was recorded" if self.writer.seq == 0 else f"only {self.writer.seq} calls were recorded"
            sys.stderr.write(f"hrr: warning: pid {os.getpid()} imported hip-python's own bindings "
                             f"({', '.join(names)}) past hrr and {what}: calls made through them "
                             "are missing from the archive (replay --strict fails on it)\n")
        return names

    # ------------------------------------------------------------------ fork
    def _fork_locks(self) -> tuple[Any, ...]:
        ctx = getattr(self, "ctx", None)   # made after the first registration
        return (self.allocations.lock,) if ctx is None else (self.allocations.lock, ctx.watch_lock)

    def _register_fork_locks(self) -> None:
        """Have every fork take this session's locks: after the backend's (a host function
        may record while the sim holds its device lock), before the writer's (``record``
        appends to it). Records need no lock of the session's: the writer numbers and appends
        each under its own. See ``hrr.archive.forking`` for the whole order."""
        for lock in self._fork_locks():
            register_fork_lock(lock, RANK_SESSION)

    def after_fork_in_child(self) -> None:
        """Start this child's own ``pid-<pid>/``; nothing of the parent's is rewritten.
        The manifest names the parent and its sequence number at the fork, so replay
        can rebuild the state the child inherited from the parent's records."""
        forked_from: dict[str, Any] = {"pid": self._pid, "seq": self.writer.seq}   # the parent's, inherited
        # "lost": the parent had initialised a GPU runtime, which a child cannot use (its
        # calls all return hipErrorNotInitialized); replay reproduces that on every backend.
        forked_from["device"] = "lost" if self.backend.lost_in_fork_child() else "inherited"
        self._pid = os.getpid()
        # The session's locks were taken by the fork handler and released in this child,
        # so they are free (the parent's other threads do not exist here).
        self._register_fork_locks()  # again: a parent that had closed unregistered them
        self._pending_d2h.clear()
        self._event_streams.clear()
        self.closed = False
        self.writer = self._open_writer()
        self.ctx.fork_child()
        self.writer.update_manifest(forked_from=forked_from, **self._manifest_fields())

    # ------------------------------------------------------------------ launches
    def function_info(self, func: Any) -> tuple[str, KernelLayout | None, tuple[int, ...]]:
        """(kernel name, layout or None, its pointer-word offsets) of a function handle:
        kept per function when it was made, so a launch looks nothing else up."""
        value = func._value if type(func) in _HANDLES else handle_or_zero(func)
        info = self.functions.get(value)
        if info is not None:
            return info
        try:
            layout = self.backend.kernel_layout(func)
        except Exception:  # noqa: BLE001 - an unknown function: the launch records why
            return "", None, ()
        return "", layout, pointer_word_offsets(layout)

    def scan_pointers(self, offsets: tuple[int, ...], kernargs: bytes) -> tuple[list[PointerWord], list[list]]:
        """The kernarg words at ``offsets`` (``kernargs.pointer_word_offsets`` of the kernel's
        layout, kept per function) that point into a live allocation, and their wire form.
        The last answer for a layout's offsets is kept on them and given again while the
        words and the allocation table are the same (the lists are shared: read only)."""
        table = self.allocations
        version = table.version   # read first: a change during the scan makes the answer stale
        if type(offsets) is WordOffsets:
            words = offsets.unpack(kernargs)
            last = offsets.last
            if last is not None and last[0] is table and last[1] == version and last[2] == words:
                return last[3], last[4]
        else:
            words = tuple(_u64(kernargs, off)[0] for off in offsets)
        found: list[PointerWord] = []
        wire: list[list] = []
        starts, allocs = table.starts, table.allocs   # AllocationTable.find, inline
        for off, word in zip(offsets, words, strict=True):
            i = _bisect(starts, word) - 1 if word else -1
            try:
                alloc = allocs[i] if i >= 0 else None
            except IndexError:   # a concurrent removal: as find, nothing there
                alloc = None
            if alloc is not None and alloc.base <= word < alloc.base + alloc.size:
                base = alloc.base
                found.append(_new(PointerWord, (off, base, word - base, alloc.kind)))
                wire.append([off, base, word - base])
        if type(offsets) is WordOffsets:
            offsets.last = (table, version, words, found, wire)
        return found, wire

    # ------------------------------------------------------------------ role services
    # What the roles (hrr.api.roles.CaptureServices) may ask of the session.
    def host_blob(self, kind: str, obj: Any, addr: int, n: int) -> str | None:
        """The blob of ``n`` bytes of app memory at ``addr``, if content ``kind`` is recorded."""
        if not self.ctx.content_allowed(kind):
            return None
        data = self._host_bytes(obj, addr, n)
        return None if data is None else self.put_blob(data)

    def _host_bytes(self, obj: Any, addr: int, n: int) -> bytes | None:
        if not addr or n <= 0:
            return None
        size = buffer_nbytes(obj)
        if size is not None and size < n:
            return None  # the call itself fails; never read past the app's buffer
        return ctypes.string_at(addr, n)

    def host_rows_blob(self, kind: str, obj: Any, addr: int, pitch: int, width: int, height: int) -> str | None:
        """The blob of a strided host region's rows, packed (a 2D copy's host end)."""
        if not self.ctx.content_allowed(kind) or not addr or width <= 0 or height <= 0:
            return None
        size = buffer_nbytes(obj)
        if size is not None and size < pitch * (height - 1) + width:
            return None  # the call itself fails; never read past the app's buffer
        return self.put_blob(gather_rows(addr, pitch, width, height))

    def expect_d2h(self, pending: tuple[int, ...] | None) -> None:
        self._tls.async_dst = pending

    def d2h_issued(self, ok: bool, seq: int) -> None:
        pending = getattr(self._tls, "async_dst", None)
        self._tls.async_dst = None
        if pending is not None and ok:
            self._pending_d2h.setdefault(pending[0], []).append((seq,) + pending[1:])

    def track_allocation(self, base: int, size: int, kind: str) -> None:
        self.allocations.add(Allocation(base, size, kind))

    def track_alias(self, host: int, alias: int) -> None:
        self.allocations.add_alias(host, alias)

    def note_function(self, name: str, function: Any, extra: dict) -> None:
        try:
            layout = self.backend.kernel_layout(function)
        except Exception:  # noqa: BLE001
            layout = None
        self.functions[handle_or_zero(function)] = (name, layout, () if layout is None
                                                    else pointer_word_offsets(layout))
        if layout is not None:
            extra["layout"] = layout.to_wire()

    def launch_watched(self) -> bool:
        return bool(self.ctx._launch_impls)   # noqa: SLF001 - read per launch: no property call

    def launch_scope(self) -> int:
        """Which launches get a LaunchInfo (``hrr.pipeline.capture.LAUNCH_NONE/HOST/ALL``)."""
        return self.ctx.launch_scope

    # ------------------------------------------------------------------ bookkeeping
    def row_effects(self, row: Api) -> list[Any]:
        """What a call of ``row`` does to the session beyond its roles' bookkeeping, from
        the row's semantic fields (``destroys``, ``effect``, ``waits``): each
        ``after(args, result, seq)``, specialised once per row."""
        effects: list[Any] = []
        if row.destroys == "alloc":
            effects.append(self._released(row))
        elif row.destroys == "device":
            effects.append(self._after_device_reset)
        if row.effect == "record_event":
            effects.append(self._event_recorded(row))
        if row.waits is not None:
            effects.append(self._waited(row))
        return [e for e in effects if e is not None]

    def _released(self, row: Api) -> Any:
        remove = self.allocations.remove

        def after(args: tuple, result: tuple, seq: int) -> None:
            if int(result[0]) == 0:
                remove(address_or_zero(args[0]))
        return after

    def _after_device_reset(self, args: tuple, result: tuple, seq: int) -> None:
        """Every allocation, module and stream is gone: nothing of them is tracked any
        more, and copies queued before the reset are never checked."""
        if int(result[0]) == 0:
            self.allocations.clear()
            self.functions.clear()
            self._pending_d2h.clear()
            self._event_streams.clear()

    def _event_recorded(self, row: Api) -> Any:
        event_at, stream_at = _first_handle(row, "event"), _index(row, row.stream)
        if event_at is None or stream_at is None:
            return None

        def after(args: tuple, result: tuple, seq: int) -> None:
            if int(result[0]) == 0:
                self._event_streams[handle_or_zero(args[event_at])] = (handle_or_zero(args[stream_at]), seq)
        return after

    def _waited(self, row: Api) -> Any:
        """Asynchronous device-to-host copies that a successful return of ``row`` proves
        complete (``Api.waits``) deliver their bytes now."""
        flush = self._flush_d2h
        if row.waits == "device":
            return lambda args, result, seq: flush(None)
        if row.waits == "null_stream":
            return lambda args, result, seq: flush(0)
        if row.waits == "stream":
            stream_at = _index(row, row.stream)
            if stream_at is None:
                return None

            def stream_synced(args: tuple, result: tuple, seq: int) -> None:
                if int(result[0]) == 0:
                    stream = handle_or_zero(args[stream_at])
                    flush(None if stream == 0 else stream)
            return stream_synced
        event_at = _first_handle(row, "event") if row.waits == "event" else None
        if event_at is None:
            return None

        def event_synced(args: tuple, result: tuple, seq: int) -> None:
            event = handle_or_zero(args[event_at])
            if int(result[0]) == 0 and event in self._event_streams:
                stream, before = self._event_streams[event]
                flush(stream, before=before)
        return event_synced

    def _flush_d2h(self, stream: int | None, before: int | None = None) -> None:
        """Record what asynchronous device-to-host copies delivered, now that their
        stream is synchronised (``None``: every stream). A sync point also closes the
        writer's open batch, so its records get their checksum now."""
        self.writer.flush()
        if not self._pending_d2h:
            return
        streams = list(self._pending_d2h) if stream is None else [stream]
        for s in streams:
            pending = self._pending_d2h.get(s)
            if not pending:
                continue
            done = [p for p in pending if before is None or p[0] < before]
            self._pending_d2h[s] = [p for p in pending if p not in done]
            for copy_seq, addr, n, *rows in done:
                blob = None
                if self.ctx.content_allowed("d2h_result") and addr and n > 0:
                    # a 2D copy's destination: only its rows, packed (rows = pitch, width)
                    data = gather_rows(addr, rows[0], rows[1], n // rows[1]) if rows else ctypes.string_at(addr, n)
                    blob = self.put_blob(data)
                self.record(PSEUDO_D2H_CHECK, [copy_seq], 0, [], {"blob": blob, "n": n})


__all__ = ["CaptureSession"]
