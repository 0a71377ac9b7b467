"""The built-in kernel library for the cuda backend: CUDA C source (builtin_kernels.cu),
its NVRTC-compiled cubin per architecture, and the kernels' parameter layouts with the
kinds the sim declares (CUDA itself only reports offsets and sizes)."""
from __future__ import annotations

import hashlib
import threading
from importlib import resources
from typing import Sequence

from hrr.hiptypes.kernargs import POINTER, STRUCT, VALUE, KernelLayout, ParamSpec
from hrr.errors import BackendError
from hrr.backends.cuda.arch import device_arch

SOURCE_NAME = "builtin_kernels.cu"


def _p(offset: int, size: int, kind: str, name: str) -> ParamSpec:
    return ParamSpec(offset, size, kind, name)


# name -> layout (natural alignment, 64-bit pointers): BRIEF contract 2.
BUILTIN_LAYOUTS: dict[str, KernelLayout] = {
    "fill_u32": KernelLayout((_p(0, 8, POINTER, "dst"), _p(8, 4, VALUE, "value"),
                              _p(12, 4, VALUE, "n"))),
    "copy_u8": KernelLayout((_p(0, 8, POINTER, "dst"), _p(8, 8, POINTER, "src"),
                             _p(16, 8, VALUE, "nbytes"))),
    "add_u32": KernelLayout((_p(0, 8, POINTER, "dst"), _p(8, 8, POINTER, "a"),
                             _p(16, 8, POINTER, "b"), _p(24, 4, VALUE, "n"))),
    "sum_u32": KernelLayout((_p(0, 8, POINTER, "dst"), _p(8, 8, POINTER, "src"),
                             _p(16, 4, VALUE, "n"))),
    "struct_sum_u32": KernelLayout((_p(0, 8, POINTER, "dst"), _p(8, 16, STRUCT, "s"))),
    "wait_flag": KernelLayout((_p(0, 8, POINTER, "flag"), _p(8, 4, VALUE, "expected"))),
    "set_flag": KernelLayout((_p(0, 8, POINTER, "flag"), _p(8, 4, VALUE, "value"))),
}
BUILTIN_KERNELS = tuple(BUILTIN_LAYOUTS)

_cache: dict[str, bytes] = {}
_digests: set[bytes] = set()
_lock = threading.Lock()


def builtin_source() -> bytes:
    """The CUDA C source of the built-in kernels."""
    return resources.files(__package__).joinpath(SOURCE_NAME).read_bytes()


def compile_to_cubin(source: bytes, name: bytes, arch: str, options: Sequence[bytes] = ()) -> bytes:
    """Compile ``source`` with NVRTC to a cubin for ``arch`` (e.g. ``sm_90``)."""
    from hrr.backends.cuda._runtime import nvrtc_module
    nvrtc = nvrtc_module()
    try:
        err, prog = nvrtc.nvrtcCreateProgram(source, name, 0, [], [])
    except RuntimeError as exc:  # libnvrtc not found by cuda.pathfinder
        raise BackendError(f"NVRTC is not available: {exc}",
                           hint="pip install 'nvidia-cuda-nvrtc>=13,<14' (the cuda extra)") from None
    if int(err):
        raise BackendError(f"nvrtcCreateProgram failed: {err!r}")
    try:
        opts = [f"--gpu-architecture={arch}".encode(), b"--std=c++17", *options]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if int(err):
            _, n = nvrtc.nvrtcGetProgramLogSize(prog)
            log = bytearray(n)
            nvrtc.nvrtcGetProgramLog(prog, log)
            raise BackendError(f"NVRTC failed to compile {name.decode()}: {err!r}",
                               where=name.decode(), hint=log.rstrip(b"\0 ").decode(errors="replace"))
        _, n = nvrtc.nvrtcGetCUBINSize(prog)
        buf = bytearray(n)
        nvrtc.nvrtcGetCUBIN(prog, buf)
        return bytes(buf)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def builtin_code_object(arch: str | None = None) -> bytes:
    """The cubin of the built-in kernels for ``arch`` (default: the current device's, or
    sm_90 when there is no GPU); compiled once per architecture."""
    if arch is None:
        arch = device_arch()
    with _lock:
        code = _cache.get(arch)
        if code is None:
            code = compile_to_cubin(builtin_source(), SOURCE_NAME.encode(), arch)
            _cache[arch] = code
            _digests.add(hashlib.sha256(code).digest())
    return code


def is_builtin_image(image: bytes) -> bool:
    """True when ``image`` is one of the built-in cubins this process compiled."""
    return bool(_digests) and hashlib.sha256(image).digest() in _digests
