"""The sim's bodies of hip-python's ``hip`` calls; ``hrr.backends.surface`` builds the
module (signatures, argument conversion, result tuples) from the catalogue around them.

A body gets its row's arguments converted (pointers as addresses, handles as the live
sim objects, enums as members), runs under the device lock and returns the result tuple
(None for a success without outputs) or raises ``HipError``; the frame records a failure
as the calling thread's last error and wakes host waiters. A body is what the device
does, as a thin call into the sim's model: capture rules, handle tables and submission
on ``device.Device``, copies and allocations on ``memory.Memory``, code objects in
``kernels``, stream memory operations in ``streams``.
"""
from __future__ import annotations

import ctypes
import threading
import types
from typing import Any, Callable

from hrr.backends import hiptypes as ht
from hrr.backends import surface
from hrr.backends.error_strings import error_string
from hrr.backends.hiptypes import (CStr, DeviceArray, Pointer, as_handle_value, hipError_t, hipMemcpyKind,
                                   hipStreamCaptureMode, hipStreamCaptureStatus)
from hrr.backends.kernargs import KernelLayout, LaunchArgsError, pack_kernel_args
from hrr.backends.sim import device as _device
from hrr.backends.sim import device_calls
from hrr.backends.sim import memory_calls
from hrr.backends.sim import pool_calls
from hrr.backends.sim.device import raise_device_error, refuse_if_capturing
from hrr.backends.sim import graph_calls
from hrr.backends.sim.graphs import GraphExec
from hrr.backends.sim.kernels import (CodeObjectError, Function, Module, image_bytes, kernel_name)
from hrr.backends.sim.memory import HOST_REGISTERED
from hrr.backends.sim.memory import checked_size as _size
from hrr.backends.sim.streams import Event, Op, Stream, wait_value_op, write_value_op
from hrr.backends.surface import HipError, irregular

SUCCESS = hipError_t.hipSuccess
_dev = _device.current  # the device whose model a body calls into

# The per-call protocol: the device lock, this thread noted as an API caller, a failure
# recorded as the thread's last error (with its detail), host waiters woken. Its locals
# must not be hip-python parameter names (hipDevicePrimaryCtx* take one called ``dev``).
FRAME = surface.Frame("""\
_sim = _current()
with _sim.lock:
    _sim.scheduler.api_threads.add(_ident())
    try:
        result = {call}
    except HipError as exc:
        result, detail = (exc.code, *NONES), exc.detail
    except LaunchArgsError as exc:
        result, detail = (_INVALID, *NONES), str(exc)
    else:
        detail = ""
    {record}
    if _sim.scheduler.waiting_threads:
        _sim.scheduler.cond.notify_all()
    return result
""", """\
if result[0] != _SUCCESS:
    _sim.set_last_error(result[0], detail)
""", {"_current": _device.current, "_ident": threading.get_ident, "HipError": HipError,
      "LaunchArgsError": LaunchArgsError, "_SUCCESS": SUCCESS, "_INVALID": hipError_t.hipErrorInvalidValue})


# -- lookups ----------------------------------------------------------------------------
def _stream(obj: Any) -> Stream:
    dev = _dev()
    return dev.lookup(dev.streams, obj, "stream")


# HIP answers an unknown (or destroyed, or NULL) handle of these kinds with another error
_LOOKUP_ERRORS = {"mem_pool": "hipErrorInvalidValue"}


def handle_lookup(kind: str) -> Callable[[Any], Any]:
    """A handle argument of ``kind`` as the live sim object (hipErrorInvalidHandle if none)."""
    if kind == "stream":
        return _stream
    attr, what = kind + "s", kind.replace("_", " ")
    code = _LOOKUP_ERRORS.get(kind, "hipErrorInvalidHandle")

    def lookup(obj: Any) -> Any:
        dev = _dev()
        return dev.lookup(getattr(dev, attr), obj, what, code)
    return lookup


def _keep(kind: str, make: Callable[[int], Any]) -> Any:
    return _dev().keep(kind, make)


# -- device and errors --------------------------------------------------------------------
def hipSetDevice(deviceId: int) -> None:
    if int(deviceId) != 0:
        raise HipError("hipErrorInvalidDevice", f"device {deviceId} does not exist (the sim has 1)")


