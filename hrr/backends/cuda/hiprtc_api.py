"""hiprtc's API over NVRTC. Always compiles to a cubin for the device's architecture
(sm_90 without a GPU): the pip NVRTC's PTX is newer than a 13.0 driver accepts, a cubin
is not. hip-only options are dropped or translated; ``hiprtcGetCode`` returns the cubin.

The bodies of the catalogue family ``hiprtc``, each registered with ``@body``
(``hrr.backends.bodies``); ``build_module`` makes ``hiprtc`` from them."""
from __future__ import annotations

import ctypes
import functools
import os
import threading
import types
from typing import Any, Callable

import attrs

from hrr import hiptypes as ht
from hrr.hiptypes import kernelsource
from hrr.backends.bodies import Bodies
from hrr.backends.cuda import _runtime
from hrr.backends.cuda._errors import to_hiprtc
from hrr.backends.cuda.arch import device_arch

R = ht.hiprtcResult

body = Bodies("hiprtc")

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

# ---- options as users write them ---------------------------------------------------
# hiprtc takes clang/HIP options; NVRTC refuses any it does not know, so every option is
# translated to NVRTC's, passed on when NVRTC has it, or dropped with a line in the
# program log: an option is never why a compile fails.
_NVRTC_NAMES = frozenset(n.encode() for n in (
    "--gpu-architecture", "-arch", "--relocatable-device-code", "-rdc", "--extensible-whole-program",
    "-ewp", "--device-debug", "-G", "--generate-line-info", "-lineinfo", "--dopt", "-dopt",
    "--ptxas-options", "-Xptxas", "--maxrregcount", "-maxrregcount", "--ftz", "-ftz", "--prec-sqrt",
    "-prec-sqrt", "--prec-div", "-prec-div", "--fmad", "-fmad", "--use_fast_math", "-use_fast_math",
    "--extra-device-vectorization", "-extra-device-vectorization", "--modify-stack-limit",
    "-modify-stack-limit", "--dlink-time-opt", "-dlto", "--define-macro", "--undefine-macro",
    "--include-path", "--pre-include", "--no-source-include", "-no-source-include", "--std", "-std",
    "--builtin-move-forward", "--builtin-initializer-list", "--disable-warnings", "-w", "--restrict",
    "-restrict", "--device-as-default-execution-space", "-default-device", "--device-int128",
    "--optimization-info", "--display-error-number", "--no-display-error-number", "--diag-error",
    "--diag-suppress", "--diag-warn", "--brief-diagnostics", "--time", "--split-compile", "--minimal",
    "-Ofc", "--Ofast-compile"))
_SEPARATE_VALUE = {b"-D": b"-D", b"-U": b"-U", b"-I": b"-I", b"-include": b"--pre-include=",
                   b"--offload-arch": b"--offload-arch=", b"-x": b"-x", b"-arch": b"-arch="}
_STD = {b"c++03": b"c++03", b"c++11": b"c++11", b"c++14": b"c++14", b"c++17": b"c++17", b"c++20": b"c++20",
        b"c++0x": b"c++11", b"c++1y": b"c++14", b"c++1z": b"c++17", b"c++2a": b"c++20"}
_RENAMED = {b"-ffast-math": b"--use_fast_math", b"-g": b"-G", b"-ggdb": b"-G",
            b"-gline-tables-only": b"-lineinfo", b"-fgpu-rdc": b"--relocatable-device-code=true",
            b"-fno-gpu-rdc": b"--relocatable-device-code=false",
            b"-fgpu-flush-denormals-to-zero": b"--ftz=true", b"-fcuda-flush-denormals-to-zero": b"--ftz=true",
            b"-fno-gpu-flush-denormals-to-zero": b"--ftz=false",
            b"-fno-cuda-flush-denormals-to-zero": b"--ftz=false",
            b"-ffp-contract=fast": b"--fmad=true", b"-ffp-contract=on": b"--fmad=true",
            b"-ffp-contract=off": b"--fmad=false"}


def _as_bytes(opt: Any) -> bytes:
    if isinstance(opt, str):
        return opt.encode()
    return bytes(opt).split(b"\0", 1)[0]


def _cuda_target(value: bytes) -> bytes | None:
    """``sm_XY`` for a CUDA target name (``sm_90``, ``compute_90``, ``sm_90a``), else None."""
    if value.startswith(b"compute_"):
        value = b"sm_" + value[len(b"compute_"):]
    return value if value.startswith(b"sm_") and value[3:4].isdigit() else None


