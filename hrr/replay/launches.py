"""The fast replay of a kernel launch record, the record a GPU program writes most.

A launch of a call whose replay hands the kernel its argument bytes through ``extra``
(``hipModuleLaunchKernel``, ``hipLaunchKernel``), recorded in capture's common shape (no
plugin records; ``extra.launch`` format 3's list ``[kernel, grid, block, kernargs, ptrs]``
or formats 1 and 2's map of those five; every field of the type capture writes; its
function, stream and pointer words all known to replay), is replayed here in one pass:
the record is validated as it is read (checks generated from the record's and
extra.launch's declared rules, ``hrr.api.fields``), its pointer words rewritten, and the
backend called with the bytes as capture hands them (``kernargs.packed_extra``: a backend
copies them during the call, HIP's rule), or, where the backend offers it, through its
``launch_kernargs`` (cuda: the driver's launch without the hip surface in between).

The runner never refuses. A record it doubts, in any way, is declined *before anything
is done*, and the general path (the schema check, the roles, a refusal naming the field)
takes it; so what an archive can make replay do is exactly what the general path allows.

``run.rest(records, limit)``, after ``run`` made a launch that went as recorded, takes the
records that follow it and are strictly equal to it (``hrr.replay.runs``) in one step and
makes that launch again as many times; None where a plugin watches the call's events.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

from hrr.api.catalogue import CATALOGUE, Api
from hrr.codegen import compile_function, function_source
from hrr.api.fields import all_of, fast_expr, items_expr, shallow_expr
from hrr.api.roles import byte_counts, launch_placer, launch_positions, param_role
from hrr.api.roles.launch import LAUNCH_RULES
from hrr.api.wire import RECORD_RULES
from hrr.hiptypes.kernargs import packed_extra
from hrr.events.model import wire_event
from hrr.replay.runs import equal_run, repeat_launch

def args_check_source(n: int, ints: tuple[int, ...], dims: tuple[int, ...], nones: tuple[int, ...]) -> str:
    """The source of ``ok(*args)``: the row's recorded arguments, one check each, unrolled
    (a dim3 by the rule of a launch's grid, with replay's bounds)."""
    dim3 = LAUNCH_RULES["grid"]
    terms = ([f"type(a{i}) is int" for i in ints] + [fast_expr(dim3, f"a{i}", replay=True) for i in dims]
             + [f"a{i} is None" for i in nones])
    return function_source("ok", [f"a{i}" for i in range(n)], [f"return {' and '.join(terms) or 'True'}"])


class FastShape(NamedTuple):
    """Where a fast-replayed launch row's parts sit, and what each recorded argument must
    be: an int (a scalar or a handle value), a dim3 list, or None (its bytes live in extra.launch)."""

    n: int
    func_at: int
    shared_at: int
    stream_at: int | None
    ints: tuple[int, ...]
    dims: tuple[int, ...]
    nones: tuple[int, ...]


def fast_shape(row: Api) -> FastShape | None:
    """``row``'s launch records' shape on the fast path, or None when it has none."""
    shape = row.launch
    target = CATALOGUE.get(row.replays_as or row.name)
    if shape is None or target is None or target.launch is None or target.launch.extra is None:
        return None
    n = len(row.params)
    func_at, grid_at, block_at, shared_at, stream_at, _, _ = launch_positions(row)
    if func_at is None:
        return None
    known = {func_at, shared_at, *grid_at, *block_at, *(() if stream_at is None else (stream_at,))}
    # Besides its function, stream and shape, a fast-replayed row has only parameters
    # recorded as null whose bytes live in extra.launch (``Role.in_launch_extra``).
    if any(i not in known and not param_role(p.role).in_launch_extra for i, p in enumerate(row.params)):
        return None   # an event, a flag...: the general path replays those rows
    if shape.shared not in byte_counts(row):
        return None
    # What each recorded argument must be: an int (a scalar or a handle value: a value
    # msgpack carries is in every range the general path checks, except the byte count's
    # sign), a dim3 list, or None (the launch-role parameters: the bytes live in extra.launch).
    ints = tuple(i for i in sorted(known) if len(grid_at) == 3 or (i not in grid_at and i not in block_at))
    dims = () if len(grid_at) == 3 else (grid_at[0], block_at[0])
    nones = tuple(i for i in range(n) if i not in known)
    return FastShape(n, func_at, shared_at, stream_at, ints, dims, nones)


def launch_runner(row: Api, fn: Any, rep: Any, hooks: tuple[Any, Any, Any]) -> Callable[[list], bool] | None:
    """``run(v) -> bool`` for ``row``'s launch records (True: replayed; False: declined,
    nothing done), or None when ``row`` has no fast path. ``hooks``: the per-event hooks
    (before, after, after when it failed) that want a record carrying no plugin records."""
    before, after, after_failed = hooks
    fast = fast_shape(row)
    if fast is None or fn is None:
        return None
    target = CATALOGUE[row.replays_as or row.name]
    n, func_at, shared_at, stream_at, ints, dims, nones = fast
    args_ok = compile_function("ok", args_check_source(n, ints, dims, nones), {}, "launch arguments check")
    functions, streams = rep.handles.table("function"), rep.handles.table("stream")
    memory = rep.memory
    # A backend may launch packed bytes without its hip surface in between: used while
    # ``fn`` is the surface function it stands for (not one a test or plugin replaced).
    direct = rep.backend.launch_kernargs
    if direct is None or getattr(direct, "stands_for", None) is not fn:
        direct = None
    return _build_runner()(
        equal_run=equal_run(), repeat_launch=repeat_launch,
        n=n, shared_at=shared_at, func_at=func_at, stream_at=stream_at, args_ok=args_ok,
        functions=functions, streams=streams, memory=memory, translate=memory.translate,
        place=launch_placer(target, rep), direct=direct, prepare=getattr(direct, "prepare", None), fn=fn,
        packed_extra=packed_extra, partial=functools.partial, wire_event=wire_event, before=before, after=after,
        after_failed=after_failed, stats=rep.stats, ctx=rep.ctx, diverged=rep._diverged, row=row,
        volatile=row.volatile, epoch=rep.epoch)


# The runner's body. ``{record}``, ``{launch}`` and ``{dims}`` are its checks, generated from
# the record's and extra.launch's rules (hrr.api.wire.RECORD_RULES, LAUNCH_RULES) with the
# bounds replay needs; the rest is the one pass (pointer words, handles, the call).
_RUNNER_BODY = """\
translated = {{}}   # capture address -> replay's, while memory.version holds
version = [memory.version]
u64 = {u64}
# The last launch made: its record's args and extra, the launch to make again, and the
# replay epoch and memory version then. A record equal to it, with nothing else replayed
# since, makes that launch again without being checked again.
last = [None, None, None, -1, -1]

