"""Roles of graph nodes: handle arrays and the parameter structures of kernel, memset,
host and instantiate nodes."""
from __future__ import annotations

import struct
from typing import Any

from hrr.api.catalogue import Api
from hrr.api.roles.base import (
    _U64,
    Action,
    After,
    Call,
    CaptureServices,
    Check,
    Encoder,
    ReplayServices,
    Role,
    _null,
    _translate,
    bad,
    check_address,
    check_fits,
    check_record,
    check_scalar,
    check_size,
    check_triple,
    dim3_list,
    register,
    scalar,
)
from hrr.hiptypes import (
    PointerConversionError,
    ReplayInstantiateParams,
    ReplayKernelNodeParams,
    ReplayMemsetParams,
    address_or_zero,
    handle_or_zero,
)
from hrr.hiptypes.kernargs import LaunchArgsError, LaunchInfo, kernarg_array, pack_kernel_args
from hrr.errors import EventRefused

MAX_LISTED_HANDLES = 1 << 16   # handles one array argument or output may name


def handle_values(v: Any) -> list[int]:
    """Capture: a handle-array argument (None, one handle, or a sequence) as handle values."""
    if v is None:
        return []
    if isinstance(v, (list, tuple)):
        return [handle_or_zero(x) for x in v]
    return [handle_or_zero(v)]


def pack_u64(values: Any) -> bytes:
    """Integers as little-endian 64-bit words (a wire value of any length: lists are capped)."""
    return struct.pack(f"<{len(values)}Q", *(int(x) % _U64 for x in values))


def unpack_u64(v: Any, what: str, most: int = MAX_LISTED_HANDLES) -> tuple[int, ...]:
    """Replay: the 64-bit words of a recorded ``pack_u64`` value (at most ``most``)."""
    if type(v) is not bytes or len(v) % 8 or len(v) // 8 > most:
        raise bad(f"{what} is not an array of at most {most} 64-bit words")
    return struct.unpack(f"<{len(v) // 8}Q", v)


@register
class Handles(Role):
    """An array of handles of ``Param.kind`` (a graph node's dependencies): recorded as
    packed 64-bit values, each looked up at replay."""

    name = "handles"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: pack_u64(handle_values(a[i]))

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name
        return lambda v: unpack_u64(v, what)

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        p = row.params[i]
        kind = p.kind or ""

        def act(call: Call) -> Any:
            out = []
            for value in call.raw[i]:
                try:
                    out.append(rep.lookup_handle(kind, value))
                except KeyError:
                    raise EventRefused(f"{p.name}: unknown {kind} handle 0x{value:x}",
                                       category="untranslated") from None
            return out
        return act


def node_launch_args(params: Any) -> tuple[Any, Any]:
    """A hipKernelNodeParams' (kernelParams, extra), a NULL pointer field as None."""
    kp, extra = getattr(params, "kernelParams", None), getattr(params, "extra", None)
    if kp is not None and not isinstance(kp, (list, tuple)) and not address_or_zero(kp):
        kp = None
    if extra is not None and not isinstance(extra, (list, tuple)) and not address_or_zero(extra):
        extra = None
    return kp, extra


def translated_kernargs(kernargs: bytes, words: Any, rep: ReplayServices, what: str) -> bytes:
    """``kernargs`` with each recorded pointer word ``(offset, base, delta)`` replaced by the
    address replay made for ``base + delta``; a word outside the buffer or an address in no
    allocation replay made is refused (a launch's and a kernel node's arguments alike)."""
    buf = bytearray(kernargs)
    for off, base, delta in words:
        if off < 0 or off + 8 > len(buf) or off % 8:
            raise EventRefused(f"pointer word at offset {off} lies outside the kernarg buffer", category="bounds")
        target = base + delta
        replay = rep.translate(target) if delta >= 0 and 0 <= target < _U64 else None
        if replay is None:
            raise EventRefused(f"{what} at offset {off} points to 0x{target:x}, inside no allocation replay made",
                               category="untranslated")
        buf[off:off + 8] = replay.to_bytes(8, "little")
    return bytes(buf)


