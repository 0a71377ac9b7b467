"""The native launch recorder: a launch row's capture wrapper in C for the common launch.

A row gets one (``native_launch_wrapper``) when the native record path is on, the row's
launch hands its kernarg bytes to the backend through ``extra`` (hipModuleLaunchKernel's
shape: three grid and three block parameters) and every parameter's encoder is one the C
code writes the same (``FAST_KINDS``). The row's Python wrapper stays the answer for every
call the C code does not take (``hrr/archive/native/launch.c`` lists when it takes one), and
both record the same bytes (``tests/capture/test_native_launch.py`` compares them). Where the
backend offers ``launch_kernargs`` for the row's function, the C code launches the bytes it read
through it (the same call replay's launch runner makes), not through the hip surface.
"""
from __future__ import annotations

from typing import Any, Callable

from hrr.api.catalogue import CATALOGUE, Api
from hrr.api.roles import PARAM_ROLES, Role
from hrr.api.roles.base import DEVICE
from hrr.api.roles.launch import launch_positions
from hrr.archive import native
from hrr.hiptypes import HANDLE_TYPES
from hrr.hiptypes.kernargs import packed_extra

#: The inline encoders launch.c writes natively, by the kind number it knows them by:
#: 0 an int passed through (any other type: the Python wrapper), 1 a handle (hip-python's
#: handle types by ``_value``, an int, None as 0), 2 recorded as null.
FAST_KINDS = {PARAM_ROLES["value"].inline: 0, PARAM_ROLES["ptr"].inline: 0,
              PARAM_ROLES["handle"].inline: 1, PARAM_ROLES["launch"].inline: 2}
_HANDLES = frozenset(HANDLE_TYPES.values())
#: Switched off by tests that compare the two wrappers' archives.
ENABLED = True


def _kinds(roles: list[Role]) -> bytes | None:
    kinds = [FAST_KINDS.get(role.inline) if role.inline is not None else None for role in roles]
    return None if any(k is None for k in kinds) else bytes(kinds)   # type: ignore[arg-type]


def native_launch_wrapper(row: Api, roles: list[Role], session: Any, wrapper: Callable, real: Callable,
                          num: int, simple: bool) -> Callable | None:
    """A ``LaunchRecorder`` for ``row`` over its Python ``wrapper``, or None where the row
    or this session does not take one. ``simple``: the wrapper has no output, enricher,
    after-call effect or deferred encoder (what the C code leaves out)."""
    if not ENABLED or not simple or row.launch is None or row.outs \
            or getattr(session.writer, "RECORDER", None) != native.NATIVE:
        return None
    module, _ = native.extension()
    kinds = _kinds(roles)
    if module is None or kinds is None:
        return None
    func_at, grid_at, block_at, shared_at, stream_at, params_at, extra_at = launch_positions(row)
    if func_at is None or extra_at is None or len(grid_at) != 3 or len(block_at) != 3 or kinds[func_at] != 1:
        return None
    # A launch replayed through a call without ``extra`` also records each parameter's offset.
    target = CATALOGUE.get(row.replays_as or row.name, row).launch
    offsets_too = target is not None and target.extra is None

    def make_plan(info: tuple) -> Any:
        kernel, layout, offsets = info
        if layout is None or not isinstance(kernel, str):
            return None
        params = layout.params
        if not all(a.offset + a.size <= b.offset for a, b in zip(params, params[1:], strict=False)):
            return None   # overlapping or out of order: the Python reader's loop decides
        return module.LaunchPlan(kernel, layout.size, [(start, size) for start, _, size in layout.reads],
                                 tuple(offsets), offsets, [p.offset for p in params] if offsets_too else None)

    def miss(offsets: Any, kernargs: bytes) -> tuple[list, bool]:
        found, wire = session.scan_pointers(offsets, kernargs)
        return wire, all(p.kind == DEVICE for p in found)

    # The backend's launch of packed bytes where it stands for ``real`` (cuda: launch_kernargs,
    # which replay's runner uses too): the bytes capture read go to the driver with no handoff.
    direct = getattr(session.backend, "launch_kernargs", None)
    if direct is None or getattr(direct, "stands_for", None) is not real or shared_at is None:
        direct = None
    return module.LaunchRecorder(
        fallback=wrapper, real=real, session=session, watchers=session.ctx.row_watchers(row.name), ctx=session.ctx,
        handles=_HANDLES, functions=session.functions, make_plan=make_plan, miss=miss, packed=packed_extra,
        num=num, kinds=kinds, func_at=func_at, params_at=params_at, extra_at=extra_at, grid=grid_at, block=block_at,
        direct=direct, shared_at=shared_at, stream_at=stream_at)


__all__ = ["ENABLED", "FAST_KINDS", "native_launch_wrapper"]
