"""hip-python's ``hip`` API over NVIDIA's cuda-bindings (runtime where simpler, driver for
modules, launches, pinned memory and stream memory operations).

Every function has hip-python's signature and returns hip-python's tuple: a
``hipError_t`` member first (CUDA errors mapped through ``_errors.CUDA_TO_HIP_NAME``),
then the outputs. Device allocations come back as ``DeviceArray``, pinned host memory as
``Pointer``, handles as hiptypes handle classes whose ``int()`` is the CUDA handle.
"""
from __future__ import annotations

import ctypes
import functools
import threading
import types
from typing import Any

from hrr.backends import hiptypes as ht
from hrr.backends.cuda import _runtime
from hrr.backends.cuda._errors import HIP_TO_CUDA, to_hip
from hrr.backends.cuda.builtin import BUILTIN_LAYOUTS, is_builtin_image
from hrr.backends.kernargs import (UNKNOWN, KernelLayout, LaunchArgsError, ParamSpec,
                                   kernarg_array, pack_kernel_args)

E = ht.hipError_t
SUCCESS = E.hipSuccess
S = _runtime.STATE

CU_MEMHOSTALLOC_PORTABLE = 0x01
CU_MEMHOSTALLOC_DEVICEMAP = 0x02
CU_MEMHOSTALLOC_WRITECOMBINED = 0x04
CU_MEMHOSTREGISTER_PORTABLE = 0x01
CU_MEMHOSTREGISTER_DEVICEMAP = 0x02
CU_MEMHOSTREGISTER_IOMEMORY = 0x04
CU_LAUNCH_PARAM_END = 0

_tls = threading.local()
_NOUTPUTS = {"hipThreadExchangeStreamCaptureMode": 1}
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


# ---------------------------------------------------------------------------- plumbing

def _outputs(name: str) -> int:
    """How many values follow the error in ``name``'s result (hip-python's tuple)."""
    from hrr.api.catalogue import CATALOGUE

    api = CATALOGUE.get(name)
    return len(api.outs) if api is not None else _NOUTPUTS.get(name, 0)


