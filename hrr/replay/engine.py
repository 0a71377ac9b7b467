"""The replay engine: runs one process archive's events again on a backend and checks
every device-to-host copy byte for byte.

Everything read from the archive is validated before it is acted on: a record that
names an unknown handle, a pointer outside every allocation replay made, a range that
runs past the allocation it names, a number of the wrong type or range, a blob that
does not match its name or a size over a limit is refused, counted and named. Replay
never reads or writes outside memory it allocated itself, and every allocation it makes
is charged against ``--max-host-bytes`` before it is made.
"""
from __future__ import annotations

import ctypes
import math
import time
from typing import Any, Callable

import attrs
import numpy as np

from hrr.api.catalogue import CATALOGUE, NOOP, UNREPLAYABLE, Api, Param
from hrr.backends.hiptypes import ENUM_TYPES, hipError_t
from hrr.backends.kernargs import kernarg_array
from hrr.errors import ArchiveError, BlobError, DivergenceError, FormatError, HrrError, LimitExceeded
from hrr.events import PSEUDO_D2H_CHECK, Event, event_from_wire
from hrr.pipeline.context import EventRefused
from hrr.pipeline.replay import ReplayContext
from hrr.replay.ranges import RangeCounts, skipped_in_setup
from hrr.replay.ranges import describe as describe_range
from hrr.replay.result import Divergence, Refusal, ReplayStats
from hrr.replay.state import HandleMaps, HostBudget, ReplayAllocation, ReplayMemory
from hrr.replay.threads import ThreadRouter

_HOST_KINDS = ("pinned", "registered")
DEFAULT_MAX_SECONDS = 600.0
_U64 = 1 << 64
_MAX_SIZE = (1 << 63) - 1            # no byte count an archive names may be larger
# Byte spans of pointer parameters whose call has no byte-count parameter.
_PTR_SPANS = {"hipStreamWaitValue32": 4, "hipStreamWriteValue32": 4}
# Parameters that are byte counts although no endpoint or output names them.
_SIZE_NAMES = frozenset({"size", "sizeBytes", "sharedMemBytes"})
# A record shape no validator foresaw ends in one of these; it is refused, never a traceback.
_MALFORMED = (TypeError, ValueError, OverflowError, ArithmeticError, LookupError, AttributeError,
              MemoryError, RecursionError)


@attrs.define
class ReplayOptions:
    strict: bool = False
    keep_going: bool = False           # go on after a divergence instead of exiting 2
    float_tolerance: float | None = None
    max_seconds: float = DEFAULT_MAX_SECONDS   # wall-clock limit for the whole archive
    clock: Callable[[], float] = time.monotonic
    calls: Any = None                  # --calls: a hrr.inspect.dump.CallRange (see ranges.py)


class _Check:
    """A device-to-host result replay must compare once the copy has completed."""

    __slots__ = ("seq", "api", "read", "expected_blob", "n")

    def __init__(self, seq: int, api: str, read: Any, expected_blob: str | None, n: int) -> None:
        self.seq, self.api, self.read, self.expected_blob, self.n = seq, api, read, expected_blob, n


