"""The cuda backend's bodies of hip-python's ``hip`` calls, over NVIDIA's cuda-bindings
(runtime where simpler, driver for modules, launches, pinned memory and stream memory
operations); ``hrr.backends.surface`` builds the module from the catalogue around them.

Results carry CUDA's errors mapped through ``_errors.CUDA_TO_HIP_NAME``. Device
allocations come back as ``DeviceArray``, pinned host memory as ``Pointer``, handles as
hiptypes handle classes whose ``int()`` is the CUDA handle. A call that is one driver
call is an entry of ``CALLS``, not a function; what the backend keeps beside the driver
lives in ``memory`` (pinned allocations) and ``modules`` (layouts, launches).
"""
from __future__ import annotations

import ctypes
import threading
import types
from typing import Any, Callable

from hrr.backends import hiptypes as ht
from hrr.backends import surface
from hrr.backends.cuda import _runtime, device_calls, graph_calls, memory, memory_calls, modules, pool_calls
from hrr.backends.cuda._errors import HIP_TO_CUDA
from hrr.backends.cuda._errors import hip_error as _err
from hrr.backends.cuda._runtime import handle_value as _h
from hrr.backends.cuda.memory import CU_PINNED
from hrr.backends.cuda.onecall import as_int as _int
from hrr.backends.cuda.onecall import cuda_kind as _kind
from hrr.backends.cuda.onecall import new as _new
from hrr.backends.cuda.onecall import one_call as _one_call
from hrr.backends.error_strings import error_string
from hrr.backends.surface import HipError, irregular

E = ht.hipError_t
SUCCESS = E.hipSuccess
S = _runtime.STATE

_tls = threading.local()

# The per-call protocol: load the driver on first use; without one, return the HIP error
# a real runtime returns there (hipErrorNoDevice, hipErrorInsufficientDriver) with None
# outputs, never raise into the app. A failed result is the thread's last error.
FRAME = surface.Frame("""\
if not S.ready:
    try:
        _require_driver()
    except _DriverUnavailable as exc:
        err = getattr(E, exc.hip_error)
        _tls.last = err
        return (err, *NONES)
try:
    result = {call}
except HipError as exc:
    result = (exc.code, *NONES)
{record}
return result
""", """\
if result[0]:
    _tls.last = result[0]
""", {"S": S, "_require_driver": _runtime.require_driver, "_DriverUnavailable": _runtime.DriverUnavailable,
      "E": E, "_tls": _tls, "HipError": HipError})


def _status(v: Any) -> ht.hipStreamCaptureStatus:
    return ht.hipStreamCaptureStatus(int(v or 0))


def _live(cls: type) -> Callable[[Any], Any]:
    """A handle output where CUDA's NULL handle means none."""
    return lambda v: cls(int(v)) if v is not None and int(v) else None


# ------------------------------------------------------------------ errors, device, init

@irregular(bare=True)  # needs no driver
def hipGetErrorName(hip_error: Any) -> tuple:
    return (SUCCESS, ht.CStr(surface.error_name(hip_error)))


# the codes whose CUDA message differs from HIP's: HIP's message (error_strings)
_HIP_STRINGS = {int(E[name]): error_string(name).encode() for name in (
    "hipSuccess", "hipErrorInvalidValue", "hipErrorOutOfMemory", "hipErrorStreamCaptureUnsupported",
    "hipErrorStreamCaptureInvalidated")}


@irregular(bare=True)  # needs no driver
def hipGetErrorString(hipError: Any) -> tuple:
    code = int(hipError)
    text = _HIP_STRINGS.get(code)
    if text is None and code in HIP_TO_CUDA:
        try:
            from cuda.bindings import runtime as rt
            err, s = rt.cudaGetErrorString(HIP_TO_CUDA[code])
            if int(err) == 0 and s:
                text = bytes(s)
        except Exception:  # noqa: BLE001 - fall back to the name
            text = None
    if text is None:
        text = bytes(hipGetErrorName(hipError)[1])
    return (SUCCESS, ht.CStr(text))


def hipSetDevice(deviceId: Any) -> tuple:
    (err,) = S.rt.cudaSetDevice(int(deviceId))
    _runtime.forget_context()
    return (_err(err),)