def _api(fn):
    """Load the driver on first use; without one, return the HIP error a real runtime
    returns there (hipErrorNoDevice, hipErrorInsufficientDriver) with None outputs, never
    raise into the app. Record a failed result as the thread's last error."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not S.ready:
            try:
                _runtime.require_driver()
            except _runtime.DriverUnavailable as exc:
                err = getattr(E, exc.hip_error)
                _tls.last = err
                return (err,) + (None,) * _outputs(fn.__name__)
        try:
            result = fn(*args, **kwargs)
        except _BadEnum:
            result = (E.hipErrorInvalidValue,) + (None,) * _NOUTPUTS.get(fn.__name__, 0)
        if result[0]:
            _tls.last = result[0]
        return result
    return wrapper


def _err(res) -> "ht.hipError_t":
    return SUCCESS if int(res) == 0 else to_hip(res)


def _h(obj: Any) -> int:
    """A handle argument (hiptypes handle, int, None, c_void_p, cuda-bindings handle)."""
    try:
        return ht.as_handle_value(obj)
    except ht.PointerConversionError:
        return int(obj)


def _addr(obj: Any) -> int:
    return ht.as_address(obj)


class _BadEnum(Exception):
    pass


def _enum(value: Any, enum_type: type, arg: str):
    """An enum argument as its member. Apps pass hip-python's members; plain ints (as a
    replay decodes them) are accepted too, like the sim backend does. A value outside the
    enum is hipErrorInvalidValue."""
    try:
        return enum_type(int(value))
    except (ValueError, TypeError):
        raise _BadEnum(f"{value!r} is not a {enum_type.__name__} ({arg})") from None


def _drv():
    _runtime.ensure_context()
    return S.drv


# ------------------------------------------------------------------ errors, device, init

def hipGetErrorName(hip_error):
    try:
        member = E(int(hip_error))
    except ValueError:
        return (SUCCESS, ht.CStr(b"hipErrorUnknown"))
    return (SUCCESS, ht.CStr(member.name.encode()))


_HIP_STRINGS = {0: b"no error", 1: b"invalid argument", 2: b"out of memory",
                900: b"operation not permitted when stream is capturing",
                901: b"operation failed due to a previous error during capture"}


def hipGetErrorString(hip_error):
    code = int(hip_error)
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
        text = bytes(hipGetErrorName(hip_error)[1])
    return (SUCCESS, ht.CStr(text))


@_api
def hipInit(flags):
    return (_err(S.drv.cuInit(int(flags))[0]),)


@_api
def hipGetDeviceCount():
    err, n = S.rt.cudaGetDeviceCount()
    return (_err(err), int(n or 0))


@_api
def hipGetDevice():
    err, d = S.rt.cudaGetDevice()
    return (_err(err), int(d or 0))


@_api
def hipSetDevice(deviceId):
    (err,) = S.rt.cudaSetDevice(int(deviceId))
    _runtime.forget_context()
    return (_err(err),)


def _s(v) -> str:
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).split(b"\0", 1)[0].decode(errors="replace")
    return str(v)


@_api
def hipGetDeviceProperties(deviceId):
    err, p = S.rt.cudaGetDeviceProperties(int(deviceId))
    if int(err):
        return (_err(err), None)
    arch = f"sm_{p.major}{p.minor}"
    fields = dict(
        name=_s(p.name), gcnArchName=arch, totalGlobalMem=int(p.totalGlobalMem),
        sharedMemPerBlock=int(p.sharedMemPerBlock), regsPerBlock=int(p.regsPerBlock),
        warpSize=int(p.warpSize), maxThreadsPerBlock=int(p.maxThreadsPerBlock),
        maxThreadsDim=list(p.maxThreadsDim), maxGridSize=list(p.maxGridSize),
        totalConstMem=int(p.totalConstMem), major=int(p.major), minor=int(p.minor),
        multiProcessorCount=int(p.multiProcessorCount), l2CacheSize=int(p.l2CacheSize),
        maxThreadsPerMultiProcessor=int(p.maxThreadsPerMultiProcessor),
        memoryBusWidth=int(p.memoryBusWidth), pciBusID=int(p.pciBusID),
        pciDeviceID=int(p.pciDeviceID), pciDomainID=int(p.pciDomainID),
        integrated=int(p.integrated), canMapHostMemory=int(p.canMapHostMemory),
        concurrentKernels=int(p.concurrentKernels), asyncEngineCount=int(p.asyncEngineCount),
        unifiedAddressing=int(p.unifiedAddressing), managedMemory=int(p.managedMemory),
        isMultiGpuBoard=int(p.isMultiGpuBoard),
        sharedMemPerMultiprocessor=int(p.sharedMemPerMultiprocessor),
        pageableMemoryAccess=int(p.pageableMemoryAccess),
        concurrentManagedAccess=int(p.concurrentManagedAccess),
    )
    for extra in ("clockRate", "memoryClockRate", "computeMode"):
        if hasattr(p, extra):  # removed from cudaDeviceProp in CUDA 13
            fields[extra] = int(getattr(p, extra))
    return (SUCCESS, ht.hipDeviceProp_t(**fields))


@_api
def hipDeviceSynchronize():
    return (_err(S.rt.cudaDeviceSynchronize()[0]),)


@_api
def hipDeviceReset():
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


def hipGetLastError():
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


def hipPeekAtLastError():
    own = getattr(_tls, "last", SUCCESS)
    if not S.ready:
        _runtime.require_driver()
    rt_err = _err(S.rt.cudaPeekAtLastError()[0])
    return (own if own else rt_err,)


@_api
def hipMemGetInfo():
    err, free, total = S.rt.cudaMemGetInfo()
    return (_err(err), int(free or 0), int(total or 0))


@_api
def hipPointerGetAttributes(ptr):
    err, a = S.rt.cudaPointerGetAttributes(_addr(ptr))
    if int(err):
        return (_err(err), None)
    mtype = ht.hipMemoryType(int(a.type))
    return (SUCCESS, ht.hipPointerAttribute_t(
        type=mtype, device=int(a.device), devicePointer=int(a.devicePointer or 0),
        hostPointer=int(a.hostPointer or 0), isManaged=int(mtype == ht.hipMemoryType.hipMemoryTypeManaged)))


# ------------------------------------------------------------------------------ memory

@_api
def hipMalloc(size):
    size = int(size)
    err, p = S.rt.cudaMalloc(size)
    if int(err) or not p:
        return (_err(err), None)
    return (SUCCESS, ht.DeviceArray(int(p), size))


def _free_pinned(addr: int) -> "ht.hipError_t":
    (res,) = _drv().cuMemFreeHost(addr)
    if int(res) == 0:
        with _lock:
            _pinned.pop(addr, None)
    return _err(res)


@_api
def hipFree(ptr):
    addr = _addr(ptr)
    if addr and addr in _pinned:
        return (_free_pinned(addr),)
    return (_err(S.rt.cudaFree(addr)[0]),)


@_api
def hipMallocAsync(size, stream):
    size = int(size)
    err, p = S.rt.cudaMallocAsync(size, _h(stream))
    if int(err) or not p:
        return (_err(err), None)
    return (SUCCESS, ht.DeviceArray(int(p), size))


@_api
def hipFreeAsync(dev_ptr, stream):
    return (_err(S.rt.cudaFreeAsync(_addr(dev_ptr), _h(stream))[0]),)


@_api
def hipMemset(dst, value, sizeBytes):
    return (_err(S.rt.cudaMemset(_addr(dst), int(value), int(sizeBytes))[0]),)


@_api
def hipMemsetAsync(dst, value, sizeBytes, stream):
    return (_err(S.rt.cudaMemsetAsync(_addr(dst), int(value), int(sizeBytes), _h(stream))[0]),)


def _cuda_kind(kind) -> int:
    k = int(_enum(kind, ht.hipMemcpyKind, "kind"))
    return 3 if k == 1024 else k  # DeviceToDeviceNoCU


@_api
def hipMemcpy(dst, src, sizeBytes, kind):
    k = _cuda_kind(kind)
    return (_err(S.rt.cudaMemcpy(_addr(dst), _addr(src), int(sizeBytes), k)[0]),)


@_api
def hipMemcpyAsync(dst, src, sizeBytes, kind, stream):
    k = _cuda_kind(kind)
    return (_err(S.rt.cudaMemcpyAsync(_addr(dst), _addr(src), int(sizeBytes), k, _h(stream))[0]),)


def _copy(dst, src, n, kind, stream=None, is_async=False):
    if is_async:
        return (_err(S.rt.cudaMemcpyAsync(_addr(dst), _addr(src), int(n), kind, _h(stream))[0]),)
    return (_err(S.rt.cudaMemcpy(_addr(dst), _addr(src), int(n), kind)[0]),)


@_api
def hipMemcpyHtoD(dst, src, sizeBytes):
    return _copy(dst, src, sizeBytes, 1)


@_api
def hipMemcpyDtoH(dst, src, sizeBytes):
    return _copy(dst, src, sizeBytes, 2)


@_api
def hipMemcpyDtoD(dst, src, sizeBytes):
    return _copy(dst, src, sizeBytes, 3)


@_api
def hipMemcpyHtoDAsync(dst, src, sizeBytes, stream):
    return _copy(dst, src, sizeBytes, 1, stream, True)


@_api
def hipMemcpyDtoHAsync(dst, src, sizeBytes, stream):
    return _copy(dst, src, sizeBytes, 2, stream, True)


@_api
def hipMemcpyDtoDAsync(dst, src, sizeBytes, stream):
    return _copy(dst, src, sizeBytes, 3, stream, True)


# ---------------------------------------------------------------- pinned host memory

def _host_alloc(size: int, flags: int):
    size = int(size)
    cu_flags = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP
    if int(flags) & 0x4:  # hipHostMallocWriteCombined
        cu_flags |= CU_MEMHOSTALLOC_WRITECOMBINED
    res, p = _drv().cuMemHostAlloc(size, cu_flags)
    if int(res) or not p:
        return (_err(res), None)
    with _lock:
        _pinned[int(p)] = size
    return (SUCCESS, ht.Pointer(int(p)))


@_api
def hipHostMalloc(size, flags=0):
    return _host_alloc(size, flags)


@_api
def hipMallocHost(size):
    return _host_alloc(size, 0)


@_api
def hipHostAlloc(size, flags=0):
    return _host_alloc(size, flags)


@_api
def hipHostFree(ptr):
    addr = _addr(ptr)
    if not addr:
        return (SUCCESS,)
    return (_free_pinned(addr),)


@_api
def hipFreeHost(ptr):
    addr = _addr(ptr)
    if not addr:
        return (SUCCESS,)
    return (_free_pinned(addr),)


@_api
def hipHostRegister(hostPtr, sizeBytes, flags):
    cu_flags = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP
    if int(flags) & 0x4:
        cu_flags |= CU_MEMHOSTREGISTER_IOMEMORY
    return (_err(_drv().cuMemHostRegister(_addr(hostPtr), int(sizeBytes), cu_flags)[0]),)


@_api
def hipHostUnregister(hostPtr):
    return (_err(_drv().cuMemHostUnregister(_addr(hostPtr))[0]),)


@_api
def hipHostGetDevicePointer(hstPtr, flags):
    res, d = _drv().cuMemHostGetDevicePointer(_addr(hstPtr), 0)
    if int(res):
        return (_err(res), None)
    return (SUCCESS, ht.Pointer(int(d)))


# ----------------------------------------------------------------------------- streams

@_api
def hipStreamCreate():
    err, s = S.rt.cudaStreamCreate()
    if int(err):
        return (_err(err), None)
    return (SUCCESS, ht.ihipStream_t(int(s)))


@_api
def hipStreamCreateWithFlags(flags):
    err, s = S.rt.cudaStreamCreateWithFlags(int(flags))
    if int(err):
        return (_err(err), None)
    return (SUCCESS, ht.ihipStream_t(int(s)))


@_api
def hipStreamDestroy(stream):
    return (_err(S.rt.cudaStreamDestroy(_h(stream))[0]),)


@_api
def hipStreamSynchronize(stream):
    return (_err(S.rt.cudaStreamSynchronize(_h(stream))[0]),)


@_api
def hipStreamQuery(stream):
    return (_err(S.rt.cudaStreamQuery(_h(stream))[0]),)


@_api
def hipStreamWaitEvent(stream, event, flags=0):
    return (_err(S.rt.cudaStreamWaitEvent(_h(stream), _h(event), int(flags))[0]),)


# ------------------------------------------------------------------------------ events

@_api
def hipEventCreate():
    err, e = S.rt.cudaEventCreate()
    if int(err):
        return (_err(err), None)
    return (SUCCESS, ht.ihipEvent_t(int(e)))


@_api
def hipEventCreateWithFlags(flags):
    err, e = S.rt.cudaEventCreateWithFlags(int(flags))
    if int(err):
        return (_err(err), None)
    return (SUCCESS, ht.ihipEvent_t(int(e)))


@_api
def hipEventRecord(event, stream=None):
    return (_err(S.rt.cudaEventRecord(_h(event), _h(stream))[0]),)


@_api
def hipEventSynchronize(event):
    return (_err(S.rt.cudaEventSynchronize(_h(event))[0]),)


@_api
def hipEventQuery(event):
    return (_err(S.rt.cudaEventQuery(_h(event))[0]),)


@_api
def hipEventElapsedTime(start, stop):
    err, ms = S.rt.cudaEventElapsedTime(_h(start), _h(stop))
    return (_err(err), float(ms or 0.0))


@_api
def hipEventDestroy(event):
    return (_err(S.rt.cudaEventDestroy(_h(event))[0]),)


# ------------------------------------------------------- host functions, stream memops

def _host_fn_address(fn: Any) -> int:
    """hip-python's hipHostFn_t rules, except that a ctypes function object gives its
    code address (and is kept alive) rather than the address of the ctypes object."""
    if isinstance(fn, ctypes._CFuncPtr):
        with _lock:
            _host_fn_keepalive.append(fn)
        return ctypes.cast(fn, ctypes.c_void_p).value or 0
    if callable(fn) and not isinstance(fn, (int, ht.Pointer)):
        raise TypeError("fn must be the address of a C function, e.g. "
                        "ctypes.cast(ctypes.CFUNCTYPE(None, ctypes.c_void_p)(f), ctypes.c_void_p).value")
    return ht.as_address(fn)


@_api
def hipLaunchHostFunc(stream, fn, userData):
    """Enqueued through libcuda's own cuLaunchHostFunc (ctypes): cuda-bindings 13.3.1
    wraps the function in a one-shot trampoline that crashes a graph's second launch."""
    addr = _host_fn_address(fn)
    if not addr:
        return (E.hipErrorInvalidValue,)
    _runtime.ensure_context()
    res = S.libcuda.cuLaunchHostFunc(ctypes.c_void_p(_h(stream) or None), ctypes.c_void_p(addr),
                                     ctypes.c_void_p(_addr(userData) or None))
    return (_err(res),)


