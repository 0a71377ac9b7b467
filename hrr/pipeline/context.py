"""What capture and replay stages see and share: launch descriptions and the contexts."""
from __future__ import annotations

from typing import Any, Callable

import attrs

from hrr.backends.kernargs import KernelLayout


class EventRefused(Exception):
    """Raised by a replay stage to end an event before it runs; replay counts and names it."""

    def __init__(self, reason: str, *, category: str = "refused") -> None:
        super().__init__(reason)
        self.reason, self.category = reason, category


@attrs.frozen
class PointerWord:
    """A kernarg word that points into a tracked allocation at capture."""

    offset: int      # byte offset of the 8-byte word in the kernarg buffer
    base: int        # the allocation's base address at capture
    delta: int       # where inside the allocation it points
    kind: str        # the allocation kind: device, pinned or registered

    def to_wire(self) -> list:
        return [self.offset, self.base, self.delta]


@attrs.frozen
class LaunchInfo:
    """A kernel launch, normalised whatever form the application used."""

    api: str
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
    """A non-launch call as a watcher sees it: the catalogue row and positional args."""

    api: Any                 # hrr.api.catalogue.Api
    args: tuple


Watcher = Callable[..., Any]


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