class ProcessReplayer:
    """Replays one ``pid-<pid>/`` archive on one backend."""

    def __init__(self, process: Any, backend: Any, pm: Any, limits: Any, options: ReplayOptions,
                 deadline: float | None = None) -> None:
        self.process = process
        self.backend = backend
        self.hip = backend.hip
        self.manifest = process.manifest
        self.limits = limits
        self.options = options
        self.deadline = deadline       # the options.clock() value past which replay stops
        self.memory = ReplayMemory()
        self.handles = HandleMaps()
        self.stats = ReplayStats()
        self.ctx = ReplayContext(pm, self)
        self.pm = pm
        self._checks: dict[int, _Check] = {}
        self.budget = HostBudget(limits.max_host_bytes)
        # The sim's device memory is host RAM, so it is charged too; a GPU's is not.
        self._charge_device = getattr(backend, "NAME", "") == "sim"
        self._queued_bytes = 0         # blobs that host functions hold until a device sync
        self._keepalive: list[Any] = []   # host buffers queued work may still use
        self._call_buffers: list[Any] = []  # host buffers handed to the current call
        self._poison = np.zeros(64, dtype=np.uint8)
        self.threads = ThreadRouter(limits.max_threads)
        # Per-event hooks are looked up once; with no implementation they cost nothing.
        self._before_hook = _implemented(pm.hook.hrr_replay_before_event)
        self._after_hook = _implemented(pm.hook.hrr_replay_after_event)
        # --calls: records before the range are set-up (replayed, never checked); past
        # its end only the check records of copies made inside it are read.
        self.range = RangeCounts(options.calls) if options.calls is not None else None
        self.stats.range = self.range
        self._setup = False            # the record being replayed is set-up
        self._past_range = False

    # ------------------------------------------------------------------ main loop
    def run(self, prefix: Any = None, prefix_until: int = -1) -> ReplayStats:
        """Replay every record. ``prefix``: for a forked child, the parent's process
        archive, whose records before ``prefix_until`` are replayed first (the state the
        child inherited)."""
        self.pm.hook.hrr_replay_start(ctx=self.ctx)
        try:
            for item, inherited in self._records(prefix, prefix_until):
                if self.deadline is not None and self.options.clock() > self.deadline:
                    self.stats.timed_out = True
                    self.stats.failures.append(
                        f"stopped at record {item.index}: replay ran longer than "
                        f"--max-seconds={self.options.max_seconds:g} (raise it to replay further)")
                    break
                ev, refusal = _decode(item)
                if self.range is not None:
                    place = self._place(item, ev, inherited)
                    if place == "after":
                        if self._after_range(ev):
                            continue
                        break
                    self._setup = place == "setup"
                if self.stats.events >= self.limits.max_events:
                    self.stats.failures.append(
                        f"stopped after {self.limits.max_events} events (--max-events)")
                    break
                self.stats.events += 1
                if refusal is not None:
                    self._refuse_raw(*refusal)
                    continue
                assert ev is not None
                if self._setup:
                    if ev.is_pseudo:  # a check before the range: not verified
                        continue
                    if skipped_in_setup(ev.api, ev.err):
                        self.range.setup_skipped += 1
                        continue
                    self.range.setup_replayed += 1
                try:
                    self.threads.run(ev.tid, lambda ev=ev: self._replay_event(ev))
                except LimitExceeded as exc:  # a thread over --max-threads: its records are refused
                    self._refuse_raw(ev.seq, ev.api, exc.what, "limit")
        except DivergenceError as exc:
            self.stats.aborted = True
            self.stats.failures.append(str(exc))
        finally:
            self.threads.close()
            self.ctx.close()
        if getattr(self.process, "torn", False):
            self.stats.failures.append("the event stream is torn (capture was killed): "
                                       "only its complete records were replayed; run `hrr repair`")
        if self.ctx.host_fn_errors:
            self.stats.failures.extend(f"replay host function failed: {e}" for e in self.ctx.host_fn_errors)
        self.stats.peak_host_bytes = self.budget.peak
        return self.stats

    def _records(self, prefix: Any, prefix_until: int) -> Any:
        """(record, inherited): the parent's records before the fork first, if any."""
        own = self.process
        if prefix is not None:
            self.process = prefix  # blobs and code objects of those records live there
            for item in prefix.events():
                value = getattr(item, "value", None)
                if isinstance(value, (list, tuple)) and value and isinstance(value[0], int) \
                        and value[0] >= prefix_until:
                    break
                yield item, True
            self.process = own
        for item in own.events():
            yield item, False

    # ------------------------------------------------------------------ --calls
    def _place(self, item: Any, ev: Event | None, inherited: bool) -> str:
        """Where a record lies against --calls: "setup" (before N, or inherited from the
        parent at a fork), "range" or "after" (M or later). A record too malformed to
        name its sequence number is placed by its index."""
        assert self.range is not None
        if inherited:
            return "setup"
        seq = ev.seq if ev is not None else item.index
        self.range.saw(seq)
        calls = self.range.calls
        if seq < calls.start:
            return "setup"
        if calls.past(seq):
            return "after"
        self.range.count_in_range(seq)
        return "range"

    def _after_range(self, ev: Event | None) -> bool:
        """A record at or past M. A copy made in the range whose check record comes later
        is still compared: at M replay synchronises the device once (its copy has then
        completed, and nothing issued after M ran), then reads on, replaying nothing,
        for those check records. Returns whether any check is still pending."""
        assert self.range is not None
        if not self._past_range:
            self._past_range = True
            if not self._checks:
                return False
            self.range.tail_synced = True
            err = int(self.hip.hipDeviceSynchronize()[0])
            if err:  # e.g. the range ends inside a stream capture: nothing can be compared
                self.range.tail_error = _err_name(err)
                self.stats.checks_unverifiable += len(self._checks)
                self._checks.clear()
                return False
        if ev is not None and ev.api == PSEUDO_D2H_CHECK and len(ev.args) == 1 \
                and isinstance(ev.args[0], int) and ev.args[0] in self._checks:
            self.range.late_checks += 1
            self._replay_event(ev)
        return bool(self._checks)

    def _refuse_raw(self, seq: int, api: str, reason: str, category: str) -> None:
        self.stats.refusals.append(Refusal(seq, api, reason, category))

    def _replay_event(self, ev: Event) -> None:
        try:
            _check_event(ev)
            if ev.is_pseudo:
                self._pseudo(ev)
                return
            row = CATALOGUE.get(ev.api)
            if row is None:
                raise EventRefused(f"{ev.api} is not in this hrr's API catalogue", category="unknown_api")
            if row.replay == NOOP:
                self.stats.noops += 1
                return
            if row.replay == UNREPLAYABLE:
                self.stats.unreplayable += 1
                self._refuse_raw(ev.seq, ev.api, row.reason, "unreplayable")
                return
            self._replay_call(row, ev)
        except EventRefused as exc:
            self._refuse_raw(ev.seq, ev.api, exc.reason, exc.category)
        except BlobError as exc:
            self._refuse_raw(ev.seq, ev.api, str(exc), "blob")
        except _MALFORMED as exc:
            self._refuse_raw(ev.seq, ev.api, f"replay could not use this record "
                             f"({type(exc).__name__}: {str(exc)[:200]})", "bad_record")

    # ------------------------------------------------------------------ one call
    def _replay_call(self, row: Api, ev: Event) -> None:
        if len(ev.args) != len(row.params):
            raise EventRefused(f"{len(ev.args)} arguments recorded, {row.name} takes {len(row.params)}",
                               category="bad_record")
        after: list[Any] = []
        self._call_buffers = []
        args = [self._arg(row, i, ev, after) for i in range(len(row.params))]
        stream = args[row.param_index(row.stream)] if row.stream else None
        kernarg_buffers: Any = None  # alive until the launch call has returned
        if row.family == "launch":
            args, kernarg_buffers = self._launch_args(row, ev, args)
        fn = getattr(self.hip, "hipModuleLaunchKernel" if row.family == "launch" else row.name, None)
        if fn is None:
            raise EventRefused(f"the {self.backend.NAME} backend has no {row.name}", category="unsupported")
        charged = self._charge_allocation(row, ev)  # before anything is allocated
        try:
            if self._before_hook is not None:
                self._before_hook(ctx=self.ctx, event=ev, stream=stream)
            if row.destroys == "device":
                # Queued restores write into pinned buffers the reset frees: let them finish.
                self.hip.hipDeviceSynchronize()
            result = fn(*args)
            err = int(result[0])
        except BaseException:
            self.budget.release(charged)
            self._keepalive.extend(self._call_buffers)
            raise
        self.stats.replayed += 1
        if not (row.sync and err == 0):
            # Queued work (or a failed synchronous call's leftover op) may still use them;
            # a synchronous call that succeeded is done with them.
            self._keepalive.extend(self._call_buffers)
        self._call_buffers = []
        if err != 0:  # nothing was allocated
            self.budget.release(charged)
            charged = 0
        if err != ev.err and not row.volatile:
            self._diverged(row, ev, err)
        elif err and err == ev.err:
            self.stats.reproduced_errors += 1
        if err == 0:
            self._bind_outputs(row, ev, result, charged)
            for fn_after in after:
                fn_after()
        if (row.name == "hipDeviceSynchronize" or row.destroys == "device") and err == 0:
            self.ctx.release_finished_host_fns()
            self._keepalive.clear()
            self.budget.release(self._queued_bytes)
            self._queued_bytes = 0
        if self._after_hook is not None:
            self._after_hook(ctx=self.ctx, event=ev, result=result)

    def _diverged(self, row: Api, ev: Event, err: int) -> None:
        self.stats.divergences += 1
        self.stats.diverged.append(Divergence(ev.seq, row.name, ev.err, err, self._setup))
        where = f", set-up before --calls {describe_range(self.range.calls)}" if self._setup else ""
        msg = (f"record {ev.seq} ({row.name}{where}): the recording returned {_err_name(ev.err)}, "
               f"replay returned {_err_name(err)}")
        if self.options.keep_going:
            self.stats.failures.append(msg)
            return
        raise DivergenceError(msg, hint="replay stopped early; --keep-going replays the rest")

    # ------------------------------------------------------------------ host memory
    def _charge_allocation(self, row: Api, ev: Event) -> int:
        """Charge what ``row`` will allocate (pinned memory; device memory on the sim, which
        is host RAM) before the backend makes it; returns the bytes charged."""
        total = 0
        for spec in row.outs:
            if spec.role != "alloc" or spec.size is None:
                continue
            if spec.kind != "pinned" and not (spec.kind == "device" and self._charge_device):
                continue
            size = _size(ev.args[row.param_index(spec.size)], spec.size)
            try:
                total += self.budget.charge(max(size, 1), f"{row.name} ({spec.kind} memory)")
            except EventRefused:
                self.budget.release(total)
                raise
        return total

    def read_queued_blob(self, name: str) -> bytes:
        """A blob that a host function holds until the next device synchronisation (a
        restore): its size is charged against --max-host-bytes before it is read."""
        size = self.process.blob_size(name)
        self.budget.charge(size, f"blob {name} queued for a restore")
        try:
            data = self.process.read_blob(name)
        except BaseException:
            self.budget.release(size)
            raise
        self._queued_bytes += size
        return data

    # ------------------------------------------------------------------ arguments
    def _arg(self, row: Api, i: int, ev: Event, after: list) -> Any:
        p, v = row.params[i], ev.args[i]
        role = p.role
        if role == "value":
            if p.name in _size_names(row):
                return _size(v, p.name)
            return _scalar(v, p.name)
        if role == "enum":
            if v is None:
                return None
            if not isinstance(v, int) or isinstance(v, bool) or not -(1 << 63) <= v < _U64:
                raise EventRefused(f"parameter {p.name} is {_brief(v)}, not a {p.kind}", category="bad_record")
            enum = ENUM_TYPES.get(p.kind or "")
            try:
                return enum(v) if enum is not None else v
            except ValueError:
                raise EventRefused(f"{v} is not a {p.kind}", category="bad_record") from None
        if role == "ptr":
            addr = _address(v, p.name)
            if ev.err and row.destroys == "alloc" and self.memory.translate(addr) is None:
                # A release the recording saw fail (a double free): hand the backend
                # memory it never allocated, so it fails the same way and frees nothing.
                return int(self._poison.__array_interface__["data"][0])
            replay = self._translate(addr, p.name)
            span = self._ptr_span(row, ev)
            if replay is not None and span:
                self._check_fits(self.memory.find(addr), addr, span)
            return replay
        if role == "handle":
            value = _address(v, p.name)
            try:
                return self.handles.lookup(p.kind, value)
            except KeyError:
                raise EventRefused(f"{p.name}: unknown {p.kind} handle 0x{value:x}",
                                   category="untranslated") from None
        if role == "copy_src":
            return self._copy_src(row, ev, self._endpoint(row, p, ev, v))
        if role == "copy_dst":
            return self._copy_dst(row, ev, self._endpoint(row, p, ev, v), after)
        if role == "host_range":
            return self._host_range(self._endpoint(row, p, ev, v), after)
        if role == "code":
            if not isinstance(v, str):
                raise EventRefused("the code object was not recorded (it was passed by address)",
                                   category="missing_blob")
            return self.process.read_code_object(v)
        if role == "name":
            if not isinstance(v, str):
                raise EventRefused("kernel name is not a string", category="bad_record")
            return v.encode()
        if role == "dim3":
            x, y, z = _triple(v)
            return self.hip.dim3(x=x, y=y, z=z)
        return None  # launch arguments are built separately; ignored roles

    def _translate(self, addr: int, what: str) -> int | None:
        if not addr:
            return None
        replay = self.memory.translate(addr)
        if replay is None:
            raise EventRefused(f"{what}: 0x{addr:x} is not inside any allocation replay made",
                               category="untranslated")
        return replay

    def _ptr_span(self, row: Api, ev: Event) -> int:
        """How many bytes a pointer parameter of ``row`` reaches (0: not a range, e.g. a free)."""
        if row.name in _PTR_SPANS:
            return _PTR_SPANS[row.name]
        if row.family in ("copy", "memory") and "sizeBytes" in _size_names(row):
            return _size(ev.args[row.param_index("sizeBytes")], "sizeBytes")
        return 0

    def _endpoint(self, row: Api, p: Param, ev: Event, v: Any) -> tuple[str, int, int, str | None]:
        """A copy endpoint ``[tag, addr, n, blob]``, validated; ``n`` must be the call's byte count."""
        if not (isinstance(v, (list, tuple)) and len(v) == 4 and v[0] in ("a", "h")):
            raise EventRefused(f"{p.name}: a copy endpoint record is malformed", category="bad_record")
        tag, addr, n, blob = v
        addr = _address(addr, f"{p.name} address")
        n = _size(n, f"{p.name} size")
        if p.size is not None:
            size = _size(ev.args[row.param_index(p.size)], p.size)
            if size != n:
                raise EventRefused(f"{p.name}: the endpoint holds {n} bytes but {p.size} is {size}",
                                   category="bounds")
        if blob is not None and not isinstance(blob, str):
            raise EventRefused(f"{p.name}: a copy endpoint names a bad blob", category="bad_record")
        return tag, addr, n, blob

    def _payload(self, blob: str | None, n: int) -> bytes | None:
        if blob is None:
            return None
        data = self.process.read_blob(blob)
        if len(data) != n:
            raise EventRefused(f"blob {blob} holds {len(data)} bytes, the copy moves {n}", category="blob")
        return data

    def _copy_src(self, row: Api, ev: Event, endpoint: tuple) -> Any:
        tag, addr, n, blob = endpoint
        if tag == "h":
            buf = self.budget.buffer(n, f"the source of {row.name}")
            data = self._payload(blob, n)
            if data is not None:
                buf[:n] = np.frombuffer(data, dtype=np.uint8)
            else:
                self.ctx.counters["zero_filled_inputs"] += 1
            self._call_buffers.append(buf)
            return buf
        replay = self._translate(addr, "src")
        if replay is None:
            return self._null(n, "src")
        alloc = self.memory.find(addr)
        # Every size is checked against the allocation it names, blob or no blob: the
        # backend would otherwise read past replay's buffer.
        self._check_fits(alloc, addr, n)
        if blob is not None and alloc.kind in _HOST_KINDS:
            queued = bool(row.stream) and not row.sync
            data = self.read_queued_blob(blob) if queued else self._payload(blob, n)
            if len(data) != n:
                raise EventRefused(f"blob {blob} holds {len(data)} bytes, the copy moves {n}", category="blob")
            restore = _writer(replay, data)
            if not queued:
                restore()
            else:
                stream = self._stream_for(row, ev)
                if self.ctx.enqueue_host_fn(stream, restore) != 0:
                    raise EventRefused("could not queue the pinned-source restore", category="enqueue")
        return replay

    def _copy_dst(self, row: Api, ev: Event, endpoint: tuple, after: list) -> Any:
        tag, addr, n, blob = endpoint
        if tag == "h":
            buf = self.budget.buffer(n, f"the destination of {row.name}")
            self._call_buffers.append(buf)
            self._expect(row, ev, lambda: buf[:n].tobytes(), blob, n, after)
            return buf
        replay = self._translate(addr, "dst")
        if replay is None:
            return self._null(n, "dst")
        alloc = self.memory.find(addr)
        self._check_fits(alloc, addr, n)
        if alloc.kind in _HOST_KINDS:
            self._expect(row, ev, self._reader(alloc, addr, replay, n), blob, n, after)
        return replay

    def _null(self, n: int, what: str) -> None:
        """A NULL endpoint is passed on (the backend reports it) only when it moves nothing."""
        if n:
            raise EventRefused(f"{what}: a NULL address for {n} bytes", category="untranslated")
        return None

    def _reader(self, alloc: ReplayAllocation, addr: int, replay: int, n: int) -> Callable[[], bytes]:
        """Reads a checked destination when its check comes, never after it was released."""
        def read() -> bytes:
            if self.memory.find(addr) is not alloc:
                raise EventRefused(f"the destination at 0x{addr:x} was released before its check",
                                   category="bounds")
            return ctypes.string_at(replay, n)
        return read

    def _expect(self, row: Api, ev: Event, read: Any, blob: str | None, n: int, after: list) -> None:
        if self._setup:  # a set-up copy is replayed for its effects, never checked
            return
        check = _Check(ev.seq, row.name, read, blob, n)
        if row.sync:
            after.append(lambda: self._compare(check))
        else:
            after.append(lambda: self._checks.__setitem__(ev.seq, check))

    def _host_range(self, endpoint: tuple, after: list) -> Any:
        tag, addr, n, blob = endpoint
        buf = self.budget.buffer(n, "hipHostRegister")
        data = self._payload(blob, n)
        if data is not None:
            buf[:n] = np.frombuffer(data, dtype=np.uint8)
        base = int(buf.__array_interface__["data"][0])
        after.append(lambda: self.memory.add(ReplayAllocation(addr, base, max(n, 1), "registered", buf)))
        return base

    def _check_fits(self, alloc: ReplayAllocation | None, addr: int, n: int) -> None:
        if alloc is None or addr < alloc.capture_base or addr + n > alloc.capture_base + alloc.size:
            size = f"{alloc.size}-byte " if alloc is not None else ""
            raise EventRefused(f"{n} bytes at 0x{addr:x} run past the end of their {size}allocation",
                               category="bounds")

    def _stream_for(self, row: Api, ev: Event) -> Any:
        try:
            return self.handles.lookup("stream", _int(ev.args[row.param_index(row.stream)], "stream"))
        except KeyError:
            raise EventRefused("unknown stream handle", category="untranslated") from None

    # ------------------------------------------------------------------ launches
    def _launch_args(self, row: Api, ev: Event, args: list) -> tuple[list, Any]:
        launch = ev.extra.get("launch")
        if not isinstance(launch, dict) or not isinstance(launch.get("kernargs"), bytes):
            why = launch.get("error") if isinstance(launch, dict) else None
            raise EventRefused(f"launch arguments were not recorded ({_brief(why) if why else 'no kernarg bytes'})",
                               category="bad_record")
        buf = bytearray(launch["kernargs"])
        ptrs = launch.get("ptrs", ())
        if not isinstance(ptrs, (list, tuple)):
            raise EventRefused("the launch's pointer words are not a list", category="bad_record")
        for word in ptrs:
            if not (isinstance(word, (list, tuple)) and len(word) == 3 and all(
                    isinstance(x, int) and not isinstance(x, bool) for x in word)):
                raise EventRefused("a pointer-word record is malformed", category="bad_record")
            off, base, delta = word
            if off < 0 or off + 8 > len(buf) or off % 8:
                raise EventRefused(f"pointer word at offset {off} lies outside the kernarg buffer",
                                   category="bounds")
            replay = self.memory.translate(base + delta) if delta >= 0 else None
            if replay is None:
                raise EventRefused(f"kernel argument at offset {off} points to 0x{base + delta:x}, "
                                   "inside no allocation replay made", category="untranslated")
            buf[off:off + 8] = replay.to_bytes(8, "little")
        grid = _triple(launch.get("grid"))
        block = _triple(launch.get("block"))
        if row.name == "hipModuleLaunchKernel":
            func, shared, stream = args[0], args[7], args[8]
        else:
            func, shared, stream = args[0], args[4], args[5]
        extra, keep = kernarg_array(bytes(buf))
        return [func, *grid, *block, int(shared or 0), stream, None, extra], (extra, keep)

    # ------------------------------------------------------------------ outputs
    def _bind_outputs(self, row: Api, ev: Event, result: tuple, charged: int = 0) -> None:
        for spec, cap, rep in zip(row.outs, ev.outs, result[1:]):
            if cap is None or rep is None or not isinstance(cap, int):
                continue
            if spec.role == "handle":
                self.handles.bind(spec.kind, cap, rep)
            elif spec.role == "alloc":
                size = _size(ev.args[row.param_index(spec.size)], spec.size)
                self.memory.add(ReplayAllocation(cap, int(rep), max(size, 1), spec.kind, charged=charged))
                charged = 0  # the allocation holds it until it is released
            elif spec.role == "alias":
                host = _int(ev.args[0], "host pointer")
                owner = self.memory.find(host)
                if owner is not None and cap != host:  # a distinct device address range
                    delta = host - owner.capture_base
                    self.memory.add(ReplayAllocation(cap - delta, int(rep) - delta, owner.size,
                                                     owner.kind), owner=owner.capture_base)
        if charged:  # the call gave nothing replay keeps (e.g. a NULL result)
            self.budget.release(charged)
        if row.destroys == "alloc":
            gone = self.memory.remove(_int(ev.args[0], "pointer"))
            if gone is not None:
                self.budget.release(gone.charged)
        elif row.destroys == "device":
            self.budget.release(self.memory.clear())
            self.handles.clear()
            self._checks.clear()  # copies queued before the reset are never checked
        elif row.destroys:
            self.handles.drop(row.destroys, _int(ev.args[0], "handle"))

    # ------------------------------------------------------------------ checks
    def _pseudo(self, ev: Event) -> None:
        if ev.api != PSEUDO_D2H_CHECK or len(ev.args) != 1 or not isinstance(ev.args[0], int):
            raise EventRefused(f"unknown pseudo-event {ev.api}", category="bad_record")
        check = self._checks.pop(ev.args[0], None)
        if check is None and self.range is not None and ev.args[0] < self.range.calls.start:
            return  # the check of a set-up copy: not verified, not counted
        if check is None:
            raise EventRefused(f"a check names record {ev.args[0]}, which replay did not copy",
                               category="bad_record")
        blob = ev.extra.get("blob")
        check.expected_blob = blob if isinstance(blob, str) else None
        self._compare(check)

    def _compare(self, check: _Check) -> None:
        if check.expected_blob is None:
            self.stats.checks_unverifiable += 1
            return
        try:
            expected = self.process.read_blob(check.expected_blob)
        except BlobError as exc:
            self.stats.checks_failed += 1
            self.stats.failures.append(f"record {check.seq} ({check.api}): the expected bytes "
                                       f"cannot be used: {exc}")
            return
        actual = check.read()
        if _same(expected, actual, self.options.float_tolerance):
            self.stats.checks_passed += 1
            return
        self.stats.checks_failed += 1
        first = next((i for i, (a, b) in enumerate(zip(expected, actual)) if a != b),
                     min(len(expected), len(actual)))
        self.stats.failures.append(
            f"record {check.seq} ({check.api}): {check.n} bytes differ from the recording "
            f"from byte {first} (expected {expected[first:first + 8].hex()}, "
            f"got {actual[first:first + 8].hex()})")


