"""The sim's ``hiprtc``: a program's own HIP C++ compiled for the CPU.

With a C++ compiler here (ziglang's clang, installed with hrr; see ``native.toolchain``),
``hiprtcCompileProgram`` compiles the source for the CPU and the code object it hands out
is the source itself (a kernel source code object, ``hrr.hiptypes.kernelsource``): the
module is built again, from a cache, when ``hipModuleLoadData`` loads it, so an archive
never carries compiled host code. Without one, the source only selects kernels of an
installed kernel library (``extern "C" __global__ void NAME(`` with that library's
parameter count), as the sim did before it could compile.

With ``-fgpu-rdc`` a program is relocatable, as on a GPU: compiling it makes no code
object but "bitcode" (``hiprtcGetBitcode``), a sim object with its source unit, options,
the kernels it defines and the ``__device__`` functions it defines and calls without
defining. The link API (``hiprtcLinkCreate``/``AddData``/``AddFile``/``Complete``) checks
those symbols across its inputs (an undefined or twice-defined one is
``HIPRTC_ERROR_LINKING`` with the reason in the link's error log) and then compiles and
links the units together. Inputs the sim cannot read (LLVM IR or bitcode for a real GPU)
fail the link.

Targets, as a GPU's hiprtc: a program compiles for the first target its options name
(``--offload-arch=``, nvcc's ``--gpu-architecture`` that hiprtc turns into it, NVRTC's
``-arch``), else for the device's ``gcnArchName``; a name that is no AMD processor LLVM knows
(``gfx9999``, ``sim``) is HIPRTC_ERROR_COMPILATION with the reason in the log. Another AMD
processor compiles, with its wavefront size (``devicemodels.code_wavefront``), and its code
object is refused when a device of another processor loads it (hipErrorNoBinaryForGpu). An
NVIDIA target (``compute_90``, ``sm_90``: a CUDA program through hip-python's CUDA interop)
compiles as CUDA code, 32 threads to a warp, where a GPU's hiprtc would refuse it.
"""
from __future__ import annotations

import ctypes
import functools
import json
import re
import struct
from typing import Any, Callable

import attrs

from hrr.backends import devicemodels
from hrr.hiptypes import kernelsource
from hrr.hiptypes import (
    CStr,
    as_address,
    as_handle_value,
    write_into_read_only,
    hiprtcProgram,
    hiprtcResult,
    ihiprtcLinkState,
)
from hrr.backends.sim import device as _device
from hrr.backends.sim.libraries import installed_libraries

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
    raw: bytes = b""                      # the source as given (``source`` is its text)
    headers: tuple[tuple[str, bytes], ...] = ()   # hiprtcCreateProgram's (include name, text)
    code: bytes | None = None
    bitcode: bytes | None = None        # a relocatable (-fgpu-rdc) program's sim object
    compiled: bool = False
    expressions: list[str] = attrs.Factory(list)   # hiprtcAddNameExpression's, in order
    lowered: dict[str, str] = attrs.Factory(dict)  # name expression -> lowered name (native compiles)


@attrs.define(eq=False)
class LinkState:
    handle: int
    inputs: list[tuple[str, bytes]] = attrs.Factory(list)   # (name, data)
    error_log: tuple[int, int] | None = None   # (address, size) of the app's error log buffer
    info_log: tuple[int, int] | None = None
    image: bytes | None = None


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


def _output(prog: Any, what: str) -> bytes:
    """A compiled program's ``code`` or (``-fgpu-rdc`` only) ``bitcode``; a program without
    it is HIPRTC_ERROR_INVALID_PROGRAM."""
    data = getattr(_program(prog), what)
    if data is None:
        raise RtcError("HIPRTC_ERROR_INVALID_PROGRAM")
    return data


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
    """(code object, log) naming the installed library that has every kernel ``source``
    defines; the code object is None when none has."""
    kernels = defined_kernels(source)
    if not kernels:
        return None, 'error: the source defines no extern "C" __global__ kernels\n'
    return _pick_library(kernels)


def native_compiler() -> bool:
    """Whether a C++ compiler for native kernels is here (else the sim picks installed
    kernel libraries by the kernels' names, as before it could compile)."""
    from hrr.backends.sim.native import toolchain   # start-up cost: only when compiling
    return toolchain.find_toolchain() is not None


