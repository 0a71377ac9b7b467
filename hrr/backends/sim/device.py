"""The one simulated device's state, and the lock that makes the API thread-safe.

Everything mutable lives on a ``Device``; ``reset_device()`` swaps in a fresh one (tests),
``Device.reset()`` empties it in place (``hipDeviceReset``). Handle values are
deterministic: a per-kind base plus a counter.

Fork: the device lock is taken by the fork handler (rank ``RANK_BACKEND`` in
``hrr.archive.forking``), so a fork waits until no other thread is inside a sim call and
the child gets a consistent copy of the device, never a lock held by a thread that does
not exist there. The child then rebuilds the scheduler's condition variable and forgets
the parent's threads. The sim has no worker threads (work runs on the calling thread when
the host waits), so none is lost. Unlike a GPU runtime, whose context a forked child
cannot use, the sim is process memory: the child keeps the parent's handles and
allocations (replay rebuilds them from the parent's records, see DESIGN.md).
"""
from __future__ import annotations

import itertools
import sys
import threading
from typing import Any, Callable

import attrs

from hrr.backends import devicemodels
from hrr import hiptypes as ht
from hrr.backends.devicemodels import DeviceModel
from hrr.hiptypes import as_handle_value
from hrr.backends.sim.kernels import KernelDef, LaunchContext
from hrr.backends.sim.graphs import RELAXED, CaptureSession, sessions_prohibiting
from hrr.backends.sim.memory import Memory
from hrr.backends.sim.pools import MemPool
from hrr.backends.sim.streams import Event, Op, Scheduler, Stream
from hrr.backends.surface import HipError

_HANDLE_BASES = {"stream": 0x5100_0000, "event": 0x5200_0000, "module": 0x5300_0000,
                 "function": 0x5400_0000, "graph": 0x5500_0000, "graph_exec": 0x5600_0000,
                 "program": 0x5700_0000, "link": 0x5800_0000, "graph_node": 0x5900_0000,
                 "mem_pool": 0x5B00_0000}
# the hip handle class of each kind of live object
_HANDLE_TYPES = {"stream": ht.ihipStream_t, "event": ht.ihipEvent_t, "graph": ht.ihipGraph,
                 "graph_exec": ht.hipGraphExec, "module": ht.ihipModule_t, "function": ht.ihipModuleSymbol_t,
                 "graph_node": ht.hipGraphNode, "mem_pool": ht.ihipMemPoolHandle_t}


# -- device: attributes, versions, limits, peers, contexts ---------------------
PRIMARY_CONTEXT = 0x5A00_0010   # the handle of the device's one (primary) context
STACK_SIZE_MAX = 128 * 1024 - 16   # hipLimitStackSize's largest value (HIP's documented bound)
SCRATCH_MIN, SCRATCH_MAX = 4096, 1 << 30   # hipExtLimitScratchMin/Max: the scratch size's bounds


@attrs.define
class DeviceSettings:
    """What hipDeviceSet* and hipSetDeviceFlags change (hipDeviceReset restores the
    defaults); it is also the primary context's object (``handle``)."""

    stack_size: int = 1024
    malloc_heap_size: int = 4 << 20
    scratch_current: int = SCRATCH_MIN
    cache_config: int = 0          # hipFuncCachePreferNone
    shared_mem_config: int = 1     # hipSharedMemBankSizeFourByte
    flags: int = 0                 # hipDeviceScheduleAuto
    handle: int = PRIMARY_CONTEXT


