"""Kernel launches: ``LaunchCodec`` (capture's normalisation to kernarg bytes, replay's
rebuilding of the call) and where a launch row's parts sit."""
from __future__ import annotations

import ctypes
from typing import Any, Callable, NamedTuple

from hrr.api.catalogue import CATALOGUE, Api
from hrr.codegen import compile_function
from hrr.api.fields import Rule, refusing_source
from hrr.api.roles.base import (
    DEVICE,
    LAUNCH_ALL,
    LAUNCH_NONE,
    Call,
    CaptureServices,
    ReplayServices,
    _first,
    bad,
    brief,
    dim3_list,
    scalar,
)
from hrr.api.roles.graphs import translated_kernargs
from hrr.hiptypes import HANDLE_TYPES, PointerConversionError, handle_or_zero
from hrr.hiptypes.kernargs import LaunchArgsError, LaunchInfo, kernarg_array, pack_kernel_args
from hrr.errors import EventRefused


#: The most kernel parameters a launch's ``offsets`` (and a kernel's layout) lists.
MAX_LAUNCH_PARAMS = 4096
_DIM = 1 << 32   # a grid or block dimension replay launches: below 2^32 (the schema takes any int)

#: ``extra.launch``'s fields, each declared once: the schema's checks (hrr.events.codec)
#: and the launch runner's (hrr.replay.launches) are generated from these rules
#: (hrr.api.fields). "kernargs"/"ptrs" are absent when "error" says why.
LAUNCH_RULES: dict[str, Rule] = {r.name: r for r in (
    Rule("kernel", "str?", "a string"),
    Rule("grid", "ints", "a list of 3 ints", length=3, low=0, high=_DIM, bounded=False),
    Rule("block", "ints", "a list of 3 ints", length=3, low=0, high=_DIM, bounded=False),
    Rule("kernargs", "bytes", "bytes"),
    Rule("ptrs", "words", "a list of [offset, base, delta] int triples, one per 8 kernarg bytes at most",
         per=("kernargs", 8)),
    Rule("error", "str", "a string"),
    # a launch replayed through a call without ``extra`` (cooperative): each parameter's offset
    Rule("offsets", "ints", "a list of parameter offsets (ints)", most=MAX_LAUNCH_PARAMS),
)}

#: The field names by position, per list length (4: the error form).
LAUNCH_FIELDS: dict[int, tuple[str, ...]] = {
    4: ("kernel", "grid", "block", "error"),
    5: ("kernel", "grid", "block", "kernargs", "ptrs"),
    6: ("kernel", "grid", "block", "kernargs", "ptrs", "offsets"),
}
#: The rules of the list form's items, per list length.
LAUNCH_FORMS: dict[int, tuple[Rule, ...]] = {
    n: tuple(LAUNCH_RULES[name] for name in names) for n, names in LAUNCH_FIELDS.items()}


def launch_map(v: Any) -> Any:
    """``extra.launch`` as the map form: a list of 4, 5 or 6 items becomes the map of its
    fields (unchecked: the schema check types them); a map, or anything else, comes back as it is."""
    if type(v) is list:
        names = LAUNCH_FIELDS.get(len(v))
        if names is not None:
            return dict(zip(names, v, strict=True))
    return v


def launch_list(fields: dict) -> list:
    """The list form of a map-form ``extra.launch`` (its keys as capture writes them)."""
    if "error" in fields:
        return [fields.get("kernel"), fields.get("grid"), fields.get("block"), fields["error"]]
    out = [fields.get("kernel"), fields.get("grid"), fields.get("block"), fields.get("kernargs"), fields.get("ptrs")]
    if "offsets" in fields:
        out.append(fields["offsets"])
    return out


