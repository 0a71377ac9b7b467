"""Streams, events and the deterministic scheduler that runs their work.

Every stream is a FIFO of ``Op``s. Nothing runs when it is enqueued: work runs only
when the host waits (a synchronize, a synchronous copy, a free) or polls (a query), and
then the scheduler makes round-robin passes over the streams in creation order (the
null stream first), running each stream's head op once its dependencies are met. An op
may also report itself *blocked* (``wait_flag``, ``hipStreamWaitValue32``); it stays at
the head and is retried on the next pass. A pass in which nothing ran while the host
still waits is a deadlock: unless another live thread could still release it, the wait
returns hipErrorLaunchTimeOut naming every blocked head instead of hanging.
"""
from __future__ import annotations

import os
import threading
import time
from collections import deque
from typing import Any, Callable

import attrs

from hrr.backends.sim.kernels import DeviceFault
from hrr.backends.surface import HipError

NON_BLOCKING = 0x1  # hipStreamNonBlocking
# A host wait on a stuck device gives other threads this long to release it.
STALL_TIMEOUT_S = float(os.environ.get("HRR_SIM_STALL_TIMEOUT_S", "2.0"))


@attrs.define(eq=False)
class Op:
    """One unit of stream work. ``run`` returns False while blocked; ``deps`` are
    (stream, seq) positions that must have completed before it may start."""

    label: str
    run: Callable[[], "bool | None"]
    cost_us: float = 1.0
    deps: list = attrs.Factory(list)
    seq: int = 0


@attrs.define(eq=False)
class Stream:
    handle: int
    flags: int = 0
    queue: deque = attrs.Factory(deque)
    enqueued: int = 0    # seq of the last op enqueued
    completed: int = 0   # seq of the last op completed (ops complete in order)
    capture: Any = None  # the CaptureSession while capturing
    destroyed: bool = False
    priority: int = 0    # hipStreamCreateWithPriority's, clamped to the device's range
    cu_mask: tuple[int, ...] = ()   # hipExtStreamCreateWithCUMask's words (the sim runs on them all)

    @property
    def is_null(self) -> bool:
        return self.handle == 0

    @property
    def blocking(self) -> bool:
        """Takes part in legacy null-stream synchronisation."""
        return not self.is_null and not (self.flags & NON_BLOCKING)

    @property
    def idle(self) -> bool:
        return self.completed >= self.enqueued

    def reached(self, seq: int) -> bool:
        return self.completed >= seq


@attrs.define(eq=False)
class Event:
    handle: int
    flags: int = 0
    stream: Stream | None = None   # where it was last recorded
    seq: int = 0                   # the recorded position in that stream
    generation: int = 0            # bumps per record, so a stale record op keeps quiet
    timestamp_us: float | None = None
    capture: Any = None            # the CaptureSession it was recorded into, if any

    @property
    def complete(self) -> bool:
        return self.stream is None or self.stream.reached(self.seq)