class Device:
    """Memory, streams, events, modules, graphs and per-thread error state."""

    def __init__(self, model: DeviceModel | None = None, check_targets: bool = True) -> None:
        self.lock = threading.RLock()
        self.tls = threading.local()
        # the AMD GPU this device is (HRR_SIM_DEVICE, or the one an archive recorded); it
        # outlives hipDeviceReset, as the hardware does
        self.model = model or devicemodels.selected()
        # whether a code object compiled for another AMD processor is refused at load, as on a
        # GPU (off while replaying an archive that names no model: the sim then ran any target)
        self.check_targets = check_targets
        # native kernel workers by sandboxed or not: they outlive hipDeviceReset (the memory
        # they map is the process's, whatever Memory is current)
        self.native_workers: dict[bool, Any] = {}
        # native images' private pages by image base: (address, bytes) (native.pool)
        self.native_private: dict[int, tuple[int, int]] = {}
        # the workers' settings (native.pool.Settings); None: HRR_SIM_WORKERS's
        self.native_settings: Any = None
        self._fresh_state(Memory(total_bytes=self.model.total_global_mem))

    def _fresh_state(self, memory: Memory) -> None:
        self.memory = memory
        self.scheduler = Scheduler(self.lock)
        self.streams: dict[int, Any] = {0: self.scheduler.null}
        self.events: dict[int, Any] = {}
        self.modules: dict[int, Any] = {}
        self.functions: dict[int, Any] = {}
        self.graphs: dict[int, Any] = {}
        self.graph_execs: dict[int, Any] = {}
        self.graph_nodes: dict[int, Any] = {}
        self.programs: dict[int, Any] = {}
        self.links: dict[int, Any] = {}   # hiprtc link states
        self.libraries: dict[str, dict[int, Any]] = {}   # math-library handles by kind (``mathlibs``)
        self.captures: list = []   # active CaptureSessions
        self.settings = DeviceSettings()   # limits, cache and scheduling settings (reset too)
        self.contexts: dict[int, Any] = {PRIMARY_CONTEXT: self.settings}
        self._counters = {k: itertools.count(1) for k in _HANDLE_BASES}
        self._capture_ids = itertools.count(1)
        # the device's default memory pool (always the first pool handle), current until
        # hipDeviceSetMemPool names another
        self.default_pool = MemPool(self.new_handle("mem_pool"), is_default=True)
        self.mem_pools: dict[int, MemPool] = {self.default_pool.handle: self.default_pool}
        self.current_pool = self.default_pool

    def reset(self) -> None:
        """Destroy every allocation, stream, event, module, graph and capture (the caller
        holds the lock). Device addresses keep counting up, so none is ever reused."""
        self._fresh_state(self.memory.successor())

    def after_fork_in_child(self) -> None:
        """Forget what the parent's other threads left: their condition-variable waits and
        their identities (the lock itself was taken by the forking thread)."""
        self.scheduler.cond = threading.Condition(self.lock)
        self.scheduler.waiting_threads = 0
        self.scheduler.api_threads = {threading.get_ident()}

    def new_handle(self, kind: str) -> int:
        return _HANDLE_BASES[kind] + 0x10 * next(self._counters[kind])

    def new_capture_id(self) -> int:
        return next(self._capture_ids)

    # Handle tables: hip handles <-> the live sim objects.
    def lookup(self, table: dict, obj: Any, what: str, code: str = "hipErrorInvalidHandle") -> Any:
        """The live object of ``table`` that the handle ``obj`` names, or HipError ``code``."""
        try:
            value = as_handle_value(obj)
        except TypeError:
            raise HipError(code, f"{obj!r} is not a {what}") from None
        found = table.get(value)
        if found is None:
            raise HipError(code, f"0x{value:x} is not a live {what}")
        return found

    def keep(self, kind: str, make: Callable[[int], Any]) -> Any:
        """The hip handle of a new ``kind`` object, ``make(handle)``, kept live on the device."""
        obj = make(self.new_handle(kind))
        getattr(self, kind + "s")[obj.handle] = obj
        return _HANDLE_TYPES[kind](obj.handle)

    def forget(self, table: str, obj: Any) -> None:
        """Drop ``obj`` from the handle table ``table`` (e.g. "events")."""
        del getattr(self, table)[obj.handle]

    # Capture rules: which work a live stream capture admits, and where work goes.
    def check_capture_safe(self, what: str) -> None:
        """Refuse (900) an unsafe call that a live capture prohibits, invalidating it."""
        hit = sessions_prohibiting([s for s in self.captures if not s.invalidated_by],
                                   self.thread_capture_mode)
        if hit:
            for s in hit:
                s.invalidate(f"{what} was called during the capture")
            raise HipError("hipErrorStreamCaptureUnsupported",
                           f"{what} is not permitted while stream 0x{hit[0].stream.handle:x} "
                           f"captures (capture id {hit[0].id}); the capture is invalidated")

    def submit(self, stream: Stream, make_op: Callable[[], Op]) -> None:
        """Enqueue work, or add it to the graph when the stream captures."""
        session = stream.capture
        if session is not None:
            if session.invalidated_by:
                raise HipError("hipErrorStreamCaptureInvalidated",
                               f"capture {session.id} was invalidated: {session.invalidated_by}")
            session.nodes.append(make_op)
            return
        if stream.is_null:
            # Legacy null-stream work would synchronise with a capturing blocking stream.
            implicit = [s for s in self.captures if s.stream.blocking and not s.invalidated_by]
            if implicit:
                for s in implicit:
                    s.invalidate("null-stream work during the capture")
                raise HipError("hipErrorStreamCaptureImplicit",
                               "work on the legacy null stream while a blocking stream captures")
        self.scheduler.enqueue(stream, make_op())

    def begin_capture(self, s: Stream, mode: int) -> None:
        """Start a capture session on ``s`` (hipStreamBeginCapture)."""
        if s.is_null:
            raise HipError("hipErrorStreamCaptureUnsupported", "the legacy null stream cannot capture")
        if s.capture is not None:
            raise HipError("hipErrorIllegalState", f"stream 0x{s.handle:x} is already capturing")
        session = CaptureSession(self.new_capture_id(), s, mode)
        s.capture = session
        self.captures.append(session)

    def end_capture(self, s: Stream) -> tuple:
        """End the capture begun on ``s`` (every stream that joined it leaves); its nodes."""
        session = s.capture
        if session is None:
            raise HipError("hipErrorIllegalState", f"stream 0x{s.handle:x} is not capturing")
        if session.stream is not s:
            raise HipError("hipErrorStreamCaptureUnmatched", "the capture began on another stream")
        if session.mode != RELAXED and session.thread != threading.get_ident():
            raise HipError("hipErrorStreamCaptureWrongThread", "the capture began on another thread")
        self.captures.remove(session)
        for other in self.streams.values():
            if other.capture is session:
                other.capture = None
        if session.invalidated_by:
            raise HipError("hipErrorStreamCaptureInvalidated",
                           f"capture {session.id} was invalidated: {session.invalidated_by}")
        return tuple(session.nodes)

    def wait_event(self, s: Stream, ev: Event) -> None:
        """Make ``s`` wait for ``ev``'s last record (hipStreamWaitEvent), or, in a capture,
        fork ``s`` into the capture that recorded ``ev``."""
        if ev.capture is not None:
            # A fork or join inside a capture: the graph is linear, so joining the capture
            # (fork) is all there is to do; the node order already respects the dependency.
            if ev.capture.invalidated_by:
                raise HipError("hipErrorStreamCaptureInvalidated", "the capture was invalidated")
            if s.capture is None:
                s.capture = ev.capture
            elif s.capture is not ev.capture:
                raise HipError("hipErrorStreamCaptureMerge", "the streams capture different graphs")
            return
        if s.capture is not None:
            if ev.stream is not None:
                s.capture.invalidate("waited on an event recorded outside the capture")
                raise HipError("hipErrorStreamCaptureIsolation",
                               "a capturing stream cannot wait on work outside the capture")
            return
        if ev.stream is None:
            return  # never recorded: nothing to wait for
        target = (ev.stream, ev.seq)
        self.submit(s, lambda: Op(f"wait(event 0x{ev.handle:x})", lambda: None, 0.0, [target]))

    def record_event(self, ev: Event, s: Stream) -> None:
        """Record ``ev`` on ``s`` (hipEventRecord): it completes, with a timestamp, when the
        work before it has run; in a capture it marks the capture instead."""
        if s.capture is not None:
            if s.capture.invalidated_by:
                raise HipError("hipErrorStreamCaptureInvalidated", "the capture was invalidated")
            ev.capture, ev.stream, ev.timestamp_us = s.capture, None, None
            return
        ev.generation += 1
        generation, sched = ev.generation, self.scheduler

        def stamp() -> None:
            if ev.generation == generation:
                ev.timestamp_us = sched.clock_us
        self.submit(s, lambda: Op(f"record(event 0x{ev.handle:x})", stamp, 0.0))
        ev.capture, ev.stream, ev.seq, ev.timestamp_us = None, s, s.enqueued, None

    def launch(self, s: Stream, kernel: KernelDef, kernargs: bytes, grid: tuple, block: tuple,
               shared: int = 0) -> None:
        """Submit ``kernel`` over ``grid`` x ``block`` (``shared`` bytes of dynamic shared memory)
        with its packed arguments to ``s``."""
        memory = self.memory

        def make() -> Op:
            def run() -> "bool | None":
                return kernel.impl(LaunchContext(kernel.name, kernargs, grid, block,
                                                 memory.resolve_for_kernel, shared))
            return Op(f"{kernel.name}<<<{grid}, {block}>>>", run, 10.0)
        self.submit(s, make)

    def sync_on_null(self, make_op: Callable[[], Op], what: str) -> None:
        """A synchronous call's work: on the null stream, the host waiting until it is done."""
        self.check_capture_safe(what)
        self.submit(self.scheduler.null, make_op)
        self.wait(self.scheduler.barrier_positions(self.scheduler.null))

    def wait(self, positions: list) -> None:
        """Run work until every (stream, seq) of ``positions`` is reached (HipError on a fault)."""
        raise_device_error(self.scheduler.wait(positions))

    def wait_all(self) -> None:
        """Run all queued work, as a GPU's free or unregister waits for work that may use memory."""
        self.wait(self.scheduler.all_positions())

    # Per-thread state, as HIP keeps it.
    def set_last_error(self, code: int, detail: str = "") -> None:
        self.tls.last_error = code
        self.tls.last_detail = detail

    def clear_last_error(self) -> None:
        """hipGetLastError: the code resets; the detail stays readable for diagnostics."""
        self.tls.last_error = 0

    def last_error(self) -> tuple[int, str]:
        return getattr(self.tls, "last_error", 0), getattr(self.tls, "last_detail", "")

    @property
    def thread_capture_mode(self) -> int:
        return getattr(self.tls, "capture_mode", 0)

    @thread_capture_mode.setter
    def thread_capture_mode(self, mode: int) -> None:
        self.tls.capture_mode = mode


