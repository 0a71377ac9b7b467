"""Parameter and output roles as objects: each holds both sides of one kind of value.

A catalogue role (``Param.role``, ``Out.role``) is one class here. On the capture side it
says how the application's value is encoded into the event record, and what a call that
returned implies for the session's bookkeeping (an allocation to track, a copy whose
bytes arrive later). On the replay side it says how the recorded value is validated
(``check``: the one place per-field validation lives in replay) and what the backend is
handed for it (``action``: a translated address, a looked-up handle, a replay-owned
buffer). The recorder and the replay engine only iterate a row's parameters and ask
each role; a role specialises once per row (closures over the parameter's index, its
byte-count parameter and the services it needs), never per call.

Roles reach the session and the replayer only through the narrow interfaces
``CaptureServices`` and ``ReplayServices``. Kernel launches, whose arguments span several
parameters and the launch extra, are ``LaunchCodec``: capture's normalisation to kernarg
bytes and replay's rebuilding of the call, side by side.
"""
from __future__ import annotations

import ctypes
import functools
import enum
import math
import numbers
import shlex
import struct
from typing import Any, Callable, ClassVar, NamedTuple, Protocol, Sequence

import numpy as np
import xxhash

from hrr.api.catalogue import CATALOGUE, NULL_INVALID_HANDLES, Api, Out
from hrr.backends.hiptypes import (ENUM_TYPES, HANDLE_TYPES, PointerConversionError, ReplayInstantiateParams,
                                   ReplayKernelNodeParams, ReplayMemLocation, ReplayMemPoolProps,
                                   ReplayMemsetParams, address_or_zero, buffer_nbytes, handle_or_zero)
from hrr.backends.codefile import buffer_or_address, image_at, read_code_file
from hrr.backends.kernargs import LaunchArgsError, kernarg_array, pack_kernel_args
from hrr.events.launch import launch_map
from hrr.events.model import Event
from hrr.pipeline.capture import LAUNCH_ALL, LAUNCH_NONE
from hrr.pipeline.context import EventRefused, LaunchInfo

Encoder = Callable[[tuple], Any]               # app args -> wire value (or a callable of the result)
After = Callable[[tuple, tuple, int], None]    # (args, result, seq), once the call is recorded
Enricher = Callable[[tuple, tuple, dict], None]  # (args, result, extra), before the record is written
Check = Callable[[Any], Any]                   # recorded value -> validated value (or EventRefused)

_U64 = 1 << 64
MAX_SIZE = (1 << 63) - 1                       # no byte count an archive names may be larger
HOST_KINDS = ("pinned", "registered")          # allocations replay owns as host memory
DEVICE, REGISTERED = "device", "registered"    # allocation kinds (hrr.capture.allocations)


# ------------------------------------------------------------------ the narrow interfaces
class CaptureServices(Protocol):
    """What capture roles may ask of the session that records the call."""

    def find_allocation(self, addr: int) -> Any:
        """The tracked allocation holding ``addr``, or None."""

    def host_blob(self, kind: str, obj: Any, addr: int, n: int) -> str | None:
        """The blob of ``n`` bytes of app memory at ``addr``, if content ``kind`` is recorded."""

    def put_code_object(self, image: Any) -> str | None:
        """The name the code object ``image`` is stored under (None: not bytes)."""

    def host_rows_blob(self, kind: str, obj: Any, addr: int, pitch: int, width: int, height: int) -> str | None:
        """The blob of the ``height`` rows of ``width`` bytes, ``pitch`` apart, of app memory
        at ``addr`` (packed), if content ``kind`` is recorded."""

    def expect_d2h(self, pending: tuple[int, ...] | None) -> None:
        """The current call copies to host memory once its stream has run it: ``(stream,
        addr, n)``, or ``(stream, addr, n, pitch, width)`` for ``n // width`` strided rows;
        None when it has nothing to await."""

    def d2h_issued(self, ok: bool, seq: int) -> None:
        """The current call (record ``seq``) returned: its pending copy is awaited if ``ok``."""

    def track_allocation(self, base: int, size: int, kind: str) -> None:
        """A new allocation of ``kind`` now lives at ``base``."""

    def track_alias(self, host: int, alias: int) -> None:
        """``alias`` is a device address of the allocation holding ``host``."""

    def add_unreplayable(self, api: str, reason: str) -> None:
        """List ``api`` under the manifest's ``unreplayable_apis``."""

    def note_function(self, name: str, function: Any, extra: dict) -> None:
        """A kernel function handle was made: remember its name and layout."""

    def function_info(self, func: Any) -> tuple[str, Any, tuple[int, ...]]:
        """(kernel name, parameter layout or None, its pointer-word offsets) of a function handle."""

    def scan_pointers(self, offsets: tuple[int, ...], kernargs: bytes) -> tuple[list, list]:
        """The kernarg words at ``offsets`` that point into a live allocation (PointerWord),
        and the same as the event stores them."""

    def launch_watched(self) -> bool:
        """Whether a stage implements ``hrr_capture_launch`` now (else no LaunchInfo is made)."""

    def run_launch(self, info: LaunchInfo) -> dict | None:
        """The plugins' records for a launch."""

    def launch_scope(self) -> int:
        """0: no stage sees launches; 1: only launches with a pointer word into non-device
        memory; 2: every launch (``hrr.pipeline.capture.LAUNCH_*``)."""


class ReplayServices(Protocol):
    """What replay roles may ask of the replayer of one process archive."""

    charges_device_memory: bool   # device memory is host RAM (the sim): charge it too

    def translate(self, addr: int) -> int | None:
        """Replay's address for the capture address ``addr`` (None: in no allocation)."""

    def find(self, addr: int) -> Any:
        """The replay allocation holding the capture address ``addr``, or None."""

    def lookup_handle(self, kind: str, value: int) -> Any:
        """Replay's handle for a capture handle value; KeyError when unknown."""

    def bind_handle(self, kind: str, capture_value: int, replay_obj: Any) -> None:
        """Remember a handle the call made."""

    def add_allocation(self, capture_base: int, replay_base: int, size: int, kind: str, *,
                       keepalive: Any = None, charged: int = 0, owner: int = 0) -> None:
        """Remember an allocation the call made (``owner``: the host base of an alias)."""

    def buffer(self, n: int, what: str) -> Any:
        """A zeroed replay-owned host buffer (numpy uint8), charged before it is made."""

    def hold(self, buf: Any) -> None:
        """Keep ``buf`` alive while the current call's work may use it."""

    def keep(self, buf: Any) -> None:
        """Keep ``buf`` alive until the replay ends (a graph node's host buffer: every
        launch of its graph uses it)."""

    def read_blob(self, name: str) -> bytes:
        """A blob's bytes (BlobError when it cannot be used)."""

    def read_queued_blob(self, name: str) -> bytes:
        """A blob a host function holds until the next device synchronisation."""

    def enqueue_host_fn(self, stream: Any, fn: Callable[[], None]) -> int:
        """Queue ``fn`` on ``stream``; returns the backend's error."""

    def expect(self, call: "Call", read: Callable[[], bytes], blob: str | None, n: int) -> None:
        """Compare what ``read`` returns with ``blob`` once the call's copy has completed."""

    def read_code_object(self, name: str) -> Any:
        """A code object's image."""

    def dim3(self, x: int, y: int, z: int) -> Any:
        """The backend's dim3."""

    def poison_address(self) -> int:
        """Memory replay owns but never allocated through HIP."""

    def count(self, counter: str) -> None:
        """Add one to a replay counter."""

    def charge(self, n: int, what: str) -> int:
        """Charge ``n`` host bytes against --max-host-bytes (EventRefused when over)."""

    def release(self, n: int) -> None:
        """Give back ``n`` charged bytes."""


class Call:
    """One record being replayed: its row, its schema-checked wire record
    ``[seq, tid, api, args, err, outs, extra]`` (``wire``), the validated recorded values
    (``raw``), what the backend is given (``args``), work to do once every argument is
    decoded (``queued``) and once the call succeeded (``after``). The record's ``Event``
    (``ev``) is built only when something asks for it (a plugin's per-event hook)."""

    __slots__ = ("row", "wire", "raw", "args", "after", "queued", "_ev")

    def __init__(self, row: Api, wire: list, raw: list) -> None:
        self.row, self.wire, self.raw = row, wire, raw
        self.args: list = raw
        self.after: list[Callable[[], None]] = []
        self.queued: list[Callable[[], None]] = []
        self._ev: Any = None

    @property
    def seq(self) -> int:
        """The record's sequence number."""
        return self.wire[0]

    @property
    def err(self) -> int:
        """The error the recorded call returned."""
        return self.wire[4]

    @property
    def extra(self) -> dict:
        """The record's extra map (launch arguments, plugin records)."""
        return self.wire[6]

    @property
    def ev(self) -> Any:
        """The record as an ``hrr.events.Event``, built at the first use."""
        if self._ev is None:
            self._ev = wire_event(self.wire)
        return self._ev


