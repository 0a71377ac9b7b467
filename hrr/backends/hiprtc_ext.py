"""hip-python's hiprtc extension module (``hiprtc_pyext``, also ``hiprtc.ext``) over a
backend's ``hiprtc``.

hip-python (7.x and 10.x alike) ships a pure-Python helper module beside its bindings:
``HiprtcLinkCreateOpts(**options)`` turns JIT options given by name into
``hiprtcLinkCreate``'s three arguments, and ``hiprtcLinkCreate2(**options)`` calls
``hiprtcLinkCreate`` with them. 7.x reaches it as ``hip.hiprtc_pyext`` and
``hiprtc.ext``; 10.x also as ``rocm.bindings.hiprtc_pyext``, and its helpers warn that
they are deprecated. The module here is the same helpers over the ``hiprtc`` module it is
built for, so under capture ``hiprtcLinkCreate2`` is recorded as the ``hiprtcLinkCreate``
call it makes (what the runtime sees) and replays as that row does.
"""
from __future__ import annotations

import ctypes
import types
import warnings
from typing import Any, Iterator

from hrr import hiptypes as ht

# HIP's older hiprtcJIT_option names (``HIPRTC_JIT_*``) -> hipJitOption's member names.
LEGACY_NAMES = {f"HIPRTC_JIT_{old}": f"hipJitOption{new}" for old, new in (
    ("MAX_REGISTERS", "MaxRegisters"), ("THREADS_PER_BLOCK", "ThreadsPerBlock"), ("WALL_TIME", "WallTime"),
    ("INFO_LOG_BUFFER", "InfoLogBuffer"), ("INFO_LOG_BUFFER_SIZE_BYTES", "InfoLogBufferSizeBytes"),
    ("ERROR_LOG_BUFFER", "ErrorLogBuffer"), ("ERROR_LOG_BUFFER_SIZE_BYTES", "ErrorLogBufferSizeBytes"),
    ("OPTIMIZATION_LEVEL", "OptimizationLevel"), ("TARGET_FROM_HIPCONTEXT", "TargetFromContext"),
    ("TARGET", "Target"), ("FALLBACK_STRATEGY", "FallbackStrategy"), ("GENERATE_DEBUG_INFO", "GenerateDebugInfo"),
    ("LOG_VERBOSE", "LogVerbose"), ("GENERATE_LINE_INFO", "GenerateLineInfo"), ("CACHE_MODE", "CacheMode"),
    ("NEW_SM3X_OPT", "Sm3xOpt"), ("FAST_COMPILE", "FastCompile"), ("GLOBAL_SYMBOL_NAMES", "GlobalSymbolNames"),
    ("GLOBAL_SYMBOL_ADDRESS", "GlobalSymbolAddresses"), ("GLOBAL_SYMBOL_COUNT", "GlobalSymbolCount"),
    ("LTO", "Lto"), ("FTZ", "Ftz"), ("PREC_DIV", "PrecDiv"), ("PREC_SQRT", "PrecSqrt"), ("FMA", "Fma"),
    ("POSITION_INDEPENDENT_CODE", "PositionIndependentCode"), ("MIN_CTA_PER_SM", "MinCTAPerSM"),
    ("MAX_THREADS_PER_BLOCK", "MaxThreadsPerBlock"), ("OVERRIDE_DIRECT_VALUES", "OverrideDirectiveValues"),
    ("NUM_OPTIONS", "NumOptions"), ("IR_TO_ISA_OPT_EXT", "IRtoISAOptExt"),
    ("IR_TO_ISA_OPT_COUNT_EXT", "IRtoISAOptCountExt"))}
# How each option's value is passed (hipJitOption member name without its prefix -> kind),
# as hip-python's helper converts it: C scalars by value, sizes as pointer-sized values,
# lists and buffers as they were given.
_KINDS = {
    **dict.fromkeys(("Sm3xOpt", "FastCompile"), "bool"),
    **dict.fromkeys(("MaxRegisters", "ThreadsPerBlock", "OptimizationLevel", "TargetFromContext", "Target",
                     "FallbackStrategy", "CacheMode", "GlobalSymbolCount"), "uint"),
    **dict.fromkeys(("GenerateDebugInfo", "GenerateLineInfo", "Lto", "Ftz", "PrecDiv", "PrecSqrt", "Fma",
                     "PositionIndependentCode", "MinCTAPerSM", "MaxThreadsPerBlock", "OverrideDirectiveValues"),
                    "int"),
    **dict.fromkeys(("InfoLogBufferSizeBytes", "ErrorLogBufferSizeBytes", "LogVerbose", "IRtoISAOptCountExt",
                     "WallTime"), "size"),
    **dict.fromkeys(("GlobalSymbolAddresses", "GlobalSymbolNames", "IRtoISAOptExt"), "list"),
    **dict.fromkeys(("InfoLogBuffer", "ErrorLogBuffer"), "buffer"),
}
_PREFIX = len("hipJitOption")