@register
class KernelNode(Role):
    """A hipKernelNodeParams: its kernel, shape and arguments, recorded as a launch's are
    (``[function, shared, grid, block, kernel name, kernarg bytes, pointer words]``, the
    words packed ``offset, base, delta``); replay rewrites the pointer words to its own
    allocations and hands the backend the arguments as a raw ``extra``. Stages that watch
    launches see it as a ``LaunchInfo`` on no stream, named by the row (graph_capture
    adds its pinned pointers to the graph's)."""

    name = "kernel_node"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        function_info, scan, run_launch, watched = cap.function_info, cap.scan_pointers, cap.run_launch, \
            cap.launch_watched
        name = row.name

        def encode(a: tuple) -> Any:
            p = a[i]
            if p is None:
                return None
            func = getattr(p, "func", None)
            kernel, layout, offsets = function_info(func)
            grid, block = dim3_list(getattr(p, "gridDim", None)), dim3_list(getattr(p, "blockDim", None))
            wire: list = [handle_or_zero(func), scalar(getattr(p, "sharedMemBytes", 0)) or 0, grid, block,
                          kernel, None, b""]
            if layout is None:
                return wire
            try:
                kernargs = pack_kernel_args(layout, *node_launch_args(p))
            except (LaunchArgsError, PointerConversionError, ValueError, OSError):
                return wire
            pointers, words = scan(offsets, kernargs) if offsets else ((), [])
            wire[5], wire[6] = kernargs, pack_u64([x for w in words for x in w])
            if watched():
                run_launch(LaunchInfo(name, wire[0], kernel, layout, kernargs, tuple(pointers), 0, None,
                                      (grid[0], grid[1], grid[2]), (block[0], block[1], block[2])))
            return wire
        return encode

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name

        def check(v: Any) -> Any:
            if v is None:
                return None
            func, shared, grid, block, kernel, kernargs, words = check_record(v, 7, f"{what}: a kernel node")
            if kernargs is not None and type(kernargs) is not bytes:
                raise bad(f"{what}: the kernel node's arguments are not bytes")
            flat = unpack_u64(words, f"{what} pointer words", 3 * (len(kernargs or b"") // 8))
            return (check_address(func, f"{what} function"), check_size(shared, f"{what} sharedMemBytes"),
                    check_triple(grid), check_triple(block), kernel if isinstance(kernel, str) else "",
                    kernargs, [flat[k:k + 3] for k in range(0, len(flat), 3)])
        return check

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        what = row.params[i].name

        def act(call: Call) -> Any:
            v = call.raw[i]
            if v is None:
                return None
            func, shared, grid, block, kernel, kernargs, words = v
            if kernargs is None:
                raise bad(f"{what}: the kernel node's arguments were not recorded")
            try:
                function = rep.lookup_handle("function", func)
            except KeyError:
                raise EventRefused(f"{what}: unknown function handle 0x{func:x}", category="untranslated") from None
            extra, keep = kernarg_array(translated_kernargs(kernargs, words, rep, "kernel node argument"))
            rep.hold((extra, keep))
            return ReplayKernelNodeParams(func=function, gridDim=rep.dim3(*grid), blockDim=rep.dim3(*block),
                                          sharedMemBytes=shared, kernelParams=None, extra=extra)
        return act


@register
class MemsetNode(Role):
    """A hipMemsetParams: ``[dst, elementSize, width, height, pitch, value]``; replay
    translates ``dst`` and checks that the rows it fills lie inside one allocation."""

    name = "memset_node"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        def encode(a: tuple) -> Any:
            p = a[i]
            if p is None:
                return None
            return [address_or_zero(getattr(p, "dst", None)), *(
                int(scalar(getattr(p, f, 0)) or 0) for f in ("elementSize", "width", "height", "pitch", "value"))]
        return encode

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name

        def check(v: Any) -> Any:
            if v is None:
                return None
            check_record(v, 6, f"{what}: a memset node")
            dst = check_address(v[0], f"{what} dst")
            sizes = [check_size(x, f"{what} field") for x in v[1:5]]
            return (dst, *sizes, check_scalar(v[5], f"{what} value"))
        return check

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        what = row.params[i].name

        def act(call: Call) -> Any:
            v = call.raw[i]
            if v is None:
                return None
            dst, esize, width, height, pitch, value = v
            n = memset_extent(esize, width, height, pitch)
            replay = _translate(rep, dst, what)
            if replay is None:
                _null(n, what)
            elif n:
                check_fits(rep.find(dst), dst, n)
            return ReplayMemsetParams(dst=replay or 0, elementSize=esize, width=width, height=height,
                                      pitch=pitch, value=value)
        return act


def memset_extent(element_size: int, width: int, height: int, pitch: int) -> int:
    """The bytes a 2D memset reaches from its ``dst``: ``height`` rows ``pitch`` apart."""
    if not width or not height:
        return 0
    return pitch * (height - 1) + width * element_size


@register
class HostNode(Role):
    """A hipHostNodeParams: application host code (its function and userData addresses are
    recorded, never handed to a backend) that makes the call unreplayable."""

    name = "host_node"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: None if a[i] is None else [address_or_zero(getattr(a[i], "fn", None)),
                                                    address_or_zero(getattr(a[i], "userData", None))]

    def after_call(self, row: Api, i: int, cap: CaptureServices) -> After | None:
        note = cap.add_unreplayable
        return lambda args, result, seq: note(row.name, row.reason)

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name

        def check(v: Any) -> Any:
            if v is None:
                return None
            return [check_address(x, what) for x in check_record(v, 2, f"{what}: a host node")]
        return check

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        return lambda call: None


@register
class InstantiateParams(Role):
    """A hipGraphInstantiateParams: ``[flags, uploadStream]`` (the ``*_out`` fields are the
    call's answers); replay hands the backend its own stream."""

    name = "instantiate_params"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: None if a[i] is None else [int(scalar(getattr(a[i], "flags", 0)) or 0),
                                                    handle_or_zero(getattr(a[i], "uploadStream", None))]

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name

        def check(v: Any) -> Any:
            if v is None:
                return None
            check_record(v, 2, f"{what}: an instantiate-parameters")
            return [check_size(v[0], f"{what} flags"), check_address(v[1], f"{what} uploadStream")]
        return check

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        what = row.params[i].name

        def act(call: Call) -> Any:
            v = call.raw[i]
            if v is None:
                return None
            try:
                stream = rep.lookup_handle("stream", v[1])
            except KeyError:
                raise EventRefused(f"{what}: unknown stream handle 0x{v[1]:x}", category="untranslated") from None
            return ReplayInstantiateParams(flags=v[0], uploadStream=stream)
        return act