def wire_event(wire: list) -> Any:
    """The ``Event`` of a wire record the codec has already checked (no second check)."""
    seq, tid, api, args, err, outs, extra = wire
    return Event(seq, tid, api, tuple(args), err, tuple(outs), extra)


Action = Callable[[Call], Any]


# ------------------------------------------------------------------ shared helpers
def scalar(v: Any) -> Any:
    """Capture: a scalar argument as a wire number (numpy and ctypes numbers included)."""
    if v is None or type(v) in (int, float, bool, str):
        return v
    if isinstance(v, (int, numbers.Integral)):
        return int(v)
    if isinstance(v, (float, numbers.Real)):
        return float(v)
    value = getattr(v, "value", None)  # ctypes scalars (c_uint32(5), c_size_t(...))
    if type(value) in (int, float, bool):
        return value
    return None


def number(v: Any) -> Any:
    """Capture: an output recorded when it is a number."""
    value = scalar(v)
    return None if isinstance(value, str) else value


def dim3_list(v: Any) -> list[int]:
    """Capture: a dim3 (object, tuple or int) as ``[x, y, z]``."""
    if v is None:
        return [1, 1, 1]
    if isinstance(v, (tuple, list)):
        return [int(x) for x in v] + [1] * (3 - len(v))
    if isinstance(v, int):
        return [v, 1, 1]
    return [int(getattr(v, "x", 1)), int(getattr(v, "y", 1)), int(getattr(v, "z", 1))]


def brief(v: Any) -> str:
    """A recorded value short enough for a refusal message."""
    text = repr(v)
    return text if len(text) <= 40 else f"{text[:37]}..."


def bad(reason: str) -> EventRefused:
    return EventRefused(reason, category="bad_record")


def check_address(v: Any, what: str) -> int:
    """Replay: an address or handle value, an integer from 0 to 2^64 - 1."""
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < _U64:
        raise bad(f"{what} is {brief(v)}, not a 64-bit address")
    return v


def check_size(v: Any, what: str) -> int:
    """Replay: a byte count, an integer from 0 to 2^63 - 1 (never a float, inf, NaN or negative)."""
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= MAX_SIZE:
        raise bad(f"{what} is {brief(v)}, not a byte count")
    return v


def check_scalar(v: Any, what: str) -> Any:
    """Replay: a scalar argument, None, a bool, a 64-bit integer or a finite float."""
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, int):
        if -(1 << 63) <= v < _U64:
            return v
    elif isinstance(v, float):
        if math.isfinite(v) and abs(v) < _U64:
            return v
    raise bad(f"parameter {what} is {brief(v)}, not a number replay can pass")


def check_record(v: Any, n: int, what: str) -> Sequence:
    """Replay: a structure recorded as a list of ``n`` fields (``what`` names it in the refusal)."""
    if not (isinstance(v, (list, tuple)) and len(v) == n):
        raise bad(f"{what} record is malformed")
    return v


def check_triple(v: Any) -> tuple[int, int, int]:
    """Replay: a launch shape, three integers below 2^32."""
    if not (isinstance(v, (list, tuple)) and len(v) == 3 and all(
            isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 1 << 32 for x in v)):
        raise bad("a launch shape is malformed")
    return int(v[0]), int(v[1]), int(v[2])


def byte_counts(row: Api) -> frozenset[str]:
    """The parameters of ``row`` that are byte counts: named as the size of a buffer,
    an allocation or a launch's shared memory."""
    named = {p.size for p in row.params if p.size} | {o.size for o in row.outs if o.size}
    named.update(n for p in row.params if p.rows for n in p.rows)
    if row.launch is not None:
        named.add(row.launch.shared)
    return frozenset(p.name for p in row.params if p.name in named)


def check_fits(alloc: Any, addr: int, n: int) -> None:
    """Replay: ``n`` bytes at capture address ``addr`` lie inside ``alloc``."""
    if alloc is None or addr < alloc.capture_base or addr + n > alloc.capture_base + alloc.size:
        size = f"{alloc.size}-byte " if alloc is not None else ""
        raise EventRefused(f"{n} bytes at 0x{addr:x} run past the end of their {size}allocation",
                           category="bounds")


def _translate(rep: ReplayServices, addr: int, what: str) -> int | None:
    if not addr:
        return None
    replay = rep.translate(addr)
    if replay is None:
        raise EventRefused(f"{what}: 0x{addr:x} is not inside any allocation replay made",
                           category="untranslated")
    return replay


def _null(n: int, what: str) -> None:
    """A NULL endpoint is passed on (the backend reports it) only when it moves nothing."""
    if n:
        raise EventRefused(f"{what}: a NULL address for {n} bytes", category="untranslated")
    return None


def _payload(rep: ReplayServices, blob: str | None, n: int) -> bytes | None:
    if blob is None:
        return None
    data = rep.read_blob(blob)
    if len(data) != n:
        raise EventRefused(f"blob {blob} holds {len(data)} bytes, the copy moves {n}", category="blob")
    return data


def _writer(addr: int, data: bytes) -> Callable[[], None]:
    def write() -> None:
        ctypes.memmove(addr, data, len(data))
    return write


def _reader(rep: ReplayServices, alloc: Any, addr: int, replay: int, n: int) -> Callable[[], bytes]:
    """Reads a checked destination when its check comes, never after it was released."""
    def read() -> bytes:
        if rep.find(addr) is not alloc:
            raise EventRefused(f"the destination at 0x{addr:x} was released before its check",
                               category="bounds")
        return ctypes.string_at(replay, n)
    return read


def _makes_graph_node(row: Api) -> bool:
    """A call that puts its work into a graph node: the node's host buffers are used at
    every launch of the graph, so replay keeps them for good, not for the call."""
    return any(o.role == "handle" and o.kind == "graph_node" for o in row.outs)


def _first(row: Api, role: str, kind: str | None = None) -> int | None:
    """The index of ``row``'s first parameter of ``role`` (and ``kind``), or None."""
    for i, p in enumerate(row.params):
        if p.role == role and kind in (None, p.kind):
            return i
    return None


def _extent(row: Api, i: int) -> Callable[[list], int]:
    """The bytes parameter ``i`` reaches, from the call's checked values: its ``rows``
    (a strided region), ``size`` times ``elem``, or its fixed ``span``."""
    p = row.params[i]
    if p.rows is not None:
        pitch_at, width_at, height_at = (row.param_index(n) for n in p.rows)
        region = p.extent
        return lambda raw: region(raw[pitch_at], raw[width_at], raw[height_at])
    if p.size is not None:
        size_at, elem = row.param_index(p.size), p.elem
        return lambda raw: raw[size_at] * elem
    span = p.span or 0
    return lambda raw: span


def gather_rows(addr: int, pitch: int, width: int, height: int) -> bytes:
    """The ``height`` rows of ``width`` bytes, ``pitch`` apart, at ``addr``, packed."""
    if pitch == width:
        return ctypes.string_at(addr, width * height)
    return b"".join(ctypes.string_at(addr + r * pitch, width) for r in range(height))


def scatter_rows(addr: int, pitch: int, width: int, height: int, data: bytes) -> None:
    """Write packed rows (``gather_rows``' form) back to a strided region at ``addr``."""
    for r in range(height):
        ctypes.memmove(addr + r * pitch, data[r * width:(r + 1) * width], width)


# ------------------------------------------------------------------ parameter roles
class Role:
    """A parameter role. Capture: ``encoder`` and ``after_call``; replay: ``check`` and ``action``."""

    name: ClassVar[str] = ""
    deferred: ClassVar[bool] = False   # capture: the wire value is known only after the call

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        """``enc(args) -> wire value``; with ``deferred``, possibly a callable of the result."""
        return lambda a: None

    def after_call(self, row: Api, i: int, cap: CaptureServices) -> After | None:
        """Session bookkeeping once the call returned and was recorded (None: none)."""
        return None

    def check(self, row: Api, i: int) -> Check:
        """Replay: validates the recorded value; returns what later stages may trust."""
        return lambda v: None

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        """Replay: what the backend is given (None: the checked value itself)."""
        return None


class Value(Role):
    name = "value"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: scalar(a[i])

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name
        if what in byte_counts(row):
            return lambda v: check_size(v, what)
        return lambda v: check_scalar(v, what)

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        source = row.params[i].replay_from
        if source is None:
            return None
        j = next(k for k, o in enumerate(row.outs) if o.name == source)

        def act(call: Call) -> Any:
            recorded = call.wire[5][j] if len(call.wire[5]) > j else None
            if call.err or recorded is None:
                return call.raw[i]
            return check_size(recorded, f"the recorded {source}")
        return act


