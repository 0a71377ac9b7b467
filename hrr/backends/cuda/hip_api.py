"""The cuda backend's bodies of hip-python's ``hip`` calls, over NVIDIA's cuda-bindings
(runtime where simpler, driver for modules, launches, pinned memory and stream memory
operations); ``hrr.backends.surface`` builds the module from the catalogue around them.

Results carry CUDA's errors mapped through ``_errors.CUDA_TO_HIP_NAME``. Device
allocations come back as ``DeviceArray``, pinned host memory as ``Pointer``, handles as
hiptypes handle classes whose ``int()`` is the CUDA handle. A call that is one driver
call is an entry of ``CALLS``, not a function.
"""
from __future__ import annotations

import ctypes
import threading
import types
from typing import Any, Callable

from hrr.backends import hiptypes as ht
from hrr.backends import surface
from hrr.backends.cuda import _runtime
from hrr.backends.cuda._errors import HIP_TO_CUDA, to_hip
from hrr.backends.cuda.builtin import BUILTIN_LAYOUTS, is_builtin_image
from hrr.backends.kernargs import (UNKNOWN, KernelLayout, LaunchArgsError, ParamSpec,
                                   kernarg_array, pack_kernel_args)
from hrr.backends.surface import HipError, irregular

E = ht.hipError_t
SUCCESS = E.hipSuccess
S = _runtime.STATE

# cuMemHostAlloc's and cuMemHostRegister's flags: PORTABLE | DEVICEMAP (HIP's pinned memory
# is both), plus bit 0x4 as HIP has it (WRITECOMBINED for an allocation, IOMEMORY for a
# registration: hipHostMallocWriteCombined and hipHostRegisterIoMemory are 0x4 too)
CU_PINNED = 0x01 | 0x02
CU_LAUNCH_PARAM_END = 0

_tls = threading.local()
_lock = threading.Lock()
# pinned allocations made by hipHostMalloc & co: address -> size (hipFree frees them too)
_pinned: dict[int, int] = {}
# function handle -> layout; module handle -> its functions
_layouts: dict[int, KernelLayout] = {}
_module_funcs: dict[int, list[int]] = {}
_builtin_modules: set[int] = set()
# ctypes host-function objects handed to us: kept for the life of the process, since a
# stream or graph may call them at any later time
_host_fn_keepalive: list[Any] = []

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


def _err(res: Any) -> "ht.hipError_t":
    return SUCCESS if int(res) == 0 else to_hip(res)


def _h(obj: Any) -> int:
    """A handle argument (hiptypes handle, int, None, c_void_p, cuda-bindings handle)."""
    try:
        return ht.as_handle_value(obj)
    except ht.PointerConversionError:
        return int(obj)


def _drv() -> Any:
    _runtime.ensure_context()
    return S.drv


def _one_call(path: str, *outs: Callable[[Any], Any], args: Callable[..., tuple] | None = None) -> Callable[..., tuple]:
    """The body of a call that is one CUDA call: ``rt.NAME`` (runtime), ``drv.NAME``
    (driver, with the context made current) or ``cu.NAME`` (driver, as is); arguments in
    the row's order, or as ``args`` maps them, as ints; each of ``outs`` converts an output
    (None when the call failed or CUDA has no such output)."""
    where, name = path.split(".")

    def body(*a: Any) -> tuple:
        a = a if args is None else args(*a)
        api = S.rt if where == "rt" else _drv() if where == "drv" else S.drv
        res = getattr(api, name)(*map(int, a))
        if not outs:
            return (_err(res[0]),)
        vals = res[1:] if int(res[0]) == 0 else ()
        return (_err(res[0]), *(conv(vals[i] if i < len(vals) else None) for i, conv in enumerate(outs)))
    return body


def _new(cls: type) -> Callable[[Any], Any]:
    return lambda v: None if v is None else cls(int(v))


def _int(v: Any) -> int:
    return int(v or 0)


def _status(v: Any) -> ht.hipStreamCaptureStatus:
    return ht.hipStreamCaptureStatus(int(v or 0))


def _live(cls: type) -> Callable[[Any], Any]:
    """A handle output where CUDA's NULL handle means none."""
    return lambda v: cls(int(v)) if v is not None and int(v) else None


def _kind(kind: Any) -> int:
    return 3 if int(kind) == 1024 else int(kind)  # DeviceToDeviceNoCU is CUDA's DeviceToDevice


# ------------------------------------------------------------------ errors, device, init

@irregular(bare=True)  # needs no driver
def hipGetErrorName(hip_error: Any) -> tuple:
    return (SUCCESS, ht.CStr(surface.error_name(hip_error)))