def compile_native(units: tuple[kernelsource.SourceUnit, ...], options: list[str], relocatable: bool = False,
                   names: tuple[str, ...] = (), lowered: dict[str, str] | None = None) -> tuple[bytes | None, str]:
    """(kernel source code object or None, log): the program's own HIP C++ compiled for the
    CPU, with the wavefront size of the target the options name (the device's when none).
    The code object is the source (the image is rebuilt, from a cache, when it loads);
    ``lowered`` is given each name expression's lowered name."""
    from hrr.backends.sim.native import toolchain   # start-up cost: only when compiling
    wavefront = devicemodels.code_wavefront(options, _device.current().model.gcn_arch_name)
    result = toolchain.compile_program(units, options, relocatable=relocatable, name_expressions=names,
                                       wavefront=wavefront)
    if not result.ok:
        return None, result.log
    if lowered is not None:
        lowered.update(result.lowered)
    return kernelsource.encode(kernelsource.KernelSource(units, tuple(options), name_expressions=names)), result.log


def _unit(p: Program) -> kernelsource.SourceUnit:
    return kernelsource.SourceUnit(p.name or "program", p.raw, p.headers)


# ---- relocatable programs and the link API -----------------------------------------------
RDC_MAGIC = b"\x7fHRRRDC\x01"
MAX_LINK_INPUT = 64 << 20
_DEVICE_FN = re.compile(r"__device__\s+([^;{}()=#]*?)\b([A-Za-z_]\w*)\s*\(")
_RDC_FLAGS = ("-fgpu-rdc", "--relocatable-device-code=true", "-rdc=true", "--rdc=true")