class LaunchCodec:
    """A kernel launch (a row with ``Api.launch``): capture normalises whatever form the
    app used to kernarg bytes with their pointer words (``extra.launch``); replay
    rewrites those words to its own allocations and issues ``Api.replays_as`` (or the
    row itself) with the bytes as a raw ``extra`` array."""

    def encoder(self, row: Api, cap: CaptureServices) -> Callable[[tuple], tuple[list, dict | None, bytes | None]]:
        """``enc(args) -> (extra.launch, plugin records or None, kernarg bytes or None)``:
        extra.launch in its list form (events/launch.py); the bytes, packed once, are what
        the backend is handed too (``kernargs.packed_extra``).
        A ``LaunchInfo`` is made only while a stage implements ``hrr_capture_launch`` and
        would act on this launch (``CaptureContext.launches_into_host_memory_only``)."""
        func_at, grid_at, block_at, _, stream_at, params_at, extra_at = launch_positions(row)
        function_info, scan, run_launch = cap.function_info, cap.scan_pointers, cap.run_launch
        scope_of, name, handles, new = cap.launch_scope, row.name, _HANDLE_TYPES, tuple.__new__
        # A launch replayed through a call without ``extra`` (a cooperative launch) is
        # handed kernelParams into its kernarg bytes: it needs each parameter's offset.
        target = CATALOGUE.get(row.replays_as or row.name, row).launch
        offsets_too = target is not None and target.extra is None
        # A shape is three scalar parameters or one dim3: read either without a call.
        gx, gy, gz = grid_at if len(grid_at) == 3 else (grid_at[0],) * 3
        bx, by, bz = block_at if len(block_at) == 3 else (block_at[0],) * 3
        scalars = len(grid_at) == 3 and len(block_at) == 3
        if not scalars and (len(grid_at) != 1 or len(block_at) != 1):
            raise ValueError(f"{row.name}: a launch shape is three parameters or one dim3")

        def encode(a: tuple) -> tuple[list, dict | None, bytes | None]:
            func: Any = a[func_at] if func_at is not None else None
            kernel, layout, offsets = function_info(func)
            if scalars:   # numpy or ctypes numbers as plain ones (the record holds wire types only)
                grid, block = [a[gx], a[gy], a[gz]], [a[bx], a[by], a[bz]]
                g0, g1, g2 = grid
                b0, b1, b2 = block
                if not (type(g0) is int and type(g1) is int and type(g2) is int   # no generator: a call each
                        and type(b0) is int and type(b1) is int and type(b2) is int):
                    grid, block = [scalar(v) for v in grid], [scalar(v) for v in block]
            else:
                grid, block = dim3_list(a[gx]), dim3_list(a[bx])
            if layout is None:
                return [kernel, grid, block, "the kernel's parameter layout is unknown"], None, None
            try:
                kernargs = pack_kernel_args(layout, a[params_at], a[extra_at] if extra_at is not None else None)
            except (LaunchArgsError, PointerConversionError, ValueError, OSError) as exc:
                return [kernel, grid, block, f"launch arguments could not be read: {exc}"], None, None
            pointers, ptrs = scan(offsets, kernargs) if offsets else ((), [])
            wire = [kernel, grid, block, kernargs, ptrs]
            if offsets_too:
                wire.append([q.offset for q in layout.params])
            scope = scope_of()
            if scope != LAUNCH_ALL:
                if scope == LAUNCH_NONE:
                    return wire, None, kernargs
                for p in pointers:   # only hooks that act on launches into host memory
                    if p.kind != DEVICE:
                        break
                else:
                    return wire, None, kernargs
            stream: Any = a[stream_at] if stream_at is not None else None
            info = new(LaunchInfo, (name, func._value if type(func) in handles else handle_or_zero(func),
                                    kernel, layout, kernargs, tuple(pointers),
                                    stream._value if type(stream) in handles else handle_or_zero(stream),
                                    stream, (int(grid[0]), int(grid[1]), int(grid[2])),
                                    (int(block[0]), int(block[1]), int(block[2]))))
            return wire, run_launch(info), kernargs
        return encode

    def decoder(self, row: Api, rep: ReplayServices) -> Callable[[Call], tuple[list, Any]]:
        """``dec(call) -> (the replayed call's arguments, buffers to keep until it returned)``."""
        func_at, _, _, shared_at, stream_at, _, _ = launch_positions(row)
        target = CATALOGUE[row.replays_as or row.name]
        place = launch_placer(target, rep)
        own = target is row    # the row's other parameters (e.g. events) pass as decoded
        by_params = target.launch is not None and target.launch.extra is None

        def decode(call: Call) -> tuple[list, Any]:
            launch = launch_map(call.extra.get("launch"))
            if not isinstance(launch, dict) or not isinstance(launch.get("kernargs"), bytes):
                why = launch.get("error") if isinstance(launch, dict) else None
                raise bad(f"launch arguments were not recorded ({brief(why) if why else 'no kernarg bytes'})")
            _check_fields(launch)
            kernargs = translated_kernargs(launch["kernargs"], launch.get("ptrs", ()), rep, "kernel argument")
            grid, block = tuple(launch["grid"]), tuple(launch["block"])
            args = call.args
            if by_params:
                extra, keep = _kernel_params(kernargs, launch.get("offsets"))
            else:
                extra, keep = kernarg_array(kernargs)
            return place(args[func_at] if func_at is not None else None, grid, block,
                         int(args[shared_at] or 0), args[stream_at] if stream_at is not None else None,
                         extra, args if own else None), (extra, keep)
        return decode