def _s(v: Any) -> str:
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).split(b"\0", 1)[0].decode(errors="replace")
    return str(v)


# cudaDeviceProp's fields that hipDeviceProp_t has under the same name, as ints
_PROPS = ("totalGlobalMem sharedMemPerBlock regsPerBlock warpSize maxThreadsPerBlock totalConstMem major minor "
          "multiProcessorCount l2CacheSize maxThreadsPerMultiProcessor memoryBusWidth pciBusID pciDeviceID "
          "pciDomainID integrated canMapHostMemory concurrentKernels asyncEngineCount unifiedAddressing "
          "managedMemory isMultiGpuBoard sharedMemPerMultiprocessor pageableMemoryAccess "
          "concurrentManagedAccess").split()


def _props(p: Any) -> ht.hipDeviceProp_t | None:
    if p is None:
        return None
    fields: dict[str, Any] = {f: int(getattr(p, f)) for f in _PROPS}
    fields.update(name=_s(p.name), gcnArchName=f"sm_{p.major}{p.minor}", maxThreadsDim=list(p.maxThreadsDim),
                  maxGridSize=list(p.maxGridSize))
    for extra in ("clockRate", "memoryClockRate", "computeMode"):
        if hasattr(p, extra):  # removed from cudaDeviceProp in CUDA 13
            fields[extra] = int(getattr(p, extra))
    fields.update(device_calls.more_props(p))
    return ht.hipDeviceProp_t(**fields)


def hipDeviceReset() -> tuple:
    """Destroy every allocation, stream, event, module and host registration of the
    device (cudaDeviceReset) and forget what this backend knew about them."""
    (err,) = S.rt.cudaDeviceReset()
    memory.forget_all()
    modules.forget_all()
    _runtime.forget_all_contexts()
    _tls.last = SUCCESS
    return (_err(err),)


@irregular(bare=True)  # reports the last error; the driver is loaded by hand
def hipGetLastError() -> tuple:
    """The last error of any hip call on this thread (then reset), or the runtime's."""
    own = getattr(_tls, "last", SUCCESS)
    _tls.last = SUCCESS
    rt_err = SUCCESS
    if S.ready:
        rt_err = _err(S.rt.cudaGetLastError()[0])
    elif own == SUCCESS:
        _runtime.require_driver()
        rt_err = _err(S.rt.cudaGetLastError()[0])
    return (own if own else rt_err,)


@irregular(bare=True)
def hipPeekAtLastError() -> tuple:
    own = getattr(_tls, "last", SUCCESS)
    if not S.ready:
        _runtime.require_driver()
    rt_err = _err(S.rt.cudaPeekAtLastError()[0])
    return (own if own else rt_err,)


def _ptr_attrs(a: Any) -> ht.hipPointerAttribute_t | None:
    if a is None:
        return None
    mtype = ht.hipMemoryType(int(a.type))
    return ht.hipPointerAttribute_t(
        type=mtype, device=int(a.device), devicePointer=int(a.devicePointer or 0),
        hostPointer=int(a.hostPointer or 0), isManaged=int(mtype == ht.hipMemoryType.hipMemoryTypeManaged))


# ------------------------------------------------------- host functions, stream memops

@irregular(raw=True)  # a ctypes function object gives its code address, not its own
def hipLaunchHostFunc(stream: Any, fn: Any, userData: Any) -> tuple:
    """Enqueued through libcuda's own cuLaunchHostFunc (ctypes): cuda-bindings 13.3.1
    wraps the function in a one-shot trampoline that crashes a graph's second launch."""
    addr = modules.host_fn_address(fn)
    if not addr:
        return (E.hipErrorInvalidValue,)
    _runtime.ensure_context()
    res = S.libcuda.cuLaunchHostFunc(ctypes.c_void_p(_h(stream) or None), ctypes.c_void_p(addr),
                                     ctypes.c_void_p(ht.as_address(userData) or None))
    return (_err(res),)


# ------------------------------------------------------------------- capture and graphs

