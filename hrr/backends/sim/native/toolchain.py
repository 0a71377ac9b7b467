"""Compile a hiprtc program's HIP C++ for the CPU: a freestanding shared object (an "image").

The image links no library: ``hrr_device.h`` (force-included) declares the HIP device
environment and ``hrr_runtime.c`` (linked into every image) defines it, including the fiber
scheduler ``__hrr_launch``. Each ``__global__`` definition gets a trampoline that reads its
parameters from kernarg bytes and a metadata object that elfimage.py reads back. A program may
include only its own headers and hrr's stubs: nothing of the host it is compiled on.
"""
from __future__ import annotations

import functools
import importlib.util
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

import attrs

from hrr.config import untraced_env
from hrr.hiptypes.kernelsource import SourceUnit, headers_problem
from hrr import imagecache
from hrr.backends.sim.native import compilebox, policy
from hrr.backends.sim.native.elfimage import MAX_MEMORY, ImageError, NativeImage, parse_image

DEVICE_HEADER = "hrr_device.h"
OPTIONS_HEADER = "hrr_options.h"     # the program's -D/-U options, included after hrr_device.h
RUNTIME_SOURCE = "hrr_runtime.c"
ABI_HEADER = "hrr_abi.h"
GROUPS_HEADER = "hrr_cooperative_groups.h"

#: Headers a HIP program may include; hrr_device.h (force-included) already gives what they would.
STUB_HEADERS = (
    "hip/hip_runtime.h", "hip/hip_runtime_api.h", "hip/hip_common.h", "hip/device_functions.h",
    "hip/math_functions.h", "hip/hip_vector_types.h", "hip/amd_detail/amd_hip_runtime.h",
    "cuda_runtime.h", "cuda.h",
    "cstdint", "stdint.h", "cstddef", "stddef.h", "climits", "limits.h", "cfloat", "float.h",
    "cmath", "math.h", "cstdio", "stdio.h", "cstdlib", "stdlib.h", "cstring", "string.h",
    "cassert", "assert.h", "stdbool.h", "stdarg.h", "cstdarg", "algorithm", "utility", "limits",
    "type_traits", "new", "hip/hip_math_constants.h",
)

#: Headers with something of their own (names only some programs may want declared).
HEADER_TEXTS = {
    "hip/hip_fp16.h": b"#pragma once\ntypedef __half half;\ntypedef __half2 half2;\n",
    "hip/amd_detail/amd_hip_fp16.h": b'#pragma once\n#include <hip/hip_fp16.h>\n',
    "cuda_fp16.h": b'#pragma once\n#include <hip/hip_fp16.h>\n',
    "hip/hip_cooperative_groups.h": b"#pragma once\n#include <hrr_cooperative_groups.h>\n",
    "cooperative_groups.h": b"#pragma once\n#include <hip/hip_cooperative_groups.h>\n",
}

#: Flags every compile gets: freestanding, position independent, nothing linked (but the
#: compiler's helper library, Toolchain.builtins), nothing left
#: undefined, no host include directory.
BASE_FLAGS = ("-fPIC", "-ffreestanding", "-fno-exceptions", "-fno-rtti", "-fno-math-errno",
              "-fno-threadsafe-statics", "-fno-stack-protector", "-fvisibility=hidden",
              "-nostdinc", "-nostdinc++", "-fno-common", "-fno-sanitize=all", "-fdata-sections")
LINK_FLAGS = ("-shared", "-nostdlib", "-Wl,-z,defs", "-Wl,-Bsymbolic", "-Wl,--no-gc-sections",
              "-Wl,--build-id=none", "-Wl,-z,norelro", "-Wl,--hash-style=gnu")
#: The image's private pages: the runtime's state (its HRR_PRIVATE_SECTION) and every
#: __shared__ variable (hrr_device.h tags their symbols B10hrr_shared; -fdata-sections gives
#: each its own input section), page-aligned at both ends after everything else, and zeros
#: (NOLOAD): each kernel worker of a launch spread over several maps them as its own memory.
PRIVATE_SCRIPT_NAME = "hrr_private.ld"
PRIVATE_SCRIPT = (b"SECTIONS {\n"
                  b"  hrr_private (NOLOAD) : ALIGN(4096) {\n"
                  b"    *(hrr_private) *(.bss.*B10hrr_shared .data.*B10hrr_shared)\n"
                  b"    . = ALIGN(4096);\n"
                  b"  }\n"
                  b"} INSERT AFTER .bss;\n")

#: Options a GPU's hiprtc takes that mean nothing for a CPU build (accepted, not passed on).
_IGNORED = re.compile(r"^(--offload-arch=.*|--gpu-architecture(=.*)?|-arch=.*|-fgpu-rdc|-fno-gpu-rdc|-g\d?|"
                      r"-mcumode|-mno-cumode|-mwavefrontsize64|-mno-wavefrontsize64|--save-temps|-save-temps|"
                      r"-Werror|-w|-Wall|-Wextra|-fhip-new-launch-api|-munsafe-fp-atomics|-fno-hip-fp32-correctly-rounded-divide-sqrt|"
                      r"-fhip-fp32-correctly-rounded-divide-sqrt|-D__HIP_PLATFORM_AMD__|-D__HIP_PLATFORM_HCC__|"
                      r"-fcuda-flush-denormals-to-zero|-fno-cuda-flush-denormals-to-zero)$")