def _deprecated(what: str) -> None:
    """hip-python 10.x deprecates its helpers (7.x does not): hrr's say so where 10.x would."""
    if ht.HIP_PYTHON_MAJOR != 7:
        warnings.warn(f"{what} is deprecated; use rocm.bindings.hiprtc directly.", DeprecationWarning, stacklevel=3)


def _value(kind: str, value: Any) -> Any:
    if kind == "bool":
        return int(ctypes.c_bool(value).value)
    if kind == "uint":
        return int(ctypes.c_uint(value).value)
    if kind == "int":
        return int(ctypes.c_int(value).value)
    if kind == "size":
        return int(ctypes.c_size_t(value).value)
    return list(value) if kind == "list" else value


def ext_module(hiprtc: types.ModuleType, name: str = "hiprtc_pyext") -> types.ModuleType:
    """hip-python's ``hiprtc_pyext`` over ``hiprtc`` (any module with ``hiprtcLinkCreate``
    and ``hipJitOption``): ``HiprtcLinkCreateOpts`` and ``hiprtcLinkCreate2``."""
    jit_option = hiprtc.hipJitOption

    class HiprtcLinkCreateOpts:
        """hiprtcLinkCreate's (number of options, option keys, option values) from JIT
        options given by name (``hipJitOption`` members or their ``HIPRTC_JIT_*`` names)."""

        def __init__(self, **kwargs: Any) -> None:
            _deprecated("HiprtcLinkCreateOpts")
            self.num_opts = len(kwargs)
            self.keys: list | None = [] if kwargs else None
            self.values: list | None = [] if kwargs else None
            for key, value in kwargs.items():
                member = LEGACY_NAMES[key] if key.startswith("HIPRTC_") else key
                option = getattr(jit_option, member)   # AttributeError for an unknown name, as hip-python
                kind = _KINDS.get(member[_PREFIX:])
                if kind is None:
                    raise NotImplementedError(f"could not handle key '{key}'")
                assert self.keys is not None and self.values is not None
                self.keys.append(option)
                self.values.append(_value(kind, value))

        def __len__(self) -> int:
            return 3

        def __iter__(self) -> Iterator[Any]:
            return iter((self.num_opts, self.keys, self.values))

        def __getitem__(self, item: Any) -> Any:
            if not isinstance(item, int):
                raise ValueError("'item' type must be 'int'")
            if item not in (0, 1, 2):
                raise IndexError()
            return (self.num_opts, self.keys, self.values)[item]

    def hiprtcLinkCreate2(**kwargs: Any) -> tuple:
        """hiprtcLinkCreate with its JIT options given by name (see HiprtcLinkCreateOpts)."""
        _deprecated("hiprtcLinkCreate2")
        with warnings.catch_warnings():   # one warning per call, as hip-python gives
            warnings.simplefilter("ignore", DeprecationWarning)
            opts = HiprtcLinkCreateOpts(**kwargs)
        return hiprtc.hiprtcLinkCreate(*opts)

    mod = types.ModuleType(name, "hip-python's hiprtc extensions, over hrr's hiprtc")
    HiprtcLinkCreateOpts.__module__ = hiprtcLinkCreate2.__module__ = name
    mod.__dict__.update(HiprtcLinkCreateOpts=HiprtcLinkCreateOpts, hiprtcLinkCreate2=hiprtcLinkCreate2,
                        __all__=["HiprtcLinkCreateOpts", "hiprtcLinkCreate2"], over=ext_module)
    return mod


def attach(hiprtc: types.ModuleType) -> types.ModuleType:
    """Give ``hiprtc`` its ``ext`` (hip-python's spelling of the extension module) built
    over it; returns ``hiprtc``."""
    hiprtc.ext = ext_module(hiprtc)   # type: ignore[attr-defined]
    return hiprtc


__all__ = ["ext_module", "attach", "LEGACY_NAMES"]