def _one(opt: bytes, arch: str) -> tuple[bytes | None, str]:
    """(NVRTC's option or None, why it was dropped)."""
    if opt in _RENAMED:
        return _RENAMED[opt], ""
    name, eq, value = opt.partition(b"=")
    if name in (b"--offload-arch", b"-offload-arch", b"--cuda-gpu-arch", b"--amdgpu-target",
                b"--gpu-architecture", b"-arch"):
        target = _cuda_target(value)
        if target is None:
            return None, f"not an NVIDIA target; compiled for this device's {arch}"
        return b"--gpu-architecture=" + target, ""
    if name in (b"-std", b"--std"):
        std = _STD.get(b"c++" + value[5:] if value.startswith(b"gnu++") else value)
        if std is None:
            return None, "a C++ standard NVRTC does not offer"
        return (opt if std == value else name + b"=" + std), ""
    if name[:2] in (b"-D", b"-U", b"-I") or name in _NVRTC_NAMES:
        return opt, ""
    if name[:2] == b"-O" and name not in (b"-Ofc",):
        return None, "NVRTC has no optimisation levels (it optimises as clang's -O3 does)"
    if name[:2] == b"-W":
        return None, "a clang warning option (NVRTC has only -w)"
    if name.startswith((b"-m", b"--amdgpu", b"-fhip", b"--hip", b"--rocm")):
        return None, "an AMD/HIP-only option"
    return None, "not an NVRTC option (HIP/clang only)"


def translate(options: Any, arch: str) -> tuple[list[bytes], list[str], bool]:
    """hiprtc options (bytes or str) -> (NVRTC options ending in a cubin target for
    ``arch`` unless one was given, a log line per dropped option, relocatable or not)."""
    raw = [_as_bytes(o) for o in options or ()]
    out: list[bytes] = []
    notes: list[str] = []
    i = 0
    while i < len(raw):
        opt = raw[i]
        if opt in _SEPARATE_VALUE and i + 1 < len(raw):   # "-D", "X=1": one option
            opt = _SEPARATE_VALUE[opt] + raw[i + 1]
            i += 1
        i += 1
        if opt.startswith(b"-x"):
            notes.append(f"hrr: option {opt.decode(errors='replace')!r} dropped: the language is CUDA C++ here\n")
            continue
        translated, why = _one(opt, arch)
        if translated is None:
            notes.append(f"hrr: option {opt.decode(errors='replace')!r} dropped: {why}\n")
        else:
            out.append(translated)
    if not any(o.startswith(b"--gpu-architecture=") or o.startswith(b"-arch=") for o in out):
        out.append(f"--gpu-architecture={arch}".encode())
    rdc = False
    for o in out:
        name, _, value = o.partition(b"=")
        if name in (b"--relocatable-device-code", b"-rdc"):
            rdc = value == b"true"
    return out, notes, rdc


def translate_options(options: list[bytes], arch: str) -> list[bytes]:
    """hiprtc options -> NVRTC options (always ending in a cubin target for ``arch``)."""
    return translate(options, arch)[0]


@attrs.define
class _ProgramInfo:
    notes: bytes = b""        # the dropped options, said at the top of the program log
    rdc: bool = False         # compiled with -fgpu-rdc: its cubin is relocatable "bitcode"
    options: tuple[str, ...] = ()   # as the program gave them (the sim compiles its source with them)
    code: bytes | None = None       # hiprtcGetCode's bytes, made once (GetCodeSize asks first)


_info: dict[int, _ProgramInfo] = {}


_programs: dict[int, Any] = {}
_prog_lock = threading.Lock()
# Each program's own source and headers: hiprtcGetCode hands out the cubin inside a kernel
# source code object with them, so an archive captured here can replay on the sim.
_units: dict[int, kernelsource.SourceUnit] = {}


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
    if mv.readonly:   # C writes into a read-only buffer too (cuda-python's nvrtcGetPTX into bytes)
        ht.write_into_read_only(dest, data[:n])
        return
    mv[:n] = data[:n]