def hipThreadExchangeStreamCaptureMode(mode: ht.hipStreamCaptureMode | None) -> tuple:
    """Exchange this thread's capture mode; without ``mode`` (hip-python's binding cannot
    pass one in) just report the current mode, leaving it unchanged."""
    if mode is None:
        err, prev = S.rt.cudaThreadExchangeStreamCaptureMode(0)
        if int(err) == 0:
            S.rt.cudaThreadExchangeStreamCaptureMode(int(prev))
    else:
        err, prev = S.rt.cudaThreadExchangeStreamCaptureMode(int(mode))
    if int(err):
        return (_err(err), None)
    return (SUCCESS, ht.hipStreamCaptureMode(int(prev)))


# -------------------------------------------------------------------- modules, launches

def hipModuleLaunchKernel(f: int, gridDimX: Any, gridDimY: Any, gridDimZ: Any, blockDimX: Any, blockDimY: Any,
                          blockDimZ: Any, sharedMemBytes: Any, stream: int, kernelParams: Any, extra: Any) -> tuple:
    return modules.launch(f, (int(gridDimX), int(gridDimY), int(gridDimZ)),
                          (int(blockDimX), int(blockDimY), int(blockDimZ)),
                          sharedMemBytes, stream, kernelParams, extra, E.hipErrorInvalidHandle)


def hipLaunchKernel(function_address: int, numBlocks: tuple, dimBlocks: tuple, args: Any, sharedMemBytes: Any,
                    stream: int) -> tuple:
    """``function_address`` is a function handle from hipModuleGetFunction (or its int);
    ``args`` is kernelParams' form (argument addresses)."""
    return modules.launch(function_address, numBlocks, dimBlocks, sharedMemBytes, stream, args, None,
                          E.hipErrorInvalidDeviceFunction)


def _wait_value_args(stream: int, ptr: int, value: Any, flags: Any, mask: Any) -> tuple:
    if (int(mask) & 0xFFFFFFFF) != 0xFFFFFFFF:
        raise HipError(E.hipErrorNotSupported)  # CUDA has no mask operand
    # hipStreamWaitValueGte/Eq/And/Nor have CU_STREAM_WAIT_VALUE_GEQ/EQ/AND/NOR's values
    return (stream, ptr, int(value) & 0xFFFFFFFF, flags)


