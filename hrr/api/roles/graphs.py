"""Roles of graph nodes: handle arrays and the parameter structures of kernel, memset,
host and instantiate nodes."""
from __future__ import annotations

from typing import Any, Sequence

from hrr.api.catalogue import Api
from hrr.api.roles.base import (
    _U64,
    Action,
    After,
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
from hrr.api.roles.structs import StructRole, handle_values, lookup, pack_words, unpack_words
from hrr.errors import EventRefused


@register
class Handles(Role):
    """An array of handles of ``Param.kind`` (a graph node's dependencies): recorded as
    packed 64-bit values, each looked up at replay."""

    name = "handles"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: pack_words(handle_values(a[i]))

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name
        return lambda v: unpack_words(v, what)

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        p = row.params[i]
        kind = p.kind or ""
        return lambda call: [lookup(rep, kind, value, p.name) for value in call.raw[i]]


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
class KernelNode(StructRole):
    """A hipKernelNodeParams: its kernel, shape and arguments, recorded as a launch's are
    (``[function, shared, grid, block, kernel name, kernarg bytes, pointer words]``, the
    words packed ``offset, base, delta``); replay rewrites the pointer words to its own
    allocations and hands the backend the arguments as a raw ``extra``. Stages that watch
    launches see it as a ``LaunchInfo`` on no stream, named by the row (graph_capture
    adds its pinned pointers to the graph's)."""

    name = "kernel_node"
    size, called = 7, "a kernel node"

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
            wire[5], wire[6] = kernargs, pack_words([x for w in words for x in w])
            if watched():
                run_launch(LaunchInfo(name, wire[0], kernel, layout, kernargs, tuple(pointers), 0, None,
                                      (grid[0], grid[1], grid[2]), (block[0], block[1], block[2])))
            return wire
        return encode

    def check_items(self, v: Sequence, what: str) -> Any:
        func, shared, grid, block, kernel, kernargs, words = v
        if kernargs is not None and type(kernargs) is not bytes:
            raise bad(f"{what}: the kernel node's arguments are not bytes")
        flat = unpack_words(words, f"{what} pointer words", most=3 * (len(kernargs or b"") // 8))
        return (check_address(func, f"{what} function"), check_size(shared, f"{what} sharedMemBytes"),
                check_triple(grid), check_triple(block), kernel if isinstance(kernel, str) else "",
                kernargs, [flat[k:k + 3] for k in range(0, len(flat), 3)])

    def build(self, v: Any, rep: ReplayServices, what: str) -> Any:
        func, shared, grid, block, kernel, kernargs, words = v
        if kernargs is None:
            raise bad(f"{what}: the kernel node's arguments were not recorded")
        function = lookup(rep, "function", func, what)
        extra, keep = kernarg_array(translated_kernargs(kernargs, words, rep, "kernel node argument"))
        rep.hold((extra, keep))
        return ReplayKernelNodeParams(func=function, gridDim=rep.dim3(*grid), blockDim=rep.dim3(*block),
                                      sharedMemBytes=shared, kernelParams=None, extra=extra)


@register
class MemsetNode(StructRole):
    """A hipMemsetParams: ``[dst, elementSize, width, height, pitch, value]``; replay
    translates ``dst`` and checks that the rows it fills lie inside one allocation."""

    name = "memset_node"
    size, called = 6, "a memset node"

    def read(self, p: Any) -> list:
        return [address_or_zero(getattr(p, "dst", None)), *(
            int(scalar(getattr(p, f, 0)) or 0) for f in ("elementSize", "width", "height", "pitch", "value"))]

    def check_items(self, v: Sequence, what: str) -> Any:
        dst = check_address(v[0], f"{what} dst")
        sizes = [check_size(x, f"{what} field") for x in v[1:5]]
        return (dst, *sizes, check_scalar(v[5], f"{what} value"))

    def build(self, v: Any, rep: ReplayServices, what: str) -> Any:
        dst, esize, width, height, pitch, value = v
        n = memset_extent(esize, width, height, pitch)
        replay = _translate(rep, dst, what)
        if replay is None:
            _null(n, what)
        elif n:
            check_fits(rep.find(dst), dst, n)
        return ReplayMemsetParams(dst=replay or 0, elementSize=esize, width=width, height=height,
                                  pitch=pitch, value=value)


def memset_extent(element_size: int, width: int, height: int, pitch: int) -> int:
    """The bytes a 2D memset reaches from its ``dst``: ``height`` rows ``pitch`` apart."""
    if not width or not height:
        return 0
    return pitch * (height - 1) + width * element_size


@register
class HostNode(StructRole):
    """A hipHostNodeParams: application host code (its function and userData addresses are
    recorded, never handed to a backend) that makes the call unreplayable."""

    name = "host_node"
    size, called = 2, "a host node"

    def read(self, p: Any) -> list:
        return [address_or_zero(getattr(p, "fn", None)), address_or_zero(getattr(p, "userData", None))]

    def after_call(self, row: Api, i: int, cap: CaptureServices) -> After | None:
        note = cap.add_unreplayable
        return lambda args, result, seq: note(row.name, row.reason)

    def check_items(self, v: Sequence, what: str) -> Any:
        return [check_address(x, what) for x in v]

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        return lambda call: None


@register
class InstantiateParams(StructRole):
    """A hipGraphInstantiateParams: ``[flags, uploadStream]`` (the ``*_out`` fields are the
    call's answers); replay hands the backend its own stream."""

    name = "instantiate_params"
    size, called = 2, "an instantiate-parameters"

    def read(self, p: Any) -> list:
        return [int(scalar(getattr(p, "flags", 0)) or 0), handle_or_zero(getattr(p, "uploadStream", None))]

    def check_items(self, v: Sequence, what: str) -> Any:
        return [check_size(v[0], f"{what} flags"), check_address(v[1], f"{what} uploadStream")]

    def build(self, v: Any, rep: ReplayServices, what: str) -> Any:
        return ReplayInstantiateParams(flags=v[0], uploadStream=lookup(rep, "stream", v[1], what))
