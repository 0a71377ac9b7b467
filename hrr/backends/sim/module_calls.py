"""The sim's bodies of the module and launch calls (catalogue families ``module``,
``launch``): code objects, functions' attributes and occupancy, launches (``kernels.py``).

Each body is registered with ``@body`` (``hrr.backends.bodies``); ``api.py`` builds
``hip`` from them.
"""
from __future__ import annotations

from typing import Any, Callable

from hrr import hiptypes as ht
from hrr.backends import surface
from hrr.hiptypes import kernelsource
from hrr.backends.bodies import Bodies
from hrr.hiptypes.codefile import read_code_file
from hrr.hiptypes import Pointer, hipError_t
from hrr.hiptypes.kernargs import pack_kernel_args
from hrr.backends.sim.device import current as _dev
from hrr.backends.sim.device import keep
from hrr.backends.sim.kernels import (
    CodeObjectError,
    Function,
    KernelLibrary,
    Module,
    image_bytes,
    kernel_name,
)
from hrr.backends.sim.libraries import resolve_code_object
from hrr.backends.sim.memory import checked_size
from hrr.backends.sim.stream_calls import _stream
from hrr.backends.sim.streams import Stream
from hrr.backends.surface import HipError, irregular

SUCCESS = hipError_t.hipSuccess


body = Bodies("module", "launch")


# -- modules and launches -----------------------------------------------------------------
@body
def hipModuleLoadData(image: Any) -> tuple:
    try:
        data = image_bytes(image)
    except CodeObjectError as exc:
        raise HipError(exc.code, str(exc)) from None
    return (SUCCESS, load_module(data))


@body
def hipModuleGetFunction(mod: Module, kname: Any) -> tuple:
    name = kernel_name(kname)
    if name not in mod.kernels:
        raise HipError("hipErrorNotFound", f"module has no kernel {name!r}")
    return (SUCCESS, keep("function", lambda h: Function(h, mod, mod.library.kernels[name])))


@body
def hipModuleUnload(mod: Module) -> None:
    dev = _dev()
    del dev.modules[mod.handle]
    free_globals(mod)
    for handle in [h for h, f in dev.functions.items() if f.module is mod]:
        del dev.functions[handle]


def _launch(fn: Function, grid: tuple, block: tuple, stream: Any, kernel_params: Any, extra: Any,
            shared: Any = 0) -> None:
    grid = tuple(int(v) for v in grid)
    block = tuple(int(v) for v in block)
    if min(grid + block) < 1 or block[0] * block[1] * block[2] > _dev().model.max_threads_per_block:
        raise HipError("hipErrorInvalidConfiguration", f"launch shape {grid} x {block}")
    s = _stream(stream)
    kernargs = pack_kernel_args(fn.kernel.layout, kernel_params, extra)  # by value, now
    _dev().launch(s, fn.kernel, kernargs, grid, block, int(shared or 0))


@body
@irregular(raw=True)  # the launch shape is checked before the stream is looked up
def hipModuleLaunchKernel(f: Any, gridDimX: int, gridDimY: int, gridDimZ: int,
                          blockDimX: int, blockDimY: int, blockDimZ: int,
                          sharedMemBytes: int, stream: Any, kernelParams: Any,
                          extra: Any) -> None:
    dev = _dev()
    fn = dev.lookup(dev.functions, f, "function")
    _launch(fn, (gridDimX, gridDimY, gridDimZ), (blockDimX, blockDimY, blockDimZ),
            stream, kernelParams, extra, sharedMemBytes)


@body
@irregular(raw=True)  # an unknown function is hipErrorInvalidDeviceFunction, not InvalidHandle
def hipLaunchKernel(function_address: Any, numBlocks: Any, dimBlocks: Any, args: Any,
                    sharedMemBytes: int, stream: Any) -> None:
    dev = _dev()
    fn = dev.lookup(dev.functions, function_address, "kernel function", "hipErrorInvalidDeviceFunction")
    _launch(fn, surface.dims(numBlocks), surface.dims(dimBlocks), stream, args, None, sharedMemBytes)