# Calls that are one CUDA call (see onecall.one_call): its name, how each output converts and,
# where they differ from the row's, the CUDA call's arguments.
C = _one_call
CALLS: dict[str, Callable[..., tuple]] = {
    "hipInit": C("cu.cuInit"),
    "hipGetDeviceCount": C("rt.cudaGetDeviceCount", _int),
    "hipGetDevice": C("rt.cudaGetDevice", _int),
    "hipGetDeviceProperties": C("rt.cudaGetDeviceProperties", _props),
    "hipPointerGetAttributes": C("rt.cudaPointerGetAttributes", _ptr_attrs),
    "hipMemGetInfo": C("rt.cudaMemGetInfo", _int, _int),
    "hipEventElapsedTime": C("rt.cudaEventElapsedTime", lambda v: float(v or 0.0)),
    "hipStreamBeginCapture": C("rt.cudaStreamBeginCapture"),
    "hipStreamEndCapture": C("rt.cudaStreamEndCapture", _live(ht.ihipGraph)),
    "hipStreamIsCapturing": C("rt.cudaStreamIsCapturing", _status),
    "hipStreamGetCaptureInfo": C("rt.cudaStreamGetCaptureInfo", _status, _int),
    "hipDeviceSynchronize": C("rt.cudaDeviceSynchronize"),
    "hipFreeAsync": C("rt.cudaFreeAsync"),
    "hipMemset": C("rt.cudaMemset"),
    "hipMemsetAsync": C("rt.cudaMemsetAsync"),
    "hipMemcpy": C("rt.cudaMemcpy", args=lambda d, s, n, k: (d, s, n, _kind(k))),
    "hipMemcpyAsync": C("rt.cudaMemcpyAsync", args=lambda d, s, n, k, st: (d, s, n, _kind(k), st)),
    "hipMemcpyHtoD": C("rt.cudaMemcpy", args=lambda d, s, n: (d, s, n, 1)),
    "hipMemcpyDtoH": C("rt.cudaMemcpy", args=lambda d, s, n: (d, s, n, 2)),
    "hipMemcpyDtoD": C("rt.cudaMemcpy", args=lambda d, s, n: (d, s, n, 3)),
    "hipMemcpyHtoDAsync": C("rt.cudaMemcpyAsync", args=lambda d, s, n, st: (d, s, n, 1, st)),
    "hipMemcpyDtoHAsync": C("rt.cudaMemcpyAsync", args=lambda d, s, n, st: (d, s, n, 2, st)),
    "hipMemcpyDtoDAsync": C("rt.cudaMemcpyAsync", args=lambda d, s, n, st: (d, s, n, 3, st)),
    "hipHostRegister": C("drv.cuMemHostRegister", args=lambda p, n, flags: (p, n, CU_PINNED | int(flags) & 0x4)),
    "hipHostUnregister": C("drv.cuMemHostUnregister"),
    "hipHostGetDevicePointer": C("drv.cuMemHostGetDevicePointer", _new(ht.Pointer), args=lambda p, flags: (p, 0)),
    "hipStreamWaitValue32": C("drv.cuStreamWaitValue32", args=_wait_value_args),
    "hipStreamWriteValue32": C("drv.cuStreamWriteValue32", args=lambda st, p, v, f: (st, p, int(v) & 0xFFFFFFFF, f)),
    "hipStreamCreate": C("rt.cudaStreamCreate", _new(ht.ihipStream_t)),
    "hipStreamCreateWithFlags": C("rt.cudaStreamCreateWithFlags", _new(ht.ihipStream_t)),
    "hipStreamDestroy": C("rt.cudaStreamDestroy"),
    "hipStreamSynchronize": C("rt.cudaStreamSynchronize"),
    "hipStreamQuery": C("rt.cudaStreamQuery"),
    "hipStreamWaitEvent": C("rt.cudaStreamWaitEvent"),
    "hipEventCreate": C("rt.cudaEventCreate", _new(ht.ihipEvent_t)),
    "hipEventCreateWithFlags": C("rt.cudaEventCreateWithFlags", _new(ht.ihipEvent_t)),
    "hipEventRecord": C("rt.cudaEventRecord"),
    "hipEventSynchronize": C("rt.cudaEventSynchronize"),
    "hipEventQuery": C("rt.cudaEventQuery"),
    "hipEventDestroy": C("rt.cudaEventDestroy"),
    "hipGraphInstantiate": C("rt.cudaGraphInstantiate", _new(ht.hipGraphExec), lambda v: None, lambda v: ht.CStr(b""),
                             args=lambda g, size: (g, 0)),
    "hipGraphInstantiateWithFlags": C("rt.cudaGraphInstantiateWithFlags", _new(ht.hipGraphExec)),
    "hipGraphLaunch": C("rt.cudaGraphLaunch"),
    "hipGraphExecDestroy": C("rt.cudaGraphExecDestroy"),
    "hipGraphDestroy": C("rt.cudaGraphDestroy"),
    **graph_calls.CALLS,
}
BODIES: dict[str, Callable] = {
    **{name: fn for name, fn in globals().items() if name.startswith("hip") and isinstance(fn, types.FunctionType)},
    **CALLS, "hipMalloc": memory.malloc, "hipMallocAsync": memory.malloc, "hipFree": memory.free,
    "hipHostMalloc": memory.host_alloc, "hipHostAlloc": memory.host_alloc,
    "hipMallocHost": lambda size: memory.host_alloc(size, 0), "hipHostFree": memory.host_free,
    "hipFreeHost": memory.host_free, "hipModuleLoadData": modules.load_data,
    "hipModuleGetFunction": modules.get_function, "hipModuleUnload": modules.unload,
    **device_calls.BODIES,
    **memory_calls.BODIES,
    **memory_calls.CALLS,
    **graph_calls.BODIES,
    **pool_calls.BODIES,
}


def build_module() -> types.ModuleType:
    """hip-python's ``hip`` over cuda-bindings (importing needs no driver)."""
    return surface.build("hrr.backends.cuda.hip", "hip-python's hip API over NVIDIA cuda-bindings (hrr's cuda backend)",
                         BODIES, FRAME, lambda kind: _h)