#: The decoder's check of the fields it reads, generated from their rules with the bounds
#: replay needs; it raises EventRefused naming the first bad field.
DECODER_CHECK_SOURCE = refusing_source("check_fields", (LAUNCH_RULES[n] for n in ("ptrs", "grid", "block")),
                                       "extra.launch", optional=("ptrs",))
_check_fields = compile_function("check_fields", DECODER_CHECK_SOURCE, {"_bad": bad}, "launch decoder check")


def _kernel_params(kernargs: bytes, offsets: Any) -> tuple[list[int], Any]:
    """kernelParams (argument addresses) into a replay-owned copy of ``kernargs``: one per
    recorded parameter offset, each inside the bytes."""
    if not (isinstance(offsets, (list, tuple)) and all(
            isinstance(o, int) and not isinstance(o, bool) and 0 <= o < max(len(kernargs), 1) for o in offsets)):
        raise bad("the launch's parameter offsets are missing or outside its kernarg bytes")
    buf = ctypes.create_string_buffer(kernargs, max(len(kernargs), 1))
    base = ctypes.addressof(buf)
    return [base + o for o in offsets], buf


_HANDLE_TYPES = frozenset(HANDLE_TYPES.values())   # int(h) is h._value: read without a call


class LaunchPositions(NamedTuple):
    """Where a launch row's parts sit among its parameters (indices; None: it has none).
    ``grid`` and ``block`` are three scalar parameters or one dim3."""

    func: int | None
    grid: tuple[int, ...]
    block: tuple[int, ...]
    shared: int
    stream: int | None
    kernel_params: int
    extra: int | None


def launch_positions(row: Api) -> LaunchPositions:
    """``row``'s launch parts by parameter index (``row.launch`` must be set)."""
    shape = row.launch
    assert shape is not None
    return LaunchPositions(_first(row, "handle", "function"), tuple(row.param_index(x) for x in shape.grid),
                           tuple(row.param_index(x) for x in shape.block), row.param_index(shape.shared),
                           row.param_index(row.stream) if row.stream else None,
                           row.param_index(shape.kernel_params),
                           row.param_index(shape.extra) if shape.extra else None)


def launch_placer(target: Api, rep: ReplayServices) -> Callable[..., list]:
    """``place(func, grid, block, shared, stream, extra, base=None)``: a launch laid out as
    ``target``'s arguments (kernarg bytes through its ``extra``, or its kernelParams)."""
    if target.launch is None:
        raise EventRefused(f"{target.name} cannot carry kernarg bytes", category="unsupported")
    n = len(target.params)
    func_at, grid_at, block_at, shared_at, stream_at, params_at, extra_at = launch_positions(target)
    if extra_at is None:   # kernarg bytes go through ``extra``, or as kernelParams where the target has no extra
        extra_at = params_at

    def put(out: list, at: tuple[int, ...], dims: tuple[int, int, int]) -> None:
        if len(at) == 1:
            out[at[0]] = rep.dim3(*dims)
        else:
            for k, v in zip(at, dims, strict=False):
                out[k] = v

    def place(func: Any, grid: tuple[int, int, int], block: tuple[int, int, int], shared: int,
              stream: Any, extra: Any, base: list | None = None) -> list:
        out: list = [None] * n if base is None else list(base)
        if base is not None:
            out[params_at] = None
        if func_at is not None:
            out[func_at] = func
        put(out, grid_at, grid)
        put(out, block_at, block)
        out[shared_at], out[extra_at] = shared, extra
        if stream_at is not None:
            out[stream_at] = stream
        return out
    return place