DEVICE_COUNT = 1   # the sim has one device, ordinal 0


def keep(kind: str, make: Callable[[int], Any]) -> Any:
    """The current device's :meth:`Device.keep`: the handle of a new live ``kind`` object."""
    return _current.keep(kind, make)


def refuse_during_capture(what: str) -> None:
    """HIP refuses (900) a device-wide change (a cache or shared-memory setting, a pool's
    creation or destruction, the device's pool) while any stream captures, invalidating
    nothing."""
    if any(not c.invalidated_by for c in _current.captures):
        raise HipError("hipErrorStreamCaptureUnsupported", f"{what} while a stream captures")


def refuse_if_capturing(stream: Stream, what: str) -> None:
    """Synchronising with or querying a capturing stream is always 900 + invalidation."""
    if stream.capture is not None:
        stream.capture.invalidate(f"{what} on the capturing stream")
        raise HipError("hipErrorStreamCaptureUnsupported",
                       f"{what} on stream 0x{stream.handle:x} while it captures; "
                       f"the capture is invalidated")


def raise_device_error(err: tuple[str, str] | None) -> None:
    """Raise a fault the scheduler reported, (hipError_t name, detail), as a HipError."""
    if err is not None:
        if err[0] == "hipErrorLaunchTimeOut":  # a deadlock: say so where a person looks
            print(f"hrr sim: {err[1]}", file=sys.stderr)
        raise HipError(*err)


_current = Device()


def current() -> Device:
    return _current


def reset_device(model: DeviceModel | None = None, check_targets: bool = True) -> None:
    """Replace the device with a fresh one, of ``model`` (default: HRR_SIM_DEVICE's); outstanding
    handles become invalid."""
    global _current
    _current = Device(model, check_targets)


class _ForkGuard:
    """The current device's lock, as the fork handler takes it (whichever device is current)."""

    def __init__(self) -> None:
        self._taken: list[Device] = []

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        dev = _current
        ok = dev.lock.acquire(blocking, timeout)
        if ok:
            self._taken.append(dev)
        return ok

    def release(self) -> None:
        self._taken.pop().lock.release()

    def in_child(self) -> None:
        _current.after_fork_in_child()


def _register_fork_handler() -> None:
    from hrr.archive.forking import RANK_BACKEND, register_fork_lock

    guard = _ForkGuard()
    register_fork_lock(guard, RANK_BACKEND, in_child=guard.in_child)


_register_fork_handler()