@_api
def hipStreamWaitValue32(stream, ptr, value, flags, mask=0xFFFFFFFF):
    if (int(mask) & 0xFFFFFFFF) != 0xFFFFFFFF:
        return (E.hipErrorNotSupported,)  # CUDA has no mask operand
    # hipStreamWaitValueGte/Eq/And/Nor have CU_STREAM_WAIT_VALUE_GEQ/EQ/AND/NOR's values
    res = _drv().cuStreamWaitValue32(_h(stream), _addr(ptr), int(value) & 0xFFFFFFFF, int(flags))
    return (_err(res[0]),)


@_api
def hipStreamWriteValue32(stream, ptr, value, flags=0):
    res = _drv().cuStreamWriteValue32(_h(stream), _addr(ptr), int(value) & 0xFFFFFFFF, int(flags))
    return (_err(res[0]),)


# ------------------------------------------------------------------- capture and graphs

@_api
def hipStreamBeginCapture(stream, mode):
    m = int(_enum(mode, ht.hipStreamCaptureMode, "mode"))
    return (_err(S.rt.cudaStreamBeginCapture(_h(stream), m)[0]),)


@_api
def hipStreamEndCapture(stream):
    err, g = S.rt.cudaStreamEndCapture(_h(stream))
    if int(err) or g is None or not int(g):
        return (_err(err), None)
    return (SUCCESS, ht.ihipGraph(int(g)))