class Enum(Role):
    name = "enum"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: None if a[i] is None else int(a[i])

    def check(self, row: Api, i: int) -> Check:
        p = row.params[i]
        enum = ENUM_TYPES.get(p.kind or "")

        def check(v: Any) -> Any:
            if v is None:
                return None
            if not isinstance(v, int) or isinstance(v, bool) or not -(1 << 63) <= v < _U64:
                raise bad(f"parameter {p.name} is {brief(v)}, not a {p.kind}")
            try:
                return enum(v) if enum is not None else v
            except ValueError:
                raise bad(f"{v} is not a {p.kind}") from None
        return check


class Ptr(Role):
    """A raw address: translated through replay's allocations; when the call names its
    extent (``Param.size``, times ``Param.elem``; ``Param.rows``; or ``Param.span``) the
    whole range must lie inside one."""

    name = "ptr"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: address_or_zero(a[i])

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name
        return lambda v: check_address(v, what)

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        p = row.params[i]
        released = row.destroys == "alloc" and i == 0
        if p.rows is not None or p.elem != 1:
            return self._measured(row, i, rep)
        span, size_at = p.span or 0, row.size_index(p)

        def act(call: Call) -> Any:
            addr = call.raw[i]
            if released and call.err and rep.translate(addr) is None:
                # A release the recording saw fail (a double free): hand the backend
                # memory it never allocated, so it fails the same way and frees nothing.
                return rep.poison_address()
            replay = _translate(rep, addr, p.name)
            n = call.raw[size_at] if size_at is not None else span
            if replay is not None and n:
                check_fits(rep.find(addr), addr, n)
            return replay
        return act

    @staticmethod
    def _measured(row: Api, i: int, rep: ReplayServices) -> Action:
        """A pointer whose extent is elements (``Param.elem``) or a strided region (``rows``)."""
        what, extent = row.params[i].name, _extent(row, i)

        def act(call: Call) -> Any:
            addr = call.raw[i]
            replay = _translate(rep, addr, what)
            n = extent(call.raw)
            if replay is not None and n:
                check_fits(rep.find(addr), addr, n)
            return replay
        return act


class Handle(Role):
    name = "handle"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: handle_or_zero(a[i])

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name
        return lambda v: check_address(v, what)

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        p = row.params[i]
        kind = p.kind or ""
        null_stands_in = kind in NULL_INVALID_HANDLES

        def act(call: Call) -> Any:
            value = call.raw[i]
            try:
                return rep.lookup_handle(kind, value)
            except KeyError:
                if null_stands_in and call.err:
                    # A destroyed handle the recording saw a call fail with: NULL fails the same
                    # way, and no stale handle reaches the backend.
                    return None
                raise EventRefused(f"{p.name}: unknown {p.kind} handle 0x{value:x}",
                                   category="untranslated") from None
        return act


class _Endpoint(Role):
    """``[tag, addr, nbytes, blob]``: tag ``a`` inside a tracked allocation, ``h`` other
    host memory; ``nbytes`` must equal the call's byte-count parameter."""

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name

        def check(v: Any) -> tuple[str, int, int, str | None]:
            if not (isinstance(v, (list, tuple)) and len(v) == 4 and v[0] in ("a", "h")):
                raise bad(f"{what}: a copy endpoint record is malformed")
            tag, addr, n, blob = v
            addr = check_address(addr, f"{what} address")
            n = check_size(n, f"{what} size")
            if blob is not None and not isinstance(blob, str):
                raise bad(f"{what}: a copy endpoint names a bad blob")
            return tag, addr, n, blob
        return check

    @staticmethod
    def sized(row: Api, i: int) -> Callable[[Call], tuple[str, int, int, str | None]]:
        """The checked endpoint, once its byte count is found equal to the call's."""
        p = row.params[i]
        size_at = row.size_index(p)

        def endpoint(call: Call) -> tuple[str, int, int, str | None]:
            tag, addr, n, blob = call.raw[i]
            if size_at is not None and call.raw[size_at] != n:
                raise EventRefused(f"{p.name}: the endpoint holds {n} bytes but {p.size} is "
                                   f"{call.raw[size_at]}", category="bounds")
            return tag, addr, n, blob
        return endpoint


class CopySrc(_Endpoint):
    name = "copy_src"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        p = row.params[i]
        at = row.size_index(p)
        find, host_blob = cap.find_allocation, cap.host_blob

        def encode(a: tuple) -> list:
            obj = a[i]
            addr, n = address_or_zero(obj), int((a[at] if at is not None else 0) or 0)
            alloc = find(addr)
            if alloc is not None and alloc.kind == DEVICE:
                return ["a", addr, n, None]
            return ["a" if alloc is not None else "h", addr, n, host_blob("h2d_payload", obj, addr, n)]
        return encode

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        what = row.params[i].name
        endpoint = self.sized(row, i)
        queued = bool(row.stream) and not row.sync   # the copy runs later, on its stream
        keep = rep.keep if _makes_graph_node(row) else rep.hold
        stream_at = row.param_index(row.stream) if queued and row.stream else None

        def act(call: Call) -> Any:
            tag, addr, n, blob = endpoint(call)
            if tag == "h":
                buf = rep.buffer(n, f"the source of {row.name}")
                data = _payload(rep, blob, n)
                if data is not None:
                    buf[:n] = np.frombuffer(data, dtype=np.uint8)
                else:
                    rep.count("zero_filled_inputs")
                keep(buf)
                return buf
            replay = _translate(rep, addr, what)
            if replay is None:
                return _null(n, what)
            alloc = rep.find(addr)
            # Every size is checked against the allocation it names, blob or no blob: the
            # backend would otherwise read past replay's buffer.
            check_fits(alloc, addr, n)
            if blob is not None and alloc.kind in HOST_KINDS:
                data = rep.read_queued_blob(blob) if queued else rep.read_blob(blob)
                if len(data) != n:
                    raise EventRefused(f"blob {blob} holds {len(data)} bytes, the copy moves {n}",
                                       category="blob")
                restore = _writer(replay, data)
                call.queued.append(restore if stream_at is None else
                                   lambda: _enqueue(rep, call.args[stream_at], restore))
            return replay
        return act


def _enqueue(rep: ReplayServices, stream: Any, restore: Callable[[], None]) -> None:
    if rep.enqueue_host_fn(stream, restore) != 0:
        raise EventRefused("could not queue the pinned-source restore", category="enqueue")


class CopyDst(_Endpoint):
    """A copy destination. Host bytes are only known once the copy completed: after a
    synchronous call (the encoder returns a callable of the result), or when capture
    sees the stream of an asynchronous one synchronised (a ``@d2h`` record later)."""

    name = "copy_dst"
    deferred = True

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        p = row.params[i]
        at = row.size_index(p)
        stream_at = row.param_index(row.stream) if row.stream else None
        find, host_blob, expect_d2h = cap.find_allocation, cap.host_blob, cap.expect_d2h

        def encode(a: tuple) -> Any:
            obj = a[i]
            addr, n = address_or_zero(obj), int((a[at] if at is not None else 0) or 0)
            alloc = find(addr)
            tag = "a" if alloc is not None else "h"
            if alloc is not None and alloc.kind == DEVICE:
                if not row.sync:
                    expect_d2h(None)   # nothing to await (and nothing left from an earlier call)
                return ["a", addr, n, None]
            if not row.sync:
                expect_d2h((handle_or_zero(a[stream_at]) if stream_at is not None else 0, addr, n))
                return [tag, addr, n, None]

            def after(result: tuple) -> list:
                blob = host_blob("d2h_result", obj, addr, n) if int(result[0]) == 0 else None
                return [tag, addr, n, blob]
            return after
        return encode

    def after_call(self, row: Api, i: int, cap: CaptureServices) -> After | None:
        if row.sync:
            return None
        issued = cap.d2h_issued
        return lambda args, result, seq: issued(int(result[0]) == 0, seq)

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        what = row.params[i].name
        endpoint = self.sized(row, i)
        keep = rep.keep if _makes_graph_node(row) else rep.hold

        def act(call: Call) -> Any:
            tag, addr, n, blob = endpoint(call)
            if tag == "h":
                buf = rep.buffer(n, f"the destination of {row.name}")
                keep(buf)
                rep.expect(call, lambda: buf[:n].tobytes(), blob, n)
                return buf
            replay = _translate(rep, addr, what)
            if replay is None:
                return _null(n, what)
            alloc = rep.find(addr)
            check_fits(alloc, addr, n)
            if alloc.kind in HOST_KINDS:
                rep.expect(call, _reader(rep, alloc, addr, replay, n), blob, n)
            return replay
        return act