MAX_BLOCK = 1024   # every AMD GPU's work-group limit (hipFuncAttributes.maxThreadsPerBlock)


# -- modules -----------------------------------------------------------------------------------
def new_module(library: KernelLibrary, kernels: tuple) -> Module:
    """A loaded module: a handle, and its own zeroed device copy of each global its library
    declares (hipErrorOutOfMemory, and no module, when they do not fit)."""
    memory = _dev().memory
    made: dict[str, int] = {}
    for name, size in sorted(library.globals.items()):
        alloc = memory.malloc(size)
        if alloc is None:
            for base in made.values():
                memory.free_device(base)
            raise HipError("hipErrorOutOfMemory", f"the module's global {name!r} ({size} bytes)")
        made[name] = alloc.base
    return _dev().keep("module", lambda h: Module(h, library, kernels, made))


def free_globals(mod: Module) -> None:
    """hipModuleUnload: the module's globals (a native module's image, which holds them) go with it."""
    memory = _dev().memory
    if mod.image_base is not None:
        if memory.find_device(mod.image_base) is not None:
            memory.free_device(mod.image_base)
        mod.globals.clear()
        return
    for base in mod.globals.values():
        if memory.find_device(base) is not None:
            memory.free_device(base)
    mod.globals.clear()


def load_module(image: bytes) -> Module:
    """A module from a code object's bytes: a kernel library's kernels, or a program's HIP C++
    source compiled for the CPU (``native``)."""
    try:
        if kernelsource.is_kernel_source(image):
            from hrr.backends.sim.native import module as native   # start-up cost: native kernels only
            dev = _dev()
            loaded = native.load(dev, image)
            return dev.keep("module", lambda h: Module(h, loaded.library, tuple(loaded.library.kernels),
                                                       loaded.globals, loaded.image_base))
        library, co = resolve_code_object(image)
    except CodeObjectError as exc:
        raise HipError(exc.code, str(exc)) from None
    return new_module(library, co.kernels)


@body
def hipModuleGetGlobal(hmod: Module, name: Any) -> tuple:
    key = kernel_name(name)
    base = hmod.globals.get(key)
    if base is None:
        raise HipError("hipErrorNotFound", f"the module has no global {key!r}")
    return (SUCCESS, Pointer(base), hmod.library.globals[key])


@body
def hipModuleLoadDataEx(image: Any, numOptions: Any, optionValues: Any) -> tuple:
    try:
        data = image_bytes(image)
    except CodeObjectError as exc:
        raise HipError(exc.code, str(exc)) from None
    return (SUCCESS, load_module(data), None)


@body
@irregular(raw=True)  # a path, not an address
def hipModuleLoad(fname: Any) -> tuple:
    try:
        data = read_code_file(fname)
    except (OSError, ValueError):
        raise HipError("hipErrorFileNotFound", f"hipModuleLoad: cannot read {fname!r}") from None
    return (SUCCESS, load_module(data))


@body
def hipModuleGetFunctionCount(mod: Module) -> tuple:
    return (SUCCESS, len(mod.kernels))


# hipFunction_attribute -> value for the sim's kernels (no registers, no static shared memory)
_FUNC_ATTR_DEFAULTS = {0: MAX_BLOCK, 1: 0, 2: 0, 3: 0, 4: 0, 5: 94, 6: 94, 7: 0}


_MAX_DYNAMIC_SHARED, _CARVEOUT = 8, 9          # hipFuncAttribute's values (also hipFunction_attribute's)