def hipDeviceSynchronize() -> None:
    dev = _dev()
    dev.check_capture_safe("hipDeviceSynchronize")
    dev.wait_all()


def hipDeviceReset() -> None:
    """Destroy every allocation (device, pinned, registered), stream, event, module, graph
    and capture of this process; queued work is dropped, not run. Device addresses are
    never reused, so a stale pointer stays invalid."""
    _dev().reset()


@irregular(records=False)  # reports the last error: never records its own result
def hipGetLastError() -> tuple:
    dev = _dev()
    code, _ = dev.last_error()
    dev.clear_last_error()
    return (hipError_t(code),)


@irregular(records=False)
def hipPeekAtLastError() -> tuple:
    return (hipError_t(_dev().last_error()[0]),)


@irregular(raw=True)  # any int is accepted: an unknown one is hipErrorUnknown, not a failure
def hipGetErrorName(hip_error: Any) -> tuple:
    return (SUCCESS, CStr(surface.error_name(hip_error)))


@irregular(raw=True)
def hipGetErrorString(hipError: Any) -> tuple:
    name = surface.error_name(hipError)
    return (SUCCESS, CStr(error_string(name)))


def hipMemGetInfo() -> tuple:
    memory = _dev().memory
    return (SUCCESS, memory.total_bytes - memory.device_bytes_used, memory.total_bytes)


def hipPointerGetAttributes(addr: int) -> tuple:
    return (SUCCESS, _dev().memory.pointer_attributes(addr))


# -- device memory --------------------------------------------------------------------------
def _device_malloc(size: int) -> tuple:
    if size == 0:
        return (SUCCESS, None)
    alloc = _dev().memory.malloc(size)
    if alloc is None:
        raise HipError("hipErrorOutOfMemory", f"cannot allocate {size} bytes")
    return (SUCCESS, DeviceArray(alloc.base, size))


def hipMalloc(size: int) -> tuple:
    _dev().check_capture_safe("hipMalloc")
    return _device_malloc(_size(size))


def _free(addr: int, device: bool) -> None:
    """hipFree (``device``: device memory, or pinned, as HIP's hipFree also frees
    hipHostMalloc memory) and hipHostFree (pinned memory only)."""
    if not addr:
        return
    dev = _dev()
    dev.wait_all()  # like a GPU's free, wait for work that may still use the memory
    dev.memory.free(addr, device)


def hipMallocAsync(size: int, s: Stream) -> tuple:
    """From the device's current memory pool (its default pool unless hipDeviceSetMemPool)."""
    return pool_calls.malloc_from(_dev().current_pool, size, s, "hipMallocAsync")


def hipFreeAsync(addr: int, s: Stream) -> None:
    refuse_if_capturing(s, "hipFreeAsync")
    if not addr:
        return
    _dev().submit(s, _dev().memory.free_async_op(addr))


def _copy_op(dst: int, src: int, size: Any, kind: hipMemcpyKind) -> Callable[[], Op]:
    return _dev().memory.copy_op(dst, src, size, kind)


def _sync_on_null(make: Callable[[], Op], what: str) -> None:
    _dev().sync_on_null(make, what)


# -- pinned host memory ---------------------------------------------------------------------
def _host_malloc(size: Any, flags: int, what: str) -> tuple:
    _dev().check_capture_safe(what)
    n = _size(size)
    if n == 0:
        return (SUCCESS, None)
    alloc = _dev().memory.host_malloc(n, int(flags))
    if alloc is None:
        raise HipError("hipErrorOutOfMemory", f"{what}: cannot allocate {n} bytes of pinned memory")
    return (SUCCESS, Pointer(alloc.base))


def hipHostRegister(addr: int, sizeBytes: int, flags: int) -> None:
    _dev().memory.register(addr, _size(sizeBytes), int(flags))


def hipHostUnregister(addr: int) -> None:
    memory = _dev().memory
    memory.check_registered(addr)
    _dev().wait_all()
    memory.free_host(addr, HOST_REGISTERED)


