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

import functools
import itertools
import time
from typing import Any, Callable

import attrs
import numpy as np

from hrr.api.catalogue import CATALOGUE, NOOP, UNREPLAYABLE, Api
from hrr.api.roles import LAUNCH, Call, byte_counts, out_role, param_role
from hrr.backends.contract import Backend, api_module
from hrr.errors import ArchiveError, BlobError, DivergenceError, FormatError, HrrError, LimitExceeded
from hrr.events import PSEUDO_D2H_CHECK, event_from_wire
from hrr.events.model import (API, ARGS, ERR, EXTRA, OUTS, PSEUDO_UNCATALOGUED, SEQ, TID, UNCATALOGUED_REASON, WIRE_LEN,
                              wire_event)
from hrr.events.codec import _well_formed, record_check, schema_error
from hrr.pipeline.context import EventRefused
from hrr.pipeline.replay import ReplayContext
from hrr.replay.ranges import RangeCounts, skipped_in_setup
from hrr.replay.ranges import describe as describe_range
from hrr.replay.launches import launch_runner
from hrr.replay.result import Divergence, Refusal, ReplayStats, err_name
from hrr.replay.state import HandleMaps, HostBudget, ReplayAllocation, ReplayMemory
from hrr.replay.threads import ThreadRouter

DEFAULT_MAX_SECONDS = 600.0
#: The most records a run of equal launches takes in one step (--max-seconds is looked at between).
RUN_CHUNK = 1 << 16
_U64 = 1 << 64
# A record shape no validator foresaw ends in one of these; it is refused, never a traceback.
_MALFORMED = (TypeError, ValueError, OverflowError, ArithmeticError, LookupError, AttributeError,
              MemoryError, RecursionError)


def _event_of(call: Call) -> Any:
    """The record's ``Event``, built at the first use and kept on the call."""
    if call.event is None:
        call.event = wire_event(call.wire)
    return call.event


@attrs.define
class ReplayOptions:
    strict: bool = False
    keep_going: bool = False           # go on after a divergence instead of exiting 2
    float_tolerance: float | None = None
    max_seconds: float = DEFAULT_MAX_SECONDS   # wall-clock limit for the whole archive
    clock: Callable[[], float] = time.monotonic
    calls: Any = None                  # --calls: a hrr.events.ranges.CallRange (see ranges.py)
    trust_kernels: bool = False        # run an archive's native kernels even without a sandbox


class _Check:
    """A device-to-host result replay must compare once the copy has completed."""

    __slots__ = ("seq", "api", "read", "expected_blob", "n")

    def __init__(self, seq: int, api: str, read: Any, expected_blob: str | None, n: int) -> None:
        self.seq, self.api, self.read, self.expected_blob, self.n = seq, api, read, expected_blob, n