#: nvrtc's spellings, which a cuda-python program hands hiprtc through hip-python's interop
#: layer: the floating-point ones become the CPU compiler's, the others are accepted and
#: not passed on (debug info, register limits, device-code linking, PTX-level precision).
_NVRTC_FLAGS = {"--fmad=false": "-ffp-contract=off", "-fmad=false": "-ffp-contract=off",
                "--fmad=true": "-ffp-contract=fast", "-fmad=true": "-ffp-contract=fast",
                "--use_fast_math": "-ffast-math", "-use_fast_math": "-ffast-math"}
_NVRTC_IGNORED = re.compile(
    r"^--?(default-device|device-as-default-execution-space|lineinfo|generate-line-info|G|device-debug|"
    r"restrict|extensible-whole-program|ewp|dlto|dlink-time-opt|extra-device-vectorization|"
    r"(relocatable-device-code|rdc|ftz|prec-div|prec-sqrt|dopt|maxrregcount|split-compile|ptxas-options|"
    r"Xptxas|time|device-int128)=.*)$")


@attrs.frozen
class Toolchain:
    """A C++ compiler that can build images: how to call it, what it is (for cache keys), and
    the folders it must read to run (what its sandbox lets it open)."""

    argv: tuple[str, ...]
    ident: str
    kind: str
    roots: tuple[str, ...] = ()
    #: The compiler's own helper library (libgcc.a, clang's builtins), linked after everything:
    #: -nostdlib leaves it out, and g++ calls it for what the CPU lacks (``__popcountdi2``)
    builtins: tuple[str, ...] = ()


def _builtins_of(argv: tuple[str, ...]) -> tuple[str, ...]:
    """The static helper library a system compiler links by default, when it names one."""
    path = _run_version([*argv, "-print-libgcc-file-name"])
    if path and os.path.isabs(path) and path.endswith(".a") and os.path.isfile(path):
        return (path,)
    return ()


@attrs.frozen
class CompileResult:
    """What a compile gives: ok, the log (errors, notes), and the image bytes when linked."""

    ok: bool
    log: str
    image: bytes | None = None
    #: name expression -> the lowered (mangled) name of the kernel it names
    lowered: dict[str, str] = attrs.field(factory=dict)
    #: ``image`` parsed (parsed once, here; the loader takes it from the result)
    native: NativeImage | None = attrs.field(default=None, eq=False, repr=False)


def _target() -> str:
    machine = platform.machine().lower()
    return "aarch64-linux-none" if machine in ("aarch64", "arm64") else "x86_64-linux-none"


def _run_version(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False, env=untraced_env())
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr).strip() else ""


#: What a system compiler (g++, clang++) reads besides its own folder: its programs (cc1plus,
#: as, ld), its libraries and the dynamic loader's cache; never /usr/include, /etc, /home, /tmp.
_SYSTEM_ROOTS = ("/usr/bin", "/bin", "/usr/lib", "/usr/lib64", "/usr/libexec", "/lib", "/lib64", "/lib32",
                 "/usr/lib32", "/etc/ld.so.cache")


def _identity(path: str) -> str:
    """A binary's identity for cache keys: its real path, size and modification time."""
    try:
        st = os.stat(path)
    except OSError:
        return path
    return f"{os.path.realpath(path)}:{st.st_size}:{st.st_mtime_ns}"


