"""The sim's ``hiprtc``: a "compiler" that maps kernel source to an installed library.

It finds the kernels a CUDA/HIP C source defines (``extern "C" __global__ void NAME(``),
checks each one's parameter count against a kernel library that has them all, and
returns a code object naming that library and those kernels. It never compiles code:
the source only selects kernels that are already installed.
"""
from __future__ import annotations

import ctypes
import functools
import re
from typing import Any, Callable

import attrs

from hrr.backends.hiptypes import (
    CStr,
    as_address,
    as_handle_value,
    hiprtcProgram,
    hiprtcResult,
)
from hrr.backends.sim import device as _device
from hrr.backends.sim.kernels import installed_libraries

SUCCESS = hiprtcResult.HIPRTC_SUCCESS
VERSION = (6, 2)
_KERNEL_DECL = re.compile(r'extern\s+"C"\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?__global__\s+'
                          r'(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+'
                          r'(?:__launch_bounds__\s*\([^)]*\)\s*)?([A-Za-z_]\w*)\s*\(')


class RtcError(Exception):
    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = getattr(hiprtcResult, code)


@attrs.define(eq=False)
class Program:
    handle: int
    source: str
    name: str
    log: str = ""
    code: bytes | None = None


def rtc_api(outputs: int = 0) -> Callable:
    def wrap(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> tuple:
            with _device.current().lock:
                try:
                    return fn(*args, **kwargs)
                except RtcError as exc:
                    return (exc.code,) + (None,) * outputs
        return call
    return wrap


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return bytes(value).decode(errors="replace").rstrip("\0")


def _program(prog: Any) -> Program:
    try:
        found = _device.current().programs.get(as_handle_value(prog))
    except TypeError:
        found = None
    if found is None:
        raise RtcError("HIPRTC_ERROR_INVALID_PROGRAM")
    return found


def _param_count(source: str, open_paren: int) -> int:
    """Top-level parameters between the '(' at ``open_paren`` and its matching ')'."""
    depth, start, params = 0, open_paren + 1, []
    for i in range(open_paren, len(source)):
        c = source[i]
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
            if depth == 0:
                params.append(source[start:i])
                break
        elif c == "," and depth == 1:
            params.append(source[start:i])
            start = i + 1
    params = [p for p in params if p.strip() and p.strip() != "void"]
    return len(params)


def defined_kernels(source: str) -> dict[str, int]:
    """``{kernel name: parameter count}`` for each extern "C" __global__ function."""
    stripped = re.sub(r"//[^\n]*|/\*.*?\*/", " ", source, flags=re.S)
    return {m.group(1): _param_count(stripped, m.end() - 1) for m in _KERNEL_DECL.finditer(stripped)}


def compile_source(source: str) -> tuple[bytes | None, str]:
    """(code object, log) for ``source``; the code object is None when it cannot compile."""
    kernels = defined_kernels(source)
    if not kernels:
        return None, 'error: the source defines no extern "C" __global__ kernels\n'
    libraries = sorted(installed_libraries().values(), key=lambda lib: (lib.name != "builtin", lib.name))
    problems = []
    for lib in libraries:
        missing = [k for k in kernels if k not in lib.kernels]
        wrong = [f"{k} takes {len(lib.kernels[k].layout.params)} parameters, the source "
                 f"declares {n}" for k, n in kernels.items()
                 if k in lib.kernels and len(lib.kernels[k].layout.params) != n]
        if not missing and not wrong:
            return lib.code_object(sorted(kernels)), ""
        problems.append(f"  library {lib.name!r}: " + "; ".join(
            ([f"lacks {', '.join(missing)}"] if missing else []) + wrong))
    return None, ("error: no installed sim kernel library provides "
                  + ", ".join(sorted(kernels)) + "\n" + "\n".join(problems) + "\n")


def _write_out(dest: Any, data: bytes) -> None:
    try:
        view = memoryview(dest).cast("B")
    except TypeError:
        addr = as_address(dest)
        if not addr:
            raise RtcError("HIPRTC_ERROR_INVALID_INPUT") from None
        ctypes.memmove(addr, data, len(data))
        return
    if len(view) < len(data) or view.readonly:
        raise RtcError("HIPRTC_ERROR_INVALID_INPUT")
    view[:len(data)] = data


@rtc_api(1)
def hiprtcCreateProgram(src: Any, name: Any, numHeaders: int = 0, headers: Any = None,
                        includeNames: Any = None) -> tuple:
    if src is None:
        raise RtcError("HIPRTC_ERROR_INVALID_INPUT")
    dev = _device.current()
    prog = Program(dev.new_handle("program"), _text(src), _text(name))
    dev.programs[prog.handle] = prog
    return (SUCCESS, hiprtcProgram(prog.handle))


@rtc_api()
def hiprtcCompileProgram(prog: Any, numOptions: int = 0, options: Any = None) -> tuple:
    p = _program(prog)
    p.code, p.log = compile_source(p.source)
    if p.code is None:
        p.log = f"{p.name or 'program'}: {p.log}"
        return (hiprtcResult.HIPRTC_ERROR_COMPILATION,)
    return (SUCCESS,)


@rtc_api(1)
def hiprtcGetCodeSize(prog: Any) -> tuple:
    p = _program(prog)
    if p.code is None:
        raise RtcError("HIPRTC_ERROR_INVALID_PROGRAM")
    return (SUCCESS, len(p.code))


@rtc_api()
def hiprtcGetCode(prog: Any, code: Any) -> tuple:
    p = _program(prog)
    if p.code is None:
        raise RtcError("HIPRTC_ERROR_INVALID_PROGRAM")
    _write_out(code, p.code)
    return (SUCCESS,)


@rtc_api(1)
def hiprtcGetProgramLogSize(prog: Any) -> tuple:
    return (SUCCESS, len(_program(prog).log.encode()) + 1)  # with the terminating NUL


@rtc_api()
def hiprtcGetProgramLog(prog: Any, log: Any) -> tuple:
    _write_out(log, _program(prog).log.encode() + b"\0")
    return (SUCCESS,)


@rtc_api()
def hiprtcDestroyProgram(prog: Any) -> tuple:
    p = _program(prog)
    del _device.current().programs[p.handle]
    return (SUCCESS,)


@rtc_api(1)
def hiprtcGetErrorString(result: Any) -> tuple:
    try:
        name = hiprtcResult(int(result)).name
    except ValueError:
        name = "HIPRTC_ERROR_INVALID_INPUT"
    return (SUCCESS, CStr(name))


@rtc_api(2)
def hiprtcVersion() -> tuple:
    return (SUCCESS, *VERSION)


SUPPORTED_RTC_APIS = ("hiprtcCreateProgram", "hiprtcCompileProgram", "hiprtcGetCodeSize",
                      "hiprtcGetCode", "hiprtcGetProgramLogSize", "hiprtcGetProgramLog",
                      "hiprtcDestroyProgram", "hiprtcGetErrorString", "hiprtcVersion")