@body
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
    unit = kernelsource.SourceUnit(name.split(b"\0", 1)[0].decode(errors="replace"), src.split(b"\0", 1)[0],
                                   tuple((n.split(b"\0", 1)[0].decode(errors="replace"), h.split(b"\0", 1)[0])
                                         for n, h in zip(names, hdrs, strict=False)
                                         if n not in _STUB_HEADERS))
    try:
        err, prog = nvrtc.nvrtcCreateProgram(src, name, len(hdrs), hdrs, names)
    except RuntimeError:
        return (R.HIPRTC_ERROR_PROGRAM_CREATION_FAILURE, None)
    if int(err):
        return (to_hiprtc(err), None)
    handle = int(prog)
    with _prog_lock:
        _programs[handle] = prog
        _units[handle] = unit
    return (R.HIPRTC_SUCCESS, ht.hiprtcProgram(handle))


@body
@_api
def hiprtcCompileProgram(prog: Any, numOptions: Any, options: Any) -> tuple:
    nvrtc = _runtime.nvrtc_module()
    p = _prog(prog)
    if p is None:
        return (R.HIPRTC_ERROR_INVALID_PROGRAM,)
    given = list(options or [])[:numOptions or 0]
    opts, notes, rdc = translate(given, device_arch())
    _info[ht.as_handle_value(prog)] = _ProgramInfo(
        "".join(notes).encode(), rdc, tuple(o.decode(errors="replace") if isinstance(o, bytes) else str(o)
                                            for o in given))
    (err,) = nvrtc.nvrtcCompileProgram(p, len(opts), opts)
    return (to_hiprtc(err),)


def _notes(prog: Any) -> bytes:
    info = _info.get(ht.as_handle_value(prog))
    return info.notes if info is not None else b""


@body
@_api
def hiprtcGetBitcodeSize(prog: Any) -> tuple:
    """The relocatable cubin of a program compiled with -fgpu-rdc: what the link API's
    linker (the driver's) takes, as AMD's linker takes LLVM bitcode."""
    nvrtc = _runtime.nvrtc_module()
    p = _prog(prog)
    info = _info.get(ht.as_handle_value(prog))
    if p is None or info is None or not info.rdc:
        return (R.HIPRTC_ERROR_INVALID_PROGRAM, 0)
    del nvrtc
    return hiprtcGetCodeSize(prog)


@body
@_api
def hiprtcGetBitcode(prog: Any, bitcode: Any) -> tuple:
    p = _prog(prog)
    info = _info.get(ht.as_handle_value(prog))
    if p is None or info is None or not info.rdc:
        return (R.HIPRTC_ERROR_INVALID_PROGRAM,)
    return hiprtcGetCode(prog, bitcode)


@body
@_api
def hiprtcAddNameExpression(prog: Any, name_expression: Any) -> tuple:
    nvrtc = _runtime.nvrtc_module()
    p = _prog(prog)
    if p is None:
        return (R.HIPRTC_ERROR_INVALID_PROGRAM,)
    if name_expression is None:
        return (R.HIPRTC_ERROR_INVALID_INPUT,)
    (err,) = nvrtc.nvrtcAddNameExpression(p, _as_bytes(name_expression))
    return (to_hiprtc(err),)


@body
@_api
def hiprtcGetLoweredName(prog: Any, name_expression: Any) -> tuple:
    nvrtc = _runtime.nvrtc_module()
    p = _prog(prog)
    if p is None:
        return (R.HIPRTC_ERROR_INVALID_PROGRAM, None)
    if name_expression is None:
        return (R.HIPRTC_ERROR_INVALID_INPUT, None)
    err, lowered = nvrtc.nvrtcGetLoweredName(p, _as_bytes(name_expression))
    if int(err):
        return (to_hiprtc(err), None)
    return (R.HIPRTC_SUCCESS, ht.CStr(_as_bytes(lowered)))


def _code(prog: Any) -> tuple[Any, bytes]:
    """(hiprtcResult, the program's cubin in a kernel source code object with its source)."""
    nvrtc = _runtime.nvrtc_module()
    p = _prog(prog)
    if p is None:
        return R.HIPRTC_ERROR_INVALID_PROGRAM, b""
    handle = ht.as_handle_value(prog)
    info = _info.get(handle)
    if info is not None and info.code is not None:
        return R.HIPRTC_SUCCESS, info.code
    err, n = nvrtc.nvrtcGetCUBINSize(p)
    if int(err):
        return to_hiprtc(err), b""
    out = bytearray(n)
    (err,) = nvrtc.nvrtcGetCUBIN(p, out)
    if int(err):
        return to_hiprtc(err), b""
    buf = bytes(out)
    unit = _units.get(handle)
    if unit is None or info is None:   # not compiled through hrr: the bare cubin
        return R.HIPRTC_SUCCESS, buf
    kind = "cubin-relocatable" if info.rdc else "cubin"
    info.code = kernelsource.encode(kernelsource.KernelSource((unit,), info.options, kind, buf))
    return R.HIPRTC_SUCCESS, info.code