def _roots_of(binary: str, system: bool) -> tuple[str, ...]:
    real = os.path.realpath(binary)
    roots = [os.path.dirname(real)]
    if real == os.path.realpath(sys.executable):   # a compiler run through Python (python -m ...)
        roots += [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    if system:
        roots += [r for r in _SYSTEM_ROOTS if os.path.exists(r)]
    return tuple(dict.fromkeys(roots))


def _zig_binary() -> str | None:
    """ziglang's own zig binary (run directly, not through ``python -m ziglang``)."""
    spec = importlib.util.find_spec("ziglang")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = os.path.join(folder, "zig")
        if os.access(path, os.X_OK):
            return path
    return None


@functools.lru_cache(maxsize=None)
def _find_toolchain(env_cxx: str | None) -> Toolchain | None:
    if env_cxx:
        argv = tuple(shlex.split(env_cxx))
        version = _run_version([*argv, "--version"])
        binary = shutil.which(argv[0]) if argv else None
        if version is None or binary is None:
            return None
        return Toolchain(argv, f"env:{env_cxx}:{version}:{_identity(binary)}", "env", _roots_of(binary, True),
                         _builtins_of(argv))
    zig = _zig_binary()
    version = _run_version([zig, "version"]) if zig else None
    if zig and version:
        return Toolchain((zig, "c++", "-target", _target()), f"zig {version} {_target()} {_identity(zig)}", "zig",
                         _roots_of(zig, False))
    for name, kind in (("clang++", "clang"), ("g++", "gcc")):
        path = shutil.which(name)
        if path:
            version = _run_version([path, "--version"])
            if version is not None:
                return Toolchain((path,), f"{kind} {version} {platform.machine()} {_identity(path)}", kind,
                                 _roots_of(path, True), _builtins_of((path,)))
    return None


def find_toolchain() -> Toolchain | None:
    """The compiler images are built with: $HRR_SIM_CXX, ziglang, clang++, g++; None if none works."""
    return _find_toolchain(os.environ.get("HRR_SIM_CXX") or None)


@functools.lru_cache(maxsize=None)
def _package_bytes(name: str) -> bytes:
    return resources.files(__package__).joinpath(name).read_bytes()


#: Where images are cached (imagecache.py; kept here by this name for the worker's build).
cache_dir = imagecache.cache_dir


# ---- source scanning -------------------------------------------------------------------------

_LITERAL = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_DIRECTIVE = re.compile(r"^[ \t]*#(?:[^\n\\]|\\.)*", re.M | re.S)


def _blank(text: str) -> str:
    """The text with comments, literals' contents and preprocessor lines replaced by spaces
    (newlines kept, so offsets and lines stay those of the original)."""
    def keep_lines(m: re.Match) -> str:
        s = m.group(0)
        if s[0] in "\"'":
            return s[0] + re.sub(r"[^\n]", " ", s[1:-1]) + s[-1]
        return re.sub(r"[^\n]", " ", s)
    out = _LITERAL.sub(keep_lines, text)
    return _DIRECTIVE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), out)


_INCLUDE = re.compile(r'^[ \t]*#[ \t]*(include|include_next|import|embed)\b[ \t]*([<"])([^>"\n]*)[>"]', re.M)
_HAS_INCLUDE = re.compile(r'__has_(?:include|include_next|embed)\s*\(\s*[<"]([^>"\n]*)[>"]')


def _bad_path(path: str) -> bool:
    return path.startswith(("/", "\\")) or ".." in re.split(r"[\\/]", path) or bool(re.match(r"^[A-Za-z]:", path))


def _include_errors(unit_name: str, text: str) -> list[str]:
    errors = []
    for m in _INCLUDE.finditer(text):
        if _bad_path(m.group(3)):
            line = text.count("\n", 0, m.start()) + 1
            errors.append(f"{unit_name}:{line}: error: #{m.group(1)} of '{m.group(3)}' refused: a program may "
                          "include only its own headers (no absolute paths, no '..')")
    for m in _HAS_INCLUDE.finditer(text):
        if _bad_path(m.group(1)):
            line = text.count("\n", 0, m.start()) + 1
            errors.append(f"{unit_name}:{line}: error: __has_include of '{m.group(1)}' refused")
    return errors


_EXTERN_SHARED = re.compile(r"\bextern\s+__shared__\s+((?:[^;\[\]{}()]|\([^()]*\))*?)\s*\b(\w+)\s*\[\s*\]\s*;")
_ATTRS = re.compile(r"__align__\s*\(\s*\w+\s*\)|__attribute__\s*\(\(.*?\)\)|\balignas\s*\([^()]*\)")


def _rewrite_extern_shared(text: str, blank: str) -> str:
    """`extern __shared__ T name[];` -> a static that reads as the launch's dynamic shared
    memory (found in the blanked text, so comments and strings are left alone)."""
    out, last = [], 0
    for m in _EXTERN_SHARED.finditer(blank):
        type_text = _ATTRS.sub(" ", text[m.start(1):m.end(1)]).strip()
        out.append(text[last:m.start()])
        out.append(f"static __hrr_dyn_shared<{type_text}> {m.group(2)};" + "\n" * text.count("\n", m.start(), m.end()))
        last = m.end()
    out.append(text[last:])
    return "".join(out)


_SKIP_PARENS = {"__launch_bounds__", "__attribute__", "__declspec", "alignas", "__align__"}
_IDENT = re.compile(r"[A-Za-z_]\w*")


def _match(blank: str, i: int, open_c: str, close_c: str) -> int:
    """Index just past the bracket that closes the one at i (-1 if none)."""
    depth = 0
    for j in range(i, len(blank)):
        c = blank[j]
        if c == open_c:
            depth += 1
        elif c == close_c:
            depth -= 1
            if depth == 0:
                return j + 1
    return -1


def _namespace_scopes(blank: str) -> list[tuple[int, int, bool]]:
    """(open, close, is namespace-like) for every brace pair: namespace and extern "C" blocks
    are namespace-like (a trampoline may follow a kernel defined there)."""
    pairs, stack = [], []
    for m in re.finditer(r"[{}]", blank):
        if m.group(0) == "{":
            head = blank[max(0, m.start() - 200):m.start()]
            head = re.split(r"[;{}]", head)[-1]
            ns = bool(re.search(r"\bnamespace\b[\s\w:]*$", head) or re.search(r'\bextern\s*"\s*"\s*$', head)
                      or re.search(r"\binline\s+namespace\b", head))
            stack.append((m.start(), ns))
        elif stack:
            start, ns = stack.pop()
            pairs.append((start, m.end(), ns))
    return pairs


