"""hiprtc's API over NVRTC. Always compiles to a cubin for the device's architecture
(sm_90 without a GPU): the pip NVRTC's PTX is newer than a 13.0 driver accepts, a cubin
is not. hip-only options are dropped or translated; ``hiprtcGetCode`` returns the cubin."""
from __future__ import annotations

import ctypes
import functools
import threading
import types
from typing import Any, Callable

from hrr.backends import hiptypes as ht
from hrr.backends.cuda import _runtime
from hrr.backends.cuda._errors import to_hiprtc
from hrr.backends.cuda.builtin import DEFAULT_ARCH

R = ht.hiprtcResult

_arch_lock = threading.Lock()
_arch: str | None = None


def device_arch() -> str:
    """``sm_XY`` of the current device, or sm_90 when no driver/GPU is present."""
    global _arch
    if _arch is not None:
        return _arch
    with _arch_lock:
        arch = DEFAULT_ARCH
        if _runtime.driver_present():
            try:
                _runtime.require_driver()
                rt = _runtime.STATE.rt
                err, dev = rt.cudaGetDevice()
                if int(err) == 0:
                    e1, major = rt.cudaDeviceGetAttribute(
                        rt.cudaDeviceAttr.cudaDevAttrComputeCapabilityMajor, dev)
                    e2, minor = rt.cudaDeviceGetAttribute(
                        rt.cudaDeviceAttr.cudaDevAttrComputeCapabilityMinor, dev)
                    if int(e1) == 0 and int(e2) == 0:
                        arch = f"sm_{major}{minor}"
            except Exception:  # noqa: BLE001 - no usable device: the default arch
                arch = DEFAULT_ARCH
        _arch = arch
        return arch


# hip/hip_runtime.h is implicit in hiprtc; NVRTC gets a small stand-in so HIP sources
# that include it (and use the hipThreadIdx_x style macros) compile.
HIP_RUNTIME_STUB = b"""#pragma once
#define __HIP_PLATFORM_NVIDIA__ 1
#define hipThreadIdx_x threadIdx.x
#define hipThreadIdx_y threadIdx.y
#define hipThreadIdx_z threadIdx.z
#define hipBlockIdx_x blockIdx.x
#define hipBlockIdx_y blockIdx.y
#define hipBlockIdx_z blockIdx.z
#define hipBlockDim_x blockDim.x
#define hipBlockDim_y blockDim.y
#define hipBlockDim_z blockDim.z
#define hipGridDim_x gridDim.x
#define hipGridDim_y gridDim.y
#define hipGridDim_z gridDim.z
"""
_STUB_HEADERS = {b"hip/hip_runtime.h": HIP_RUNTIME_STUB, b"hip_runtime.h": HIP_RUNTIME_STUB}

_DROP_PREFIXES = (b"--offload-arch", b"-offload-arch", b"--amdgpu", b"-mcpu", b"-mcumode",
                  b"-mno-", b"-mwavefrontsize", b"-fgpu", b"-fno-gpu", b"-ffast-math",
                  b"-O", b"--save-temps", b"-save-temps", b"-fPIC", b"--cuda-", b"-Wno-")
_TRANSLATE = {b"-ffast-math": b"--use_fast_math", b"-g": b"-G"}


def translate_options(options: list[bytes], arch: str) -> list[bytes]:
    """hiprtc options -> NVRTC options (always ending in a cubin target for ``arch``)."""
    out: list[bytes] = []
    has_arch = False
    for opt in options or ():
        opt = opt.encode() if isinstance(opt, str) else bytes(opt)
        if opt in _TRANSLATE:
            out.append(_TRANSLATE[opt])
            continue
        if opt.startswith((b"--gpu-architecture", b"-arch")):
            value = opt.split(b"=", 1)[-1]
            if value.startswith(b"compute_"):  # PTX target: use the matching cubin instead
                opt = b"--gpu-architecture=sm_" + value[len(b"compute_"):]
            has_arch = True
            out.append(opt)
            continue
        if opt.startswith(_DROP_PREFIXES):
            continue
        out.append(opt)
    if not has_arch:
        out.append(f"--gpu-architecture={arch}".encode())
    return out


_programs: dict[int, Any] = {}
_prog_lock = threading.Lock()


def _prog(prog: Any) -> Any:
    return _programs.get(ht.as_handle_value(prog))


def _api(fn: Callable[..., tuple]) -> Callable[..., tuple]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> tuple:
        _runtime.nvrtc_module()  # BackendError when cuda-bindings is missing
        return fn(*args, **kwargs)
    return wrapper


def _write_into(dest: Any, data: bytes) -> None:
    try:
        mv = memoryview(dest)
    except TypeError:
        addr = ht.as_address(dest)
        ctypes.memmove(addr, data, len(data))
        return
    mv = mv.cast("B")
    n = min(len(data), mv.nbytes)
    mv[:n] = data[:n]