def _decode(item: Any) -> tuple[Event | None, tuple | None]:
    """A record's event, or the refusal ``(seq, api, reason, category)`` it earns."""
    reason = getattr(item, "reason", None)
    if reason is not None:
        return None, (item.index, "?", f"bad record at offset {item.offset}: {reason}", "bad_record")
    try:
        return event_from_wire(item.value, where=f"record {item.index} at offset {item.offset}"), None
    except FormatError as exc:
        return None, (item.index, _api_name_of(item.value), str(exc), "bad_record")


def _implemented(hook: Any) -> Any:
    """The hook caller, or None when no plugin implements the hook."""
    return hook if hook.get_hookimpls() else None


def _same(expected: bytes, actual: bytes, tol: float | None) -> bool:
    if expected == actual:
        return True
    if tol is None or len(expected) != len(actual) or len(expected) % 4:
        return False
    a = np.frombuffer(expected, dtype=np.float32)
    b = np.frombuffer(actual, dtype=np.float32)
    return bool(np.allclose(a, b, atol=tol, rtol=0, equal_nan=True))


def _writer(addr: int, data: bytes) -> Any:
    def write() -> None:
        ctypes.memmove(addr, data, len(data))
    return write


def _int(v: Any, what: str) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise EventRefused(f"{what} is not an integer", category="bad_record")
    return v


