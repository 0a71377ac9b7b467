"""The cuda backend's bodies of the module and launch calls (catalogue families
``module`` and ``launch``): loading code objects, functions and globals, function
attributes, occupancy, and kernel launches (plain, with events, cooperative), over
cuda-bindings' driver API.

Layouts and launches live in ``modules``. HIP's enum values for these calls equal CUDA's
(hipFunction_attribute and CUfunction_attribute, hipFuncCache_t and CUfunc_cache), so they
pass as ints. A call that is one CUDA call (``onecall.one_call``) or one call into
``modules`` is a table entry; each body is registered with ``@body`` or ``body.table``.
"""
from __future__ import annotations

import ctypes
from typing import Any

from hrr import hiptypes as ht
from hrr.backends.bodies import Bodies
from hrr.hiptypes.codefile import read_code_file
from hrr.backends.cuda import modules
from hrr.backends.cuda._errors import SUCCESS, hip_error
from hrr.backends.cuda._runtime import STATE as S
from hrr.backends.cuda._runtime import driver
from hrr.backends.cuda.onecall import as_int as _int
from hrr.backends.cuda.onecall import one_call as C
from hrr.hiptypes.kernargs import LaunchArgsError, pack_kernel_args

E = ht.hipError_t

body = Bodies("module", "launch")


# -- modules ------------------------------------------------------------------------------------
@body
def hipModuleLoadDataEx(image: Any, numOptions: Any, optionValues: Any) -> tuple:
    return (*modules.load_data(image), None)


@body
def hipModuleLoad(fname: Any) -> tuple:
    try:
        data = read_code_file(fname)
    except (OSError, ValueError):
        return (E.hipErrorFileNotFound, None)
    return modules.load_data(data)


@body
def hipModuleGetGlobal(hmod: int, name: Any) -> tuple:
    """cuModuleGetGlobal: a __device__ global of the module, its address and size."""
    key = name.encode() if isinstance(name, str) else bytes(name).rstrip(b"\0")
    err, dptr, size = driver().cuModuleGetGlobal(hmod, key)
    if int(err):
        return (hip_error(err), None, None)
    return (SUCCESS, ht.Pointer(int(dptr)), int(size))


_ATTR_FIELDS = ("maxThreadsPerBlock", "sharedSizeBytes", "constSizeBytes", "localSizeBytes", "numRegs",
                "ptxVersion", "binaryVersion", "cacheModeCA", "maxDynamicSharedSizeBytes", "preferredShmemCarveout")


@body
def hipFuncGetAttributes(func: int) -> tuple:
    attrs = ht.hipFuncAttributes()
    drv = driver()
    for code, field in enumerate(_ATTR_FIELDS):  # CUfunction_attribute 0-9, in this order
        err, value = drv.cuFuncGetAttribute(code, func)
        if int(err):
            return (hip_error(err), None)
        setattr(attrs, field, int(value))
    return (SUCCESS, attrs)


def _potential(func: int, dynSharedMemPerBlk: Any, blockSizeLimit: Any, *flags: Any) -> tuple:
    """cuOccupancyMaxPotentialBlockSize[WithFlags] with no per-block-size shared memory callback."""
    drv = driver()
    call = drv.cuOccupancyMaxPotentialBlockSizeWithFlags if flags else drv.cuOccupancyMaxPotentialBlockSize
    err, grid, block = call(func, None, int(dynSharedMemPerBlk), int(blockSizeLimit), *map(int, flags))
    if int(err):
        return (hip_error(err), None, None)
    return (SUCCESS, int(grid), int(block))


@body
def hipModuleOccupancyMaxPotentialBlockSize(f: int, dynSharedMemPerBlk: Any, blockSizeLimit: Any) -> tuple:
    return _potential(f, dynSharedMemPerBlk, blockSizeLimit)


@body
def hipModuleOccupancyMaxPotentialBlockSizeWithFlags(f: int, dynSharedMemPerBlk: Any, blockSizeLimit: Any,
                                                     flags: Any) -> tuple:
    return _potential(f, dynSharedMemPerBlk, blockSizeLimit, flags)


@body
def hipOccupancyMaxPotentialBlockSize(f: int, dynSharedMemPerBlk: Any, blockSizeLimit: Any) -> tuple:
    return _potential(f, dynSharedMemPerBlk, blockSizeLimit)


@body
def hipFuncSetSharedMemConfig(func: int, config: Any) -> tuple:
    """cuFuncSetSharedMemConfig; a driver without it (the call is deprecated: bank sizes are
    fixed) takes the hint as accepted, as AMD devices do."""
    if int(config) not in (0, 1, 2):
        return (E.hipErrorInvalidValue,)
    try:
        return (hip_error(driver().cuFuncSetSharedMemConfig(func, int(config))[0]),)
    except RuntimeError:   # cuda-bindings: the driver does not export it
        return (SUCCESS,)