@_api
def hipStreamIsCapturing(stream):
    err, status = S.rt.cudaStreamIsCapturing(_h(stream))
    if int(err):
        return (_err(err), ht.hipStreamCaptureStatus(0))
    return (SUCCESS, ht.hipStreamCaptureStatus(int(status)))


@_api
def hipStreamGetCaptureInfo(stream):
    res = S.rt.cudaStreamGetCaptureInfo(_h(stream))
    err = res[0]
    if int(err):
        return (_err(err), ht.hipStreamCaptureStatus(0), 0)
    return (SUCCESS, ht.hipStreamCaptureStatus(int(res[1])), int(res[2] or 0))


@_api
def hipThreadExchangeStreamCaptureMode(mode=None):
    """Exchange this thread's capture mode; without ``mode`` (hip-python's binding cannot
    pass one in) just report the current mode, leaving it unchanged."""
    if mode is None:
        err, prev = S.rt.cudaThreadExchangeStreamCaptureMode(0)
        if int(err) == 0:
            S.rt.cudaThreadExchangeStreamCaptureMode(int(prev))
    else:
        err, prev = S.rt.cudaThreadExchangeStreamCaptureMode(int(_enum(mode, ht.hipStreamCaptureMode, "mode")))
    if int(err):
        return (_err(err), None)
    return (SUCCESS, ht.hipStreamCaptureMode(int(prev)))