class Scheduler:
    """Owns the streams' queues, the virtual clock and pending asynchronous errors."""

    def __init__(self, lock: threading.RLock) -> None:
        self.null = Stream(0)
        self.streams: list[Stream] = [self.null]
        self.clock_us = 0.0
        self.async_errors: list[tuple[str, str]] = []
        self.cond = threading.Condition(lock)
        self.waiting_threads = 0
        self.api_threads: set[int] = set()  # threads that have called the device
        self.running: Op | None = None  # the op being run (a host function may call in)

    # -- queues -------------------------------------------------------------------------
    def add_stream(self, stream: Stream) -> None:
        self.streams.append(stream)

    def enqueue(self, stream: Stream, op: Op) -> None:
        """Append ``op`` with the legacy null-stream dependencies: null-stream work waits
        for everything already on blocking streams, and blocking-stream work waits for
        everything already on the null stream."""
        if stream.is_null:
            op.deps += [(s, s.enqueued) for s in self.streams if s.blocking and not s.idle]
        elif stream.blocking and not self.null.idle:
            op.deps.append((self.null, self.null.enqueued))
        stream.enqueued += 1
        op.seq = stream.enqueued
        stream.queue.append(op)

    def barrier_positions(self, stream: Stream) -> list[tuple[Stream, int]]:
        """What a host wait on ``stream`` waits for; for the legacy null stream that
        includes every blocking stream (it synchronises with them)."""
        marks = [(stream, stream.enqueued)]
        if stream.is_null:
            marks += [(s, s.enqueued) for s in self.streams if s.blocking]
        return marks

    def all_positions(self) -> list[tuple[Stream, int]]:
        return [(s, s.enqueued) for s in self.streams]

    # -- running ------------------------------------------------------------------------
    def step(self) -> bool:
        """One round-robin pass: run each stream's head op if it can run. True if any did."""
        progressed = False
        for stream in list(self.streams):
            if not stream.queue:
                continue
            op = stream.queue[0]
            if not all(s.reached(seq) for s, seq in op.deps):
                continue
            self.running = op
            try:
                done = op.run()
            except DeviceFault as fault:
                self.async_errors.append((fault.code, f"{op.label}: {fault}"))
                done = True
            finally:
                self.running = None
            if done is False:
                continue
            stream.queue.popleft()
            stream.completed = op.seq
            self.clock_us += op.cost_us
            progressed = True
        self.streams = [s for s in self.streams if not (s.destroyed and not s.queue)]
        return progressed

    def poll(self, positions: list[tuple[Stream, int]]) -> bool:
        """Run whatever can run until ``positions`` are reached or nothing moves; never waits."""
        if self.running is not None:  # called from a host function: never re-enter
            return all(s.reached(q) for s, q in positions)
        while not all(s.reached(q) for s, q in positions):
            if not self.step():
                return False
        return True

    def wait(self, positions: list[tuple[Stream, int]]) -> tuple[str, str] | None:
        """Run work until every (stream, seq) in ``positions`` has completed. Returns None,
        or (hipError name, message) for a deadlock or a pending asynchronous fault."""
        if self.running is not None:
            # A host function that synchronises would wait for itself (HIP forbids it).
            return ("hipErrorNotSupported",
                    f"{self.running.label} called a synchronising HIP function")
        deadline: float | None = None
        while not all(s.reached(q) for s, q in positions):
            if self.step():
                deadline = None
                continue
            # Threads that use the device, or any non-daemon thread (it may write pinned
            # memory), can release a stall; daemon helpers (an archive flusher) cannot.
            me = threading.get_ident()
            threads = threading.enumerate()
            self.api_threads &= {t.ident for t in threads}
            could = self.api_threads | {t.ident for t in threads if not t.daemon}
            other_threads = len(could - {me}) - self.waiting_threads
            now = time.monotonic()
            if deadline is None:
                deadline = now + STALL_TIMEOUT_S
            if other_threads <= 0 or now >= deadline:
                return "hipErrorLaunchTimeOut", self.describe_stall()
            # Another thread may still release the stall (write a flag, enqueue work):
            # let it in by waiting with the device lock released.
            self.waiting_threads += 1
            try:
                self.cond.wait(0.005)
            finally:
                self.waiting_threads -= 1
        return self.take_async_error()

    def take_async_error(self) -> tuple[str, str] | None:
        return self.async_errors.pop(0) if self.async_errors else None

    def describe_stall(self) -> str:
        heads = []
        for s in self.streams:
            if s.queue:
                op = s.queue[0]
                unmet = [f"stream 0x{d.handle:x}@{q}" for d, q in op.deps if not d.reached(q)]
                why = f"waits for {', '.join(unmet)}" if unmet else "is blocked"
                heads.append(f"stream 0x{s.handle:x}: {op.label} {why}")
        return ("deadlock: the host waits for device work that can never complete; "
                + "; ".join(heads))


_WAIT_CONDITIONS = {  # hipStreamWaitValue flags -> condition on (word & mask, value, mask)
    0: lambda w, v, m: w >= v,                          # Gte
    1: lambda w, v, m: w == v,                          # Eq
    2: lambda w, v, m: (w & v) != 0,                    # And
    3: lambda w, v, m: (~(w | (v & m)) & m) != 0,       # Nor
}


def wait_value_op(resolve: Callable[[int, int], Any], addr: int, value: int, flags: int,
                  mask: int) -> Callable[[], Op]:
    """hipStreamWaitValue32's node factory: its op completes once the word at ``addr``
    (read through ``resolve``) meets the condition ``flags`` names."""
    cond = _WAIT_CONDITIONS.get(int(flags))
    if cond is None:
        raise HipError("hipErrorInvalidValue", f"hipStreamWaitValue32: unknown flags {flags}")
    value, mask = int(value) & 0xFFFFFFFF, int(mask) & 0xFFFFFFFF

    def make() -> Op:
        def run() -> bool:
            word = int(resolve(addr, 4).view("<u4")[0]) & mask
            return bool(cond(word, value & mask, mask))
        return Op(f"hipStreamWaitValue32(0x{addr:x}, {value}, flags={int(flags)})", run, 0.5)
    return make


def write_value_op(resolve: Callable[[int, int], Any], addr: int, value: int) -> Callable[[], Op]:
    """hipStreamWriteValue32's node factory: its op stores the word at ``addr``."""
    value = int(value) & 0xFFFFFFFF

    def make() -> Op:
        def run() -> None:
            resolve(addr, 4).view("<u4")[0] = value
        return Op(f"hipStreamWriteValue32(0x{addr:x}, {value})", run, 0.5)
    return make
