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

One module per family of roles: ``base`` (the interfaces, ``Call``, the shared checks,
the base classes and the tables), ``scalars``, ``addresses`` (pointers, handles, copy
endpoints, host ranges), ``strided``, ``code`` (code objects and hiprtc), ``graphs``,
``pools``, ``mathlibs`` (the math libraries' arrays and scalars), ``outputs`` and ``launch``;
``structs`` holds what the roles of structures and
of word arrays share. A role class is registered with ``@register``
(``base``): importing its module puts it in ``PARAM_ROLES`` or ``OUT_ROLES``.
"""
from __future__ import annotations

from hrr.api.roles import addresses, code, graphs, mathlibs, outputs, pools, scalars, strided  # noqa: F401 - registers
from hrr.api.roles.base import (
    INLINE_NAMESPACE,
    LAUNCH_ALL,
    LAUNCH_HOST,
    LAUNCH_NONE,
    MAX_SIZE,
    OUT_ROLES,
    PARAM_ROLES,
    Call,
    CaptureServices,
    Conversions,
    OutRole,
    OutView,
    ReplayServices,
    Role,
    View,
    WireType,
    brief,
    byte_counts,
    check_address,
    check_fits,
    check_scalar,
    check_size,
    check_triple,
    gather_rows,
    number,
    register,
    scalar,
    unregister,
)
from hrr.api.roles.graphs import memset_extent, node_launch_args
from hrr.api.roles.launch import LaunchCodec, LaunchPositions, launch_placer, launch_positions

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
           "launch_placer", "launch_positions", "LaunchPositions", "register", "unregister",
           "gather_rows", "memset_extent", "node_launch_args", "LAUNCH_NONE", "LAUNCH_HOST", "LAUNCH_ALL",
           "INLINE_NAMESPACE", "Conversions", "View", "OutView", "WireType"]