@_api
def hipGraphInstantiate(graph, bufferSize=0):
    err, ex = S.rt.cudaGraphInstantiate(_h(graph), 0)
    if int(err):
        return (_err(err), None, None, ht.CStr(b""))
    return (SUCCESS, ht.hipGraphExec(int(ex)), None, ht.CStr(b""))


@_api
def hipGraphInstantiateWithFlags(graph, flags):
    err, ex = S.rt.cudaGraphInstantiateWithFlags(_h(graph), int(flags))
    if int(err):
        return (_err(err), None)
    return (SUCCESS, ht.hipGraphExec(int(ex)))


@_api
def hipGraphLaunch(graphExec, stream):
    return (_err(S.rt.cudaGraphLaunch(_h(graphExec), _h(stream))[0]),)


@_api
def hipGraphExecDestroy(graphExec):
    return (_err(S.rt.cudaGraphExecDestroy(_h(graphExec))[0]),)


@_api
def hipGraphDestroy(graph):
    return (_err(S.rt.cudaGraphDestroy(_h(graph))[0]),)


# -------------------------------------------------------------------- modules, launches

def _image_bytes(image: Any) -> bytes | int:
    try:
        return bytes(memoryview(image).cast("B"))
    except TypeError:
        return ht.as_address(image)


@_api
def hipModuleLoadData(image):
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
            (k.offset, k.size) == (p.offset, p.size) for k, p in zip(known.params, params)):
        return known
    return KernelLayout(tuple(params))


@_api
def hipModuleGetFunction(module, kname):
    name = kname.encode() if isinstance(kname, str) else bytes(kname)
    mod = _h(module)
    res, f = _drv().cuModuleGetFunction(mod, name)
    if int(res):
        return (_err(res), None)
    handle = int(f)
    layout = _query_layout(handle, name.decode(errors="replace"), mod in _builtin_modules)
    with _lock:
        _layouts[handle] = layout
        _module_funcs.setdefault(mod, []).append(handle)
    return (SUCCESS, ht.ihipModuleSymbol_t(handle))


@_api
def hipModuleUnload(module):
    mod = _h(module)
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