class Strided(_Endpoint):
    """One end of a 2D copy (``Param.kind`` ``src`` or ``dst``), ``Param.rows`` naming its
    pitch, width and height: ``[tag, addr, nbytes, blob]`` as a copy endpoint, where
    ``nbytes`` is ``width * height`` and the blob holds the rows the copy reads (``src``)
    or writes (``dst``) packed, never the bytes between rows. Device memory is translated
    and its whole extent checked; host memory is rebuilt at replay at the recorded pitch
    (a replay-owned buffer, or the pinned allocation it names) and checked row by row."""

    name = "strided"
    deferred = True   # a synchronous host destination's bytes are known after the call

    def _shape(self, row: Api, i: int) -> tuple[int, int, int]:
        rows = row.params[i].rows
        if rows is None:
            raise ValueError(f"{row.name}: strided parameter {row.params[i].name} names no rows")
        return row.param_index(rows[0]), row.param_index(rows[1]), row.param_index(rows[2])

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        p = row.params[i]
        pitch_at, width_at, height_at = self._shape(row, i)
        stream_at = row.param_index(row.stream) if row.stream else None
        find, rows_blob, expect_d2h = cap.find_allocation, cap.host_rows_blob, cap.expect_d2h
        dst, sync = p.kind == "dst", row.sync

        def encode(a: tuple) -> Any:
            obj = a[i]
            addr = address_or_zero(obj)
            pitch, width, height = (int(a[k] or 0) for k in (pitch_at, width_at, height_at))
            n = width * height
            alloc = find(addr)
            tag = "a" if alloc is not None else "h"
            if alloc is not None and alloc.kind == DEVICE:
                if dst and not sync:
                    expect_d2h(None)
                return ["a", addr, n, None]
            if not dst:
                return [tag, addr, n, rows_blob("h2d_payload", obj, addr, pitch, width, height)]
            if not sync:
                expect_d2h((handle_or_zero(a[stream_at]) if stream_at is not None else 0, addr, n, pitch,
                            width) if width else None)
                return [tag, addr, n, None]

            def after(result: tuple) -> list:
                ok = int(result[0]) == 0
                return [tag, addr, n, rows_blob("d2h_result", obj, addr, pitch, width, height) if ok else None]
            return after
        return encode

    def after_call(self, row: Api, i: int, cap: CaptureServices) -> After | None:
        if row.params[i].kind != "dst" or row.sync:
            return None
        issued = cap.d2h_issued
        return lambda args, result, seq: issued(int(result[0]) == 0, seq)

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        p = row.params[i]
        pitch_at, width_at, height_at = self._shape(row, i)
        extent, dst = p.extent, p.kind == "dst"
        queued = bool(row.stream) and not row.sync
        stream_at = row.param_index(row.stream) if queued and row.stream else None

        def act(call: Call) -> Any:
            tag, addr, n, blob = call.raw[i]
            raw = call.raw
            pitch, width, height = raw[pitch_at], raw[width_at], raw[height_at]
            if n != width * height or (height > 1 and pitch < width):
                raise EventRefused(f"{p.name}: {n} bytes do not make {height} rows of {width} bytes "
                                   f"{pitch} apart", category="bounds")
            span = extent(pitch, width, height)
            if tag == "h":
                buf = rep.buffer(span, f"the {'destination' if dst else 'source'} of {row.name}")
                base = int(buf.__array_interface__["data"][0])
                rep.hold(buf)
                if dst:
                    rep.expect(call, lambda: gather_rows(base, pitch, width, height), blob, n)
                else:
                    data = _payload(rep, blob, n)
                    if data is not None:
                        scatter_rows(base, pitch, width, height, data)
                    else:
                        rep.count("zero_filled_inputs")
                return buf
            replay = _translate(rep, addr, p.name)
            if replay is None:
                return _null(n, p.name)
            alloc = rep.find(addr)
            check_fits(alloc, addr, span)
            if alloc.kind in HOST_KINDS:
                if dst:
                    read = _reader(rep, alloc, addr, replay, span)
                    rep.expect(call, lambda: _pack(read(), pitch, width, height), blob, n)
                elif blob is not None:
                    data = rep.read_queued_blob(blob) if queued else rep.read_blob(blob)
                    if len(data) != n:
                        raise EventRefused(f"blob {blob} holds {len(data)} bytes, the copy moves {n}",
                                           category="blob")
                    restore = functools.partial(scatter_rows, replay, pitch, width, height, data)
                    call.queued.append(restore if stream_at is None else
                                       lambda: _enqueue(rep, call.args[stream_at], restore))
            return replay
        return act


def _pack(region: bytes, pitch: int, width: int, height: int) -> bytes:
    """The rows of a strided region already read in one piece, packed."""
    return b"".join(region[r * pitch:r * pitch + width] for r in range(height))


class HostRange(_Endpoint):
    """Application memory pinned in place: replay pins a buffer of its own, filled with
    the recorded bytes, and tracks it as a registered allocation once the call succeeded."""

    name = "host_range"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        p = row.params[i]
        at = row.size_index(p)
        host_blob = cap.host_blob

        def encode(a: tuple) -> list:
            obj = a[i]
            addr, n = address_or_zero(obj), int((a[at] if at is not None else 0) or 0)
            return ["h", addr, n, host_blob("registered_memory", obj, addr, n)]
        return encode

    def after_call(self, row: Api, i: int, cap: CaptureServices) -> After | None:
        p = row.params[i]
        at = row.size_index(p)
        track = cap.track_allocation

        def after(args: tuple, result: tuple, seq: int) -> None:
            if int(result[0]) == 0:
                n = int(args[at]) if at is not None else 0
                track(address_or_zero(args[i]), max(n, 1), REGISTERED)
        return after

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        endpoint = self.sized(row, i)

        def act(call: Call) -> Any:
            tag, addr, n, blob = endpoint(call)
            buf = rep.buffer(n, row.name)
            data = _payload(rep, blob, n)
            if data is not None:
                buf[:n] = np.frombuffer(data, dtype=np.uint8)
            base = int(buf.__array_interface__["data"][0])
            call.after.append(lambda: rep.add_allocation(addr, base, max(n, 1), REGISTERED, keepalive=buf))
            return base
        return act


def _file_image(path: Any) -> bytes | None:
    """The bytes of the code object file hipModuleLoad names (None: it cannot be read,
    and the call fails the same way)."""
    try:
        return read_code_file(path)
    except (OSError, ValueError, TypeError):
        return None


class Code(Role):
    """A code object image (``kind`` ``file``: the file hipModuleLoad names, whose bytes
    are stored as hipModuleLoadData's image is; the path itself is never recorded)."""

    name = "code"
    deferred = True   # an image given by address is read once the load succeeded

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        put = cap.put_code_object
        if row.params[i].kind == "file":
            return lambda a: put(_file_image(a[i]))

        def encode(a: tuple) -> Any:
            try:
                image = buffer_or_address(a[i]) if a[i] is not None else 0
            except PointerConversionError:
                return None   # the backend says what is wrong with it
            if isinstance(image, bytes):
                return put(image)
            # an address (cuda-python passes ``ptx.ctypes.data``): its format says how long
            # it is; read only after a successful load, when the loader has read it too
            return lambda result: None if int(result[0]) else put(image_at(image))
        return encode

    def check(self, row: Api, i: int) -> Check:
        def check(v: Any) -> str:
            if not isinstance(v, str):
                raise EventRefused("the code object was not recorded (it was passed by address)",
                                   category="missing_blob")
            return v
        return check

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        return lambda call: rep.read_code_object(call.raw[i])


def _text(v: Any) -> str:
    return v.decode(errors="replace") if isinstance(v, (bytes, bytearray)) else str(v)


class Name(Role):
    name = "name"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: _text(a[i])

    def check(self, row: Api, i: int) -> Check:
        def check(v: Any) -> str:
            if not isinstance(v, str):
                raise bad("kernel name is not a string")
            return v
        return check

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        return lambda call: call.raw[i].encode()


class Dim3(Role):
    name = "dim3"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: dim3_list(a[i])

    def check(self, row: Api, i: int) -> Check:
        return check_triple

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        return lambda call: rep.dim3(*call.raw[i])


class _AppAddress(Role):
    """An address in the application's own code or data: recorded, never handed to a
    backend at replay (an archive carries no host code)."""

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: address_or_zero(a[i])

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name
        return lambda v: check_address(v, what)

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        return lambda call: None


class HostFn(_AppAddress):
    name = "host_fn"

    def after_call(self, row: Api, i: int, cap: CaptureServices) -> After | None:
        note = cap.add_unreplayable
        return lambda args, result, seq: note(row.name, row.reason)


class UserData(_AppAddress):
    name = "user_data"


class Launch(Role):
    """kernelParams / extra / args: recorded as null; ``LaunchCodec`` puts the kernarg
    bytes in the event's ``extra.launch``."""

    name = "launch"


class Ignored(Role):
    name = "ignored"


class ResultBuf(Role):
    """App memory a query writes its answer into (``Param.size`` or ``Param.span`` bytes):
    not recorded; replay hands the call a zeroed buffer of its own and never checks it (a
    query's answer, an address or a context, may differ between runs)."""

    name = "result_buf"

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        extent, what = _extent(row, i), f"the result of {row.name}"

        def act(call: Call) -> Any:
            buf = rep.buffer(max(extent(call.raw), 1), what)
            rep.hold(buf)
            return buf
        return act