def hipHostGetDevicePointer(addr: int, flags: int) -> tuple:
    if _dev().memory.find_host(addr) is None:
        raise HipError("hipErrorInvalidValue", f"0x{addr:x} is not pinned or registered host memory")
    return (SUCCESS, Pointer(addr))  # unified addressing: the device uses the host address


# -- streams and events ---------------------------------------------------------------------
def _create_stream(flags: int) -> tuple:
    handle = _keep("stream", lambda h: Stream(h, int(flags)))
    _dev().scheduler.add_stream(_dev().streams[int(handle)])
    return (SUCCESS, handle)


def hipStreamDestroy(s: Stream) -> None:
    if s.is_null:
        raise HipError("hipErrorInvalidHandle", "the null stream cannot be destroyed")
    if s.capture is not None:
        s.capture.invalidate("the capturing stream was destroyed")
    s.destroyed = True  # its queued work still runs; the scheduler drops it once drained
    del _dev().streams[s.handle]


def hipStreamSynchronize(s: Stream) -> None:
    refuse_if_capturing(s, "hipStreamSynchronize")
    dev = _dev()
    dev.check_capture_safe("hipStreamSynchronize")
    dev.wait(dev.scheduler.barrier_positions(s))


def hipStreamQuery(s: Stream) -> tuple:
    refuse_if_capturing(s, "hipStreamQuery")
    sched = _dev().scheduler
    done = sched.poll(sched.barrier_positions(s))
    raise_device_error(sched.take_async_error())
    return (SUCCESS,) if done else (hipError_t.hipErrorNotReady,)


def hipStreamWaitEvent(s: Stream, ev: Event, flags: int) -> None:
    _dev().wait_event(s, ev)


def hipEventRecord(ev: Event, s: Stream) -> None:
    _dev().record_event(ev, s)


def _refuse_captured_event(ev: Event, what: str) -> None:
    if ev.capture is not None:
        raise HipError("hipErrorCapturedEvent", f"{what}: the event was recorded in a capture")


def hipEventSynchronize(ev: Event) -> None:
    _refuse_captured_event(ev, "hipEventSynchronize")
    dev = _dev()
    dev.check_capture_safe("hipEventSynchronize")
    if ev.stream is not None:
        dev.wait([(ev.stream, ev.seq)])


def hipEventQuery(ev: Event) -> tuple:
    _refuse_captured_event(ev, "hipEventQuery")
    sched = _dev().scheduler
    done = ev.stream is None or sched.poll([(ev.stream, ev.seq)])
    raise_device_error(sched.take_async_error())
    return (SUCCESS,) if done else (hipError_t.hipErrorNotReady,)


def hipEventElapsedTime(a: Event, b: Event) -> tuple:
    for ev in (a, b):
        _refuse_captured_event(ev, "hipEventElapsedTime")
        if ev.flags & ht.CONSTANTS["hipEventDisableTiming"]:
            raise HipError("hipErrorInvalidHandle", "an event created with hipEventDisableTiming")
        if ev.stream is None:
            raise HipError("hipErrorInvalidHandle", "an event that was never recorded")
    if a.timestamp_us is None or b.timestamp_us is None:
        raise HipError("hipErrorNotReady", "an event has not completed yet")
    return (SUCCESS, (b.timestamp_us - a.timestamp_us) / 1000.0)


_HOST_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def hipLaunchHostFunc(s: Stream, fn_addr: int, data: int) -> None:
    if not fn_addr:
        raise HipError("hipErrorInvalidValue", "hipLaunchHostFunc: NULL function")
    callback = _HOST_FN(fn_addr)
    _dev().submit(s, lambda: Op(f"host_fn(0x{fn_addr:x})", lambda: callback(data or None), 1.0))


def hipStreamWaitValue32(s: Stream, ptr: int, value: int, flags: int, mask: int) -> None:
    memory = _dev().memory
    _dev().submit(s, wait_value_op(memory.resolve_for_kernel, memory.value_address(ptr), value, flags, mask))


def hipStreamWriteValue32(s: Stream, ptr: int, value: int, flags: int) -> None:
    memory = _dev().memory
    _dev().submit(s, write_value_op(memory.resolve_for_kernel, memory.value_address(ptr), value))