def _launch(fh: int, grid, block, shared: int, stream: Any, kernarg: bytes):
    drv = _drv()
    if kernarg:
        arr, keep = kernarg_array(kernarg)
        arr[4] = CU_LAUNCH_PARAM_END  # CUDA's END is 0, HIP's is 3
        extra = ctypes.addressof(arr)
    else:
        arr = keep = None
        extra = 0
    res = drv.cuLaunchKernel(fh, *grid, *block, int(shared), _h(stream), None, extra)
    del arr, keep
    return (_err(res[0]),)


@_api
def hipModuleLaunchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                          sharedMemBytes, stream, kernelParams, extra):
    fh = _h(f)
    layout = _layouts.get(fh)
    if layout is None:
        return (E.hipErrorInvalidHandle,)
    try:
        kernarg = pack_kernel_args(layout, kernelParams, extra)
    except (LaunchArgsError, ht.PointerConversionError, ValueError):
        return (E.hipErrorInvalidValue,)
    return _launch(fh, (int(gridDimX), int(gridDimY), int(gridDimZ)),
                   (int(blockDimX), int(blockDimY), int(blockDimZ)), sharedMemBytes, stream, kernarg)


def _dims(d: Any) -> tuple[int, int, int]:
    if isinstance(d, int):
        return (d, 1, 1)
    if isinstance(d, ht.dim3):
        return (d.x, d.y, d.z)
    if hasattr(d, "x"):
        return (int(d.x), int(getattr(d, "y", 1)), int(getattr(d, "z", 1)))
    t = tuple(int(v) for v in d)
    return (t + (1, 1, 1))[:3]


@_api
def hipLaunchKernel(function_address, numBlocks, dimBlocks, args, sharedMemBytes, stream):
    """``function_address`` is a function handle from hipModuleGetFunction (or its int);
    ``args`` is kernelParams' form (argument addresses)."""
    fh = _h(function_address) if not isinstance(function_address, ht.Pointer) else int(function_address)
    layout = _layouts.get(fh)
    if layout is None:
        return (E.hipErrorInvalidDeviceFunction,)
    try:
        kernarg = pack_kernel_args(layout, args, None)
    except (LaunchArgsError, ht.PointerConversionError, ValueError):
        return (E.hipErrorInvalidValue,)
    return _launch(fh, _dims(numBlocks), _dims(dimBlocks), sharedMemBytes, stream, kernarg)


HIP_APIS = (
    "hipInit", "hipGetDeviceCount", "hipGetDevice", "hipSetDevice", "hipGetDeviceProperties",
    "hipDeviceSynchronize", "hipDeviceReset", "hipGetLastError", "hipPeekAtLastError", "hipGetErrorName",
    "hipGetErrorString", "hipMemGetInfo", "hipPointerGetAttributes", "hipMalloc", "hipFree",
    "hipMallocAsync", "hipFreeAsync", "hipMemset", "hipMemsetAsync", "hipMemcpy",
    "hipMemcpyAsync", "hipMemcpyHtoD", "hipMemcpyDtoH", "hipMemcpyDtoD", "hipMemcpyHtoDAsync",
    "hipMemcpyDtoHAsync", "hipMemcpyDtoDAsync", "hipHostMalloc", "hipMallocHost",
    "hipHostAlloc", "hipHostFree", "hipFreeHost", "hipHostRegister", "hipHostUnregister",
    "hipHostGetDevicePointer", "hipStreamCreate", "hipStreamCreateWithFlags",
    "hipStreamDestroy", "hipStreamSynchronize", "hipStreamQuery", "hipStreamWaitEvent",
    "hipEventCreate", "hipEventCreateWithFlags", "hipEventRecord", "hipEventSynchronize",
    "hipEventQuery", "hipEventElapsedTime", "hipEventDestroy", "hipLaunchHostFunc",
    "hipStreamWaitValue32", "hipStreamWriteValue32", "hipStreamBeginCapture",
    "hipStreamEndCapture", "hipStreamIsCapturing", "hipStreamGetCaptureInfo",
    "hipThreadExchangeStreamCaptureMode", "hipGraphInstantiate", "hipGraphInstantiateWithFlags",
    "hipGraphLaunch", "hipGraphExecDestroy", "hipGraphDestroy", "hipModuleLoadData",
    "hipModuleGetFunction", "hipModuleUnload", "hipModuleLaunchKernel", "hipLaunchKernel",
)


def build_module() -> types.ModuleType:
    g = globals()
    return ht.surface_module("hrr.backends.cuda.hip",
                             "hip-python's hip API over NVIDIA cuda-bindings (hrr's cuda backend)",
                             {name: g[name] for name in HIP_APIS})