@body
@_api
def hiprtcGetCodeSize(prog: Any) -> tuple:
    err, code = _code(prog)
    return (err, len(code))


@body
@_api
def hiprtcGetCode(prog: Any, code: Any) -> tuple:
    err, data = _code(prog)
    if err == R.HIPRTC_SUCCESS:
        _write_into(code, data)
    return (err,)


@body
@_api
def hiprtcGetProgramLogSize(prog: Any) -> tuple:
    nvrtc = _runtime.nvrtc_module()
    p = _prog(prog)
    if p is None:
        return (R.HIPRTC_ERROR_INVALID_PROGRAM, 0)
    err, n = nvrtc.nvrtcGetProgramLogSize(p)
    return (to_hiprtc(err), int(n or 0) + len(_notes(prog)))


@body
@_api
def hiprtcGetProgramLog(prog: Any, log: Any) -> tuple:
    nvrtc = _runtime.nvrtc_module()
    p = _prog(prog)
    if p is None:
        return (R.HIPRTC_ERROR_INVALID_PROGRAM,)
    err, n = nvrtc.nvrtcGetProgramLogSize(p)
    if int(err):
        return (to_hiprtc(err),)
    buf = bytearray(n)
    (err,) = nvrtc.nvrtcGetProgramLog(p, buf)
    if int(err) == 0:
        _write_into(log, _notes(prog) + buf)
    return (to_hiprtc(err),)


@body
@_api
def hiprtcDestroyProgram(prog: Any) -> tuple:
    nvrtc = _runtime.nvrtc_module()
    with _prog_lock:
        p = _programs.pop(ht.as_handle_value(prog), None)
        _info.pop(ht.as_handle_value(prog), None)
        _units.pop(ht.as_handle_value(prog), None)
    if p is None:
        return (R.HIPRTC_ERROR_INVALID_PROGRAM,)
    (err,) = nvrtc.nvrtcDestroyProgram(p)
    return (to_hiprtc(err),)


@body
def hiprtcGetErrorString(result: Any) -> tuple:
    try:
        member = R(int(result))
    except ValueError:
        return (R.HIPRTC_SUCCESS, ht.CStr(b"HIPRTC_ERROR_UNKNOWN"))
    return (R.HIPRTC_SUCCESS, ht.CStr(member.name.encode()))


@body
@_api
def hiprtcVersion() -> tuple:
    nvrtc = _runtime.nvrtc_module()
    try:
        err, major, minor = nvrtc.nvrtcVersion()
    except RuntimeError:
        return (R.HIPRTC_ERROR_INTERNAL_ERROR, 0, 0)
    return (to_hiprtc(err), int(major or 0), int(minor or 0))


# ---- the link API over the driver's JIT linker ----------------------------------------
# hiprtcGetBitcode gives a relocatable cubin (-fgpu-rdc -> -rdc=true); the driver's linker
# (cuLinkCreate/AddData/Complete) links those into the image hipModuleLoadData takes.
# NVRTC's LTO-IR is not used: the driver's linker refuses LTO-IR of CUDA 12 and later.
_LINK_LOG_BYTES = 1 << 16
# hipJitOption values whose meaning and value type match CUjit_option's (plain numbers)
_PASSED_JIT_OPTIONS = {0: "CU_JIT_MAX_REGISTERS", 1: "CU_JIT_THREADS_PER_BLOCK",
                       7: "CU_JIT_OPTIMIZATION_LEVEL", 11: "CU_JIT_GENERATE_DEBUG_INFO",
                       12: "CU_JIT_LOG_VERBOSE", 13: "CU_JIT_GENERATE_LINE_INFO"}
# hipJitInputType -> CUjitInputType name; LLVM bitcode (what AMD's hiprtcGetBitcode gives,
# and what programs name) is, here, the relocatable cubin hiprtcGetBitcode gives.
_INPUT_TYPES = {0: "CU_JIT_INPUT_CUBIN", 1: "CU_JIT_INPUT_PTX", 2: "CU_JIT_INPUT_FATBINARY",
                3: "CU_JIT_INPUT_OBJECT", 4: "CU_JIT_INPUT_LIBRARY"}
