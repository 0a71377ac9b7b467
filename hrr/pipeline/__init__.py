"""The plugin API: everything an hrr plugin may import, typed, in one place.

A plugin is an object with methods marked ``@hookimpl`` (the hooks are documented in
:mod:`hrr.pipeline.hookspecs`), installed under the ``hrr.plugins`` entry-point group.
It imports from ``hrr.pipeline`` only: the internals behind these names (the capture
session, the replay engine, the backends) change without notice; these do not.

What a plugin sees:
  :class:`CaptureContext`  ``ctx`` in the capture hooks; ``ctx.watch`` subscribes to calls
  :class:`ReplayContext`   ``ctx`` in the replay hooks; ``ctx.watch`` names the calls a plugin's per-event hooks want
  :class:`CallInfo`        a watched call: its catalogue row and positional arguments
  :class:`LaunchInfo`      a kernel launch, normalised (``hrr_capture_launch``)
  :class:`Event`           a recorded call, as replay reads it
  :class:`EventRefused`    raised by a replay stage to end an event before it runs

Which calls do what is asked of the HIP API catalogue, never spelled as API names:
``allocating("pinned")``, ``releasing()``, ``launching()``, ``with_effect("launch_graph")``,
``creating("graph_exec")``, ``destroying("device")``... return the names of the matching
rows, to pass to ``ctx.watch`` or to test ``event.api`` against; ``api_row(name)`` is one
row (its ``params``, ``outs``, ``stream`` and ``param_index``), and ``param_at(row, role,
kind)`` / ``param_positions(row, role, kind)`` / ``result_at(row, role, kind)`` find an
argument or an output by meaning. A role is named by its class, never spelled as a string:
``param_at(row, Roles.Handle, "graph")``, ``result_at(row, Roles.AllocOut)``. These queries
still accept a role's name as a string, for plugins written before ``Roles``.
"""
from __future__ import annotations

from hrr.api.catalogue import (
    Api,
    Out,
    Param,
    adding_kernel_nodes,
    aliasing,
    allocating,
    creating,
    destroying,
    launching,
    registering,
    releasing,
    waiting,
    with_effect,
)
from hrr.api.catalogue import get as api_row
from hrr.hiptypes import address_or_zero, handle_or_zero
from hrr.allocations import DEVICE, PINNED, REGISTERED, Allocation, AllocationTable
from hrr.errors import BlobError
from hrr.events.model import Event
from hrr.inventory import CONTENT_KINDS
from hrr.pipeline.capture import AfterWatcher, BeforeWatcher, CaptureContext
from hrr.pipeline.context import (
    CallInfo,
    EventRefused,
    LaunchInfo,
    PointerWord,
    backend_stream_capturing,
)
from hrr.pipeline.hookspecs import hookimpl
from hrr.pipeline.replay import ReplayContext
from hrr.pipeline.roles import Roles, param_at, param_positions, result_at


def hrr_version() -> str:
    """hrr's version (the package metadata's): what a built-in plugin reports as its own."""
    import hrr
    return hrr.__version__


__all__ = [
    # hooks and the contexts they receive
    "hookimpl", "CaptureContext", "ReplayContext", "BeforeWatcher", "AfterWatcher",
    # what the hooks are given
    "CallInfo", "LaunchInfo", "PointerWord", "Event", "EventRefused",
    # the catalogue, asked by meaning
    "Api", "Param", "Out", "api_row", "allocating", "releasing", "registering", "aliasing",
    "launching", "creating", "destroying", "waiting", "with_effect", "adding_kernel_nodes",
    # where a row holds a value of a role, the roles named by class
    "Roles", "param_at", "param_positions", "result_at",
    # allocations: kinds and a range table
    "DEVICE", "PINNED", "REGISTERED", "Allocation", "AllocationTable",
    # argument values, as the application passed them, to ints
    "address_or_zero", "handle_or_zero",
    # the raw backend's capture state of a stream (a query that queues no work)
    "backend_stream_capturing",
    # data kinds and errors a context's services name
    "CONTENT_KINDS", "BlobError",
    # the version built-in plugins carry
    "hrr_version",
]
