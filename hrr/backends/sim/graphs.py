"""Stream capture and graphs.

While a stream captures, the ops enqueued on it are not run: each is kept as a *node*,
a factory that makes a fresh ``Op``. Kernel arguments are bound by value when the node
is made (at enqueue), while the memory a node reads is read when the op runs, i.e. at
each graph launch. A graph is the captured node sequence (linear: the order of the
capturing stream); launching an executable graph enqueues a fresh op per node on the
launch stream, so it can be launched any number of times.

Capture modes decide which *unsafe* calls (ones that would synchronise with or allocate
behind the capture's back) are refused with 900 and invalidate the capture:
Global - from any thread whose own capture-interaction mode is not relaxed;
ThreadLocal - only from the thread that began the capture; Relaxed - never.
"""
from __future__ import annotations

import threading
from typing import Callable

import attrs

from hrr.backends.sim.streams import Op, Stream

GLOBAL, THREAD_LOCAL, RELAXED = 0, 1, 2   # hipStreamCaptureMode values
STATUS_NONE, STATUS_ACTIVE, STATUS_INVALIDATED = 0, 1, 2

NodeFactory = Callable[[], Op]


@attrs.define(eq=False)
class CaptureSession:
    id: int
    stream: Stream
    mode: int
    thread: int = attrs.Factory(threading.get_ident)
    nodes: list = attrs.Factory(list)
    invalidated_by: str | None = None

    @property
    def status(self) -> int:
        return STATUS_INVALIDATED if self.invalidated_by else STATUS_ACTIVE

    def invalidate(self, reason: str) -> None:
        if self.invalidated_by is None:
            self.invalidated_by = reason


@attrs.define(eq=False)
class Graph:
    handle: int
    nodes: tuple


@attrs.define(eq=False)
class GraphExec:
    handle: int
    nodes: tuple


def sessions_prohibiting(sessions: list[CaptureSession], thread_mode: int) -> list[CaptureSession]:
    """The active captures that make an unsafe call from this thread illegal.

    ``thread_mode`` is the calling thread's capture-interaction mode
    (hipThreadExchangeStreamCaptureMode), Global by default."""
    if thread_mode == RELAXED:
        return []
    me = threading.get_ident()
    hit = []
    for s in sessions:
        if s.mode == RELAXED:
            continue
        if s.thread == me or (s.mode == GLOBAL and thread_mode == GLOBAL):
            hit.append(s)
    return hit