class ProcessReplayer:
    """Replays one ``pid-<pid>/`` archive on one backend."""

    def __init__(self, process: Any, backend: Backend, pm: Any, limits: Any, options: ReplayOptions,
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
        #: bumped for every record the launch runner does not replay (hrr.replay.launches)
        self.epoch = [0]
        self.ctx = ReplayContext(pm, self)
        self.pm = pm
        self._checks: dict[int, _Check] = {}
        self.budget = HostBudget(limits.max_host_bytes)
        if hasattr(process, "set_host_charge"):   # pack indexes, when a packed blob is first read
            process.set_host_charge(self.budget.charge)
        # The sim's device memory is host RAM, so it is charged too; a GPU's is not.
        self.charges_device_memory = backend.DEVICE_MEMORY_IS_HOST_MEMORY
        self._queued_bytes = 0         # blobs that host functions hold until a device sync
        self._keepalive: list[Any] = []   # host buffers queued work may still use
        self._call_buffers: list[Any] = []  # host buffers handed to the current call
        self._node_buffers: list[Any] = []  # graph nodes' host buffers: used at every graph launch
        self._plans: dict[str, _Plan] = {}   # per row, built at its first record
        self._poison = np.zeros(64, dtype=np.uint8)
        self._device_arrays: list[Any] = []   # device memory replay made for calls (device_array)
        self._device_array_bytes = 0
        self.threads = ThreadRouter(limits.max_threads)
        # --calls: records before the range are set-up (replayed, never checked); past
        # its end only the check records of copies made inside it are read.
        self.range = RangeCounts(options.calls) if options.calls is not None else None
        self.stats.range = self.range
        self._setup = False            # the record being replayed is set-up
        self._past_range = False

    # ------------------------------------------------------------------ main loop
    def run(self, prefix: Any = None, prefix_until: int = -1, own_backend: Backend | None = None) -> ReplayStats:
        """Replay every record. ``prefix``: for a forked child, the parent's process
        archive, whose records before ``prefix_until`` are replayed first (the state the
        child inherited). ``own_backend``: what the process's own records replay on, when
        not the backend (a fork child's lost device, ``hrr.backends.forkchild``)."""
        self.pm.hook.hrr_replay_start(ctx=self.ctx)
        try:
            own = self.process
            if prefix is not None:
                self.process = prefix  # blobs and code objects of those records live there
                go_on = self._replay_records(_raw_events(prefix), True, prefix_until)
                self.process = own
            else:
                go_on = True
            if own_backend is not None:
                self._use_backend(own_backend)
            if go_on:
                self._replay_records(_raw_events(own), False, -1)
        except DivergenceError as exc:
            self.stats.aborted = True
            self.stats.failures.append(str(exc))
        finally:
            self.threads.close()
            self._free_device_arrays()
            self.ctx.close()
        if getattr(self.process, "torn", False):
            self.stats.failures.append("the event stream is torn (capture was killed): "
                                       "only its complete records were replayed; run `hrr repair`")
        if self.ctx.host_fn_errors:
            self.stats.failures.extend(f"replay host function failed: {e}" for e in self.ctx.host_fn_errors)
        self.stats.peak_host_bytes = self.budget.peak
        return self.stats

    def _use_backend(self, backend: Backend) -> None:
        """Replay the records from here on on ``backend`` (plans are made again for it)."""
        self.backend = self.ctx.backend = backend
        self.hip = self.ctx.hip = backend.hip
        self._plans.clear()

    def _replay_records(self, items: Any, inherited: bool, prefix_until: int) -> bool:
        """Replay ``items`` (``(index, offset, value)`` or a refused record) in order; False
        when replay must stop there. Inherited records end at ``prefix_until``."""
        records = iter(items)
        resume = None   # an item a run of equal launches stopped at: replayed before the next
        while True:
            if resume is None:
                go_on = self._replay_items(records, records, inherited, prefix_until)
            else:
                go_on = self._replay_items(itertools.chain((resume,), records), records, inherited, prefix_until)
            if type(go_on) is bool:
                return go_on
            resume = go_on

    def _replay_items(self, items: Any, records: Any, inherited: bool, prefix_until: int) -> Any:
        """The loop of ``_replay_records`` over ``items``: True or False as it returns, or the
        item a run of equal launch records (taken straight from ``records``, the iterator under
        ``items``) stopped at, which the caller replays next."""
        stats, limits, options, threads = self.stats, self.limits, self.options, self.threads
        clock, deadline, max_events = options.clock, self.deadline, limits.max_events
        replay, plans, epoch = self._replay_wire, self._plans, self.epoch
        fast = self.range is None and not inherited
        for item in items:
            if inherited:  # the parent's records end at the fork
                first = item[2] if type(item) is tuple else getattr(item, "value", None)
                if type(first) is list and first and type(first[SEQ]) is int and first[SEQ] >= prefix_until:
                    return True
            if deadline is not None and clock() > deadline:
                stats.timed_out = True
                stats.failures.append(
                    f"stopped at record {_index_of(item)}: replay ran longer than "
                    f"--max-seconds={options.max_seconds:g} (raise it to replay further)")
                return False
            if fast and type(item) is tuple:
                # The common record: a sound record of a call already planned (its row
                # as it was at its first record: rows do not change during a replay), on
                # the dispatching thread. Anything else takes the general path below.
                value = item[2]
                if type(value) is list and len(value) == WIRE_LEN and type(api := value[API]) is str:
                    plan = plans.get(api)
                    if plan is None and getattr(CATALOGUE.get(api), "launch", None) is not None:
                        plan = self._plan_for(api)   # a launch's first record takes the fast path too
                    if plan is not None and plan.fast is not None and value[TID] == threads.first:
                        # a launch in capture's common shape: replayed in one pass, or
                        # declined untouched (then the checks below take it)
                        if stats.events >= max_events:
                            stats.failures.append(f"stopped after {max_events} events (--max-events)")
                            return False
                        try:
                            if plan.fast(value):
                                stats.events += 1
                                rest = plan.rest
                                if rest is not None:
                                    # the records equal to it that follow, in one step
                                    taken, after = rest(records, min(max_events - stats.events, RUN_CHUNK))
                                    stats.events += taken
                                    if after is not None:
                                        return after
                                continue
                        except (EventRefused, BlobError, *_MALFORMED) as exc:
                            stats.events += 1
                            self._refused(value, exc)
                            continue
                    epoch[0] += 1   # anything else replayed: the last launch is not made again unchecked
                    if plan is not None and plan.wf is not None and value[TID] == threads.first \
                            and plan.wf(value):
                        if stats.events >= max_events:
                            stats.failures.append(f"stopped after {max_events} events (--max-events)")
                            return False
                        stats.events += 1
                        try:
                            plan.run(value)
                        except (EventRefused, BlobError, *_MALFORMED) as exc:
                            self._refused(value, exc)
                        continue
            epoch[0] += 1
            if type(item) is tuple:
                index, offset, value = item
            elif getattr(item, "reason", None) is None:  # a Record-like item (a wrapped reader)
                index, offset, value = item.index, item.offset, item.value
            else:
                index, offset, value = item.index, item.offset, _BAD
            if type(value) is tuple:  # an in-process record; the wire has lists
                value = list(value)
            if value is _BAD:
                v, refusal = None, (index, "?", f"bad record at offset {offset}: {item.reason}", "bad_record")
            elif _well_formed(value) or schema_error(value) is None:
                v, refusal = value, None
            else:
                v, refusal = None, _refusal_of(index, offset, value)
            if self.range is not None:
                place = self._place(index, v, inherited)
                if place == "after":
                    if self._after_range(v):
                        continue
                    return False
                self._setup = place == "setup"
            if stats.events >= max_events:
                stats.failures.append(f"stopped after {max_events} events (--max-events)")
                return False
            stats.events += 1
            if v is None:
                self._refuse_raw(*refusal)  # type: ignore[misc]
                continue
            if self._setup and self.range is not None:
                if v[API].startswith("@"):  # a check before the range: not verified
                    continue
                if skipped_in_setup(v[API], v[ERR]):
                    self.range.setup_skipped += 1
                    continue
                self.range.setup_replayed += 1
            tid = v[TID]
            if tid == threads.first or threads.first is None:
                threads.first = tid  # the dispatching thread stands for the first recorded one
                replay(v)
                continue
            try:
                threads.run(tid, functools.partial(replay, v))
            except LimitExceeded as exc:  # a thread over --max-threads: its records are refused
                self._refuse_raw(v[SEQ], v[API], exc.what, "limit")
        return True

    # ------------------------------------------------------------------ --calls
    def _place(self, index: int, v: list | None, inherited: bool) -> str:
        """Where a record lies against --calls: "setup" (before N, or inherited from the
        parent at a fork), "range" or "after" (M or later). A record too malformed to
        name its sequence number is placed by its index."""
        assert self.range is not None
        if inherited:
            return "setup"
        seq = v[SEQ] if v is not None else index
        self.range.saw(seq)
        calls = self.range.calls
        if seq < calls.start:
            return "setup"
        if calls.past(seq):
            return "after"
        self.range.count_in_range(seq)
        return "range"

    def _after_range(self, v: list | None) -> bool:
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
                self.range.tail_error = err_name(err)
                self.stats.checks_unverifiable += len(self._checks)
                self._checks.clear()
                return False
        if v is not None and v[API] == PSEUDO_D2H_CHECK and len(v[ARGS]) == 1 \
                and type(v[ARGS][0]) is int and v[ARGS][0] in self._checks:
            self.range.late_checks += 1
            self._replay_wire(v)
        return bool(self._checks)

    def _refuse_raw(self, seq: int, api: str, reason: str, category: str) -> None:
        self.stats.refusals.append(Refusal(seq, api, reason, category))

    def _replay_wire(self, v: list) -> None:
        """Replay one schema-checked wire record ``[seq, tid, api, args, err, outs, extra]``."""
        try:
            api = v[API]
            plan = self._plans.get(api)
            if plan is None or plan.row is not CATALOGUE.get(api):
                plan = self._plan_for(api)
            plan.run(v)
        except (EventRefused, BlobError, *_MALFORMED) as exc:
            self._refused(v, exc)

    def _refused(self, v: list, exc: BaseException) -> None:
        """Count and name the refusal of record ``v`` that ``exc`` ended."""
        if isinstance(exc, EventRefused):
            self._refuse_raw(v[SEQ], v[API], exc.reason, exc.category)
        elif isinstance(exc, BlobError):
            self._refuse_raw(v[SEQ], v[API], str(exc), "blob")
        else:
            self._refuse_raw(v[SEQ], v[API], f"replay could not use this record "
                             f"({type(exc).__name__}: {str(exc)[:200]})", "bad_record")

    def _plan_for(self, api: str) -> "_Plan":
        """The plan of ``api``'s records, built at its first record (again if its row changed)."""
        row = CATALOGUE.get(api)
        plan = self._plans[api] = _Plan(api, row, self)
        return plan

    # ------------------------------------------------------------------ one call
    def _replay_call(self, plan: "_Plan", v: list) -> None:
        """A catalogue call with actions, allocations, outputs or a launch (the general path)."""
        row = plan.row
        assert row is not None
        args_in = v[ARGS]
        if len(args_in) != plan.nparams:
            raise EventRefused(f"{len(args_in)} arguments recorded, {row.name} takes {plan.nparams}",
                               category="bad_record")
        # Every recorded value is validated by its role before any of them is acted on.
        call = Call(row, v, [check(x) for check, x in zip(plan.checks, args_in, strict=True)])
        self._call_buffers = []
        args = list(call.raw)
        for i, act in plan.actions:
            args[i] = act(call)
        call.args = args
        for work in call.queued:  # e.g. pinned-source restores, once every argument is sound
            work()
        stream = args[plan.stream] if plan.stream is not None else None
        kernarg_buffers: Any = None  # alive until the launch call has returned
        if plan.launch is not None:
            args, kernarg_buffers = plan.launch(call)
        fn = plan.fn
        if fn is None:
            raise EventRefused(f"the {self.backend.NAME} backend has no {row.name}", category="unsupported")
        charged = self._charge_allocation(plan, call)  # before anything is allocated
        before, after, after_failed = plan.hooks(v[EXTRA])
        try:
            if before is not None:
                before(ctx=self.ctx, event=_event_of(call), stream=stream)
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
        recorded = v[ERR]
        if err != recorded and not row.volatile:
            self._diverged(row, v[SEQ], recorded, err)
        elif err and err == recorded:
            self.stats.reproduced_errors += 1
        if err == 0:
            self._bind_outputs(plan, call, result, charged)
            for fn_after in call.after:
                fn_after()
        if (row.waits == "device" or row.destroys == "device") and err == 0:
            self._device_synced()
        after = after_failed if err else after
        if after is not None:
            after(ctx=self.ctx, event=_event_of(call), result=result)

    def _device_synced(self) -> None:
        """The device ran everything queued: host functions and buffers it held are done."""
        self.ctx.release_finished_host_fns()
        self._keepalive.clear()
        self.budget.release(self._queued_bytes)
        self._queued_bytes = 0

    def _diverged(self, row: Api, seq: int, recorded: int, err: int) -> None:
        self.stats.divergences += 1
        self.stats.diverged.append(Divergence(seq, row.name, recorded, err, self._setup, row.module))
        where = f", set-up before --calls {describe_range(self.range.calls)}" \
            if self._setup and self.range is not None else ""
        msg = (f"record {seq} ({row.name}{where}): the recording returned {err_name(recorded, row.module)}, "
               f"replay returned {err_name(err, row.module)}")
        # a library call sets no HIP last error: the backend's detail would be another call's
        detail = self._error_detail() if err and row.module in ("hip", "hiprtc") else ""
        if detail:
            msg += f": {detail}"
        if self.options.keep_going:
            self.stats.failures.append(msg)
            return
        raise DivergenceError(msg, hint="replay stopped early; --keep-going replays the rest")

    def _error_detail(self) -> str:
        """What the backend said about its last error on this thread (the sim says why), or ''."""
        try:
            return str(self.backend.last_error_detail() or "")[:2000]
        except Exception:  # noqa: BLE001 - a detail is a courtesy; the divergence stands without it
            return ""

    # ------------------------------------------------------------------ host memory
    def _charge_allocation(self, plan: "_Plan", call: Call) -> int:
        """Charge what the call will allocate (pinned memory; device memory on the sim, which
        is host RAM) before the backend makes it; returns the bytes charged."""
        total = 0
        for charge in plan.chargers:
            try:
                total += charge(call)
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

    # ------------------------------------------------------------------ plugins' hooks
    def event_hook(self, name: str, api: str, records: frozenset[str] = frozenset(),
                   failed: bool = False) -> Any:
        """The caller of the per-event hook ``name`` for an event of ``api`` carrying the
        records of the plugins in ``records`` (``failed``: it replayed with an error): over
        every implementation, over those of the plugins that want such an event
        (``ctx.watch``), or None when none does (built once per plan and kind of event)."""
        hook = getattr(self.pm.hook, name)
        impls = hook.get_hookimpls()
        which = "before" if name == "hrr_replay_before_event" else "after"
        wants = self.ctx.wants
        unwanted = [impl.plugin for impl in impls if not wants(impl.plugin_name, api, which, records, failed)]
        if len(unwanted) == len(impls):
            return None
        if not unwanted:
            return hook
        return self.pm.subset_hook_caller(name, remove_plugins=unwanted)

    # ------------------------------------------------------------------ role services
    # What the roles (hrr.api.roles.ReplayServices) may ask of the replayer.
    def translate(self, addr: int) -> int | None:
        return self.memory.translate(addr)

    def find(self, addr: int) -> ReplayAllocation | None:
        return self.memory.find(addr)

    def lookup_handle(self, kind: str, value: int) -> Any:
        return self.handles.lookup(kind, value)

    def bind_handle(self, kind: str, capture_value: int, replay_obj: Any) -> None:
        self.handles.bind(kind, capture_value, replay_obj)

    def add_allocation(self, capture_base: int, replay_base: int, size: int, kind: str, *,
                       keepalive: Any = None, charged: int = 0, owner: int = 0) -> None:
        self.memory.add(ReplayAllocation(capture_base, replay_base, size, kind, keepalive, charged), owner=owner)

    def buffer(self, n: int, what: str) -> Any:
        return self.budget.buffer(n, what)

    def hold(self, buf: Any) -> None:
        self._call_buffers.append(buf)

    def keep(self, buf: Any) -> None:
        self._node_buffers.append(buf)

    def read_blob(self, name: str) -> bytes:
        return self.process.read_blob(name)

    def enqueue_host_fn(self, stream: Any, fn: Callable[[], None]) -> int:
        return self.ctx.enqueue_host_fn(stream, fn)

    def expect(self, call: Call, read: Callable[[], bytes], blob: str | None, n: int) -> None:
        if self._setup:  # a set-up copy is replayed for its effects, never checked
            return
        seq = call.seq
        check = _Check(seq, call.row.name, read, blob, n)
        if call.row.sync:
            call.after.append(lambda: self._compare(check))
        else:
            call.after.append(lambda: self._checks.__setitem__(seq, check))

    def read_code_object(self, name: str) -> Any:
        return self.process.read_code_object(name)

    def dim3(self, x: int, y: int, z: int) -> Any:
        return self.hip.dim3(x=x, y=y, z=z)

    def poison_address(self) -> int:
        return int(self._poison.__array_interface__["data"][0])

    def device_bytes(self, replay_addr: int, n: int) -> bytes:
        buf = self.buffer(n, "a device array replay reads")
        hip = self.hip
        if int(hip.hipDeviceSynchronize()[0]) or \
                int(hip.hipMemcpy(buf, replay_addr, n, hip.hipMemcpyKind.hipMemcpyDeviceToHost)[0]):
            raise EventRefused(f"could not read {n} bytes of device memory at 0x{replay_addr:x}",
                               category="enqueue")
        return buf.tobytes()

    def device_array(self, data: bytes, what: str) -> int:
        hip = self.hip
        if self.charges_device_memory:
            self._device_array_bytes += self.budget.charge(len(data), what)
        err, ptr = hip.hipMalloc(max(len(data), 1))
        if int(err) or int(hip.hipMemcpy(ptr, np.frombuffer(data, np.uint8), len(data),
                                         hip.hipMemcpyKind.hipMemcpyHostToDevice)[0]):
            raise EventRefused(f"could not make {what} ({len(data)} bytes of device memory)", category="enqueue")
        self._device_arrays.append(ptr)
        return int(ptr)

    def _free_device_arrays(self) -> None:
        """The device arrays replay made for calls (``device_array``): their work has ended."""
        for ptr in self._device_arrays:
            self.hip.hipFree(ptr)
        self._device_arrays.clear()
        self.budget.release(self._device_array_bytes)
        self._device_array_bytes = 0

    def count(self, counter: str) -> None:
        self.ctx.counters[counter] += 1

    def charge(self, n: int, what: str) -> int:
        return self.budget.charge(n, what)

    def release(self, n: int) -> None:
        self.budget.release(n)

    # ------------------------------------------------------------------ outputs
    def _bind_outputs(self, plan: "_Plan", call: Call, result: tuple, charged: int = 0) -> None:
        row = call.row
        for bind, cap, rep in zip(plan.binders, call.wire[OUTS], result[1:], strict=False):
            if bind is None or cap is None or rep is None or not isinstance(cap, (int, bytes)):
                continue
            charged = bind(call, cap, rep, charged)
        if charged:  # the call gave nothing replay keeps (e.g. a NULL result)
            self.budget.release(charged)
        # The first parameter (a validated address or handle) names what the call released.
        if row.destroys == "alloc":
            gone = self.memory.remove(call.raw[0])
            if gone is not None:
                self.budget.release(gone.charged)
        elif row.destroys == "device":
            self.budget.release(self.memory.clear())
            self.handles.clear()
            self._checks.clear()  # copies queued before the reset are never checked
        elif row.destroys:
            self.handles.drop(row.destroys, call.raw[0])

    # ------------------------------------------------------------------ checks
    def _pseudo(self, v: list) -> None:
        args = v[ARGS]
        if v[API] == PSEUDO_UNCATALOGUED and len(args) == 1 and type(args[0]) is str \
                and args[0].isascii() and args[0].isidentifier() and len(args[0]) <= 64:
            self.stats.unreplayable += 1   # a passed-through call: never replayed, --strict fails
            self._refuse_raw(v[SEQ], args[0], UNCATALOGUED_REASON, "unreplayable")
            return
        if v[API] != PSEUDO_D2H_CHECK or len(args) != 1 or type(args[0]) is not int:
            raise EventRefused(f"unknown pseudo-event {v[API]}", category="bad_record")
        check = self._checks.pop(args[0], None)
        if check is None and self.range is not None and args[0] < self.range.calls.start:
            return  # the check of a set-up copy: not verified, not counted
        if check is None:
            raise EventRefused(f"a check names record {args[0]}, which replay did not copy",
                               category="bad_record")
        blob = v[EXTRA].get("blob")
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
        first = next((i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b),
                     min(len(expected), len(actual)))
        self.stats.failures.append(
            f"record {check.seq} ({check.api}): {check.n} bytes differ from the recording "
            f"from byte {first} (expected {expected[first:first + 8].hex()}, "
            f"got {actual[first:first + 8].hex()})")


_BAD = object()   # the value of a record the reader refused


def _raw_events(process: Any) -> Any:
    """The process's records as ``(index, offset, value)`` (or refused records); a process
    object with only ``events()`` (Record-like items) is read through that."""
    raw = getattr(process, "raw_events", None)
    return raw() if raw is not None else process.events()


def _index_of(item: Any) -> int:
    return item[0] if type(item) is tuple else item.index


def _refusal_of(index: int, offset: int, value: Any) -> tuple:
    """The refusal ``(seq, api, reason, category)`` a record that fails the schema earns."""
    try:
        event_from_wire(value, where=f"record {index} at offset {offset}")
    except FormatError as exc:
        return index, _api_name_of(value), str(exc), "bad_record"
    return index, _api_name_of(value), "the record does not match the event schema", "bad_record"


def _same(expected: bytes, actual: bytes, tol: float | None) -> bool:
    if expected == actual:
        return True
    if tol is None or len(expected) != len(actual) or len(expected) % 4:
        return False
    a = np.frombuffer(expected, dtype=np.float32)
    b = np.frombuffer(actual, dtype=np.float32)
    return bool(np.allclose(a, b, atol=tol, rtol=0, equal_nan=True))


#: The parameters of a row that are byte counts (each validated as one by its role).
_size_names = byte_counts


class _Plan:
    """One API's replay, specialised once per replayer: each parameter's check and action
    and each output's charger and binder, asked of its role; the launch decoder; the
    backend function; the plugins' per-event hooks that want this call; and ``run(v)``,
    the tightest path that replays a wire record of it."""

    __slots__ = ("row", "checks", "actions", "chargers", "binders", "launch", "stream", "target", "fn",
                 "nparams", "before", "after", "after_failed", "run", "wf", "fast", "rest", "_rep", "_by_records")

    def __init__(self, api: str, row: Api | None, rep: ProcessReplayer) -> None:
        self.row = row
        self.wf = record_check(api)  # the schema's check of a record naming this call
        self.before: Any = None      # the per-event hooks for a record with no plugin records
        self.after: Any = None
        self.after_failed: Any = None  # ... and hrr_replay_after_event when it replayed with an error
        self.fast: Callable[[list], bool] | None = None   # replays a record or declines it
        #: after ``fast`` replayed a record: takes the records equal to it that follow
        #: (``(records, limit) -> (taken, the item it stopped at or None)``), or None
        self.rest: Callable[[Any, int], tuple[int, Any]] | None = None
        self._rep = rep
        self._by_records: dict[frozenset[str], tuple[Any, Any, Any]] = {}
        if row is None or row.replay in (NOOP, UNREPLAYABLE):
            self.run: Callable[[list], None] = _not_replayed(api, row, rep)
            return
        roles = [param_role(p.role) for p in row.params]
        self.nparams = len(row.params)
        self.checks = [role.check(row, i) for i, role in enumerate(roles)]
        self.actions = [(i, act) for i, role in enumerate(roles) if (act := role.action(row, i, rep)) is not None]
        outs = [out_role(o.role) for o in row.outs]
        self.chargers = [c for j, role in enumerate(outs) if (c := role.charger(row, j, rep)) is not None]
        self.binders = [role.binder(row, j, rep) for j, role in enumerate(outs)]
        self.launch = LAUNCH.decoder(row, rep) if row.launch is not None else None
        self.stream = row.param_index(row.stream) if row.stream else None
        self.target = row.replays_as or row.name
        self.fn = getattr(rep.hip if row.module == "hip" else api_module(rep.backend, row.module), self.target, None)
        self.before = rep.event_hook("hrr_replay_before_event", row.name)
        self.after = rep.event_hook("hrr_replay_after_event", row.name)
        self.after_failed = rep.event_hook("hrr_replay_after_event", row.name, failed=True)
        simple = not (self.actions or self.chargers or self.launch is not None or row.destroys
                      or any(b is not None for b in self.binders))
        self.run = _simple_run(self, rep) if simple else functools.partial(rep._replay_call, self)
        if self.launch is not None:
            self.fast = launch_runner(row, self.fn, rep, (self.before, self.after, self.after_failed))
            self.rest = getattr(self.fast, "rest", None)

    def hooks(self, extra: dict) -> tuple[Any, Any, Any]:
        """The per-event hooks (before, after, after when it failed) for a record whose
        ``extra`` is ``extra``: a plugin watching with ``only="records"`` is called only for
        a record carrying its records."""
        records = extra.get("records")
        if not records:
            return self.before, self.after, self.after_failed
        key = frozenset(records)
        got = self._by_records.get(key)
        if got is None:
            assert self.row is not None
            name, rep = self.row.name, self._rep
            got = (rep.event_hook("hrr_replay_before_event", name, key),
                   rep.event_hook("hrr_replay_after_event", name, key),
                   rep.event_hook("hrr_replay_after_event", name, key, failed=True))
            if len(self._by_records) < 64:   # an archive chooses the keys: a bounded memo
                self._by_records[key] = got
        return got


def _not_replayed(api: str, row: Api | None, rep: ProcessReplayer) -> Callable[[list], None]:
    """``run`` for a pseudo-event, an API outside the catalogue, a noop or an unreplayable call."""
    stats = rep.stats
    if row is None:
        if api.startswith("@"):
            return rep._pseudo

        def unknown(v: list) -> None:
            raise EventRefused(f"{api} is not in this hrr's API catalogue", category="unknown_api")
        return unknown
    if row.replay == NOOP:
        def noop(v: list) -> None:
            stats.noops += 1
        return noop
    reason = row.reason

    def unreplayable(v: list) -> None:
        stats.unreplayable += 1
        rep._refuse_raw(v[SEQ], api, reason, "unreplayable")
    return unreplayable


def _simple_run(plan: _Plan, rep: ProcessReplayer) -> Callable[[list], None]:
    """``run`` for a call that only takes checked values and keeps nothing it returns (a
    query, a synchronisation, a setting): check, call, compare the error. No ``Call`` and
    no ``Event`` is built unless a plugin's per-event hook wants this call."""
    row, fn, checks, n = plan.row, plan.fn, tuple(plan.checks), plan.nparams
    assert row is not None
    name, volatile = row.name, row.volatile
    hooks, plain = plan.hooks, (plan.before, plan.after, plan.after_failed)
    synced = row.waits == "device"
    stats, ctx = rep.stats, rep.ctx
    stream_at = plan.stream

    def settle(v: list, err: int) -> None:
        """Count the call and compare its error with the recording's."""
        stats.replayed += 1
        recorded = v[ERR]
        if err != recorded:
            if not volatile:
                rep._diverged(row, v[SEQ], recorded, err)
        elif err:
            stats.reproduced_errors += 1
        if synced and err == 0:
            rep._device_synced()

    def run(v: list) -> None:
        args = v[ARGS]
        if len(args) != n:
            raise EventRefused(f"{len(args)} arguments recorded, {name} takes {n}", category="bad_record")
        raw = [check(x) for check, x in zip(checks, args, strict=True)] if n else args
        if fn is None:
            raise EventRefused(f"the {rep.backend.NAME} backend has no {name}", category="unsupported")
        before, after, after_failed = hooks(v[EXTRA]) if v[EXTRA] else plain
        ev = None
        if before is not None:
            ev = wire_event(v)
            before(ctx=ctx, event=ev, stream=raw[stream_at] if stream_at is not None else None)
        result = fn(*raw)
        err = int(result[0])
        settle(v, err)
        after = after_failed if err else after
        if after is not None:
            after(ctx=ctx, event=ev if ev is not None else wire_event(v), result=result)

    if fn is not None and not n and plain == (None, None, None):
        def run_bare(v: list) -> None:
            """No argument, no hook: the call and its error's comparison only."""
            if v[EXTRA]:   # plugin records: a plugin watching with_records may want this one
                return run(v)
            if v[ARGS]:
                raise EventRefused(f"{len(v[ARGS])} arguments recorded, {name} takes 0", category="bad_record")
            settle(v, int(fn()[0]))
        return run_bare
    return run


def _api_name_of(value: Any) -> str:
    """The API a malformed record names, when that much of it is sound (for its refusal)."""
    if isinstance(value, (list, tuple)) and len(value) > API and isinstance(value[API], str) \
            and (value[API] in CATALOGUE or value[API] == PSEUDO_D2H_CHECK):
        return value[API]
    return "?"


__all__ = ["ProcessReplayer", "ReplayOptions", "ReplayStats", "Refusal", "ArchiveError", "HrrError",
           "DEFAULT_MAX_SECONDS"]
