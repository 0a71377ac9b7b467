"""What capture and replay stages see and share: launch and call descriptions."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

# Declared below the plugin API (roles use them too); their names here are the plugins'.
from hrr.hiptypes.kernargs import LaunchInfo as LaunchInfo, PointerWord as PointerWord
from hrr.errors import EventRefused as EventRefused

if TYPE_CHECKING:
    from hrr.api.catalogue import Api


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
