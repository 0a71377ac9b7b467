"""A capture session: one process recording into its own ``pid-<pid>/`` of an archive.

It owns the allocation table, the known kernel functions, the event sequence and the
archive writer, and keeps the bookkeeping that catalogue roles imply (allocations made
and freed, asynchronous device-to-host copies checked when their stream is synchronised).
"""
from __future__ import annotations

import ctypes
import os
import threading
from typing import Any

from hrr.api.catalogue import DEVICE_RESET_APIS, Api
from hrr.backends.hiptypes import buffer_nbytes, address_or_zero, handle_or_zero
from hrr.backends.kernargs import KernelLayout, pointer_word_offsets
from hrr.capture.allocations import DEVICE, REGISTERED, Allocation, AllocationTable
from hrr.capture.recorder import Recorder, _scalar
from hrr.config import Config
from hrr.events.model import PSEUDO_D2H_CHECK
from hrr.pipeline.capture import CaptureContext
from hrr.pipeline.context import PointerWord
from hrr.pipeline.manager import make_plugin_manager, parse_plugin_list

_HOSTFN_API = "hipLaunchHostFunc"




def _number(v: Any) -> Any:
    """An output recorded when it is a number (numpy and ctypes numbers included)."""
    value = _scalar(v)
    return None if isinstance(value, str) else value