def _close_paren(source: str, open_paren: int) -> int:
    depth = 0
    for i in range(open_paren, len(source)):
        if source[i] == "(":
            depth += 1
        elif source[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return len(source)


def device_symbols(source: str) -> tuple[set[str], set[str]]:
    """(``__device__`` functions ``source`` defines, those it declares and calls without
    defining): what a relocatable object exports and what it needs from a link."""
    stripped = re.sub(r"//[^\n]*|/\*.*?\*/", " ", source, flags=re.S)
    defined: set[str] = set()
    declared: set[str] = set()
    for m in _DEVICE_FN.finditer(stripped):
        end = _close_paren(stripped, m.end() - 1)
        rest = stripped[end + 1:end + 200].lstrip()
        follow = re.match(r"[^;{]*([;{])", rest)
        if follow is None:
            continue
        (defined if follow.group(1) == "{" else declared).add(m.group(2))
    needed = {name for name in declared - defined
              if len(re.findall(rf"\b{re.escape(name)}\s*\(", stripped)) > 1}
    return defined, needed


def encode_rdc(name: str, kernels: dict[str, int], defines: set[str], needs: set[str],
               unit: kernelsource.SourceUnit | None = None, options: tuple[str, ...] = ()) -> bytes:
    """A sim relocatable object (what hiprtcGetBitcode gives for a -fgpu-rdc program): its
    symbols, and its source unit and options for a native link."""
    fields: dict[str, Any] = {"name": name, "kernels": kernels, "defines": sorted(defines), "needs": sorted(needs)}
    if unit is not None:   # bytes as latin-1 text: JSON carries every byte value unchanged
        fields["unit"] = [unit.name, unit.source.decode("latin-1"),
                          [[n, t.decode("latin-1")] for n, t in unit.headers]]
        fields["options"] = list(options)
    head = json.dumps(fields, sort_keys=True).encode()
    return RDC_MAGIC + struct.pack("<I", len(head)) + head


def decode_rdc(data: bytes) -> dict | None:
    """The header of a sim relocatable object, or None when ``data`` is not one."""
    if data[:8] != RDC_MAGIC or len(data) < 12:
        return None
    (n,) = struct.unpack_from("<I", data, 8)
    if n > MAX_LINK_INPUT or len(data) < 12 + n:
        return None
    try:
        head = json.loads(data[12:12 + n])
        ok = (isinstance(head.get("kernels"), dict) and all(
            isinstance(k, str) and isinstance(v, int) for k, v in head["kernels"].items())
            and all(isinstance(x, str) for key in ("defines", "needs") for x in head.get(key, [])))
    except (ValueError, AttributeError, RecursionError):
        return None
    return head if ok else None


def _rdc_unit(head: dict) -> kernelsource.SourceUnit | None:
    """The source unit a relocatable object carries (None: none, or malformed)."""
    unit = head.get("unit")
    try:
        name, source, headers = unit  # type: ignore[misc]
        return kernelsource.SourceUnit(str(name), str(source).encode("latin-1"),
                                       tuple((str(n), str(t).encode("latin-1")) for n, t in headers))
    except (TypeError, ValueError, UnicodeEncodeError):
        return None


def _pick_library(kernels: dict[str, int]) -> tuple[bytes | None, str]:
    """(code object of the library that has every kernel, or None; the reason when None)."""
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


def link_objects(inputs: list[tuple[str, bytes]]) -> tuple[bytes | None, str]:
    """(linked code object or None, log): resolve every input's needs against the others'
    definitions, as a device linker does, then load the kernels from a library."""
    if not inputs:
        return None, "error: nothing to link (no hiprtcLinkAddData/AddFile input)\n"
    kernels: dict[str, int] = {}
    owner: dict[str, str] = {}
    needs: list[tuple[str, str]] = []
    errors = []
    for name, data in inputs:
        head = decode_rdc(data)
        if head is None:
            errors.append(f"error: input {name!r} is not relocatable sim code (the sim links what its "
                          "hiprtc compiled with -fgpu-rdc; it cannot read LLVM IR or GPU objects)")
            continue
        for sym in [*head["kernels"], *head.get("defines", [])]:
            if sym in owner:
                errors.append(f"error: multiple definition of {sym!r} in {owner[sym]!r} and {name!r}")
            owner[sym] = name
        kernels.update(head["kernels"])
        needs += [(sym, name) for sym in head.get("needs", [])]
    errors += [f"error: undefined reference to {sym!r} in {name!r}" for sym, name in needs if sym not in owner]
    if errors:
        return None, "\n".join(errors) + "\n"
    if not kernels:
        return None, "error: the linked program defines no extern \"C\" __global__ kernels\n"
    heads = [decode_rdc(data) or {} for _, data in inputs]
    units = [_rdc_unit(h) for h in heads]
    if native_compiler() and all(u is not None for u in units):
        return compile_native(tuple(u for u in units if u is not None), list(heads[0].get("options", [])))
    return _pick_library(kernels)


def _link(state: Any) -> LinkState:
    try:
        found = _device.current().links.get(as_handle_value(state))
    except TypeError:
        found = None
    if found is None:
        raise RtcError("HIPRTC_ERROR_INVALID_INPUT")
    return found


def _option_values(num: Any, options: Any, values: Any) -> dict[int, Any]:
    """JIT options as ``{hipJitOption value: its value}`` (hip-python passes lists)."""
    opts = list(options or [])[:int(num or 0)]
    vals = list(values or [])
    out = {}
    for i, opt in enumerate(opts):
        try:
            out[int(opt)] = vals[i] if i < len(vals) else None
        except (TypeError, ValueError):
            raise RtcError("HIPRTC_ERROR_INVALID_OPTION") from None
    return out


def _log_target(opts: dict[int, Any], buf_opt: int, size_opt: int) -> tuple[int, int] | None:
    if buf_opt not in opts:
        return None
    addr = as_address(opts[buf_opt])
    size = opts.get(size_opt)
    n = size if isinstance(size, int) else (as_address(size) if size is not None else 0)
    return (addr, int(n)) if addr and n > 0 else None


def _write_log(target: tuple[int, int] | None, text: str) -> None:
    if target is not None:
        addr, n = target
        data = text.encode()[:n - 1] + b"\0"
        ctypes.memmove(addr, data, len(data))


def _input_bytes(image: Any, size: Any) -> bytes:
    n = int(size or 0)
    if image is None or n <= 0 or n > MAX_LINK_INPUT:
        raise RtcError("HIPRTC_ERROR_INVALID_INPUT")
    try:
        view = memoryview(image).cast("B")
    except TypeError:
        addr = as_address(image)
        if not addr:
            raise RtcError("HIPRTC_ERROR_INVALID_INPUT") from None
        return ctypes.string_at(addr, n)
    if len(view) < n:
        raise RtcError("HIPRTC_ERROR_INVALID_INPUT")
    return bytes(view[:n])


def _write_out(dest: Any, data: bytes) -> None:
    try:
        view = memoryview(dest).cast("B")
    except TypeError:
        addr = as_address(dest)
        if not addr:
            raise RtcError("HIPRTC_ERROR_INVALID_INPUT") from None
        ctypes.memmove(addr, data, len(data))
        return
    if len(view) < len(data):
        raise RtcError("HIPRTC_ERROR_INVALID_INPUT")
    if view.readonly:   # hip-python hands C a read-only buffer's address too
        write_into_read_only(dest, data)
        return
    view[:len(data)] = data


@rtc_api(1)
def hiprtcCreateProgram(src: Any, name: Any, numHeaders: int = 0, headers: Any = None,
                        includeNames: Any = None) -> tuple:
    if src is None:
        raise RtcError("HIPRTC_ERROR_INVALID_INPUT")
    dev = _device.current()
    raw = src.encode() if isinstance(src, str) else bytes(src).split(b"\0", 1)[0]
    texts = list(headers or [])[:int(numHeaders or 0)]
    names = list(includeNames or [])[:len(texts)]
    included = tuple((_text(n), t.encode() if isinstance(t, str) else bytes(t).split(b"\0", 1)[0])
                     for n, t in zip(names, texts, strict=False))
    if kernelsource.headers_problem([n for n, _ in included]) is not None:   # hrr writes them as files
        raise RtcError("HIPRTC_ERROR_INVALID_INPUT")
    prog = Program(dev.new_handle("program"), _text(src), _text(name), raw=raw, headers=included)
    dev.programs[prog.handle] = prog
    return (SUCCESS, hiprtcProgram(prog.handle))


@rtc_api()
def hiprtcCompileProgram(prog: Any, numOptions: int = 0, options: Any = None) -> tuple:
    p = _program(prog)
    opts = [_text(o) for o in list(options or [])[:int(numOptions or 0)]]
    defines, needs = device_symbols(p.source)
    p.code = p.bitcode = None
    p.compiled = True
    try:   # hiprtc compiles for the target the options name, else the device's (as a GPU's does)
        devicemodels.compile_target(opts, _device.current().model.gcn_arch_name)
    except devicemodels.TargetError as exc:
        if not devicemodels.cuda_target(opts):   # a CUDA program's target: compiled as CUDA code
            p.log = f"{p.name or 'program'}: error: invalid --offload-arch: {exc}\n"
            return (hiprtcResult.HIPRTC_ERROR_COMPILATION,)
    if any(o in _RDC_FLAGS for o in opts):
        # relocatable: symbols are resolved when it is linked; it must compile on its own
        kernels = defined_kernels(p.source)
        if native_compiler():
            checked, log = compile_native((_unit(p),), opts, relocatable=True)
            if checked is None:
                p.log = f"{p.name or 'program'}: {log}"
                return (hiprtcResult.HIPRTC_ERROR_COMPILATION,)
        p.bitcode, p.log = encode_rdc(p.name, kernels, defines, needs, _unit(p), tuple(opts)), ""
        return (SUCCESS,)
    if needs and not native_compiler():   # nothing to compile with: say why now
        p.code, p.log = None, "".join(f"error: undefined device function {n!r} (compile with -fgpu-rdc "
                                      "and link the program that defines it)\n" for n in sorted(needs))
    elif native_compiler():
        p.lowered.clear()
        p.code, p.log = compile_native((_unit(p),), opts, names=tuple(p.expressions), lowered=p.lowered)
        if p.code is None and needs:   # say what a GPU's user is told, before the linker's words
            p.log = "".join(f"error: undefined device function {n!r} (compile with -fgpu-rdc and link the "
                            "program that defines it)\n" for n in sorted(needs)) + p.log
    else:
        p.code, p.log = compile_source(p.source)
    if p.code is None:
        p.log = f"{p.name or 'program'}: {p.log}"
        return (hiprtcResult.HIPRTC_ERROR_COMPILATION,)
    return (SUCCESS,)


@rtc_api(1)
def hiprtcGetBitcodeSize(prog: Any) -> tuple:
    return (SUCCESS, len(_output(prog, "bitcode")))


@rtc_api()
def hiprtcGetBitcode(prog: Any, bitcode: Any) -> tuple:
    _write_out(bitcode, _output(prog, "bitcode"))
    return (SUCCESS,)


@rtc_api()
def hiprtcAddNameExpression(prog: Any, name_expression: Any) -> tuple:
    p = _program(prog)
    if name_expression is None:
        raise RtcError("HIPRTC_ERROR_INVALID_INPUT")
    if p.compiled:
        raise RtcError("HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION")
    p.expressions.append(_text(name_expression))
    return (SUCCESS,)


@rtc_api(1)
def hiprtcGetLoweredName(prog: Any, name_expression: Any) -> tuple:
    """The lowered (mangled) name the compiler gave a name expression's kernel; without a
    compiler, an extern "C" kernel's own name (a template instance is then no kernel)."""
    p = _program(prog)
    if name_expression is None:
        raise RtcError("HIPRTC_ERROR_INVALID_INPUT")
    if not p.compiled:
        raise RtcError("HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION")
    expr = _text(name_expression)
    if expr in p.lowered:
        return (SUCCESS, CStr(p.lowered[expr]))
    name = expr.strip().lstrip("&").strip()
    if expr not in p.expressions or name not in defined_kernels(p.source):
        raise RtcError("HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID")
    return (SUCCESS, CStr(name))


@rtc_api(1)
def hiprtcLinkCreate(num_options: Any, option_ptr: Any, option_vals_pptr: Any) -> tuple:
    opts = _option_values(num_options, option_ptr, option_vals_pptr)
    dev = _device.current()
    state = LinkState(dev.new_handle("link"), error_log=_log_target(opts, 5, 6), info_log=_log_target(opts, 3, 4))
    dev.links[state.handle] = state
    return (SUCCESS, ihiprtcLinkState(state.handle))


@rtc_api()
def hiprtcLinkAddData(hip_link_state: Any, input_type: Any, image: Any, image_size: Any, name: Any,
                      num_options: Any, options_ptr: Any, option_values: Any) -> tuple:
    state = _link(hip_link_state)
    _option_values(num_options, options_ptr, option_values)
    data = _input_bytes(image, image_size)
    state.inputs.append((_text(name) or f"input {len(state.inputs)}", data))
    return (SUCCESS,)


@rtc_api()
def hiprtcLinkAddFile(hip_link_state: Any, input_type: Any, file_path: Any, num_options: Any,
                      options_ptr: Any, option_values: Any) -> tuple:
    state = _link(hip_link_state)
    _option_values(num_options, options_ptr, option_values)
    path = _text(file_path)
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_LINK_INPUT + 1)
    except (OSError, ValueError):
        raise RtcError("HIPRTC_ERROR_INVALID_INPUT") from None
    if not data or len(data) > MAX_LINK_INPUT:
        raise RtcError("HIPRTC_ERROR_INVALID_INPUT")
    state.inputs.append((path, data))
    return (SUCCESS,)