@_api
def hiprtcCreateProgram(src: Any, name: Any, numHeaders: Any, headers: Any, includeNames: Any) -> tuple:
    nvrtc = _runtime.nvrtc_module()
    src = src.encode() if isinstance(src, str) else bytes(src)
    name = (name.encode() if isinstance(name, str) else bytes(name or b"prog.cu"))
    hdrs = [h.encode() if isinstance(h, str) else bytes(h) for h in (headers or [])][:numHeaders or 0]
    names = [h.encode() if isinstance(h, str) else bytes(h) for h in (includeNames or [])][:numHeaders or 0]
    for inc, body in _STUB_HEADERS.items():
        if inc not in names:
            names.append(inc)
            hdrs.append(body)
    try:
        err, prog = nvrtc.nvrtcCreateProgram(src, name, len(hdrs), hdrs, names)
    except RuntimeError:
        return (R.HIPRTC_ERROR_PROGRAM_CREATION_FAILURE, None)
    if int(err):
        return (to_hiprtc(err), None)
    handle = int(prog)
    with _prog_lock:
        _programs[handle] = prog
    return (R.HIPRTC_SUCCESS, ht.hiprtcProgram(handle))


@_api
def hiprtcCompileProgram(prog: Any, numOptions: Any, options: Any) -> tuple:
    nvrtc = _runtime.nvrtc_module()
    p = _prog(prog)
    if p is None:
        return (R.HIPRTC_ERROR_INVALID_PROGRAM,)
    opts = translate_options(list(options or [])[:numOptions or 0], device_arch())
    (err,) = nvrtc.nvrtcCompileProgram(p, len(opts), opts)
    return (to_hiprtc(err),)


@_api
def hiprtcGetCodeSize(prog: Any) -> tuple:
    nvrtc = _runtime.nvrtc_module()
    p = _prog(prog)
    if p is None:
        return (R.HIPRTC_ERROR_INVALID_PROGRAM, 0)
    err, n = nvrtc.nvrtcGetCUBINSize(p)
    return (to_hiprtc(err), int(n or 0))


@_api
def hiprtcGetCode(prog: Any, code: Any) -> tuple:
    nvrtc = _runtime.nvrtc_module()
    p = _prog(prog)
    if p is None:
        return (R.HIPRTC_ERROR_INVALID_PROGRAM,)
    err, n = nvrtc.nvrtcGetCUBINSize(p)
    if int(err):
        return (to_hiprtc(err),)
    buf = b" " * n
    (err,) = nvrtc.nvrtcGetCUBIN(p, buf)
    if int(err) == 0:
        _write_into(code, buf)
    return (to_hiprtc(err),)


@_api
def hiprtcGetProgramLogSize(prog: Any) -> tuple:
    nvrtc = _runtime.nvrtc_module()
    p = _prog(prog)
    if p is None:
        return (R.HIPRTC_ERROR_INVALID_PROGRAM, 0)
    err, n = nvrtc.nvrtcGetProgramLogSize(p)
    return (to_hiprtc(err), int(n or 0))


@_api
def hiprtcGetProgramLog(prog: Any, log: Any) -> tuple:
    nvrtc = _runtime.nvrtc_module()
    p = _prog(prog)
    if p is None:
        return (R.HIPRTC_ERROR_INVALID_PROGRAM,)
    err, n = nvrtc.nvrtcGetProgramLogSize(p)
    if int(err):
        return (to_hiprtc(err),)
    buf = b" " * n
    (err,) = nvrtc.nvrtcGetProgramLog(p, buf)
    if int(err) == 0:
        _write_into(log, buf)
    return (to_hiprtc(err),)


@_api
def hiprtcDestroyProgram(prog: Any) -> tuple:
    nvrtc = _runtime.nvrtc_module()
    with _prog_lock:
        p = _programs.pop(ht.as_handle_value(prog), None)
    if p is None:
        return (R.HIPRTC_ERROR_INVALID_PROGRAM,)
    (err,) = nvrtc.nvrtcDestroyProgram(p)
    return (to_hiprtc(err),)


def hiprtcGetErrorString(result: Any) -> tuple:
    try:
        member = R(int(result))
    except ValueError:
        return (R.HIPRTC_SUCCESS, ht.CStr(b"HIPRTC_ERROR_UNKNOWN"))
    return (R.HIPRTC_SUCCESS, ht.CStr(member.name.encode()))


@_api
def hiprtcVersion() -> tuple:
    nvrtc = _runtime.nvrtc_module()
    try:
        err, major, minor = nvrtc.nvrtcVersion()
    except RuntimeError:
        return (R.HIPRTC_ERROR_INTERNAL_ERROR, 0, 0)
    return (to_hiprtc(err), int(major or 0), int(minor or 0))


HIPRTC_APIS = ("hiprtcCreateProgram", "hiprtcCompileProgram", "hiprtcGetCodeSize",
               "hiprtcGetCode", "hiprtcGetProgramLogSize", "hiprtcGetProgramLog",
               "hiprtcDestroyProgram", "hiprtcGetErrorString", "hiprtcVersion")


def build_module() -> types.ModuleType:
    g = globals()
    return ht.surface_module("hrr.backends.cuda.hiprtc",
                             "hiprtc's API over NVIDIA NVRTC (cubin output) for hrr's cuda backend",
                             {name: g[name] for name in HIPRTC_APIS})