_HIP_STRINGS = {0: b"no error", 1: b"invalid argument", 2: b"out of memory",
                900: b"operation not permitted when stream is capturing",
                901: b"operation failed due to a previous error during capture"}


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
    return ht.hipDeviceProp_t(**fields)


def hipDeviceReset() -> tuple:
    """Destroy every allocation, stream, event, module and host registration of the
    device (cudaDeviceReset) and forget what this backend knew about them."""
    with _lock:
        (err,) = S.rt.cudaDeviceReset()
        _pinned.clear()
        _layouts.clear()
        _module_funcs.clear()
        _builtin_modules.clear()
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


# ------------------------------------------------------------------------------ memory

def _malloc(size: Any, *stream: int) -> tuple:
    """hipMalloc, and hipMallocAsync (with its stream)."""
    size = int(size)
    err, p = (S.rt.cudaMallocAsync if stream else S.rt.cudaMalloc)(size, *stream)
    if int(err) or not p:
        return (_err(err), None)
    return (SUCCESS, ht.DeviceArray(int(p), size))


def _free_pinned(addr: int) -> "ht.hipError_t":
    (res,) = _drv().cuMemFreeHost(addr)
    if int(res) == 0:
        with _lock:
            _pinned.pop(addr, None)
    return _err(res)


def hipFree(addr: int) -> tuple:
    if addr and addr in _pinned:
        return (_free_pinned(addr),)
    return (_err(S.rt.cudaFree(addr)[0]),)


# ---------------------------------------------------------------- pinned host memory

def _host_alloc(size: Any, flags: Any) -> tuple:
    size = int(size)
    res, p = _drv().cuMemHostAlloc(size, CU_PINNED | int(flags) & 0x4)
    if int(res) or not p:
        return (_err(res), None)
    with _lock:
        _pinned[int(p)] = size
    return (SUCCESS, ht.Pointer(int(p)))


def hipHostFree(addr: int) -> tuple:
    if not addr:
        return (SUCCESS,)
    return (_free_pinned(addr),)


# ------------------------------------------------------- host functions, stream memops

def _host_fn_address(fn: Any) -> int:
    """hip-python's hipHostFn_t rules, except that a ctypes function object gives its
    code address (and is kept alive) rather than the address of the ctypes object."""
    if isinstance(fn, ctypes._CFuncPtr):  # type: ignore[attr-defined]
        with _lock:
            _host_fn_keepalive.append(fn)
        return ctypes.cast(fn, ctypes.c_void_p).value or 0
    if callable(fn) and not isinstance(fn, (int, ht.Pointer)):
        raise TypeError("fn must be the address of a C function, e.g. "
                        "ctypes.cast(ctypes.CFUNCTYPE(None, ctypes.c_void_p)(f), ctypes.c_void_p).value")
    return ht.as_address(fn)


@irregular(raw=True)  # a ctypes function object gives its code address, not its own
def hipLaunchHostFunc(stream: Any, fn: Any, userData: Any) -> tuple:
    """Enqueued through libcuda's own cuLaunchHostFunc (ctypes): cuda-bindings 13.3.1
    wraps the function in a one-shot trampoline that crashes a graph's second launch."""
    addr = _host_fn_address(fn)
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

def _image_bytes(image: Any) -> bytes | int:
    try:
        return bytes(memoryview(image).cast("B"))
    except TypeError:
        return ht.as_address(image)


def hipModuleLoadData(image: Any) -> tuple:
    data = _image_bytes(image)
    if isinstance(data, bytes):
        data = _translate_foreign_image(data)
    res, mod = _drv().cuModuleLoadData(data)
    if int(res):
        return (_err(res), None)
    handle = int(mod)
    with _lock:
        _module_funcs[handle] = []
        if isinstance(data, bytes) and is_builtin_image(data):
            _builtin_modules.add(handle)
    return (SUCCESS, ht.ihipModule_t(handle))


_sim_code: bytes | None = None


def _translate_foreign_image(data: bytes) -> bytes:
    """The sim's built-in code object names the built-in library; load ours for it."""
    global _sim_code
    if _sim_code is None:
        try:
            from hrr.backends import sim
            _sim_code = bytes(sim.builtin_code_object())
        except Exception:  # noqa: BLE001 - no sim, or it has no such object
            _sim_code = b""
    if _sim_code and data == _sim_code:
        from hrr.backends.cuda.builtin import builtin_code_object
        return builtin_code_object()
    return data


def _query_layout(func_handle: int, name: str, builtin: bool) -> KernelLayout:
    drv = S.drv
    params = []
    i = 0
    while i < 4096:
        try:
            res, off, size = drv.cuFuncGetParamInfo(func_handle, i)
        except RuntimeError:
            break
        if int(res) or off is None:
            break
        params.append(ParamSpec(int(off), int(size), UNKNOWN, f"arg{i}"))
        i += 1
    known = BUILTIN_LAYOUTS.get(name) if builtin else None
    if known is not None and len(known.params) == len(params) and all(
            (k.offset, k.size) == (p.offset, p.size) for k, p in zip(known.params, params, strict=True)):
        return known
    return KernelLayout(tuple(params))