def _address(v: Any, what: str) -> int:
    """An address or handle value: an integer from 0 to 2^64 - 1."""
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < _U64:
        raise EventRefused(f"{what} is {_brief(v)}, not a 64-bit address", category="bad_record")
    return v


def _size(v: Any, what: str) -> int:
    """A byte count: an integer from 0 to 2^63 - 1 (never a float, inf, NaN or negative)."""
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= _MAX_SIZE:
        raise EventRefused(f"{what} is {_brief(v)}, not a byte count", category="bad_record")
    return v


def _scalar(v: Any, what: str) -> Any:
    """A scalar argument: None, a bool, a 64-bit integer or a finite float."""
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, int):
        if -(1 << 63) <= v < _U64:
            return v
    elif isinstance(v, float):
        if math.isfinite(v) and abs(v) < _U64:
            return v
    raise EventRefused(f"parameter {what} is {_brief(v)}, not a number replay can pass",
                       category="bad_record")


def _brief(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else f"{text[:37]}..."


_SIZE_PARAMS: dict[str, frozenset] = {}


def _size_names(row: Api) -> frozenset:
    """The parameters of ``row`` that are byte counts (computed once per row)."""
    names = _SIZE_PARAMS.get(row.name)
    if names is None:
        named = {p.size for p in row.params if p.size} | {o.size for o in row.outs if o.size}
        names = _SIZE_PARAMS[row.name] = frozenset(
            p.name for p in row.params if p.name in named or p.name in _SIZE_NAMES)
    return names


def _check_event(ev: Event) -> None:
    """What the codec leaves to replay: ranges, and the shape of plugin records."""
    if not 0 <= ev.seq < _U64 or not -(1 << 63) <= ev.tid < _U64:
        raise EventRefused("the record's sequence number or thread id is out of range",
                           category="bad_record")
    records = ev.extra.get("records")
    if records is not None and not (isinstance(records, dict) and all(
            isinstance(k, str) and isinstance(v, (list, tuple)) for k, v in records.items())):
        raise EventRefused("extra.records is not a map of plugin name to a list of records",
                           category="bad_record")


def _api_name_of(value: Any) -> str:
    """The API a malformed record names, when that much of it is sound (for its refusal)."""
    if isinstance(value, (list, tuple)) and len(value) > 2 and isinstance(value[2], str) \
            and (value[2] in CATALOGUE or value[2] == PSEUDO_D2H_CHECK):
        return value[2]
    return "?"


def _triple(v: Any) -> tuple[int, int, int]:
    if not (isinstance(v, (list, tuple)) and len(v) == 3 and all(
            isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 1 << 32 for x in v)):
        raise EventRefused("a launch shape is malformed", category="bad_record")
    return int(v[0]), int(v[1]), int(v[2])


def _err_name(code: int) -> str:
    try:
        return f"{hipError_t(code).name} ({code})"
    except ValueError:
        return str(code)


__all__ = ["ProcessReplayer", "ReplayOptions", "ReplayStats", "Refusal", "ArchiveError", "HrrError",
           "DEFAULT_MAX_SECONDS"]
