"""The cuda backend's modules, kernel functions, launches and host functions.

CUDA does not say how a kernel's parameters are typed, so the backend keeps, per function
handle, the parameter layout it built when the function was looked up (cuFuncGetParamInfo's
offsets and sizes; the built-in library's typed layouts where they match), and per module
the functions looked up in it, so an unload forgets them. Launches pack ``kernelParams``
or ``extra`` into one kernarg buffer by that layout.
"""
from __future__ import annotations

import ctypes
import threading
from typing import Any

from hrr import hiptypes as ht
from hrr.hiptypes import kernelsource
from hrr.hiptypes.codefile import buffer_or_address
from hrr.hiptypes.simcode import MAGIC as SIM_MAGIC
from hrr.hiptypes import hipError_t
from hrr.backends.cuda._errors import SUCCESS, hip_error
from hrr.backends.cuda._runtime import STATE as S
from hrr.backends.cuda._runtime import driver, ensure_context, handle_value
from hrr.backends.cuda.builtin import BUILTIN_LAYOUTS, is_builtin_image
from hrr.backends.cuda import native as native_launch
from hrr.hiptypes.kernargs import UNKNOWN, KernelLayout, LaunchArgsError, ParamSpec, pack_kernel_args

E = ht.hipError_t
CU_LAUNCH_PARAM_END = 0

_lock = threading.Lock()
# function handle -> layout; module handle -> its functions
_layouts: dict[int, KernelLayout] = {}
_module_funcs: dict[int, list[int]] = {}
_builtin_modules: set[int] = set()
# ctypes host-function objects handed to us: kept for the life of the process, since a
# stream or graph may call them at any later time
_host_fn_keepalive: list[Any] = []


def forget_all() -> None:
    """hipDeviceReset unloaded every module: forget their functions and layouts."""
    with _lock:
        _layouts.clear()
        _module_funcs.clear()
        _builtin_modules.clear()


def _image_bytes(image: Any) -> bytes | int:
    """The image's bytes when it is a buffer or a kernel source code object at an address;
    else the address (the driver reads a cubin or fatbin there itself)."""
    addr = buffer_or_address(image)
    if isinstance(addr, bytes) or not addr:
        return addr
    try:
        return kernelsource.read_at(addr) or addr
    except kernelsource.KernelSourceError:
        return addr


def _unwrap(data: bytes) -> bytes | None:
    """The cubin inside a kernel source code object (hrr's hiprtc hands those out); for one
    that holds none (a program the sim compiled: its source and options only), the cubin
    of that source compiled here; None when there is none to be had."""
    try:
        ks = kernelsource.decode(data)
    except kernelsource.KernelSourceError:
        return None
    if ks.native_kind.startswith("cubin") and ks.native:
        return ks.native
    return _compile_here(ks) if not ks.native_kind and not ks.native else None


def _compile_here(ks: kernelsource.KernelSource) -> bytes | None:
    """The cubin of a one-unit program given as source (a capture on the sim), compiled by
    this backend's hiprtc with the program's options and name expressions, as the program
    would have had it on this GPU; None when it does not compile or needs a device-code link
    (several units)."""
    from hrr.backends.cuda import hiprtc_api as rtc

    if len(ks.units) != 1:
        return None
    (unit,) = ks.units
    err, prog = rtc.hiprtcCreateProgram(unit.source, unit.name.encode(), len(unit.headers),
                                        [text for _, text in unit.headers], [name.encode() for name, _ in unit.headers])
    if int(err):
        return None
    try:
        for expr in ks.name_expressions:
            rtc.hiprtcAddNameExpression(prog, expr.encode())
        options = [o.encode() for o in ks.options]
        if int(rtc.hiprtcCompileProgram(prog, len(options), options)[0]):
            return None
        err, code = rtc._code(prog)
    finally:
        rtc.hiprtcDestroyProgram(prog)
    if int(err):
        return None
    try:
        compiled = kernelsource.decode(code)
    except kernelsource.KernelSourceError:
        return None
    return compiled.native if compiled.native_kind == "cubin" and compiled.native else None


def load_data(image: Any) -> tuple:
    """hipModuleLoadData: cuModuleLoadData of the image (bytes, or an address)."""
    data = _image_bytes(image)
    if isinstance(data, bytes) and kernelsource.is_kernel_source(data):
        cubin = _unwrap(data)
        if cubin is None:
            return (hipError_t.hipErrorInvalidImage, None)
        data = cubin
    if isinstance(data, bytes):
        data = _translate_foreign_image(data)
    res, mod = driver().cuModuleLoadData(data)
    if int(res):
        return (hip_error(res), None)
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
    if not data.startswith(SIM_MAGIC):
        return data   # a real image: the sim (0.1 s of imports) is never loaded for it
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


def get_function(mod: int, kname: Any) -> tuple:
    """hipModuleGetFunction: cuModuleGetFunction, then the function's parameter layout."""
    name = kname.encode() if isinstance(kname, str) else bytes(kname)
    res, f = driver().cuModuleGetFunction(mod, name)
    if int(res):
        return (hip_error(res), None)
    handle = int(f)
    layout = _query_layout(handle, name.decode(errors="replace"), mod in _builtin_modules)
    with _lock:
        _layouts[handle] = layout
        _module_funcs.setdefault(mod, []).append(handle)
    return (SUCCESS, ht.ihipModuleSymbol_t(handle))