def hipModuleGetFunction(mod: int, kname: Any) -> tuple:
    name = kname.encode() if isinstance(kname, str) else bytes(kname)
    res, f = _drv().cuModuleGetFunction(mod, name)
    if int(res):
        return (_err(res), None)
    handle = int(f)
    layout = _query_layout(handle, name.decode(errors="replace"), mod in _builtin_modules)
    with _lock:
        _layouts[handle] = layout
        _module_funcs.setdefault(mod, []).append(handle)
    return (SUCCESS, ht.ihipModuleSymbol_t(handle))


def hipModuleUnload(mod: int) -> tuple:
    res = _drv().cuModuleUnload(mod)[0]
    if int(res) == 0:
        with _lock:
            for fh in _module_funcs.pop(mod, []):
                _layouts.pop(fh, None)
            _builtin_modules.discard(mod)
    return (_err(res),)


def kernel_layout(function: Any) -> KernelLayout:
    """The parameter layout of a function handle from hipModuleGetFunction."""
    layout = _layouts.get(_h(function))
    if layout is None:
        raise KeyError(f"unknown kernel function {function!r}")
    return layout


def _launch(fh: int, grid: tuple, block: tuple, shared: Any, stream: int, kernel_params: Any, extra: Any,
            missing: "ht.hipError_t") -> tuple:
    layout = _layouts.get(fh)
    if layout is None:
        return (missing,)
    try:
        kernarg = pack_kernel_args(layout, kernel_params, extra)
    except (LaunchArgsError, ht.PointerConversionError, ValueError):
        return (E.hipErrorInvalidValue,)
    drv = _drv()
    if kernarg:
        arr, keep = kernarg_array(kernarg)
        arr[4] = CU_LAUNCH_PARAM_END  # CUDA's END is 0, HIP's is 3
        extra_arg = ctypes.addressof(arr)
    else:
        arr = keep = None
        extra_arg = 0
    res = drv.cuLaunchKernel(fh, *grid, *block, int(shared), stream, None, extra_arg)
    del arr, keep
    return (_err(res[0]),)


def hipModuleLaunchKernel(f: int, gridDimX: Any, gridDimY: Any, gridDimZ: Any, blockDimX: Any, blockDimY: Any,
                          blockDimZ: Any, sharedMemBytes: Any, stream: int, kernelParams: Any, extra: Any) -> tuple:
    return _launch(f, (int(gridDimX), int(gridDimY), int(gridDimZ)), (int(blockDimX), int(blockDimY), int(blockDimZ)),
                   sharedMemBytes, stream, kernelParams, extra, E.hipErrorInvalidHandle)


def hipLaunchKernel(function_address: int, numBlocks: tuple, dimBlocks: tuple, args: Any, sharedMemBytes: Any,
                    stream: int) -> tuple:
    """``function_address`` is a function handle from hipModuleGetFunction (or its int);
    ``args`` is kernelParams' form (argument addresses)."""
    return _launch(function_address, numBlocks, dimBlocks, sharedMemBytes, stream, args, None,
                   E.hipErrorInvalidDeviceFunction)


def _wait_value_args(stream: int, ptr: int, value: Any, flags: Any, mask: Any) -> tuple:
    if (int(mask) & 0xFFFFFFFF) != 0xFFFFFFFF:
        raise HipError(E.hipErrorNotSupported)  # CUDA has no mask operand
    # hipStreamWaitValueGte/Eq/And/Nor have CU_STREAM_WAIT_VALUE_GEQ/EQ/AND/NOR's values
    return (stream, ptr, int(value) & 0xFFFFFFFF, flags)


# Calls that are one CUDA call (see _one_call): its name, how each output converts and,
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
}
BODIES: dict[str, Callable] = {
    **{name: fn for name, fn in globals().items() if name.startswith("hip") and isinstance(fn, types.FunctionType)},
    **CALLS, "hipMalloc": _malloc, "hipMallocAsync": _malloc, "hipHostMalloc": _host_alloc, "hipHostAlloc": _host_alloc,
    "hipMallocHost": lambda size: _host_alloc(size, 0), "hipFreeHost": hipHostFree,
}


def build_module() -> types.ModuleType:
    """hip-python's ``hip`` over cuda-bindings (importing needs no driver)."""
    return surface.build("hrr.backends.cuda.hip", "hip-python's hip API over NVIDIA cuda-bindings (hrr's cuda backend)",
                         BODIES, FRAME, lambda kind: _h)