@rtc_api(2)
def hiprtcLinkComplete(hip_link_state: Any) -> tuple:
    state = _link(hip_link_state)
    image, log = link_objects(state.inputs)
    _write_log(state.error_log, log)
    _write_log(state.info_log, "" if image is None else f"linked {len(state.inputs)} inputs\n")
    if image is None:
        return (hiprtcResult.HIPRTC_ERROR_LINKING, None, None)
    state.image = image
    return (SUCCESS, image, len(image))


@rtc_api()
def hiprtcLinkDestroy(hip_link_state: Any) -> tuple:
    state = _link(hip_link_state)
    del _device.current().links[state.handle]
    return (SUCCESS,)


@rtc_api(1)
def hiprtcGetCodeSize(prog: Any) -> tuple:
    return (SUCCESS, len(_output(prog, "code")))


@rtc_api()
def hiprtcGetCode(prog: Any, code: Any) -> tuple:
    _write_out(code, _output(prog, "code"))
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
                      "hiprtcDestroyProgram", "hiprtcGetErrorString", "hiprtcVersion",
                      "hiprtcGetBitcodeSize", "hiprtcGetBitcode", "hiprtcAddNameExpression",
                      "hiprtcGetLoweredName", "hiprtcLinkCreate", "hiprtcLinkAddData",
                      "hiprtcLinkAddFile", "hiprtcLinkComplete", "hiprtcLinkDestroy")