def unload(mod: int) -> tuple:
    """hipModuleUnload: cuModuleUnload, then forget the module's functions."""
    res = driver().cuModuleUnload(mod)[0]
    if int(res) == 0:
        with _lock:
            for fh in _module_funcs.pop(mod, []):
                _layouts.pop(fh, None)
            _builtin_modules.discard(mod)
    return (hip_error(res),)


def kernel_layout(function: Any) -> KernelLayout:
    """The parameter layout of a function handle from hipModuleGetFunction."""
    layout = _layouts.get(handle_value(function))
    if layout is None:
        raise KeyError(f"unknown kernel function {function!r}")
    return layout


def launch(fh: int, grid: tuple, block: tuple, shared: Any, stream: int, kernel_params: Any, extra: Any,
           missing: "ht.hipError_t") -> tuple:
    """cuLaunchKernel of function ``fh`` with its arguments packed by its layout (``missing``
    when the backend knows no such function)."""
    layout = _layouts.get(fh)
    if layout is None:
        return (missing,)
    try:   # capture's or replay's handoff (a PackedKernargs) gives its bytes as they are
        kernarg = pack_kernel_args(layout, kernel_params, extra)
    except (LaunchArgsError, ht.PointerConversionError, ValueError):
        return (E.hipErrorInvalidValue,)
    if not kernarg:
        res = driver().cuLaunchKernel(fh, *grid, *block, int(shared), stream, None, 0)
        return (hip_error(res[0]),)
    return (_launch_bytes(fh, grid, block, int(shared), stream, kernarg),)


def launch_packed(fh: int, grid: tuple, block: tuple, shared: int, stream: int, kernargs: bytes) -> Any:
    """cuLaunchKernel of function ``fh`` with ``kernargs``, bytes of exactly its layout's
    size: the error (hipError_t); None when the function or the size is not that (the
    caller then goes through ``hip``, which says why)."""
    layout = _layouts.get(fh)
    n = len(kernargs)
    if layout is None or n != layout.size or not n:
        return None
    return _launch_bytes(fh, grid, block, shared, stream, kernargs)


def prepare_packed(fh: int, grid: tuple, block: tuple, shared: int, stream: int, kernargs: bytes,
                   on_error: Any) -> Any:
    """A zero-argument callable making the launch ``launch_packed`` would make (cuLaunchKernel
    from C: ``hrr.backends.cuda.native``), returning ``(hipSuccess,)`` or ``on_error(result)``;
    None where ``launch_packed`` would not take it or the extension is not there."""
    layout = _layouts.get(fh)
    n = len(kernargs)
    if layout is None or n != layout.size or not n or S.libcuda is None:
        return None
    ext, _ = native_launch.extension()
    if ext is None:
        return None
    ensure_context()   # the prepared launch runs on this thread, in this context
    address = ctypes.cast(S.libcuda.cuLaunchKernel, ctypes.c_void_p).value
    return ext.PreparedLaunch(address, fh, grid, block, shared, stream, kernargs, (SUCCESS,), on_error,
                              graph_calls())


#: The driver calls a prepared launch's ``repeat`` makes a CUDA graph with, in its order.
GRAPH_CALLS = ("cuGraphCreate", "cuGraphAddKernelNode_v2", "cuGraphInstantiateWithFlags", "cuGraphLaunch",
               "cuGraphExecDestroy", "cuGraphDestroy", "cuStreamIsCapturing")


def graph_calls() -> tuple[int, ...] | None:
    """The addresses of GRAPH_CALLS in libcuda, or None where one is missing (then a
    prepared launch repeats by single launches)."""
    try:
        found = tuple(ctypes.cast(getattr(S.libcuda, name), ctypes.c_void_p).value or 0 for name in GRAPH_CALLS)
    except AttributeError:
        return None
    return found if all(found) else None


def _launch_bytes(fh: int, grid: tuple, block: tuple, shared: int, stream: int, kernargs: bytes) -> Any:
    """cuLaunchKernel with ``kernargs`` (not empty) copied into the thread's buffer: the hipError_t."""
    n = len(kernargs)
    h = getattr(_launches, "h", None)
    if h is None or n > len(h.view):
        h = _launches.h = _LaunchBuffer(max(n, 4096))
    h.view[:n] = kernargs
    h.size.value = n
    ensure_context()
    gx, gy, gz = grid
    bx, by, bz = block
    res = S.drv.cuLaunchKernel(fh, gx, gy, gz, bx, by, bz, shared, stream, None, h.extra)[0]
    return SUCCESS if res == 0 else hip_error(res)


class _LaunchBuffer:
    """One thread's kernarg buffer and CUDA extra array (BUFFER_POINTER, SIZE, END) for
    ``launch_packed``: the driver copies the arguments during the launch call."""

    def __init__(self, capacity: int) -> None:
        self.buf = ctypes.create_string_buffer(capacity)
        self.view = memoryview(self.buf).cast("B")
        self.size = ctypes.c_size_t(0)
        self.words = (ctypes.c_void_p * 5)(1, ctypes.addressof(self.buf), 2, ctypes.addressof(self.size),
                                           CU_LAUNCH_PARAM_END)
        self.extra = ctypes.addressof(self.words)


_launches = threading.local()


def host_fn_address(fn: Any) -> int:
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