# -- capture and graphs -------------------------------------------------------------------
def hipStreamBeginCapture(s: Stream, mode: hipStreamCaptureMode) -> None:
    _dev().begin_capture(s, int(mode))


def hipStreamEndCapture(s: Stream) -> tuple:
    dev = _dev()
    session = s.capture
    nodes = dev.end_capture(s)
    if session.into is not None:   # hipStreamBeginCaptureToGraph: the nodes joined that graph
        return (SUCCESS, graph_calls.captured_into(session.into, nodes, session.after))
    return (SUCCESS, _keep("graph", lambda h: graph_calls.captured(h, nodes)))


def hipStreamGetCaptureInfo(s: Stream) -> tuple:
    if s.capture is None:
        return (SUCCESS, hipStreamCaptureStatus(0), 0)
    return (SUCCESS, hipStreamCaptureStatus(s.capture.status), s.capture.id)


def hipThreadExchangeStreamCaptureMode(mode: hipStreamCaptureMode | None) -> tuple:
    """hip-python takes no mode (the in/out argument is output only); passing one is an
    extension that sets this thread's mode."""
    dev = _dev()
    previous = dev.thread_capture_mode
    if mode is not None:
        dev.thread_capture_mode = int(mode)
    return (SUCCESS, hipStreamCaptureMode(previous))


def hipGraphLaunch(exe: GraphExec, s: Stream) -> None:
    graph_calls.launch(exe, s)


# -- modules and launches -----------------------------------------------------------------
def hipModuleLoadData(image: Any) -> tuple:
    try:
        data = image_bytes(image)
    except CodeObjectError as exc:
        raise HipError(exc.code, str(exc)) from None
    return (SUCCESS, memory_calls.load_module(data))


def hipModuleGetFunction(mod: Module, kname: Any) -> tuple:
    name = kernel_name(kname)
    if name not in mod.kernels:
        raise HipError("hipErrorNotFound", f"module has no kernel {name!r}")
    return (SUCCESS, _keep("function", lambda h: Function(h, mod, mod.library.kernels[name])))


def hipModuleUnload(mod: Module) -> None:
    dev = _dev()
    del dev.modules[mod.handle]
    memory_calls.free_globals(mod)
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


@irregular(raw=True)  # the launch shape is checked before the stream is looked up
def hipModuleLaunchKernel(f: Any, gridDimX: int, gridDimY: int, gridDimZ: int,
                          blockDimX: int, blockDimY: int, blockDimZ: int,
                          sharedMemBytes: int, stream: Any, kernelParams: Any,
                          extra: Any) -> None:
    dev = _dev()
    fn = dev.lookup(dev.functions, f, "function")
    _launch(fn, (gridDimX, gridDimY, gridDimZ), (blockDimX, blockDimY, blockDimZ),
            stream, kernelParams, extra, sharedMemBytes)


@irregular(raw=True)  # an unknown function is hipErrorInvalidDeviceFunction, not InvalidHandle
def hipLaunchKernel(function_address: Any, numBlocks: Any, dimBlocks: Any, args: Any,
                    sharedMemBytes: int, stream: Any) -> None:
    dev = _dev()
    fn = dev.lookup(dev.functions, function_address, "kernel function", "hipErrorInvalidDeviceFunction")
    _launch(fn, surface.dims(numBlocks), surface.dims(dimBlocks), stream, args, None, sharedMemBytes)


# Calls that are a constant, a deletion or another call's body with fixed arguments.
_H2D, _D2H, _D2D = (hipMemcpyKind.hipMemcpyHostToDevice, hipMemcpyKind.hipMemcpyDeviceToHost,
                    hipMemcpyKind.hipMemcpyDeviceToDevice)