# ---- hiprtc: programs and the link API (issue 10) --------------------------------------
# hiprtc rows replay as no-ops (the code object is recorded at hipModuleLoadData): these
# roles only record what the compile and link calls were given and made. A source's or
# log's text is data kind "kernel_source" (content mode only); its size and xxh3-128
# digest (the name a code object is stored under) are always recorded.
def _rtc_bytes(obj: Any, n: int | None) -> bytes | None:
    """The bytes of a hiprtc input: text, a buffer, or ``n`` bytes at an address."""
    if isinstance(obj, str):
        return obj.encode()
    try:
        data = memoryview(obj).cast("B").tobytes()
    except (TypeError, ValueError):
        addr = address_or_zero(obj)
        return ctypes.string_at(addr, n) if addr and n else None
    return data[:n] if n is not None else data


def _digest(data: bytes) -> str:
    return xxhash.xxh3_128_hexdigest(data)


class Source(Role):
    """``[nbytes, digest, blob or None, count]``; a list (headers) is hashed as its items
    joined by NUL bytes, ``count`` items."""

    name = "source"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        p = row.params[i]
        at = row.size_index(p)
        host_blob = cap.host_blob

        def encode(a: tuple) -> Any:
            obj = a[i]
            if obj is None:
                return None
            items = list(obj) if isinstance(obj, (list, tuple)) else [obj]
            n = scalar(a[at]) if at is not None else None
            parts = [_rtc_bytes(x, n if isinstance(n, int) else None) for x in items]
            if any(b is None for b in parts):
                return [None, None, None, len(items)]
            data = b"\0".join(parts)   # type: ignore[arg-type]
            blob = host_blob("kernel_source", data, address_or_zero(data), len(data)) if data else None
            return [len(data), _digest(data), blob, len(items)]
        return encode


def _option_text(v: Any) -> str:
    if isinstance(v, enum.Enum):
        return v.name
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).split(b"\0", 1)[0].decode(errors="replace")
    if isinstance(v, str):
        return v
    value = scalar(v)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return hex(address_or_zero(v))


class Options(Role):
    """A list of options (or include names, JIT options, their values): one shell-quoted
    string (lossless for text; enum members by name, numbers in decimal, pointers in hex)."""

    name = "options"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        def encode(a: tuple) -> Any:
            obj = a[i]
            if obj is None:
                return None
            if isinstance(obj, (list, tuple)):
                return shlex.join(_option_text(x) for x in obj)
            return _option_text(obj)
        return encode


class RtcOut(Role):
    """A buffer the call fills: ``[nbytes, digest, blob or None]`` once it returned (None
    when it failed or the buffer was passed by address); ``Param.kind`` "text": a log, whose
    text (up to its NUL) is kept in content mode."""

    name = "rtc_out"
    deferred = True

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        text = row.params[i].kind == "text"
        host_blob = cap.host_blob

        def encode(a: tuple) -> Any:
            obj = a[i]

            def filled(result: tuple) -> Any:
                if int(result[0]) != 0:
                    return None
                try:
                    data = memoryview(obj).cast("B").tobytes()
                except (TypeError, ValueError):
                    return None
                if text:
                    data = data.split(b"\0", 1)[0]
                    blob = host_blob("kernel_source", data, address_or_zero(data), len(data)) if data else None
                    return [len(data), _digest(data), blob]
                return [len(data), _digest(data), None]
            return filled
        return encode



# ------------------------------------------------------------------ graph nodes (issue 10)
MAX_LISTED_HANDLES = 1 << 16   # handles one array argument or output may name


def handle_values(v: Any) -> list[int]:
    """Capture: a handle-array argument (None, one handle, or a sequence) as handle values."""
    if v is None:
        return []
    if isinstance(v, (list, tuple)):
        return [handle_or_zero(x) for x in v]
    return [handle_or_zero(v)]


def pack_u64(values: Any) -> bytes:
    """Integers as little-endian 64-bit words (a wire value of any length: lists are capped)."""
    return struct.pack(f"<{len(values)}Q", *(int(x) % _U64 for x in values))


def unpack_u64(v: Any, what: str, most: int = MAX_LISTED_HANDLES) -> tuple[int, ...]:
    """Replay: the 64-bit words of a recorded ``pack_u64`` value (at most ``most``)."""
    if type(v) is not bytes or len(v) % 8 or len(v) // 8 > most:
        raise bad(f"{what} is not an array of at most {most} 64-bit words")
    return struct.unpack(f"<{len(v) // 8}Q", v)


class Handles(Role):
    """An array of handles of ``Param.kind`` (a graph node's dependencies): recorded as
    packed 64-bit values, each looked up at replay."""

    name = "handles"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: pack_u64(handle_values(a[i]))

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name
        return lambda v: unpack_u64(v, what)

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        p = row.params[i]
        kind = p.kind or ""

        def act(call: Call) -> Any:
            out = []
            for value in call.raw[i]:
                try:
                    out.append(rep.lookup_handle(kind, value))
                except KeyError:
                    raise EventRefused(f"{p.name}: unknown {kind} handle 0x{value:x}",
                                       category="untranslated") from None
            return out
        return act


def node_launch_args(params: Any) -> tuple[Any, Any]:
    """A hipKernelNodeParams' (kernelParams, extra), a NULL pointer field as None."""
    kp, extra = getattr(params, "kernelParams", None), getattr(params, "extra", None)
    if kp is not None and not isinstance(kp, (list, tuple)) and not address_or_zero(kp):
        kp = None
    if extra is not None and not isinstance(extra, (list, tuple)) and not address_or_zero(extra):
        extra = None
    return kp, extra


def _node_owner(row: Api) -> int | None:
    return _first(row, "handle")


def translated_kernargs(kernargs: bytes, words: Any, rep: ReplayServices, what: str) -> bytes:
    """``kernargs`` with each recorded pointer word ``(offset, base, delta)`` replaced by the
    address replay made for ``base + delta``; a word outside the buffer or an address in no
    allocation replay made is refused (a launch's and a kernel node's arguments alike)."""
    buf = bytearray(kernargs)
    for off, base, delta in words:
        if off < 0 or off + 8 > len(buf) or off % 8:
            raise EventRefused(f"pointer word at offset {off} lies outside the kernarg buffer", category="bounds")
        target = base + delta
        replay = rep.translate(target) if delta >= 0 and 0 <= target < _U64 else None
        if replay is None:
            raise EventRefused(f"{what} at offset {off} points to 0x{target:x}, inside no allocation replay made",
                               category="untranslated")
        buf[off:off + 8] = replay.to_bytes(8, "little")
    return bytes(buf)