@attrs.frozen
class _Kernel:
    name: str     # as written (maybe qualified)
    end: int      # offset just past the definition's closing brace
    params: str   # the parameter list's text (one line): picks this overload of the name


_EXPLICIT = re.compile(r"\s*(?:__attribute__\s*\(\(.*?\)\)\s*|__launch_bounds__\s*\([^()]*\)\s*)*"
                       r"void\s+([\w:]+\s*<[^;{}()]*>)\s*\(")


def _find_kernels(blank: str) -> list[_Kernel]:
    """The __global__ function definitions at namespace scope, and the explicit instantiations
    of kernel templates (a template itself has no one type to build a trampoline from)."""
    scopes = _namespace_scopes(blank)
    kernels = []

    def at_namespace_scope(pos: int) -> bool:
        return all(ns for start, stop, ns in scopes if start < pos < stop)

    for m in re.finditer(r"\b__global__\b", blank):
        before = re.split(r"[;{}]", blank[max(0, m.start() - 400):m.start()])[-1]
        if re.search(r"\btemplate\b", before):
            inst = _EXPLICIT.match(blank, m.end()) if re.search(r"\btemplate\s*$", before) else None
            if inst:   # `template __global__ void k<float>(float *);`
                close = _match(blank, inst.end() - 1, "(", ")")
                semi = re.match(r"\s*;", blank[close:]) if close > 0 else None
                if semi and at_namespace_scope(m.start()):
                    kernels.append(_Kernel(" ".join(inst.group(1).split()), close + semi.end(),
                                           " ".join(blank[inst.end():close - 1].split())))
            continue
        i, name = m.end(), ""
        while i < len(blank):
            c = blank[i]
            if c.isspace():
                i += 1
            elif c == "(":
                break
            elif c == "[" and blank.startswith("[[", i):
                i = _match(blank, i, "[", "]")
                if i < 0:
                    break
            elif c == ":" and blank.startswith("::", i):
                name += "::"
                i += 2
            elif (im := _IDENT.match(blank, i)):
                word = im.group(0)
                i = im.end()
                if word in _SKIP_PARENS:
                    j = i
                    while j < len(blank) and blank[j].isspace():
                        j += 1
                    if j < len(blank) and blank[j] == "(":
                        i = _match(blank, j, "(", ")")
                        if i < 0:
                            break
                    continue
                name = name + word if name.endswith("::") else word
            else:
                i += 1
                name = ""
        if i < 0 or i >= len(blank) or not name:
            continue
        close = _match(blank, i, "(", ")")
        if close < 0:
            continue
        rest = re.match(r"(?:\s|\bnoexcept\b|__attribute__\s*\(\(.*?\)\)|\bconst\b)*", blank[close:])
        j = close + (rest.end() if rest else 0)
        if j >= len(blank) or blank[j] != "{":
            continue  # a declaration
        end = _match(blank, j, "{", "}")
        if end < 0:
            continue
        if at_namespace_scope(m.start()):
            params = " ".join(blank[i + 1:close - 1].split())
            kernels.append(_Kernel(name, end, params))
    return kernels


def _entry(tag: str, fn: str) -> str:
    """A kernel's trampoline and metadata object (one line)."""
    return (f" static void __hrr_k_{tag}(const void *__hrr_args) {{ __hrr::invoke({fn}, __hrr_args); }}"
            f" static constexpr auto __hrr_meta_{tag} __attribute__((used)) ="
            f" __hrr::make_meta(&__hrr_k_{tag}, {fn});")


def _instrument(unit_index: int, text: str, name_expressions: tuple[str, ...] = (), extra: tuple[str, ...] = ()) -> str:
    """The unit with dynamic shared memory rewritten and a trampoline + metadata object after
    each kernel definition (on the same line: the compiler's line numbers stay the user's),
    and one per name expression at the end (hiprtcAddNameExpression: `&k<float>`, `ns::k`)."""
    text = _rewrite_extern_shared(text, _blank(text))
    kernels = _find_kernels(_blank(text))
    out, last = [], 0
    for k_index, k in enumerate(kernels):
        tag = f"{unit_index}_{k_index}_{re.sub(r'[^A-Za-z0-9_]', '_', k.name)}"
        out.append(text[last:k.end])
        # the kernel's own type, so that an overloaded name still means this definition;
        # default arguments cannot be in a pointer's type (then the name alone must do)
        out.append(_entry(tag, k.name if "=" in k.params else f"static_cast<void (*)({k.params})>(&{k.name})"))
        last = k.end
    out.append(text[last:])
    for e_index, expr in enumerate(name_expressions):
        out.append(f"\n#line 1 \"<name expression {e_index}>\"\n{_entry(f'ne_{e_index}', expr.strip())}\n")
    for x_index, name in enumerate(extra):
        out.append(f"\n#line 1 \"<kernel {name}>\"\n{_entry(f'ex_{x_index}_{name}', name)}\n")
    return "".join(out)


