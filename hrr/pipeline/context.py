"""What capture and replay stages see and share: launch and call descriptions."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import attrs

from hrr.backends.kernargs import KernelLayout

if TYPE_CHECKING:
    from hrr.api.catalogue import Api


class EventRefused(Exception):
    """Raised by a replay stage to end an event before it runs; replay counts it under
    ``category`` and names it with ``reason`` (one line) in the summary."""

    def __init__(self, reason: str, *, category: str = "refused") -> None:
        super().__init__(reason)
        self.reason, self.category = reason, category


class PointerWord(NamedTuple):
    """A kernarg word that points into a tracked allocation at capture. Immutable (a named
    tuple: capture makes one per pointer word of every launch, so it must be cheap)."""

    offset: int      # byte offset of the 8-byte word in the kernarg buffer
    base: int        # the allocation's base address at capture
    delta: int       # where inside the allocation it points
    kind: str        # the allocation kind: device, pinned or registered

    def to_wire(self) -> list:
        """The word as the launch event stores it: ``[offset, base, delta]``."""
        return [self.offset, self.base, self.delta]


class LaunchInfo(NamedTuple):
    """A kernel launch, normalised whatever form the application used (a launch call's
    kernel parameters or its ``extra`` buffer). Immutable (a named tuple, cheap to make:
    capture builds one per launch when a stage implements ``hrr_capture_launch``)."""

    api: str                 # the launch call's catalogue name
    function: int            # the function handle's value at capture
    kernel: str              # the kernel's name ("" when unknown)
    layout: KernelLayout
    kernargs: bytes          # the kernarg buffer as the kernel receives it
    pointers: tuple[PointerWord, ...]
    stream: int              # the launch stream's handle value (0: the null stream)
    stream_handle: Any       # the application's stream object, to query the backend
    grid: tuple[int, int, int]
    block: tuple[int, int, int]


@attrs.define
class CallInfo:
    """A call as a watcher sees it: its catalogue row and its arguments, positional in
    the row's parameter order (an omitted optional argument holds its default). Find an
    argument by name with ``call.args[call.api.param_index(name)]``, or better, compute
    the index once per row when subscribing."""

    api: Api
    args: tuple


def backend_stream_capturing(hip: Any, stream: Any) -> bool:
    """Whether the raw backend says ``stream`` is capturing a graph (a query: it queues
    no work and never invalidates a capture). The null stream (None) never captures."""
    if stream is None:
        return False
    try:
        err, status = hip.hipStreamIsCapturing(stream)[:2]
    except Exception:  # noqa: BLE001 - a handle the backend rejects is not capturing
        return False
    return int(err) == 0 and int(status) != 0


def param_at(row: Api, role: str, kind: str | None = None) -> int:
    """Where the row's first parameter of ``role`` (and handle or enum ``kind``, when
    given) sits in ``call.args`` and ``event.args``; KeyError names the row when none.
    Look it up once per row, when subscribing, not per call."""
    for i, p in enumerate(row.params):
        if p.role == role and kind in (None, p.kind):
            return i
    raise KeyError(f"{row.name} has no {role} parameter" + (f" of kind {kind}" if kind else ""))


def result_at(row: Api, role: str, kind: str | None = None) -> int:
    """Where the row's first output of ``role`` (and ``kind``, when given) sits in the
    call's return tuple (the error code is at 0); KeyError names the row when none."""
    for i, o in enumerate(row.outs):
        if o.role == role and kind in (None, o.kind):
            return 1 + i
    raise KeyError(f"{row.name} has no {role} output" + (f" of kind {kind}" if kind else ""))