def _func_attr(fn: Function, attrib: int) -> int:
    if attrib in _FUNC_ATTR_DEFAULTS:
        return _FUNC_ATTR_DEFAULTS[attrib]
    if attrib == _MAX_DYNAMIC_SHARED:
        return int(fn.attributes.get(_MAX_DYNAMIC_SHARED, _dev().model.lds))
    if attrib == _CARVEOUT:
        return int(fn.attributes.get(_CARVEOUT, -1))
    raise HipError("hipErrorInvalidValue", f"function attribute {attrib}")


@body
def hipFuncGetAttributes(fn: Function) -> tuple:
    attrs = ht.hipFuncAttributes()
    for field, code in (("maxThreadsPerBlock", 0), ("sharedSizeBytes", 1), ("constSizeBytes", 2),
                        ("localSizeBytes", 3), ("numRegs", 4), ("ptxVersion", 5), ("binaryVersion", 6),
                        ("cacheModeCA", 7), ("maxDynamicSharedSizeBytes", 8), ("preferredShmemCarveout", 9)):
        setattr(attrs, field, _func_attr(fn, code))
    return (SUCCESS, attrs)


@body
def hipFuncGetAttribute(attrib: Any, fn: Function) -> tuple:
    return (SUCCESS, _func_attr(fn, int(attrib)))


@body
def hipFuncSetAttribute(fn: Function, attr: Any, value: Any) -> None:
    attr, value = int(attr), int(value)
    if attr == _MAX_DYNAMIC_SHARED and 0 <= value <= _dev().model.lds:
        fn.attributes[attr] = value
    elif attr == _CARVEOUT and -1 <= value <= 100:
        fn.attributes[attr] = value
    else:
        raise HipError("hipErrorInvalidValue", f"hipFuncSetAttribute: attribute {attr} = {value}")


@body
def hipFuncSetCacheConfig(fn: Function, config: Any) -> None:
    if int(config) not in (0, 1, 2, 3):
        raise HipError("hipErrorInvalidValue", f"cache config {config}")
    fn.attributes["cache_config"] = int(config)


@body
def hipFuncSetSharedMemConfig(fn: Function, config: Any) -> None:
    if int(config) not in (0, 1, 2):
        raise HipError("hipErrorInvalidValue", f"shared memory config {config}")
    fn.attributes["shared_mem_config"] = int(config)