# ---- options -----------------------------------------------------------------------------------

_MACRO = re.compile(r"[A-Za-z_]\w*(\([A-Za-z_\w\s,.]*\))?")


def _macro_line(opt: str) -> str | None:
    """``-DNAME[=value]`` / ``-UNAME`` as the line a header gives it, or None when the option is
    not in a form hiprtc takes (a name that is not an identifier, a value with a line break)."""
    body = opt[2:]
    name, eq, value = body.partition("=")
    if not _MACRO.fullmatch(name) or re.search(r"[\x00-\x08\x0a-\x1f\x7f]", value) or value.endswith("\\"):
        return None
    if opt.startswith("-U"):
        return None if eq or "(" in name else f"#undef {name}"
    return f"#define {name} {value if eq else '1'}"


def _translate_options(options: list[str] | tuple[str, ...], header_dir: str) -> tuple[list[str], list[str], list[str]]:
    """hiprtc options -> compiler flags, the lines of the header that gives the ``-D``/``-U``
    options (force-included after hrr_device.h, so that nothing an option defines comes
    before what the device header sets up), and log lines for what was ignored."""
    flags: list[str] = []
    macros: list[str] = []
    notes: list[str] = []
    opt_level, std = "-O2", "-std=c++17"
    it = iter(options)
    for opt in it:
        if opt in ("--gpu-architecture", "-arch"):   # the target is the next option (hrr.backends.devicemodels)
            next(it, "")
            continue
        if opt in ("-D", "-U", "-I") or opt in ("--define-macro", "--undefine-macro", "--include-path"):
            opt = {"--define-macro": "-D", "--undefine-macro": "-U", "--include-path": "-I"}.get(opt, opt)
            opt = opt + next(it, "")
        if opt.startswith(("--define-macro=", "--undefine-macro=", "--include-path=")):
            key, _, value = opt.partition("=")
            opt = {"--define-macro": "-D", "--undefine-macro": "-U", "--include-path": "-I"}[key] + value
        if re.fullmatch(r"-O[0-3s]|-Ofast", opt):
            opt_level = "-O3" if opt == "-Ofast" else opt
        elif re.fullmatch(r"(-std=|--std=)(c\+\+|gnu\+\+)\w+", opt):
            std = "-std=" + opt.split("=", 1)[1]
            if re.fullmatch(r"-std=(c|gnu)\+\+(98|03|0x|11)", std):
                notes.append(f"note: '{opt}' raised to c++14: hrr's device header needs it")
                std = "-std=c++14"
        elif opt.startswith(("-D", "-U")) and len(opt) > 2:
            line = _macro_line(opt)
            if line is None:
                notes.append(f"note: option '{opt[:80]}' ignored: not a macro definition hiprtc takes")
            else:
                macros.append(line)
        elif opt.startswith("-I") and len(opt) > 2:
            path = opt[2:]
            if _bad_path(path) or re.search(r"[\x00-\x1f]", path):
                notes.append(f"note: option '{opt[:80]}' ignored: include paths must lie inside the program's headers")
            else:
                flags.append("-I" + os.path.join(header_dir, path))
        elif opt in ("-ffast-math", "-fno-fast-math", "-ffp-contract=fast", "-ffp-contract=on", "-ffp-contract=off",
                     "-funsafe-math-optimizations", "-fno-unsafe-math-optimizations"):
            flags.append(opt)
        elif opt in _NVRTC_FLAGS:
            flags.append(_NVRTC_FLAGS[opt])
        elif _IGNORED.match(opt) or _NVRTC_IGNORED.match(opt):
            continue
        else:
            notes.append(f"note: option '{opt[:80]}' ignored by hrr's CPU compiler")
    return [std, opt_level, *flags], macros, notes


# ---- compiling -------------------------------------------------------------------------------

def _safe_name(name: str, fallback: str) -> str:
    base = os.path.basename(name.replace("\\", "/")) if name else ""
    base = re.sub(r"[^A-Za-z0-9_.+-]", "_", base).lstrip(".")
    return base or fallback