TABLE: dict[str, Callable] = {
    "hipInit": lambda flags: None,
    "hipGetDeviceCount": lambda: (SUCCESS, 1),
    "hipGetDevice": lambda: (SUCCESS, 0),
    "hipStreamIsCapturing": lambda s: hipStreamGetCaptureInfo(s)[:2],
    "hipEventDestroy": lambda ev: _dev().forget("events", ev),
    "hipGraphExecDestroy": lambda exe: _dev().forget("graph_execs", exe),
    "hipGraphDestroy": lambda g: graph_calls.destroy_graph(g),
    "hipMemset": lambda dst, value, n: _sync_on_null(_dev().memory.memset_op(dst, value, n), "hipMemset"),
    "hipMemsetAsync": lambda dst, value, n, s: _dev().submit(s, _dev().memory.memset_op(dst, value, n)),
    "hipMemcpy": lambda dst, src, n, kind: _sync_on_null(_copy_op(dst, src, n, kind), "hipMemcpy"),
    "hipMemcpyAsync": lambda dst, src, n, kind, s: _dev().submit(s, _copy_op(dst, src, n, kind)),
    "hipMemcpyHtoD": lambda dst, src, n: _sync_on_null(_copy_op(dst, src, n, _H2D), "hipMemcpyHtoD"),
    "hipMemcpyDtoH": lambda dst, src, n: _sync_on_null(_copy_op(dst, src, n, _D2H), "hipMemcpyDtoH"),
    "hipMemcpyDtoD": lambda dst, src, n: _sync_on_null(_copy_op(dst, src, n, _D2D), "hipMemcpyDtoD"),
    "hipMemcpyHtoDAsync": lambda dst, src, n, s: _dev().submit(s, _copy_op(dst, src, n, _H2D)),
    "hipMemcpyDtoHAsync": lambda dst, src, n, s: _dev().submit(s, _copy_op(dst, src, n, _D2H)),
    "hipMemcpyDtoDAsync": lambda dst, src, n, s: _dev().submit(s, _copy_op(dst, src, n, _D2D)),
    "hipHostMalloc": lambda size, flags: _host_malloc(size, flags, "hipHostMalloc"),
    "hipMallocHost": lambda size: _host_malloc(size, 0, "hipMallocHost"),
    "hipHostAlloc": lambda size, flags: _host_malloc(size, flags, "hipHostAlloc"),
    "hipFree": lambda ptr: _free(ptr, True),
    "hipHostFree": lambda ptr: _free(ptr, False),
    "hipFreeHost": lambda ptr: _free(ptr, False),
    "hipStreamCreate": lambda: _create_stream(0),
    "hipStreamCreateWithFlags": _create_stream,
    "hipEventCreate": lambda: (SUCCESS, _keep("event", lambda h: Event(h, 0))),
    "hipEventCreateWithFlags": lambda flags: (SUCCESS, _keep("event", lambda h: Event(h, int(flags)))),
    "hipGraphInstantiate": lambda g, size: (SUCCESS, _keep("graph_exec", lambda h: g.instantiate(h)), None,
                                            CStr(b"")),
    "hipGraphInstantiateWithFlags": lambda g, flags: (SUCCESS, _keep("graph_exec",
                                                                     lambda h: g.instantiate(h, int(flags)))),
}
# On the sim's surface but not yet catalogue rows (name -> (body, outputs)): framed, with
# their arguments as passed, and recorded only once their row exists.
UNCATALOGUED: dict[str, tuple[Callable, int]] = {}

BODIES: dict[str, Callable] = {**{name: fn for name, fn in globals().items() if name.startswith("hip")
             and isinstance(fn, types.FunctionType)}, **TABLE, **device_calls.BODIES, **memory_calls.BODIES,
             **graph_calls.BODIES, **pool_calls.BODIES}
hip = surface.build("hrr.backends.sim.hip", "hrr sim backend: hip-python's hip surface", BODIES, FRAME,
                    handle_lookup, enum_errors={"hipMemcpyKind": "hipErrorInvalidMemcpyDirection"},
                    uncatalogued=UNCATALOGUED)


def kernel_layout(function: Any) -> KernelLayout:
    """The parameter layout of a function handle from hipModuleGetFunction (or its int)."""
    dev = _dev()
    with dev.lock:
        fn = dev.functions.get(as_handle_value(function))
    if fn is None:
        raise ValueError(f"{function!r} is not a live sim kernel function")
    return fn.kernel.layout


def last_error_detail() -> str:
    """The message behind this thread's last error (e.g. which stream deadlocked)."""
    return _dev().last_error()[1]