def run(v):
    seq, tid, _, args, err, outs, extra = v
    if not ({record} and len(args) == n and not outs and len(extra) == 1):
        return False
    if args == last[0] and extra == last[1] and epoch[0] == last[3] and memory.version == last[4]:
        again = last[2]
        stats.repeated_launches += 1
        ev = None
        if before is not None:
            ev = wire_event(v)
            before(ctx=ctx, event=ev, stream=last_stream[0])
        result = again()
    else:
        result = first(v, args, extra)
        if result is None:
            return False
        ev = result[1]
        result = result[0]
    got = int(result[0])
    stats.replayed += 1
    # a launch that went as recorded, with no error: the records equal to it may follow (rest)
    last_value[0] = v if got == 0 and err == 0 else None
    if got != err:
        if not volatile:
            diverged(row, seq, err, got)
    elif got:
        stats.reproduced_errors += 1
    hook = after_failed if got else after
    if hook is not None:
        hook(ctx=ctx, event=ev if ev is not None else wire_event(v), result=result)
    return True

last_stream = [None]
last_value = [None]   # the record run() replayed last, when rest may take the ones equal to it

def rest(items, limit):
    # The records after the one run() replayed that are equal to it (at most limit), made
    # again in one step: (how many, the first item that was not one or None).
    template = last_value[0]
    if template is None:
        return 0, None
    last_value[0] = None
    count, item = equal_run(items, template, limit)
    if count:
        again = last[2]
        made, result = repeat_launch(again, count)
        stats.repeated_launches += made
        stats.replayed += made
        # records of a run are one thread's consecutive calls: their seqs follow the template's
        seq = template[0] + 1
        while made < count:   # the launch at made failed: said as run() says it, then the others
            stats.repeated_launches += 1
            stats.replayed += 1
            if not volatile:
                diverged(row, seq + made, 0, int(result[0]))
            made += 1
            if made < count:
                more, result = repeat_launch(again, count - made)
                stats.repeated_launches += more
                stats.replayed += more
                made += more
        if int(result[0]) == 0:
            last_value[0] = [template[0] + count, *template[1:]]
    return count, item

run.rest = rest if before is None and after is None and after_failed is None else None