_ELF_MAGIC, _FATBIN_MAGIC = b"\x7fELF", b"\x50\xed\x55\xba"


@attrs.define(eq=False)
class _Link:
    state: Any                      # cuda-bindings' CUlinkState
    error_log: bytearray            # the driver writes its error log here (kept alive with the state)
    app_log: tuple[int, int] | None  # (address, size) of the app's hipJitOptionErrorLogBuffer
    image: bytes | None = None
    units: list = attrs.Factory(list)   # the inputs' source units (the sim links those)
    sourceless: bool = False            # an input came without its source


_links: dict[int, _Link] = {}
_next_link = iter(range(0x5800_0010, 1 << 62, 0x10))


def _input_type(drv: Any, input_type: Any, data: bytes) -> Any:
    """The CUjitInputType for a hipJitInputType: the same kind, or for LLVM bitcode and the
    other AMD-only kinds, the kind the bytes are (a relocatable cubin is an ELF)."""
    kinds = drv.CUjitInputType
    name = _INPUT_TYPES.get(int(input_type))
    if name is None:
        if data.startswith(_ELF_MAGIC):
            name = "CU_JIT_INPUT_CUBIN"
        elif data.startswith(_FATBIN_MAGIC):
            name = "CU_JIT_INPUT_FATBINARY"
        else:
            name = "CU_JIT_INPUT_PTX"
    return getattr(kinds, name)


def _jit_options(drv: Any, num: Any, options: Any, values: Any) -> tuple[list, list, tuple[int, int] | None]:
    """(CUjit_options, their values, the app's error log buffer): the numeric options
    CUDA shares are passed on; the app's error log gets the linker's error log."""
    opts = list(options or [])[:int(num or 0)]
    vals = list(values or [])
    cu_opts, cu_vals, log_addr, log_size = [], [], 0, 0
    for i, opt in enumerate(opts):
        value = vals[i] if i < len(vals) else None
        number = value if isinstance(value, int) else ht.address_or_zero(value)
        code = int(opt)
        if code in _PASSED_JIT_OPTIONS:
            cu_opts.append(getattr(drv.CUjit_option, _PASSED_JIT_OPTIONS[code]))
            cu_vals.append(int(number))
        elif code == 5:
            log_addr = number
        elif code == 6:
            log_size = number
    return cu_opts, cu_vals, ((log_addr, log_size) if log_addr and log_size > 0 else None)


def _link_of(state: Any) -> _Link | None:
    try:
        return _links.get(ht.as_handle_value(state))
    except ht.PointerConversionError:
        return None


def _driver() -> Any:
    """The driver with a context current (the linker needs one), or None without a GPU."""
    try:
        _runtime.require_driver()
    except Exception:  # noqa: BLE001 - DriverUnavailable: no GPU to link for
        return None
    return _runtime.driver()


@body
@_api
def hiprtcLinkCreate(num_options: Any, option_ptr: Any, option_vals_pptr: Any) -> tuple:
    drv = _driver()
    if drv is None:
        return (R.HIPRTC_ERROR_INTERNAL_ERROR, None)
    try:
        opts, vals, app_log = _jit_options(drv, num_options, option_ptr, option_vals_pptr)
    except (TypeError, ValueError):
        return (R.HIPRTC_ERROR_INVALID_OPTION, None)
    log = bytearray(_LINK_LOG_BYTES)
    opts += [drv.CUjit_option.CU_JIT_ERROR_LOG_BUFFER, drv.CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]
    vals += [log, len(log)]
    err, state = drv.cuLinkCreate(len(opts), opts, vals)
    if int(err):
        return (R.HIPRTC_ERROR_INVALID_OPTION if int(err) == 1 else R.HIPRTC_ERROR_INTERNAL_ERROR, None)
    with _prog_lock:
        handle = next(_next_link)
        _links[handle] = _Link(state, log, app_log)
    return (R.HIPRTC_SUCCESS, ht.ihiprtcLinkState(handle))


def _data(image: Any, size: int) -> bytes | None:
    if image is None or size <= 0:
        return None
    try:
        return bytes(memoryview(image).cast("B")[:size])
    except TypeError:
        addr = ht.address_or_zero(image)
        return ctypes.string_at(addr, size) if addr else None