class KernelNode(Role):
    """A hipKernelNodeParams: its kernel, shape and arguments, recorded as a launch's are
    (``[function, shared, grid, block, kernel name, kernarg bytes, pointer words]``, the
    words packed ``offset, base, delta``); replay rewrites the pointer words to its own
    allocations and hands the backend the arguments as a raw ``extra``. Stages that watch
    launches see it as a ``LaunchInfo`` on no stream, named by the row (graph_capture
    adds its pinned pointers to the graph's)."""

    name = "kernel_node"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        function_info, scan, run_launch, watched = cap.function_info, cap.scan_pointers, cap.run_launch, \
            cap.launch_watched
        name = row.name

        def encode(a: tuple) -> Any:
            p = a[i]
            if p is None:
                return None
            func = getattr(p, "func", None)
            kernel, layout, offsets = function_info(func)
            grid, block = dim3_list(getattr(p, "gridDim", None)), dim3_list(getattr(p, "blockDim", None))
            wire: list = [handle_or_zero(func), scalar(getattr(p, "sharedMemBytes", 0)) or 0, grid, block,
                          kernel, None, b""]
            if layout is None:
                return wire
            try:
                kernargs = pack_kernel_args(layout, *node_launch_args(p))
            except (LaunchArgsError, PointerConversionError, ValueError, OSError):
                return wire
            pointers, words = scan(offsets, kernargs) if offsets else ((), [])
            wire[5], wire[6] = kernargs, pack_u64([x for w in words for x in w])
            if watched():
                run_launch(LaunchInfo(name, wire[0], kernel, layout, kernargs, tuple(pointers), 0, None,
                                      (grid[0], grid[1], grid[2]), (block[0], block[1], block[2])))
            return wire
        return encode

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name

        def check(v: Any) -> Any:
            if v is None:
                return None
            func, shared, grid, block, kernel, kernargs, words = check_record(v, 7, f"{what}: a kernel node")
            if kernargs is not None and type(kernargs) is not bytes:
                raise bad(f"{what}: the kernel node's arguments are not bytes")
            flat = unpack_u64(words, f"{what} pointer words", 3 * (len(kernargs or b"") // 8))
            return (check_address(func, f"{what} function"), check_size(shared, f"{what} sharedMemBytes"),
                    check_triple(grid), check_triple(block), kernel if isinstance(kernel, str) else "",
                    kernargs, [flat[k:k + 3] for k in range(0, len(flat), 3)])
        return check

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        what = row.params[i].name

        def act(call: Call) -> Any:
            v = call.raw[i]
            if v is None:
                return None
            func, shared, grid, block, kernel, kernargs, words = v
            if kernargs is None:
                raise bad(f"{what}: the kernel node's arguments were not recorded")
            try:
                function = rep.lookup_handle("function", func)
            except KeyError:
                raise EventRefused(f"{what}: unknown function handle 0x{func:x}", category="untranslated") from None
            extra, keep = kernarg_array(translated_kernargs(kernargs, words, rep, "kernel node argument"))
            rep.hold((extra, keep))
            return ReplayKernelNodeParams(func=function, gridDim=rep.dim3(*grid), blockDim=rep.dim3(*block),
                                          sharedMemBytes=shared, kernelParams=None, extra=extra)
        return act


class MemsetNode(Role):
    """A hipMemsetParams: ``[dst, elementSize, width, height, pitch, value]``; replay
    translates ``dst`` and checks that the rows it fills lie inside one allocation."""

    name = "memset_node"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        def encode(a: tuple) -> Any:
            p = a[i]
            if p is None:
                return None
            return [address_or_zero(getattr(p, "dst", None)), *(
                int(scalar(getattr(p, f, 0)) or 0) for f in ("elementSize", "width", "height", "pitch", "value"))]
        return encode

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name

        def check(v: Any) -> Any:
            if v is None:
                return None
            check_record(v, 6, f"{what}: a memset node")
            dst = check_address(v[0], f"{what} dst")
            sizes = [check_size(x, f"{what} field") for x in v[1:5]]
            return (dst, *sizes, check_scalar(v[5], f"{what} value"))
        return check

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        what = row.params[i].name

        def act(call: Call) -> Any:
            v = call.raw[i]
            if v is None:
                return None
            dst, esize, width, height, pitch, value = v
            n = memset_extent(esize, width, height, pitch)
            replay = _translate(rep, dst, what)
            if replay is None:
                _null(n, what)
            elif n:
                check_fits(rep.find(dst), dst, n)
            return ReplayMemsetParams(dst=replay or 0, elementSize=esize, width=width, height=height,
                                      pitch=pitch, value=value)
        return act


def memset_extent(element_size: int, width: int, height: int, pitch: int) -> int:
    """The bytes a 2D memset reaches from its ``dst``: ``height`` rows ``pitch`` apart."""
    if not width or not height:
        return 0
    return pitch * (height - 1) + width * element_size


class HostNode(Role):
    """A hipHostNodeParams: application host code (its function and userData addresses are
    recorded, never handed to a backend) that makes the call unreplayable."""

    name = "host_node"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: None if a[i] is None else [address_or_zero(getattr(a[i], "fn", None)),
                                                    address_or_zero(getattr(a[i], "userData", None))]

    def after_call(self, row: Api, i: int, cap: CaptureServices) -> After | None:
        note = cap.add_unreplayable
        return lambda args, result, seq: note(row.name, row.reason)

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name

        def check(v: Any) -> Any:
            if v is None:
                return None
            return [check_address(x, what) for x in check_record(v, 2, f"{what}: a host node")]
        return check

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        return lambda call: None


class InstantiateParams(Role):
    """A hipGraphInstantiateParams: ``[flags, uploadStream]`` (the ``*_out`` fields are the
    call's answers); replay hands the backend its own stream."""

    name = "instantiate_params"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: None if a[i] is None else [int(scalar(getattr(a[i], "flags", 0)) or 0),
                                                    handle_or_zero(getattr(a[i], "uploadStream", None))]

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name

        def check(v: Any) -> Any:
            if v is None:
                return None
            check_record(v, 2, f"{what}: an instantiate-parameters")
            return [check_size(v[0], f"{what} flags"), check_address(v[1], f"{what} uploadStream")]
        return check

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        what = row.params[i].name

        def act(call: Call) -> Any:
            v = call.raw[i]
            if v is None:
                return None
            try:
                stream = rep.lookup_handle("stream", v[1])
            except KeyError:
                raise EventRefused(f"{what}: unknown stream handle 0x{v[1]:x}", category="untranslated") from None
            return ReplayInstantiateParams(flags=v[0], uploadStream=stream)
        return act


# ------------------------------------------------------------------ memory pools and CU masks
MAX_WORDS = 1 << 12   # 32-bit words a ``words`` argument may hold (a CU mask: 32 CUs a word)


def _words(obj: Any, n: int) -> bytes | None:
    """Capture: ``n`` 32-bit words of a list, a buffer or memory at an address, packed
    little-endian (None: not readable, or more than MAX_WORDS)."""
    if obj is None or not 0 <= n <= MAX_WORDS:
        return None
    if isinstance(obj, (list, tuple)):
        return struct.pack(f"<{min(n, len(obj))}I", *(int(x) & 0xFFFFFFFF for x in obj[:n]))
    have = buffer_nbytes(obj)
    addr = address_or_zero(obj)
    if not addr:
        return None if n else b""
    return ctypes.string_at(addr, 4 * n if have is None else min(4 * n, have))


class Words(Role):
    """An array of ``Param.size`` 32-bit words the call reads (a CU mask): recorded as
    packed little-endian bytes, handed back at replay as a list of the same words."""

    name = "words"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        at = row.size_index(row.params[i])

        def encode(a: tuple) -> Any:
            try:
                return _words(a[i], int(scalar(a[at]) or 0) if at is not None else 0)
            except (PointerConversionError, TypeError, ValueError):
                return None
        return encode

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name

        def check(v: Any) -> Any:
            if v is None:
                return None
            if type(v) is not bytes or len(v) % 4 or len(v) > 4 * MAX_WORDS:
                raise bad(f"{what} is not an array of at most {MAX_WORDS} 32-bit words")
            return list(struct.unpack(f"<{len(v) // 4}I", v))
        return check


# The width of the value each hipMemPoolAttr names (HIP's: int32 flags, then uint64 sizes).
_ATTR_WIDTHS = {"hipMemPoolAttr": lambda attr: 4 if attr in (1, 2, 3) else 8}


class AttrValue(Role):
    """A value the call reads through a pointer, as wide as the attribute the row's enum
    parameter of kind ``Param.kind`` names (``_ATTR_WIDTHS``): its bytes are recorded, and
    replay hands the backend a buffer of its own holding them (None: a NULL pointer)."""

    name = "attr_value"

    def _attr_at(self, row: Api, i: int) -> tuple[int, Callable[[int], int]]:
        kind = row.params[i].kind or ""
        at = _first(row, "enum", kind)
        if at is None or kind not in _ATTR_WIDTHS:
            raise ValueError(f"{row.name}: {row.params[i].name} names no attribute of a known width")
        return at, _ATTR_WIDTHS[kind]

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        at, width = self._attr_at(row, i)

        def encode(a: tuple) -> Any:
            try:
                n, addr, have = width(int(a[at])), address_or_zero(a[i]), buffer_nbytes(a[i])
            except (TypeError, ValueError):
                return None
            return ctypes.string_at(addr, n if have is None else min(n, have)) if addr else None
        return encode

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name

        def check(v: Any) -> Any:
            if v is not None and (type(v) is not bytes or len(v) > 8):
                raise bad(f"{what} is not the bytes of an attribute's value")
            return v
        return check

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        self._attr_at(row, i)   # the row must name its attribute

        def act(call: Call) -> Any:
            data = call.raw[i]
            if data is None:
                return None
            buf = rep.buffer(8, f"the value of {row.name}")
            buf[:len(data)] = np.frombuffer(data, dtype=np.uint8)
            rep.hold(buf)
            return buf
        return act


def _field(obj: Any, name: str) -> Any:
    """A struct field as an int, None when it cannot be read (hip-python raises for an enum
    field holding a value outside its enum, e.g. a location never set)."""
    try:
        value = getattr(obj, name)
        return None if value is None else int(value)
    except (AttributeError, TypeError, ValueError):
        return None


class PoolProps(Role):
    """A hipMemPoolProps: ``[allocType, handleTypes, location type, location id, maxSize]``
    (a field that cannot be read: null); replay hands the backend a look-alike holding them."""

    name = "pool_props"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        def encode(a: tuple) -> Any:
            p = a[i]
            if p is None:
                return None
            location = getattr(p, "location", None)
            return [_field(p, "allocType"), _field(p, "handleTypes"), _field(location, "type"),
                    _field(location, "id"), _field(p, "maxSize")]
        return encode

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name

        def check(v: Any) -> Any:
            if v is None:
                return None
            return [None if x is None else check_scalar(x, f"{what} field")
                    for x in check_record(v, 5, f"{what}: a memory pool's properties")]
        return check

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        def act(call: Call) -> Any:
            v = call.raw[i]
            if v is None:
                return None
            alloc_type, handle_types, loc_type, loc_id, max_size = v
            return ReplayMemPoolProps(allocType=alloc_type, handleTypes=handle_types, maxSize=max_size,
                                      location=ReplayMemLocation(type=loc_type, id=loc_id))
        return act


# ------------------------------------------------------------------ output roles
OutBinder = Callable[[Call, Any, Any, int], int]   # (call, capture value, replay value, charged) -> charge left


class OutRole:
    """An output role. Capture: ``encoder``, ``enricher``, ``after_call``; replay:
    ``charger`` (host memory it will take) and ``binder`` (what replay remembers of it)."""

    name: ClassVar[str] = ""

    def encoder(self, out: Out) -> Callable[[Any], Any]:
        """``enc(value) -> wire value``."""
        return number

    def enricher(self, row: Api, j: int, cap: CaptureServices) -> Enricher | None:
        """Adds to the record's extra before it is written (None: nothing)."""
        return None

    def after_call(self, row: Api, j: int, cap: CaptureServices) -> After | None:
        """Session bookkeeping once the call returned and was recorded (None: none)."""
        return None

    def charger(self, row: Api, j: int, rep: ReplayServices) -> Callable[[Call], int] | None:
        """Charges what the call will allocate before it runs; returns the bytes charged."""
        return None

    def binder(self, row: Api, j: int, rep: ReplayServices) -> OutBinder | None:
        """Remembers the output of a call that succeeded (None: nothing to remember)."""
        return None


def _address_out(v: Any) -> Any:
    return None if v is None else address_or_zero(v)


def _handle_out(v: Any) -> Any:
    return None if v is None else handle_or_zero(v)


class ValueOut(OutRole):
    name = "value"


class TextOut(OutRole):
    """A string result (a lowered name, an error string), recorded as text."""

    name = "text"

    def encoder(self, out: Out) -> Callable[[Any], Any]:
        def encode(v: Any) -> Any:
            if v is None:
                return None
            if isinstance(v, (bytes, bytearray)):
                return bytes(v).decode(errors="replace")
            return str(v)
        return encode


class ImageOut(OutRole):
    """A linked image: ``[nbytes, digest]`` (the digest is the name hipModuleLoadData
    stores the same bytes under)."""

    name = "image"

    def encoder(self, out: Out) -> Callable[[Any], Any]:
        def encode(v: Any) -> Any:
            try:
                data = memoryview(v).cast("B").tobytes()
            except (TypeError, ValueError):
                return None
            return [len(data), _digest(data)]
        return encode


class AllocOut(OutRole):
    """A new allocation of ``Out.kind`` whose size is the ``Out.size`` parameter."""

    name = "alloc"

    def encoder(self, out: Out) -> Callable[[Any], Any]:
        return _address_out

    def after_call(self, row: Api, j: int, cap: CaptureServices) -> After | None:
        out = row.outs[j]
        at = row.size_index(out)
        per = _out_index(row, out.per)
        kind, track = out.kind or DEVICE, cap.track_allocation

        def after(args: tuple, result: tuple, seq: int) -> None:
            if int(result[0]) == 0 and result[1 + j] is not None:
                size = int(args[at]) if at is not None else int(per is not None)
                if per is not None:
                    size *= int(result[1 + per] or 0)
                track(address_or_zero(result[1 + j]), max(size, 1), kind)
        return after

    def charger(self, row: Api, j: int, rep: ReplayServices) -> Callable[[Call], int] | None:
        out = row.outs[j]
        if out.size is None or not (out.kind == "pinned" or (out.kind == DEVICE and rep.charges_device_memory)):
            return None
        size, what = _alloc_size(row, j), f"{row.name} ({out.kind} memory)"
        return lambda call: rep.charge(max(size(call), 1), what)

    def binder(self, row: Api, j: int, rep: ReplayServices) -> OutBinder | None:
        kind = row.outs[j].kind or DEVICE
        size = _alloc_size(row, j)

        def bind(call: Call, cap: int, value: Any, charged: int) -> int:
            rep.add_allocation(cap, int(value), max(size(call), 1), kind, charged=charged)
            return 0   # the allocation holds the charge until it is released
        return bind


def _out_index(row: Api, name: str | None) -> int | None:
    return None if name is None else next(k for k, o in enumerate(row.outs) if o.name == name)


def _alloc_size(row: Api, j: int) -> Callable[[Call], int]:
    """Replay: the recorded size of output ``j``'s allocation (``size`` parameter, times the
    recorded ``per`` output for a pitched one)."""
    out = row.outs[j]
    at = row.size_index(out)
    per = _out_index(row, out.per)
    if per is None:
        return lambda call: call.raw[at] if at is not None else 0

    def size(call: Call) -> int:
        outs = call.wire[5]
        unit = check_size(outs[per] if len(outs) > per else 0, f"the recorded {out.per}")
        return check_size((call.raw[at] if at is not None else 1) * unit, f"{row.name}'s allocation size")
    return size


class AliasOut(OutRole):
    """A device address for the host allocation the call's first pointer names."""

    name = "alias"

    def encoder(self, out: Out) -> Callable[[Any], Any]:
        return _address_out

    def after_call(self, row: Api, j: int, cap: CaptureServices) -> After | None:
        host_at = _first(row, "ptr")
        track = cap.track_alias

        def after(args: tuple, result: tuple, seq: int) -> None:
            if int(result[0]) == 0 and result[1 + j] is not None and host_at is not None:
                track(address_or_zero(args[host_at]), address_or_zero(result[1 + j]))
        return after

    def binder(self, row: Api, j: int, rep: ReplayServices) -> OutBinder | None:
        host_at = _first(row, "ptr")
        if host_at is None:
            return None

        def bind(call: Call, cap: int, value: Any, charged: int) -> int:
            host = call.raw[host_at]
            owner = rep.find(host)
            if owner is not None and cap != host:  # a distinct device address range
                delta = host - owner.capture_base
                rep.add_allocation(cap - delta, int(value) - delta, owner.size, owner.kind,
                                   owner=owner.capture_base)
            return charged
        return bind


class HandleOut(OutRole):
    """A new handle of ``Out.kind``. A kernel function's name and parameter layout are
    remembered at capture (launches need the layout to read their arguments)."""

    name = "handle"

    def encoder(self, out: Out) -> Callable[[Any], Any]:
        return _handle_out

    def enricher(self, row: Api, j: int, cap: CaptureServices) -> Enricher | None:
        if row.outs[j].kind != "function":
            return None
        name_at = _first(row, "name")
        note = cap.note_function

        def enrich(args: tuple, result: tuple, extra: dict) -> None:
            if int(result[0]) == 0 and result[1 + j] is not None:
                note(_text(args[name_at]) if name_at is not None else "", result[1 + j], extra)
        return enrich

    def binder(self, row: Api, j: int, rep: ReplayServices) -> OutBinder | None:
        kind = row.outs[j].kind or ""

        def bind(call: Call, cap: int, value: Any, charged: int) -> int:
            rep.bind_handle(kind, cap, value)
            return charged
        return bind


class HandlesOut(OutRole):
    """A list of handles of ``Out.kind`` (a graph's nodes): recorded packed, each bound at
    replay to the handle at the same place in the replayed call's list."""

    name = "handles"

    def encoder(self, out: Out) -> Callable[[Any], Any]:
        return lambda v: None if v is None else pack_u64(handle_values(v))

    def binder(self, row: Api, j: int, rep: ReplayServices) -> OutBinder | None:
        kind, what = row.outs[j].kind or "", row.outs[j].name

        def bind(call: Call, cap: Any, value: Any, charged: int) -> int:
            mine = handle_values(value)
            for k, recorded in enumerate(unpack_u64(cap, what)):
                if k < len(mine):
                    rep.bind_handle(kind, recorded, value[k] if isinstance(value, (list, tuple)) else value)
            return charged
        return bind


# ------------------------------------------------------------------ launches
class LaunchCodec:
    """A kernel launch (a row with ``Api.launch``): capture normalises whatever form the
    app used to kernarg bytes with their pointer words (``extra.launch``); replay
    rewrites those words to its own allocations and issues ``Api.replays_as`` (or the
    row itself) with the bytes as a raw ``extra`` array."""

    def encoder(self, row: Api, cap: CaptureServices) -> Callable[[tuple], tuple[list, dict | None, bytes | None]]:
        """``enc(args) -> (extra.launch, plugin records or None, kernarg bytes or None)``:
        extra.launch in its list form (events/launch.py); the bytes, packed once, are what
        the backend is handed too (``kernargs.packed_extra``).
        A ``LaunchInfo`` is made only while a stage implements ``hrr_capture_launch`` and
        would act on this launch (``CaptureContext.launches_into_host_memory_only``)."""
        func_at, grid_at, block_at, _, stream_at, params_at, extra_at = launch_positions(row)
        function_info, scan, run_launch = cap.function_info, cap.scan_pointers, cap.run_launch
        scope_of, name, handles, new = cap.launch_scope, row.name, _HANDLE_TYPES, tuple.__new__
        # A launch replayed through a call without ``extra`` (a cooperative launch) is
        # handed kernelParams into its kernarg bytes: it needs each parameter's offset.
        target = CATALOGUE.get(row.replays_as or row.name, row).launch
        offsets_too = target is not None and target.extra is None
        # A shape is three scalar parameters or one dim3: read either without a call.
        gx, gy, gz = grid_at if len(grid_at) == 3 else (grid_at[0],) * 3
        bx, by, bz = block_at if len(block_at) == 3 else (block_at[0],) * 3
        scalars = len(grid_at) == 3 and len(block_at) == 3
        if not scalars and (len(grid_at) != 1 or len(block_at) != 1):
            raise ValueError(f"{row.name}: a launch shape is three parameters or one dim3")

        def encode(a: tuple) -> tuple[list, dict | None, bytes | None]:
            func: Any = a[func_at] if func_at is not None else None
            kernel, layout, offsets = function_info(func)
            if scalars:
                grid, block = [a[gx], a[gy], a[gz]], [a[bx], a[by], a[bz]]
            else:
                grid, block = dim3_list(a[gx]), dim3_list(a[bx])
            if layout is None:
                return [kernel, grid, block, "the kernel's parameter layout is unknown"], None, None
            try:
                kernargs = pack_kernel_args(layout, a[params_at], a[extra_at] if extra_at is not None else None)
            except (LaunchArgsError, PointerConversionError, ValueError, OSError) as exc:
                return [kernel, grid, block, f"launch arguments could not be read: {exc}"], None, None
            pointers, ptrs = scan(offsets, kernargs) if offsets else ((), [])
            wire = [kernel, grid, block, kernargs, ptrs]
            if offsets_too:
                wire.append([q.offset for q in layout.params])
            scope = scope_of()
            if scope != LAUNCH_ALL:
                if scope == LAUNCH_NONE:
                    return wire, None, kernargs
                for p in pointers:   # only hooks that act on launches into host memory
                    if p.kind != DEVICE:
                        break
                else:
                    return wire, None, kernargs
            stream: Any = a[stream_at] if stream_at is not None else None
            info = new(LaunchInfo, (name, func._value if type(func) in handles else handle_or_zero(func),
                                    kernel, layout, kernargs, tuple(pointers),
                                    stream._value if type(stream) in handles else handle_or_zero(stream),
                                    stream, (int(grid[0]), int(grid[1]), int(grid[2])),
                                    (int(block[0]), int(block[1]), int(block[2]))))
            return wire, run_launch(info), kernargs
        return encode

    def decoder(self, row: Api, rep: ReplayServices) -> Callable[[Call], tuple[list, Any]]:
        """``dec(call) -> (the replayed call's arguments, buffers to keep until it returned)``."""
        func_at, _, _, shared_at, stream_at, _, _ = launch_positions(row)
        target = CATALOGUE[row.replays_as or row.name]
        place = launch_placer(target, rep)
        own = target is row    # the row's other parameters (e.g. events) pass as decoded
        by_params = target.launch is not None and target.launch.extra is None

        def decode(call: Call) -> tuple[list, Any]:
            launch = launch_map(call.extra.get("launch"))
            if not isinstance(launch, dict) or not isinstance(launch.get("kernargs"), bytes):
                why = launch.get("error") if isinstance(launch, dict) else None
                raise bad(f"launch arguments were not recorded ({brief(why) if why else 'no kernarg bytes'})")
            ptrs = launch.get("ptrs", ())
            if not isinstance(ptrs, (list, tuple)):
                raise bad("the launch's pointer words are not a list")
            for word in ptrs:
                if not (isinstance(word, (list, tuple)) and len(word) == 3 and all(
                        isinstance(x, int) and not isinstance(x, bool) for x in word)):
                    raise bad("a pointer-word record is malformed")
            kernargs = translated_kernargs(launch["kernargs"], ptrs, rep, "kernel argument")
            grid, block = check_triple(launch.get("grid")), check_triple(launch.get("block"))
            args = call.args
            if by_params:
                extra, keep = _kernel_params(kernargs, launch.get("offsets"))
            else:
                extra, keep = kernarg_array(kernargs)
            return place(args[func_at] if func_at is not None else None, grid, block,
                         int(args[shared_at] or 0), args[stream_at] if stream_at is not None else None,
                         extra, args if own else None), (extra, keep)
        return decode


def _kernel_params(kernargs: bytes, offsets: Any) -> tuple[list[int], Any]:
    """kernelParams (argument addresses) into a replay-owned copy of ``kernargs``: one per
    recorded parameter offset, each inside the bytes."""
    if not (isinstance(offsets, (list, tuple)) and all(
            isinstance(o, int) and not isinstance(o, bool) and 0 <= o < max(len(kernargs), 1) for o in offsets)):
        raise bad("the launch's parameter offsets are missing or outside its kernarg bytes")
    buf = ctypes.create_string_buffer(kernargs, max(len(kernargs), 1))
    base = ctypes.addressof(buf)
    return [base + o for o in offsets], buf


_HANDLE_TYPES = frozenset(HANDLE_TYPES.values())   # int(h) is h._value: read without a call


class LaunchPositions(NamedTuple):
    """Where a launch row's parts sit among its parameters (indices; None: it has none).
    ``grid`` and ``block`` are three scalar parameters or one dim3."""

    func: int | None
    grid: tuple[int, ...]
    block: tuple[int, ...]
    shared: int
    stream: int | None
    kernel_params: int
    extra: int | None


def launch_positions(row: Api) -> LaunchPositions:
    """``row``'s launch parts by parameter index (``row.launch`` must be set)."""
    shape = row.launch
    assert shape is not None
    return LaunchPositions(_first(row, "handle", "function"), tuple(row.param_index(x) for x in shape.grid),
                           tuple(row.param_index(x) for x in shape.block), row.param_index(shape.shared),
                           row.param_index(row.stream) if row.stream else None,
                           row.param_index(shape.kernel_params),
                           row.param_index(shape.extra) if shape.extra else None)


def launch_placer(target: Api, rep: ReplayServices) -> Callable[..., list]:
    """``place(func, grid, block, shared, stream, extra, base=None)``: a launch laid out as
    ``target``'s arguments (kernarg bytes through its ``extra``, or its kernelParams)."""
    if target.launch is None:
        raise EventRefused(f"{target.name} cannot carry kernarg bytes", category="unsupported")
    n = len(target.params)
    func_at, grid_at, block_at, shared_at, stream_at, params_at, extra_at = launch_positions(target)
    if extra_at is None:   # kernarg bytes go through ``extra``, or as kernelParams where the target has no extra
        extra_at = params_at

    def put(out: list, at: tuple[int, ...], dims: tuple[int, int, int]) -> None:
        if len(at) == 1:
            out[at[0]] = rep.dim3(*dims)
        else:
            for k, v in zip(at, dims, strict=False):
                out[k] = v

    def place(func: Any, grid: tuple[int, int, int], block: tuple[int, int, int], shared: int,
              stream: Any, extra: Any, base: list | None = None) -> list:
        out: list = [None] * n if base is None else list(base)
        if base is not None:
            out[params_at] = None
        if func_at is not None:
            out[func_at] = func
        put(out, grid_at, grid)
        put(out, block_at, block)
        out[shared_at], out[extra_at] = shared, extra
        if stream_at is not None:
            out[stream_at] = stream
        return out
    return place


# ------------------------------------------------------------------ the tables
PARAM_ROLES: dict[str, Role] = {r.name: r for r in (
    Value(), Enum(), Ptr(), Handle(), CopySrc(), CopyDst(), Strided(), HostRange(), Code(), Name(), Dim3(),
    HostFn(), UserData(), Launch(), Ignored(), ResultBuf(), Source(), Options(), RtcOut(), Handles(), KernelNode(),
    MemsetNode(), HostNode(), InstantiateParams(), Words(), AttrValue(), PoolProps())}
OUT_ROLES: dict[str, OutRole] = {r.name: r for r in (ValueOut(), AllocOut(), AliasOut(), HandleOut(),
                                                     TextOut(), ImageOut(), HandlesOut())}
LAUNCH = LaunchCodec()


def param_role(name: str) -> Role:
    """The parameter role called ``name``; KeyError names it when no class implements it."""
    try:
        return PARAM_ROLES[name]
    except KeyError:
        raise KeyError(f"no parameter role {name!r} (hrr.api.roles.PARAM_ROLES)") from None


def out_role(name: str) -> OutRole:
    """The output role called ``name``; KeyError names it when no class implements it."""
    try:
        return OUT_ROLES[name]
    except KeyError:
        raise KeyError(f"no output role {name!r} (hrr.api.roles.OUT_ROLES)") from None


__all__ = ["Role", "OutRole", "LaunchCodec", "Call", "CaptureServices", "ReplayServices", "PARAM_ROLES",
           "OUT_ROLES", "LAUNCH", "param_role", "out_role", "byte_counts", "scalar", "number",
           "check_address", "check_size", "check_scalar", "check_triple", "check_fits", "brief", "MAX_SIZE",
           "launch_placer", "launch_positions", "LaunchPositions", "wire_event"]