def first(v, args, extra):
    # a record not equal to the last launch: checked, launched: (result, event), or None (declined)
    launch = extra.get("launch")
    if type(launch) is list:     # format 3: [kernel, grid, block, kernargs, ptrs]
        if len(launch) != 5:
            return None
        kernel, grid, block, kernargs, ptrs = launch
    elif type(launch) is dict and len(launch) == 5:    # formats 1 and 2: the same fields by name
        try:
            kernel, grid, block, kernargs, ptrs = (launch["kernel"], launch["grid"], launch["block"],
                                                   launch["kernargs"], launch["ptrs"])
        except KeyError:
            return None
    else:
        return None
    if not ({launch}):
        return None
    gx, gy, gz = grid
    bx, by, bz = block
    if not ({dims}):
        return None
    if not args_ok(*args):
        return None
    shared = args[shared_at]
    if not 0 <= shared < 1 << 63:
        return None
    f = functions.get(args[func_at])
    if f is None:
        return None
    s = args[stream_at] if stream_at is not None else 0
    if s:
        s = streams.get(s)
        if s is None:
            return None
    else:
        s = None
    if ptrs:
        if memory.version != version[0]:
            translated.clear()
            version[0] = memory.version
        buf = bytearray(kernargs)
        size = len(buf)
        for w in ptrs:
            if type(w) is not list or len(w) != 3:
                return None
            off, base, delta = w
            if type(off) is not int or type(base) is not int or type(delta) is not int \\
                    or off < 0 or off & 7 or off + 8 > size or delta < 0 or not 0 <= base + delta < u64:
                return None
            at = base + delta
            addr = translated.get(at)
            if addr is None:
                addr = translate(at)
                if addr is None:
                    return None
                if len(translated) < 4096:
                    translated[at] = addr
            buf[off:off + 8] = addr.to_bytes(8, "little")
        kernargs = bytes(buf)
    ev = None
    if before is not None:
        ev = wire_event(v)
        before(ctx=ctx, event=ev, stream=s)
    # The launch, kept to be made again: the backend's prepared launch where it offers one
    # (cuda: cuLaunchKernel from C), else the same call with its arguments bound.
    again = None
    if direct is not None:
        if prepare is not None:
            again = prepare(f, (gx, gy, gz), (bx, by, bz), shared, s, kernargs)
        if again is None:
            again = partial(direct, f, (gx, gy, gz), (bx, by, bz), shared, s, kernargs)
    else:
        again = partial(fn, *place(f, (gx, gy, gz), (bx, by, bz), shared, s, packed_extra(kernargs)))
    result = again()
    last[0], last[1], last[2], last[3], last[4] = args, extra, again, epoch[0], memory.version
    last_stream[0] = s
    return result, ev

return run
"""
_RUNNER_PARAMS = ("equal_run", "repeat_launch",
                  "n", "shared_at", "func_at", "stream_at", "args_ok", "functions", "streams", "memory", "translate",
                  "place", "direct", "prepare", "fn", "packed_extra", "partial", "wire_event", "before", "after",
                  "after_failed", "stats", "ctx", "diverged", "row", "volatile", "epoch")
_runner_factory: list[Callable[..., Callable[[list], bool]]] = []


def runner_source() -> str:
    """The source of the launch runner's factory: its checks generated from the rules."""
    # the runner takes records the reader decoded (msgpack): only bounds inside its range are checked
    record = all_of(fast_expr(RECORD_RULES[name], name, replay=True, decoded=True)
                    for name in ("seq", "err", "tid", "args", "outs", "extra"))
    rules = LAUNCH_RULES
    names = {name: name for name in rules}
    launch = all_of(shallow_expr(rules[name], name, names) for name in ("kernel", "kernargs", "ptrs", "grid", "block"))
    dims = all_of(items_expr(rules[name], name, items, replay=True) or "True"
                  for name, items in (("grid", ("gx", "gy", "gz")), ("block", ("bx", "by", "bz"))))
    body = _RUNNER_BODY.format(record=record, launch=launch, dims=dims, u64=1 << 64)
    return function_source("build", ["*", *_RUNNER_PARAMS], body.splitlines())


def _build_runner() -> Callable[..., Callable[[list], bool]]:
    """The launch runner's factory, compiled once."""
    if not _runner_factory:
        _runner_factory.append(compile_function("build", runner_source(), {}, "replay launch runner"))
    return _runner_factory[0]


__all__ = ["FastShape", "args_check_source", "fast_shape", "launch_runner", "runner_source"]