@body
@_api
def hiprtcLinkAddData(hip_link_state: Any, input_type: Any, image: Any, image_size: Any, name: Any,
                      num_options: Any, options_ptr: Any, option_values: Any) -> tuple:
    link = _link_of(hip_link_state)
    data = _data(image, int(image_size or 0))
    if link is None or data is None:
        return (R.HIPRTC_ERROR_INVALID_INPUT,)
    if kernelsource.is_kernel_source(data):
        try:
            wrapped = kernelsource.decode(data)
        except kernelsource.KernelSourceError:
            return (R.HIPRTC_ERROR_INVALID_INPUT,)
        link.units.extend(wrapped.units)
        data = wrapped.native
    else:
        link.sourceless = True
    drv = _runtime.driver()
    try:
        kind = _input_type(drv, input_type, data)
    except (TypeError, ValueError):
        return (R.HIPRTC_ERROR_INVALID_INPUT,)
    err = drv.cuLinkAddData(link.state, kind, data, len(data), _as_bytes(name or b"input"), 0, None, None)[0]
    return (R.HIPRTC_SUCCESS if int(err) == 0 else R.HIPRTC_ERROR_INVALID_INPUT,)


@body
@_api
def hiprtcLinkAddFile(hip_link_state: Any, input_type: Any, file_path: Any, num_options: Any,
                      options_ptr: Any, option_values: Any) -> tuple:
    link = _link_of(hip_link_state)
    if link is None or file_path is None:
        return (R.HIPRTC_ERROR_INVALID_INPUT,)
    try:
        with open(_as_bytes(file_path), "rb") as f:
            head = f.read(kernelsource.PREFIX_BYTES)
            # a file holding what hrr's hiprtcGetBitcode gave: its cubin goes to the linker
            wrapped = kernelsource.is_kernel_source(head)
            data = head + f.read(kernelsource.total_size(head) - len(head)) if wrapped else b""
    except (OSError, kernelsource.KernelSourceError):
        return (R.HIPRTC_ERROR_INVALID_INPUT,)
    if wrapped:
        return hiprtcLinkAddData(hip_link_state, input_type, data, len(data),
                                 os.path.basename(os.fsdecode(_as_bytes(file_path))).encode(), 0, None, None)
    link.sourceless = True
    drv = _runtime.driver()
    err = drv.cuLinkAddFile(link.state, _input_type(drv, input_type, head), _as_bytes(file_path),
                            0, None, None)[0]
    return (R.HIPRTC_SUCCESS if int(err) == 0 else R.HIPRTC_ERROR_INVALID_INPUT,)


@body
@_api
def hiprtcLinkComplete(hip_link_state: Any) -> tuple:
    link = _link_of(hip_link_state)
    if link is None:
        return (R.HIPRTC_ERROR_INVALID_INPUT, None, None)
    drv = _runtime.driver()
    err, cubin, size = drv.cuLinkComplete(link.state)
    if link.app_log is not None:
        addr, n = link.app_log
        text = bytes(link.error_log).split(b"\0", 1)[0][:n - 1] + b"\0"
        ctypes.memmove(addr, text, len(text))
    if int(err) or not size:
        return (R.HIPRTC_ERROR_LINKING, None, None)
    # the driver owns the image until cuLinkDestroy: the program gets its own copy
    link.image = ctypes.string_at(int(cubin), int(size))
    if link.units and not link.sourceless:
        link.image = kernelsource.encode(kernelsource.KernelSource(tuple(link.units), (), "cubin", link.image))
    return (R.HIPRTC_SUCCESS, link.image, len(link.image))


@body
@_api
def hiprtcLinkDestroy(hip_link_state: Any) -> tuple:
    with _prog_lock:
        link = _links.pop(ht.as_handle_value(hip_link_state), None) if _link_of(hip_link_state) else None
    if link is None:
        return (R.HIPRTC_ERROR_INVALID_INPUT,)
    drv = _runtime.driver()
    drv.cuLinkDestroy(link.state)
    return (R.HIPRTC_SUCCESS,)


HIPRTC_APIS: tuple[str, ...] = tuple(body.bodies)


def build_module() -> types.ModuleType:
    return ht.surface_module("hrr.backends.cuda.hiprtc",
                             "hiprtc's API over NVIDIA NVRTC (cubin output) for hrr's cuda backend",
                             dict(body.bodies))