# -- occupancy -----------------------------------------------------------------------------------
def active_blocks(fn: Function, block_size: Any, shared: Any) -> int:
    """Blocks of ``block_size`` threads and ``shared`` dynamic bytes one compute unit holds."""
    block_size, shared, model = int(block_size), checked_size(shared), _dev().model
    if not 0 < block_size <= model.max_threads_per_block:
        raise HipError("hipErrorInvalidValue", f"block size {block_size}")
    if shared > int(fn.attributes.get(_MAX_DYNAMIC_SHARED, model.lds)):
        return 0
    threads = -(-block_size // model.wavefront) * model.wavefront   # a block takes whole wavefronts
    return min(model.max_blocks_per_cu, model.max_threads_per_cu // threads,
               model.lds // shared if shared else model.max_blocks_per_cu)


def _flags(flags: Any) -> bool:
    """False for valid occupancy flags (so ``_flags(f) or ...`` reads on); raises otherwise."""
    if int(flags) not in (0, 1):  # hipOccupancyDefault, hipOccupancyDisableCachingOverride
        raise HipError("hipErrorInvalidValue", f"occupancy flags {flags}")
    return False


def _potential(fn: Function, shared: Any, limit: Any) -> tuple:
    top = min(MAX_BLOCK, int(limit) or MAX_BLOCK)
    if top < 1:
        raise HipError("hipErrorInvalidValue", f"block size limit {limit}")
    best = (0, top)
    for size in range(top, 0, -64 if top >= 64 else -1):
        threads = active_blocks(fn, size, shared) * size
        if threads > best[0] * 1:
            best = (threads, size)
    size = best[1]
    return (SUCCESS, active_blocks(fn, size, shared) * _dev().model.compute_units, size)


def _occupancy_bodies() -> dict[str, Callable]:
    return {
        "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor":
            lambda f, bs, sh: (SUCCESS, active_blocks(f, bs, sh)),
        "hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags":
            lambda f, bs, sh, fl: _flags(fl) or (SUCCESS, active_blocks(f, bs, sh)),
        "hipOccupancyMaxActiveBlocksPerMultiprocessor":
            lambda f, bs, sh: (SUCCESS, active_blocks(f, bs, sh)),
        "hipModuleOccupancyMaxPotentialBlockSize": _potential,
        "hipModuleOccupancyMaxPotentialBlockSizeWithFlags":
            lambda f, sh, lim, fl: _flags(fl) or _potential(f, sh, lim),
        "hipOccupancyMaxPotentialBlockSize": _potential,
    }


# -- launches --------------------------------------------------------------------------------------
def _function(f: Any, code: str) -> Function:
    dev = _dev()
    return dev.lookup(dev.functions, f, "kernel function", code)


def _launch_ext(fn: Function, grid: tuple, block: tuple, shared: Any, stream: Any, kernel_params: Any,
            cooperative: bool) -> Stream:
    grid, block = tuple(int(v) for v in grid), tuple(int(v) for v in block)
    if min(grid + block) < 1 or block[0] * block[1] * block[2] > MAX_BLOCK:
        raise HipError("hipErrorInvalidConfiguration", f"launch shape {grid} x {block}")
    if cooperative:
        fits = active_blocks(fn, block[0] * block[1] * block[2], shared or 0) * _dev().model.compute_units
        if grid[0] * grid[1] * grid[2] > fits:
            raise HipError("hipErrorCooperativeLaunchTooLarge",
                           f"{grid} blocks are more than the {fits} that can be resident at once")
    dev = _dev()
    s = dev.lookup(dev.streams, stream, "stream")
    kernargs = pack_kernel_args(fn.kernel.layout, kernel_params, None)
    dev.launch(s, fn.kernel, kernargs, grid, block, int(shared or 0))
    return s


@body
@irregular(raw=True)  # the function and events are looked up by hand (null events are allowed)
def hipExtLaunchKernel(function_address: Any, numBlocks: Any, dimBlocks: Any, args: Any, sharedMemBytes: Any,
                       stream: Any, startEvent: Any, stopEvent: Any, flags: Any) -> None:
    dev = _dev()
    fn = _function(function_address, "hipErrorInvalidDeviceFunction")
    events = [dev.lookup(dev.events, e, "event") if ht.handle_or_zero(e) else None for e in (startEvent, stopEvent)]
    s = dev.lookup(dev.streams, stream, "stream")
    if events[0] is not None:
        dev.record_event(events[0], s)
    _launch_ext(fn, surface.dims(numBlocks), surface.dims(dimBlocks), sharedMemBytes, stream, args, False)
    if events[1] is not None:
        dev.record_event(events[1], s)


@body
@irregular(raw=True)
def hipModuleLaunchCooperativeKernel(f: Any, gridDimX: Any, gridDimY: Any, gridDimZ: Any, blockDimX: Any,
                                     blockDimY: Any, blockDimZ: Any, sharedMemBytes: Any, stream: Any,
                                     kernelParams: Any) -> None:
    _launch_ext(_function(f, "hipErrorInvalidHandle"), (gridDimX, gridDimY, gridDimZ),
            (blockDimX, blockDimY, blockDimZ), sharedMemBytes, stream, kernelParams, True)


@body
@irregular(raw=True)
def hipLaunchCooperativeKernel(f: Any, gridDim: Any, blockDimX: Any, kernelParams: Any, sharedMemBytes: Any,
                               stream: Any) -> None:
    _launch_ext(_function(f, "hipErrorInvalidDeviceFunction"), surface.dims(gridDim), surface.dims(blockDimX),
            sharedMemBytes, stream, kernelParams, True)




body.table(_occupancy_bodies())