# -- launches ------------------------------------------------------------------------------------
@body
def hipModuleLaunchKernel(f: int, gridDimX: Any, gridDimY: Any, gridDimZ: Any, blockDimX: Any, blockDimY: Any,
                          blockDimZ: Any, sharedMemBytes: Any, stream: int, kernelParams: Any, extra: Any) -> tuple:
    return modules.launch(f, (int(gridDimX), int(gridDimY), int(gridDimZ)),
                          (int(blockDimX), int(blockDimY), int(blockDimZ)),
                          sharedMemBytes, stream, kernelParams, extra, E.hipErrorInvalidHandle)


@body
def hipLaunchKernel(function_address: int, numBlocks: tuple, dimBlocks: tuple, args: Any, sharedMemBytes: Any,
                    stream: int) -> tuple:
    """``function_address`` is a function handle from hipModuleGetFunction (or its int);
    ``args`` is kernelParams' form (argument addresses)."""
    return modules.launch(function_address, numBlocks, dimBlocks, sharedMemBytes, stream, args, None,
                          E.hipErrorInvalidDeviceFunction)


@body
def hipExtLaunchKernel(function_address: int, numBlocks: tuple, dimBlocks: tuple, args: Any, sharedMemBytes: Any,
                       stream: int, startEvent: int, stopEvent: int, flags: Any) -> tuple:
    """hipLaunchKernel between two optional event records on the same stream."""
    if startEvent:
        err = S.rt.cudaEventRecord(startEvent, stream)[0]
        if int(err):
            return (hip_error(err),)
    result = modules.launch(function_address, numBlocks, dimBlocks, sharedMemBytes, stream, args, None,
                            E.hipErrorInvalidDeviceFunction)
    if int(result[0]) == 0 and stopEvent:
        return (hip_error(S.rt.cudaEventRecord(stopEvent, stream)[0]),)
    return result


def cooperative(fh: int, grid: tuple, block: tuple, shared: Any, stream: int, kernel_params: Any,
                missing: Any) -> tuple:
    """cuLaunchCooperativeKernel: CUDA takes no ``extra`` here, so the packed arguments go
    as kernelParams pointing at each parameter's offset in one kernarg buffer."""
    try:
        layout = modules.kernel_layout(fh)
    except KeyError:
        return (missing,)
    try:
        kernarg = pack_kernel_args(layout, kernel_params, None)
    except (LaunchArgsError, ht.PointerConversionError, ValueError):
        return (E.hipErrorInvalidValue,)
    buf = ctypes.create_string_buffer(kernarg, max(len(kernarg), 1))
    params = (ctypes.c_void_p * max(len(layout.params), 1))(
        *(ctypes.addressof(buf) + p.offset for p in layout.params))
    res = driver().cuLaunchCooperativeKernel(fh, *grid, *block, int(shared), stream, ctypes.addressof(params))
    del buf, params
    return (hip_error(res[0]),)


@body
def hipModuleLaunchCooperativeKernel(f: int, gridDimX: Any, gridDimY: Any, gridDimZ: Any, blockDimX: Any,
                                     blockDimY: Any, blockDimZ: Any, sharedMemBytes: Any, stream: int,
                                     kernelParams: Any) -> tuple:
    return cooperative(f, (int(gridDimX), int(gridDimY), int(gridDimZ)), (int(blockDimX), int(blockDimY),
                       int(blockDimZ)), sharedMemBytes, stream, kernelParams, E.hipErrorInvalidHandle)


@body
def hipLaunchCooperativeKernel(f: int, gridDim: tuple, blockDimX: tuple, kernelParams: Any, sharedMemBytes: Any,
                               stream: int) -> tuple:
    return cooperative(f, tuple(gridDim), tuple(blockDimX), sharedMemBytes, stream, kernelParams,
                       E.hipErrorInvalidDeviceFunction)


# Calls that are one CUDA call (see onecall.one_call) or one call into modules.
body.table({
    "hipModuleGetFunctionCount": C("drv.cuModuleGetFunctionCount", _int),
    "hipFuncGetAttribute": C("drv.cuFuncGetAttribute", _int),
    "hipFuncSetAttribute": C("drv.cuFuncSetAttribute"),
    "hipFuncSetCacheConfig": C("drv.cuFuncSetCacheConfig"),
    "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor": C("drv.cuOccupancyMaxActiveBlocksPerMultiprocessor",
                                                            _int),
    "hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags": C(
        "drv.cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", _int),
    "hipOccupancyMaxActiveBlocksPerMultiprocessor": C("drv.cuOccupancyMaxActiveBlocksPerMultiprocessor", _int),
    "hipModuleLoadData": modules.load_data,
    "hipModuleGetFunction": modules.get_function,
    "hipModuleUnload": modules.unload,
})