def _write_tree(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


#: A compile's bounds where replay sets none lower (its --max-seconds, --max-host-bytes).
COMPILE_SECONDS = 600.0
COMPILE_MEMORY = 4 << 30
#: ... but never less than this: ziglang's clang needs about 300 MiB of address space to start.
COMPILE_MEMORY_FLOOR = 512 << 20
#: The largest file a compile may write (the image, an object file, its log).
COMPILE_OUTPUT = MAX_MEMORY


class _Run:
    """The compiler calls of one compile: each in the sandbox (``mode``), within the time
    and memory the compile was given, its log kept to its head and tail."""

    def __init__(self, tc: Toolchain, work: Path, mode: str | None) -> None:
        self.tc, self.work, self.mode = tc, work, mode
        self.box = compilebox.Box(tc.roots, (str(work),), policy.seconds_for(COMPILE_SECONDS),
                                  max(COMPILE_MEMORY_FLOOR, policy.host_room(COMPILE_MEMORY)),
                                  policy.host_room(COMPILE_OUTPUT))
        self.calls = 0
        self.env = {"PATH": os.pathsep.join([os.path.dirname(tc.argv[0]), "/usr/bin", "/bin"]), "LC_ALL": "C",
                    "HOME": str(work), "TMPDIR": str(work / "tmp"),
                    "ZIG_GLOBAL_CACHE_DIR": str(work / "zig"), "ZIG_LOCAL_CACHE_DIR": str(work / "zig")}
        (work / "tmp").mkdir(exist_ok=True)

    def __call__(self, argv: list[str]) -> compilebox.Outcome:
        self.calls += 1
        extra = ["-fno-crash-diagnostics"] if self.tc.kind in ("zig", "clang") else []
        return compilebox.run([*argv[:len(self.tc.argv)], *extra, *argv[len(self.tc.argv):]], self.box,
                              cwd=str(self.work), env=self.env, mode=self.mode,
                              log_path=str(self.work.parent / f"log{self.calls}"))


def _runtime_object(run: _Run, include: Path, use_cache: bool = True,
                    wavefront: int = 64) -> tuple[Path | None, str]:
    """hrr_runtime.c compiled for this toolchain and wavefront size (kept in the cache: it is
    the same for every program of that size; copied into the compile's folder)."""
    tc, work = run.tc, run.work
    runtime = _package_bytes(RUNTIME_SOURCE)
    key = imagecache.key([("kind", "runtime object"), ("toolchain", tc.ident), ("runtime", runtime),
                          ("device header", _package_bytes(DEVICE_HEADER)), ("abi header", _package_bytes(ABI_HEADER)),
                          ("wavefront", str(wavefront))])
    obj = work / "hrr_runtime.o"
    cached = imagecache.get(key, run.box.output) if use_cache else None
    if cached is not None:
        obj.write_bytes(cached)
        return obj, ""
    src = work / RUNTIME_SOURCE
    src.write_bytes(runtime)
    argv = [*tc.argv, "-x", "c++", "-std=c++17", "-O2", *BASE_FLAGS, "-fno-builtin", "-DHRR_RUNTIME",
            f"-DHRR_WAVEFRONT_SIZE={wavefront}", "-isystem", str(include), "-include", str(include / DEVICE_HEADER),
            "-c", str(src), "-o", str(obj)]
    out = run(argv)
    if out.returncode != 0:
        return None, out.log + (f"error: {out.stopped}\n" if out.stopped else "")
    imagecache.put(key, obj.read_bytes())
    return obj, ""


def _clean_log(log: str, replacements: list[tuple[str, str]]) -> str:
    for old, new in replacements:
        log = log.replace(old, new)
    return log


def _outside(text: str, roots: list[str], *, locations: bool = False) -> bool:
    """Whether a compiler's output names a file outside the given directories (with locations,
    only as a diagnostic's `path:line`, where the compiler may quote the file's lines)."""
    pattern = r"(?<![\w.])(/[^\s:'\"()<>]+):\d+" if locations else r"(?<![\w.])(/[^\s:'\"()<>]+)"
    for m in re.finditer(pattern, text):
        path = m.group(1)
        if not any(path == r or path.startswith(r + "/") for r in roots):
            return True
    return False


def _cache_key(tc: Toolchain, units: tuple[SourceUnit, ...], options: tuple[str, ...],
               name_expressions: tuple[str, ...], wavefront: int) -> str:
    """Everything that decides an image, each part typed (units, their headers, options and
    name expressions never read as one another)."""
    parts: list[tuple[str, bytes | str]] = [
        ("kind", "image"), ("toolchain", tc.ident), ("toolchain argv", "\0".join(tc.argv)),
        ("device header", _package_bytes(DEVICE_HEADER)), ("abi header", _package_bytes(ABI_HEADER)),
        ("runtime", _package_bytes(RUNTIME_SOURCE)), ("groups header", _package_bytes(GROUPS_HEADER)),
        ("instrumenter", _package_bytes("toolchain.py")), ("wavefront", str(wavefront)), ("units", str(len(units)))]
    for unit in units:
        parts += [("unit name", unit.name), ("unit source", unit.source), ("headers", str(len(unit.headers)))]
        for name, data in unit.headers:
            parts += [("header name", name), ("header text", data)]
    parts += [("options", str(len(options)))] + [("option", o) for o in options]
    parts += [("name expressions", str(len(name_expressions)))] + [("name expression", e) for e in name_expressions]
    return imagecache.key(parts)


def compile_program(units: list[SourceUnit] | tuple[SourceUnit, ...], options: list[str] | tuple[str, ...] = (),
                    *, relocatable: bool = False, name_expressions: tuple[str, ...] | list[str] = (),
                    wavefront: int = 64) -> CompileResult:
    """Compile (and unless relocatable, link) a program's units into one image; never raises for
    the program's faults: they are in the result's log. Name expressions (hiprtc's) are
    instantiated in the last unit and their lowered names returned. ``wavefront``: the warp size
    of the target it is compiled for (warpSize, and how many threads a warp operation spans)."""
    units = tuple(units)
    name_expressions = tuple(name_expressions)
    options = tuple(o.decode(errors="replace") if isinstance(o, (bytes, bytearray)) else str(o) for o in options)
    tc = find_toolchain()
    if tc is None:
        return CompileResult(False, "error: no C++ compiler for native kernels (install ziglang, clang++ or g++, "
                                    "or set HRR_SIM_CXX)")
    if not units:
        return CompileResult(False, "error: a program without source")
    errors: list[str] = []
    for u_index, unit in enumerate(units):
        errors += _include_errors(unit.name or f"unit{u_index}", unit.source.decode(errors="replace"))
        why = headers_problem([hname for hname, _ in unit.headers])
        if why is not None:
            errors.append(f"error: {why}")
            continue
        for hname, hdata in unit.headers:
            errors += _include_errors(hname, hdata.decode(errors="replace"))
    for expr in name_expressions:
        if not expr.strip() or re.search(r"[\n\r#;{}]", expr):
            errors.append(f"error: name expression '{expr}' is not a name")
    if errors:
        return CompileResult(False, "\n".join(errors) + "\n")
    key = _cache_key(tc, units, options, name_expressions, wavefront)
    if not relocatable:
        data = imagecache.get(key, policy.host_room(COMPILE_OUTPUT))
        if data is not None:
            notes = "".join(n + "\n" for n in _translate_options(options, "")[2])
            try:
                image = parse_image(data)
                return CompileResult(True, notes + _unlaunchable_notes(image), data, _lowered(image, name_expressions),
                                     image)
            except ImageError:
                pass
    try:
        mode = policy.compile_sandbox(compilebox.support())
    except policy.KernelsRefused as exc:
        return CompileResult(False, f"error: {exc}\n")
    with tempfile.TemporaryDirectory(prefix="hrr-cc-") as tmp:
        result = _compile_in(tc, Path(tmp).resolve(), units, options, relocatable, name_expressions,
                             wavefront=wavefront, mode=mode)
    if result.ok and result.native is not None:
        result = _reach_hidden_kernels(tc, units, options, name_expressions, result, wavefront, mode)
    if result.ok and result.image is not None:
        imagecache.put(key, result.image)
    return result


def _reach_hidden_kernels(tc: Toolchain, units: tuple[SourceUnit, ...], options: tuple[str, ...],
                          name_expressions: tuple[str, ...], result: CompileResult,
                          wavefront: int = 64, mode: str | None = None) -> CompileResult:
    """Kernels the source scan missed (defined through a macro): an extern "C" one of a
    one-unit program gets its entry at the unit's end in a second build; any other is named in
    the log, since it cannot be launched."""
    assert result.native is not None
    missing = result.native.unlaunchable
    c_names = tuple(n for n in missing if re.fullmatch(r"[A-Za-z_]\w*", n) and not n.startswith("_Z"))
    if c_names and len(units) == 1:
        with tempfile.TemporaryDirectory(prefix="hrr-cc-") as tmp:
            again = _compile_in(tc, Path(tmp).resolve(), units, options, False, name_expressions, c_names,
                                wavefront=wavefront, mode=mode)
        if again.ok and again.native is not None:
            return attrs.evolve(again, log=again.log + _unlaunchable_notes(again.native))
    return attrs.evolve(result, log=result.log + _unlaunchable_notes(result.native))


def _unlaunchable_notes(image: NativeImage) -> str:
    return "".join(f"note: kernel '{n}' cannot be launched: hrr did not find its definition in the source "
                   "(made by a macro, or in a class)\n" for n in image.unlaunchable)


def _lowered(image: NativeImage, name_expressions: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for i, expr in enumerate(name_expressions):
        tag = re.compile(rf"__hrr_meta_ne_{i}(?!\d)")
        for symbol, lookup in image.entries.items():
            if tag.search(symbol):
                out[expr] = lookup
    return out


def _compile_in(tc: Toolchain, tmp: Path, units: tuple[SourceUnit, ...], options: tuple[str, ...],
                relocatable: bool, name_expressions: tuple[str, ...] = (),
                extra: tuple[str, ...] = (), *, wavefront: int = 64, mode: str | None = None) -> CompileResult:
    work = tmp / "w"   # the sandbox's own folder; its logs and namespace root lie beside it
    work.mkdir()
    include = work / "sys"
    headers = work / "h"
    flags, macros, notes = _translate_options(options, str(headers))
    _write_tree(include, {DEVICE_HEADER: _package_bytes(DEVICE_HEADER), ABI_HEADER: _package_bytes(ABI_HEADER),
                          GROUPS_HEADER: _package_bytes(GROUPS_HEADER), OPTIONS_HEADER: _options_header(macros),
                          PRIVATE_SCRIPT_NAME: PRIVATE_SCRIPT,
                          **{name: b"#pragma once\n" for name in STUB_HEADERS}, **HEADER_TEXTS})
    headers.mkdir()
    replacements: list[tuple[str, str]] = []
    sources = []
    for u_index, unit in enumerate(units):
        udir = work / f"u{u_index}"
        udir.mkdir()
        _write_tree(headers, dict(unit.headers))
        fname = _safe_name(unit.name, f"unit{u_index}.hip")
        path = udir / fname
        last = u_index == len(units) - 1
        # surrogateescape: bytes that are not UTF-8 (in a string literal, say) go through unchanged
        text = _instrument(u_index, unit.source.decode("utf-8", "surrogateescape"), name_expressions if last else (),
                           extra if last else ())
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
        sources.append(path)
        replacements.append((str(udir) + "/", ""))
    run = _Run(tc, work, mode)
    replacements += [(str(headers) + "/", ""), (str(include) + "/", "<hrr>/"), (str(work) + "/", "")]
    # zig defines NDEBUG when optimising; hiprtc does not (a kernel's assert works on a GPU)
    compile_argv = [*tc.argv, "-x", "c++", "-UNDEBUG", f"-DHRR_WAVEFRONT_SIZE={wavefront}", *flags, *BASE_FLAGS,
                    "-isystem", str(include), "-iquote", str(headers), "-I", str(headers),
                    "-include", str(include / DEVICE_HEADER), "-include", str(include / OPTIONS_HEADER)]
    log_head = "".join(n + "\n" for n in notes)
    roots = [str(work)]
    if relocatable:
        outs = []
        for i, src in enumerate(sources):
            out = run([*compile_argv, "-c", str(src), "-o", str(work / f"u{i}.o")])
            outs.append(out.log)
            if out.returncode != 0:
                return _failed(log_head, "".join(outs), roots, replacements, out.stopped)
        return CompileResult(True, log_head + _clean_log("".join(outs), replacements), None)
    runtime, rt_log = _runtime_object(run, include, wavefront=wavefront)
    if runtime is None:
        return CompileResult(False, log_head + "error: hrr's kernel runtime does not compile with "
                             f"{tc.ident}:\n" + _clean_log(rt_log, replacements))
    image_path = work / "image.so"
    argv = [*compile_argv, "-MD", "-MF", str(work / "deps"), *map(str, sources), "-x", "none", str(runtime),
            *LINK_FLAGS, f"-Wl,-T,{include / PRIVATE_SCRIPT_NAME}", *tc.builtins, "-o", str(image_path)]
    out = run(argv)
    if out.returncode != 0 and not out.stopped and "hrr_runtime.o" in out.log:
        # the cached runtime object is damaged: build it again (and replace it) and link again
        runtime, rt_log = _runtime_object(run, include, use_cache=False, wavefront=wavefront)
        if runtime is None:
            return CompileResult(False, log_head + "error: hrr's kernel runtime does not compile with "
                                 f"{tc.ident}:\n" + _clean_log(rt_log, replacements))
        out = run(argv)
    if out.returncode != 0:
        return _failed(log_head, out.log, roots, replacements, out.stopped)
    log = out.log
    for dep in [work / f for f in os.listdir(work) if f == "deps" or f.endswith(".d")]:
        # "target: dep dep ...": only the dependencies are files the compiler read
        text = "\n".join(re.split(r":\s", part, maxsplit=1)[-1]
                         for part in _read_bounded(dep, 1 << 20).decode(errors="replace").split("\n\n"))
        if _outside(_normalised(text, str(work)), [str(work)]):
            return CompileResult(False, log_head + "error: the program read a file outside its own headers; refused\n")
    try:
        size = image_path.stat().st_size
        if size > run.box.output:
            raise ImageError(f"the image is {size} bytes, more than the {run.box.output} a compile may write")
        parsed = parse_image(image_path.read_bytes())
    except (ImageError, OSError) as e:
        return CompileResult(False, log_head + _clean_log(log, replacements) + f"error: {e}\n")
    return CompileResult(True, log_head + _clean_log(log, replacements), parsed.data,
                         _lowered(parsed, name_expressions), parsed)


def _options_header(macros: list[str]) -> bytes:
    return ("#pragma once\n" + "".join(line + "\n" for line in macros)).encode("utf-8", "surrogateescape")


def _read_bounded(path: Path, limit: int) -> bytes:
    with open(path, "rb") as f:
        return f.read(limit)


def _normalised(text: str, cwd: str) -> str:
    """Every absolute path in a dependency list with its ``.``/``..`` resolved (so that
    ``<work>/u0/../../etc/x`` is seen for where it is); relative ones made absolute first."""
    words = re.split(r"(\s+)", text.replace("\\\n", " "))
    return "".join(os.path.normpath(w if w.startswith("/") else os.path.join(cwd, w))
                   if w.strip() and w not in ("\\",) else w for w in words)


def _failed(head: str, log: str, roots: list[str], replacements: list[tuple[str, str]],
            stopped: str = "") -> CompileResult:
    """A failed compile's log, unless it quotes a file outside the program (then only that);
    when a limit stopped the compiler, that first."""
    if stopped:
        head += f"error: {stopped}\n"
    if _outside(log, roots, locations=True):
        return CompileResult(False, head + "error: the program refers to a file outside its own headers; refused\n")
    return CompileResult(False, head + _clean_log(log, replacements))