class CaptureSession:
    """Records one process's HIP calls made through ``self.hip``."""

    def __init__(self, backend: Any, config: Config, archive_root: str,
                 plugins: list[str] | None = None, *, writer_factory: Any = None) -> None:
        from hrr.archive import open_process_writer  # the archive layer

        self.backend = backend
        self.config = config
        self.archive_root = archive_root
        self._writer_factory = writer_factory or open_process_writer
        self.allocations = AllocationTable()
        self.functions: dict[int, tuple[str, KernelLayout | None]] = {}
        self._record_lock = threading.Lock()
        self._register_fork_locks()
        self._tls = threading.local()
        self._pending_d2h: dict[int, list[tuple[int, int, int]]] = {}
        self._event_streams: dict[int, tuple[int, int]] = {}
        self._seq = 0
        self._pid = os.getpid()
        self.closed = False
        self.pm, self.plugin_versions = make_plugin_manager(
            plugins if plugins is not None else parse_plugin_list(config.plugins))
        self.writer = self._open_writer()
        self.ctx = CaptureContext(self.pm, self)
        self.enrich_hooks = {"hipModuleGetFunction": self._enrich_function}
        self.post_call_hooks = self._post_hooks()
        self.ctx.start()
        self.writer.update_manifest(**self._manifest_fields())
        self.hip = Recorder(self).wrapped_module()

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
            "host_snapshots": False,
        }
        fields.update(self.ctx.manifest_fields())
        return fields

    def record(self, api: str, args: list, err: int, outs: list, extra: dict) -> int:
        """Give the call its global sequence number and append its event."""
        with self._record_lock:
            seq = self._seq
            self._seq += 1
            self.writer.append([seq, threading.get_ident(), api, args, err, outs, extra])
        return seq

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
        from hrr.capture.exits import ended
        fields["ended"] = ended(signal_name, content=fields.get("content_mode") == "content")
        if signal_name is None:
            self.writer.close(**fields)
        else:
            self.writer.close_on_signal(signal_name, **fields)
        from hrr.archive.forking import unregister_fork_lock
        for lock in self._fork_locks():
            unregister_fork_lock(lock)

    # ------------------------------------------------------------------ fork
    def _fork_locks(self) -> tuple[Any, ...]:
        return (self.allocations.lock, self._record_lock)

    def _register_fork_locks(self) -> None:
        """Have every fork take this session's locks: after the backend's (a host function
        may record while the sim holds its device lock), before the writer's (``record``
        appends to it). See ``hrr.archive.forking`` for the whole order."""
        from hrr.archive.forking import RANK_SESSION, register_fork_lock
        for lock in self._fork_locks():
            register_fork_lock(lock, RANK_SESSION)

    def after_fork_in_child(self) -> None:
        """Start this child's own ``pid-<pid>/``; nothing of the parent's is rewritten.
        The manifest names the parent and its sequence number at the fork, so replay
        can rebuild the state the child inherited from the parent's records."""
        forked_from = {"pid": self._pid, "seq": self._seq}
        self._pid = os.getpid()
        # The session's locks were taken by the fork handler and released in this child,
        # so they are free (the parent's other threads do not exist here).
        self._register_fork_locks()  # again: a parent that had closed unregistered them
        self._pending_d2h.clear()
        self._event_streams.clear()
        self._seq = 0
        self.closed = False
        self.writer = self._open_writer()
        self.ctx.fork_child()
        self.writer.update_manifest(forked_from=forked_from, **self._manifest_fields())

    # ------------------------------------------------------------------ launches
    def function_info(self, func: Any) -> tuple[str, KernelLayout | None]:
        value = handle_or_zero(func)
        info = self.functions.get(value)
        if info is not None:
            return info
        try:
            return "", self.backend.kernel_layout(func)
        except Exception:  # noqa: BLE001 - an unknown function: the launch records why
            return "", None

    def scan_pointers(self, layout: KernelLayout, kernargs: bytes) -> list[PointerWord]:
        """The kernarg words that point into a live allocation (see
        ``kernargs.pointer_word_offsets`` for which words are looked at)."""
        found: list[PointerWord] = []
        find = self.allocations.find
        for off in pointer_word_offsets(layout):
            word = int.from_bytes(kernargs[off:off + 8], "little")
            alloc = find(word) if word else None
            if alloc is not None:
                found.append(PointerWord(off, alloc.base, word - alloc.base, alloc.kind))
        return found

    def _enrich_function(self, row: Api, args: tuple, result: tuple, extra: dict) -> None:
        if int(result[0]) != 0 or result[1] is None:
            return
        name = args[1].decode(errors="replace") if isinstance(args[1], (bytes, bytearray)) else str(args[1])
        try:
            layout = self.backend.kernel_layout(result[1])
        except Exception:  # noqa: BLE001
            layout = None
        self.functions[handle_or_zero(result[1])] = (name, layout)
        if layout is not None:
            extra["layout"] = layout.to_wire()

    # ------------------------------------------------------------------ encoding
    def out_encoder(self, row: Api) -> Any:
        """``encode(result) -> wire outputs`` for ``row``, specialised once."""
        if not row.outs:
            return lambda result: []
        convert = [(lambda v: None if v is None else address_or_zero(v)) if o.role in ("alloc", "alias")
                   else (lambda v: None if v is None else handle_or_zero(v)) if o.role == "handle"
                   else _number for o in row.outs]
        return lambda result: [c(v) for c, v in zip(convert, result[1:])]

    def _host_bytes(self, obj: Any, addr: int, n: int) -> bytes | None:
        if not addr or n <= 0:
            return None
        size = buffer_nbytes(obj)
        if size is not None and size < n:
            return None  # the call itself fails; never read past the app's buffer
        return ctypes.string_at(addr, n)

    def encode_copy_src(self, obj: Any, n: Any, row: Api) -> list:
        addr, n = address_or_zero(obj), int(n or 0)
        alloc = self.allocations.find(addr)
        if alloc is not None and alloc.kind == DEVICE:
            return ["a", addr, n, None]
        blob = None
        if self.ctx.content_allowed("h2d_payload"):
            data = self._host_bytes(obj, addr, n)
            blob = None if data is None else self.put_blob(data)
        return ["a" if alloc is not None else "h", addr, n, blob]

    def encode_copy_dst(self, obj: Any, n: Any, row: Api, args: tuple) -> Any:
        addr, n = address_or_zero(obj), int(n or 0)
        alloc = self.allocations.find(addr)
        tag = "a" if alloc is not None else "h"
        if alloc is not None and alloc.kind == DEVICE:
            return ["a", addr, n, None]
        if not row.sync:
            stream = handle_or_zero(args[row.param_index(row.stream)]) if row.stream else 0
            self._tls.async_dst = (stream, addr, n)
            return [tag, addr, n, None]

        def after(result: tuple) -> list:
            blob = None
            if int(result[0]) == 0 and self.ctx.content_allowed("d2h_result"):
                data = self._host_bytes(obj, addr, n)
                blob = None if data is None else self.put_blob(data)
            return [tag, addr, n, blob]
        return after

    def encode_host_range(self, obj: Any, n: Any) -> list:
        addr, n = address_or_zero(obj), int(n or 0)
        blob = None
        if self.ctx.content_allowed("registered_memory"):
            data = self._host_bytes(obj, addr, n)
            blob = None if data is None else self.put_blob(data)
        return ["h", addr, n, blob]

    # ------------------------------------------------------------------ bookkeeping
    def _post_hooks(self) -> dict[str, Any]:
        hooks: dict[str, Any] = {}
        for name in ("hipMalloc", "hipMallocAsync", "hipHostMalloc", "hipMallocHost", "hipHostAlloc"):
            hooks[name] = self._after_alloc
        for name in ("hipFree", "hipFreeAsync", "hipHostFree", "hipFreeHost", "hipHostUnregister"):
            hooks[name] = self._after_free
        for name in DEVICE_RESET_APIS:
            hooks[name] = self._after_device_reset
        hooks["hipHostRegister"] = self._after_register
        hooks["hipHostGetDevicePointer"] = self._after_device_pointer
        hooks[_HOSTFN_API] = self._after_host_fn
        for name in ("hipMemcpyAsync", "hipMemcpyDtoHAsync"):
            hooks[name] = self._after_async_copy
        hooks["hipEventRecord"] = self._after_event_record
        hooks["hipDeviceSynchronize"] = lambda row, a, r, s: self._flush_d2h(None)
        hooks["hipStreamSynchronize"] = self._after_stream_sync
        hooks["hipStreamQuery"] = self._after_stream_sync
        hooks["hipEventSynchronize"] = self._after_event_sync
        hooks["hipEventQuery"] = self._after_event_sync
        for name in ("hipMemcpy", "hipMemcpyDtoH", "hipMemcpyHtoD", "hipMemcpyDtoD", "hipMemset"):
            hooks[name] = lambda row, a, r, s: self._flush_d2h(0)
        return hooks

    def _after_alloc(self, row: Api, args: tuple, result: tuple, seq: int) -> None:
        if int(result[0]) == 0 and result[1] is not None:
            spec = row.outs[0]
            size = int(args[row.param_index(spec.size)])
            self.allocations.add(Allocation(address_or_zero(result[1]), max(size, 1), spec.kind))

    def _after_device_reset(self, row: Api, args: tuple, result: tuple, seq: int) -> None:
        """Every allocation, module and stream is gone: nothing of them is tracked any
        more, and copies queued before the reset are never checked."""
        if int(result[0]) == 0:
            self.allocations.clear()
            self.functions.clear()
            self._pending_d2h.clear()
            self._event_streams.clear()

    def _after_free(self, row: Api, args: tuple, result: tuple, seq: int) -> None:
        if int(result[0]) == 0:
            self.allocations.remove(address_or_zero(args[0]))

    def _after_register(self, row: Api, args: tuple, result: tuple, seq: int) -> None:
        if int(result[0]) == 0:
            self.allocations.add(Allocation(address_or_zero(args[0]), max(int(args[1]), 1), REGISTERED))

    def _after_device_pointer(self, row: Api, args: tuple, result: tuple, seq: int) -> None:
        if int(result[0]) == 0 and result[1] is not None:
            self.allocations.add_alias(address_or_zero(args[0]), address_or_zero(result[1]))

    def _after_host_fn(self, row: Api, args: tuple, result: tuple, seq: int) -> None:
        self.add_unreplayable(_HOSTFN_API, row.reason)

    def _after_async_copy(self, row: Api, args: tuple, result: tuple, seq: int) -> None:
        pending = getattr(self._tls, "async_dst", None)
        self._tls.async_dst = None
        if pending is not None and int(result[0]) == 0:
            stream, addr, n = pending
            self._pending_d2h.setdefault(stream, []).append((seq, addr, n))

    def _after_event_record(self, row: Api, args: tuple, result: tuple, seq: int) -> None:
        if int(result[0]) == 0:
            self._event_streams[handle_or_zero(args[0])] = (handle_or_zero(args[1]), seq)

    def _after_stream_sync(self, row: Api, args: tuple, result: tuple, seq: int) -> None:
        if int(result[0]) == 0:
            stream = handle_or_zero(args[0])
            self._flush_d2h(None if stream == 0 else stream)

    def _after_event_sync(self, row: Api, args: tuple, result: tuple, seq: int) -> None:
        if int(result[0]) == 0 and handle_or_zero(args[0]) in self._event_streams:
            stream, before = self._event_streams[handle_or_zero(args[0])]
            self._flush_d2h(stream, before=before)

    def _flush_d2h(self, stream: int | None, before: int | None = None) -> None:
        """Record what asynchronous device-to-host copies delivered, now that their
        stream is synchronised (``None``: every stream)."""
        if not self._pending_d2h:
            return
        streams = list(self._pending_d2h) if stream is None else [stream]
        for s in streams:
            pending = self._pending_d2h.get(s)
            if not pending:
                continue
            done = [p for p in pending if before is None or p[0] < before]
            self._pending_d2h[s] = [p for p in pending if p not in done]
            for copy_seq, addr, n in done:
                blob = None
                if self.ctx.content_allowed("d2h_result") and addr and n > 0:
                    blob = self.put_blob(ctypes.string_at(addr, n))
                self.record(PSEUDO_D2H_CHECK, [copy_seq], 0, [], {"blob": blob, "n": n})


__all__ = ["CaptureSession"]
