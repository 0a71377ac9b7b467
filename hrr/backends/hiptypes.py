"""hip-python's value types, shared by every backend, and the surface of the modules built
from them.

Enums are hip-python's own classes when hip-python is importable (so a member an app
passes is literally hip-python's), otherwise identical IntEnums with the same names and
values. Pointers, handles, ``dim3`` and ``CStr`` mirror hip-python's shapes: ``int(x)``
gives the address or handle value.

``surface_module`` gives a backend's module every name of hip-python's (a function hrr does
not implement raises ``UncataloguedCall`` when called), ``release_modules`` the module each
spelling of hip-python finds where 7.x's ``hip`` package sits beside 10.x's ``rocm.bindings``.
"""
from __future__ import annotations

import ctypes
import dataclasses
import enum
import functools
import importlib
import importlib.machinery
import importlib.util
import os
import sys
import types
from typing import Any

import numpy as np

from hrr.errors import HrrError

_HIP_ERRORS = {
    "hipSuccess": 0, "hipErrorInvalidValue": 1, "hipErrorOutOfMemory": 2,
    "hipErrorNotInitialized": 3, "hipErrorDeinitialized": 4, "hipErrorProfilerDisabled": 5,
    "hipErrorProfilerNotInitialized": 6, "hipErrorProfilerAlreadyStarted": 7,
    "hipErrorProfilerAlreadyStopped": 8, "hipErrorInvalidConfiguration": 9,
    "hipErrorInvalidPitchValue": 12, "hipErrorInvalidSymbol": 13,
    "hipErrorInvalidDevicePointer": 17, "hipErrorInvalidMemcpyDirection": 21,
    "hipErrorInsufficientDriver": 35, "hipErrorMissingConfiguration": 52,
    "hipErrorPriorLaunchFailure": 53, "hipErrorInvalidDeviceFunction": 98,
    "hipErrorNoDevice": 100, "hipErrorInvalidDevice": 101, "hipErrorInvalidImage": 200,
    "hipErrorInvalidContext": 201, "hipErrorContextAlreadyCurrent": 202,
    "hipErrorMapFailed": 205, "hipErrorUnmapFailed": 206, "hipErrorArrayIsMapped": 207,
    "hipErrorAlreadyMapped": 208, "hipErrorNoBinaryForGpu": 209,
    "hipErrorAlreadyAcquired": 210, "hipErrorNotMapped": 211,
    "hipErrorNotMappedAsArray": 212, "hipErrorNotMappedAsPointer": 213,
    "hipErrorECCNotCorrectable": 214, "hipErrorUnsupportedLimit": 215,
    "hipErrorContextAlreadyInUse": 216, "hipErrorPeerAccessUnsupported": 217,
    "hipErrorInvalidKernelFile": 218, "hipErrorInvalidGraphicsContext": 219,
    "hipErrorInvalidSource": 300, "hipErrorFileNotFound": 301,
    "hipErrorSharedObjectSymbolNotFound": 302, "hipErrorSharedObjectInitFailed": 303,
    "hipErrorOperatingSystem": 304, "hipErrorInvalidHandle": 400,
    "hipErrorIllegalState": 401, "hipErrorNotFound": 500, "hipErrorNotReady": 600,
    "hipErrorIllegalAddress": 700, "hipErrorLaunchOutOfResources": 701,
    "hipErrorLaunchTimeOut": 702, "hipErrorPeerAccessAlreadyEnabled": 704,
    "hipErrorPeerAccessNotEnabled": 705, "hipErrorSetOnActiveProcess": 708,
    "hipErrorContextIsDestroyed": 709, "hipErrorAssert": 710,
    "hipErrorHostMemoryAlreadyRegistered": 712, "hipErrorHostMemoryNotRegistered": 713,
    "hipErrorLaunchFailure": 719, "hipErrorCooperativeLaunchTooLarge": 720,
    "hipErrorNotSupported": 801, "hipErrorStreamCaptureUnsupported": 900,
    "hipErrorStreamCaptureInvalidated": 901, "hipErrorStreamCaptureMerge": 902,
    "hipErrorStreamCaptureUnmatched": 903, "hipErrorStreamCaptureUnjoined": 904,
    "hipErrorStreamCaptureIsolation": 905, "hipErrorStreamCaptureImplicit": 906,
    "hipErrorCapturedEvent": 907, "hipErrorStreamCaptureWrongThread": 908,
    "hipErrorGraphExecUpdateFailure": 910, "hipErrorInvalidChannelDescriptor": 911,
    "hipErrorInvalidTexture": 912, "hipErrorInvalidResourceType": 914,
    "hipErrorInvalidResourceConfiguration": 915, "hipErrorStreamDetached": 916,
    "hipErrorUnknown": 999, "hipErrorRuntimeMemory": 1052, "hipErrorRuntimeOther": 1053,
    "hipErrorInvalidClusterSize": 1054, "hipErrorTbd": 1055,
}
_ENUMS = {
    "hipMemcpyKind": {"hipMemcpyHostToHost": 0, "hipMemcpyHostToDevice": 1,
                      "hipMemcpyDeviceToHost": 2, "hipMemcpyDeviceToDevice": 3,
                      "hipMemcpyDefault": 4, "hipMemcpyDeviceToDeviceNoCU": 1024},
    "hipStreamCaptureStatus": {"hipStreamCaptureStatusNone": 0,
                               "hipStreamCaptureStatusActive": 1,
                               "hipStreamCaptureStatusInvalidated": 2},
    "hipStreamCaptureMode": {"hipStreamCaptureModeGlobal": 0,
                             "hipStreamCaptureModeThreadLocal": 1,
                             "hipStreamCaptureModeRelaxed": 2},
    "hipMemoryType": {"hipMemoryTypeUnregistered": 0, "hipMemoryTypeHost": 1,
                      "hipMemoryTypeDevice": 2, "hipMemoryTypeManaged": 3,
                      "hipMemoryTypeArray": 10, "hipMemoryTypeUnified": 11},
}
_HIPRTC_RESULTS = {
    "HIPRTC_SUCCESS": 0, "HIPRTC_ERROR_OUT_OF_MEMORY": 1,
    "HIPRTC_ERROR_PROGRAM_CREATION_FAILURE": 2, "HIPRTC_ERROR_INVALID_INPUT": 3,
    "HIPRTC_ERROR_INVALID_PROGRAM": 4, "HIPRTC_ERROR_INVALID_OPTION": 5,
    "HIPRTC_ERROR_COMPILATION": 6, "HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE": 7,
    "HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION": 8,
    "HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION": 9,
    "HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID": 10, "HIPRTC_ERROR_INTERNAL_ERROR": 11,
    "HIPRTC_ERROR_LINKING": 100,
}


@dataclasses.dataclass(frozen=True)
class Release:
    """One hip-python release installed here: its major version and its own ``hip``,
    ``hiprtc`` and ``util`` modules."""

    major: int
    hip: Any
    hiprtc: Any
    util: Any

    @property
    def text_type(self) -> type:
        """The Python type of hipDeviceProp_t's C strings: 7.x gives bytes, 10.x str."""
        return bytes if self.major == 7 else str


def _release10() -> Release | None:
    """hip-python 10.x, imported by its own names (``rocm.bindings``), or None."""
    try:
        from rocm.bindings import hip as real_hip, hiprtc as real_hiprtc, util  # hip-python 10.x
    except Exception:  # noqa: BLE001 - any import failure means "not available"
        return None
    if getattr(real_hip, "SUPPORTED_APIS", None) is not None:   # hrr's own module sits there
        return None
    return Release(10, real_hip, real_hiprtc, util)


def _release7() -> Release | None:
    """hip-python 7.x, whose ``hip`` package holds the bindings themselves (10.x's ``hip``
    package only re-exports ``rocm.bindings``), or None. Its files are looked at before
    anything is imported: hip-python 10's package is not imported for nothing, and the
    package hrr installs as ``hip`` (no spec) is never taken for hip-python's."""
    try:
        spec = importlib.util.find_spec("hip")
    except (ImportError, ValueError):   # ValueError: hrr's own package (its __spec__ is None)
        return None
    places = list(spec.submodule_search_locations or ()) if spec is not None else []
    suffixes = (*importlib.machinery.EXTENSION_SUFFIXES, ".py")
    if not any(os.path.exists(os.path.join(place, "hip" + suffix)) for place in places for suffix in suffixes):
        return None
    try:
        real_hip = importlib.import_module("hip.hip")
        real_hiprtc = importlib.import_module("hip.hiprtc")
        importlib.import_module("hip._util.types")
    except Exception:  # noqa: BLE001
        return None
    if getattr(real_hip, "SUPPORTED_APIS", None) is not None:
        return None
    return Release(7, real_hip, real_hiprtc, sys.modules["hip._util"])


def _installed_releases() -> dict[int, Release]:
    found = {}
    for probe in (_release10, _release7):
        release = probe()
        if release is not None:
            found[release.major] = release
    return found


# Every hip-python release installed here. hip-python 10.x's packages (rocm-bindings-*) and
# 7.x's ``hip`` package can sit side by side (``pip install hrr``, then ``pip install
# 'hip-python<8'``): a program's ``from hip import hip`` then finds 7.x, its ``from
# rocm.bindings import hip`` 10.x, and hrr mirrors each under its own name.
RELEASES: dict[int, Release] = _installed_releases()
# The release hrr's types come from (10.x where installed) ...
PRIMARY: Release | None = RELEASES.get(10) or RELEASES.get(7)
# ... and the one a program's ``from hip import hip`` finds (7.x where installed).
CLASSIC: Release | None = RELEASES.get(7) or PRIMARY
_real: tuple[Any, Any, Any] | None = None if PRIMARY is None else (PRIMARY.hip, PRIMARY.hiprtc, PRIMARY.util)


def real_modules() -> tuple[Any, ...]:
    """hip-python's own ``hip`` and ``hiprtc`` modules (empty when it is not installed); of
    10.x when both 7.x and 10.x are installed."""
    return () if _real is None else (_real[0], _real[1])


def real_util() -> Any:
    """hip-python's ``util`` package (``util.types``: Pointer, DeviceArray, CStr), or None."""
    return None if _real is None else _real[2]


def _int_enum(name: str, members: Any) -> Any:
    # Typed Any like hip-python's own enums in the other branch, so callers see one type.
    return enum.IntEnum(name, members)


def _enum_type(name: str, module: int, members: Any) -> Any:
    """hip-python's enum ``name`` (from its hip, 0, or hiprtc, 1, module) when it is
    installed, else an IntEnum with the same members and values."""
    return getattr(_real[module], name) if _real is not None else _int_enum(name, members)


hipError_t = _enum_type("hipError_t", 0, _HIP_ERRORS)
hipMemcpyKind = _enum_type("hipMemcpyKind", 0, _ENUMS["hipMemcpyKind"])
hipStreamCaptureStatus = _enum_type("hipStreamCaptureStatus", 0, _ENUMS["hipStreamCaptureStatus"])
hipStreamCaptureMode = _enum_type("hipStreamCaptureMode", 0, _ENUMS["hipStreamCaptureMode"])
hipMemoryType = _enum_type("hipMemoryType", 0, _ENUMS["hipMemoryType"])
hiprtcResult = _enum_type("hiprtcResult", 1, _HIPRTC_RESULTS)
ENUM_SOURCE = "hip-python" if _real is not None else "hrr"

ENUM_TYPES = {e.__name__: e for e in (hipError_t, hipMemcpyKind, hipStreamCaptureStatus,
                                       hipStreamCaptureMode, hipMemoryType, hiprtcResult)}

# ---- hiprtc: programs and the link API --------------------------------------
# hiprtc's link API takes hipJitInputType / hipJitOption (hiprtcJITInputType and
# hiprtcJIT_option are their hiprtc names). HIP's hiprtc.h also spells the input types
# HIPRTC_JIT_INPUT_* (macros over the hipJitInput* values): hip-python does not, and its
# examples use those names (hiprtcJITInputType.HIPRTC_JIT_INPUT_LLVM_BITCODE), so they are
# added as attributes of the enum class (not members: hip-python's own members stay as
# they are).
_ENUMS["hipJitInputType"] = {
    "hipJitInputCubin": 0, "hipJitInputPtx": 1, "hipJitInputFatBinary": 2, "hipJitInputObject": 3,
    "hipJitInputLibrary": 4, "hipJitInputNvvm": 5, "hipJitNumLegacyInputTypes": 6,
    "hipJitInputLLVMBitcode": 100, "hipJitInputLLVMBundledBitcode": 101,
    "hipJitInputLLVMArchivesOfBundledBitcode": 102, "hipJitInputSpirv": 103, "hipJitNumInputTypes": 10}
_ENUMS["hipJitOption"] = {name: i for i, name in enumerate((
    "hipJitOptionMaxRegisters", "hipJitOptionThreadsPerBlock", "hipJitOptionWallTime",
    "hipJitOptionInfoLogBuffer", "hipJitOptionInfoLogBufferSizeBytes", "hipJitOptionErrorLogBuffer",
    "hipJitOptionErrorLogBufferSizeBytes", "hipJitOptionOptimizationLevel",
    "hipJitOptionTargetFromContext", "hipJitOptionTarget", "hipJitOptionFallbackStrategy",
    "hipJitOptionGenerateDebugInfo", "hipJitOptionLogVerbose", "hipJitOptionGenerateLineInfo",
    "hipJitOptionCacheMode", "hipJitOptionSm3xOpt", "hipJitOptionFastCompile",
    "hipJitOptionGlobalSymbolNames", "hipJitOptionGlobalSymbolAddresses", "hipJitOptionGlobalSymbolCount",
    "hipJitOptionLto", "hipJitOptionFtz", "hipJitOptionPrecDiv", "hipJitOptionPrecSqrt", "hipJitOptionFma",
    "hipJitOptionPositionIndependentCode", "hipJitOptionMinCTAPerSM", "hipJitOptionMaxThreadsPerBlock",
    "hipJitOptionOverrideDirectiveValues", "hipJitOptionNumOptions"))}
_ENUMS["hipJitOption"].update(hipJitOptionIRtoISAOptExt=10000, hipJitOptionIRtoISAOptCountExt=10001)
hipJitInputType = _enum_type("hipJitInputType", 1, _ENUMS["hipJitInputType"])
hipJitOption = _enum_type("hipJitOption", 1, _ENUMS["hipJitOption"])
_HIPRTC_INPUT_NAMES = {
    "HIPRTC_JIT_INPUT_CUBIN": "hipJitInputCubin", "HIPRTC_JIT_INPUT_PTX": "hipJitInputPtx",
    "HIPRTC_JIT_INPUT_FATBINARY": "hipJitInputFatBinary", "HIPRTC_JIT_INPUT_OBJECT": "hipJitInputObject",
    "HIPRTC_JIT_INPUT_LIBRARY": "hipJitInputLibrary", "HIPRTC_JIT_INPUT_NVVM": "hipJitInputNvvm",
    "HIPRTC_JIT_NUM_LEGACY_INPUT_TYPES": "hipJitNumLegacyInputTypes",
    "HIPRTC_JIT_INPUT_LLVM_BITCODE": "hipJitInputLLVMBitcode",
    "HIPRTC_JIT_INPUT_LLVM_BUNDLED_BITCODE": "hipJitInputLLVMBundledBitcode",
    "HIPRTC_JIT_INPUT_LLVM_ARCHIVES_OF_BUNDLED_BITCODE": "hipJitInputLLVMArchivesOfBundledBitcode",
    "HIPRTC_JIT_NUM_INPUT_TYPES": "hipJitNumInputTypes"}
for _legacy, _member in _HIPRTC_INPUT_NAMES.items():
    if _legacy not in hipJitInputType.__members__ and _member in hipJitInputType.__members__:
        setattr(hipJitInputType, _legacy, hipJitInputType[_member])
ENUM_TYPES.update(hipJitInputType=hipJitInputType, hipJitOption=hipJitOption)
# ---- end of hiprtc ------------------------------------------------------------------

# Plain int constants, hip-python's values.
CONSTANTS = {
    "HIP_LAUNCH_PARAM_BUFFER_POINTER": 1, "HIP_LAUNCH_PARAM_BUFFER_SIZE": 2,
    "HIP_LAUNCH_PARAM_END": 3,
    "hipHostMallocDefault": 0, "hipHostMallocPortable": 1, "hipHostMallocMapped": 2,
    "hipHostMallocWriteCombined": 4, "hipHostMallocNumaUser": 0x20000000,
    "hipHostMallocCoherent": 0x40000000, "hipHostMallocNonCoherent": -0x80000000,
    "hipHostRegisterDefault": 0, "hipHostRegisterPortable": 1, "hipHostRegisterMapped": 2,
    "hipHostRegisterIoMemory": 4,
    "hipStreamDefault": 0, "hipStreamNonBlocking": 1,
    "hipEventDefault": 0, "hipEventBlockingSync": 1, "hipEventDisableTiming": 2,
    "hipEventInterprocess": 4,
    "hipStreamWaitValueGte": 0, "hipStreamWaitValueEq": 1, "hipStreamWaitValueAnd": 2,
    "hipStreamWaitValueNor": 3,
    "hipGraphInstantiateFlagAutoFreeOnLaunch": 1,
}
HIP_LAUNCH_PARAM_BUFFER_POINTER = 1
HIP_LAUNCH_PARAM_BUFFER_SIZE = 2
HIP_LAUNCH_PARAM_END = 3


class Pointer:
    """An address, as hip-python's ``Pointer``: ``int(p)`` is the address."""

    __slots__ = ("_addr",)

    def __init__(self, addr: int | None = 0) -> None:
        self._addr = int(addr or 0)

    def __int__(self) -> int:
        return self._addr

    __index__ = __int__

    def as_c_void_p(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(self._addr)

    def is_ptr_null(self) -> bool:
        return self._addr == 0

    @classmethod
    def fromObj(cls, obj: Any) -> Any:  # noqa: N802 - hip-python's name
        """hip-python's constructor from anything pointer-like (its conversion rules)."""
        return cls(as_address(obj))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pointer) and other._addr == self._addr

    def __hash__(self) -> int:
        return hash(self._addr)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} 0x{self._addr:x}>"


# hip-python's DeviceArray and the NDBuffer it is (configure, slicing, createRef) live in
# devicearray.py, which builds on Pointer above.
from hrr.backends.devicearray import DeviceArray, NDBuffer  # noqa: E402,F401


class HandleRef(Pointer):
    """``handle.createRef()``: the address of memory holding the handle's value (what a C
    ``hiprtcProgram*`` parameter takes); ``target`` is the handle itself."""

    __slots__ = ("target", "_cell")

    def __init__(self, target: Any) -> None:
        self.target = target
        self._cell = ctypes.c_uint64(int(target))
        super().__init__(ctypes.addressof(self._cell))


class Handle:
    """Base of the opaque handle classes: ``int(h)`` is the handle's value."""

    __slots__ = ("_value",)

    def __init__(self, value: int) -> None:
        self._value = int(value)

    def __int__(self) -> int:
        return self._value

    __index__ = __int__

    @classmethod
    def fromObj(cls, obj: Any) -> Any:  # noqa: N802 - hip-python's name
        """hip-python's constructor from None, an int, ``c_void_p`` or another handle."""
        return cls(as_handle_value(obj))

    def as_c_void_p(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(self._value)

    def is_ptr_null(self) -> bool:
        return self._value == 0

    def createRef(self) -> HandleRef:  # noqa: N802 - hip-python's name
        """A pointer to this handle, as hip-python's ``createRef`` (e.g. for
        ``hiprtcDestroyProgram(prog.createRef())``, whose C parameter is ``hiprtcProgram*``)."""
        return HandleRef(self)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._value == self._value

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._value))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} 0x{self._value:x}>"


class ihipStream_t(Handle):
    __slots__ = ()


class ihipEvent_t(Handle):
    __slots__ = ()


class ihipModule_t(Handle):
    __slots__ = ()


class ihipModuleSymbol_t(Handle):
    __slots__ = ()


class ihipGraph(Handle):
    __slots__ = ()


class hipGraphExec(Handle):
    __slots__ = ()


class hipGraphNode(Handle):
    __slots__ = ()


class hiprtcProgram(Handle):
    __slots__ = ()


class ihiprtcLinkState(Handle):
    __slots__ = ()


HANDLE_TYPES = {c.__name__: c for c in (ihipStream_t, ihipEvent_t, ihipModule_t,
                                        ihipModuleSymbol_t, ihipGraph, hipGraphExec,
                                        hipGraphNode, hiprtcProgram, ihiprtcLinkState)}


class CStr:
    """A C string result, as hip-python's ``CStr``: use ``str(x)`` or ``bytes(x)``."""

    __slots__ = ("_b",)

    def __init__(self, value: bytes | str) -> None:
        self._b = value.encode() if isinstance(value, str) else bytes(value)

    def __bytes__(self) -> bytes:
        return self._b

    def __str__(self) -> str:
        return self._b.decode(errors="replace")

    def __repr__(self) -> str:
        return f"CStr({self._b!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CStr):
            return other._b == self._b
        if isinstance(other, (bytes, str)):
            return self._b == (other.encode() if isinstance(other, str) else other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._b)


class _dim3:
    """hip-python's ``dim3(x=..., y=..., z=...)``, where hip-python is absent: keyword
    construction, ``.x/.y/.z``, indexable and iterable like hip-python's struct."""

    __slots__ = ("x", "y", "z")

    def __init__(self, x: int = 1, y: int = 1, z: int = 1) -> None:
        self.x, self.y, self.z = int(x), int(y), int(z)

    def __getitem__(self, i: int) -> int:
        return (self.x, self.y, self.z)[i]

    def __iter__(self):
        return iter((self.x, self.y, self.z))

    def __repr__(self) -> str:
        return f"dim3(x={self.x}, y={self.y}, z={self.z})"


_dim3.__name__ = _dim3.__qualname__ = "dim3"   # the name the module offers it under
# hip-python's own struct when installed: it needs no HIP runtime.
dim3: Any = _real[0].dim3 if _real is not None else _dim3

# The Python type of hipDeviceProp_t's C strings (``name``, ``gcnArchName``): hip-python
# 10.x gives str, 7.x bytes (its examples do ``b"--offload-arch=" + props.gcnArchName``).
# With no hip-python installed, hrr mirrors 10.x.
HIP_PYTHON_MAJOR = None if PRIMARY is None else PRIMARY.major
TEXT_TYPE: type = bytes if HIP_PYTHON_MAJOR == 7 else str
_TEXT_FIELDS = ("name", "gcnArchName")


def as_text(value: Any, text_type: type | None = None) -> Any:
    """A C string field in the installed hip-python's Python type (``TEXT_TYPE``), or in
    ``text_type`` (bytes or str)."""
    text_type = TEXT_TYPE if text_type is None else text_type
    if isinstance(value, (bytes, bytearray)):
        raw = bytes(value).split(b"\0", 1)[0]
        return raw if text_type is bytes else raw.decode(errors="replace")
    return str(value).encode() if text_type is bytes else str(value)


class _PropsLookAlike:
    """hipDeviceProp_t where hip-python is absent: the fields backends fill in, every other
    field reads as 0 (the C strings as empty strings)."""

    def __init__(self, **fields: Any) -> None:
        for key, value in fields.items():
            self.__dict__[key] = as_text(value) if key in _TEXT_FIELDS else value

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return TEXT_TYPE() if name in _TEXT_FIELDS else 0


def _props_on_real(real_struct: Any) -> type:
    """A subclass of hip-python's own ``hipDeviceProp_t`` (so ``isinstance``, ``PROPERTIES()``
    and every field's default are hip-python's) whose fields a backend sets from Python,
    the C strings and arrays too (hip-python fills those only from C). A field reads what
    was set, else hip-python's default; nothing is written to the C struct."""

    def field_property(field: str) -> property:
        base = getattr(real_struct, field)

        def get(self: Any) -> Any:
            return self.__dict__[field] if field in self.__dict__ else base.__get__(self)

        def put(self: Any, value: Any) -> None:
            if field in _TEXT_FIELDS:
                value = as_text(value)
            elif isinstance(value, tuple):
                value = list(value)     # hip-python's arrays read as lists
            self.__dict__[field] = value
        return property(get, put)

    def __init__(self: Any, **fields: Any) -> None:
        real_struct.__init__(self)
        for key, value in fields.items():
            setattr(self, key, value)

    body: dict[str, Any] = {name: field_property(name) for name in real_struct.PROPERTIES()}
    body.update(__init__=__init__, __doc__="hip-python's hipDeviceProp_t, filled in by an hrr backend.")
    return type("hipDeviceProp_t", (real_struct,), body)


def _device_props_type() -> type:
    if _real is not None:
        try:
            return _props_on_real(_real[0].hipDeviceProp_t)
        except Exception:  # noqa: BLE001 - a release whose struct differs: the look-alike
            pass
    return type("hipDeviceProp_t", (_PropsLookAlike,), {})


hipDeviceProp_t: Any = _device_props_type()


class hipPointerAttribute_t:
    """hipPointerGetAttributes' result."""

    def __init__(self, type: Any = None, device: int = 0, devicePointer: int = 0,
                 hostPointer: int = 0, isManaged: int = 0, allocationFlags: int = 0) -> None:
        # hip-python 7.x programs make an empty one and pass it in to be filled
        type = hipMemoryType.hipMemoryTypeUnregistered if type is None else type
        self.type = type
        self.device = device
        self.devicePointer = Pointer(devicePointer)
        self.hostPointer = Pointer(hostPointer)
        self.isManaged = isManaged
        self.allocationFlags = allocationFlags


# memory and modules: managed-memory constants and hipFuncAttributes.
CONSTANTS_MANAGED = {"hipMemAttachGlobal": 1, "hipMemAttachHost": 2, "hipMemAttachSingle": 4,
                     "hipCpuDeviceId": -1, "hipInvalidDeviceId": -2, "hipDeviceMallocDefault": 0,
                     "hipDeviceMallocFinegrained": 1, "hipMallocSignalMemory": 2, "hipOccupancyDefault": 0,
                     "hipCooperativeLaunchMultiDeviceNoPreSync": 1,
                     "hipCooperativeLaunchMultiDeviceNoPostSync": 2}
CONSTANTS.update(CONSTANTS_MANAGED)


class _FuncAttributesLookAlike:
    """hipFuncGetAttributes' result where hip-python is absent (its field names)."""

    def __init__(self) -> None:
        for field in ("binaryVersion", "cacheModeCA", "constSizeBytes", "localSizeBytes",
                      "maxDynamicSharedSizeBytes", "maxThreadsPerBlock", "numRegs",
                      "preferredShmemCarveout", "ptxVersion", "sharedSizeBytes"):
            setattr(self, field, 0)


hipFuncAttributes: Any = (_real[0].hipFuncAttributes if _real is not None and hasattr(_real[0], "hipFuncAttributes")
                          else type("hipFuncAttributes", (_FuncAttributesLookAlike,), {}))


# hip-python's type aliases, exposed on the module beside the classes.
TYPE_ALIASES = {"hipFunction_t": ihipModuleSymbol_t, "hipStream_t": ihipStream_t,
                "hipEvent_t": ihipEvent_t, "hipModule_t": ihipModule_t, "hipGraph_t": ihipGraph,
                "hipGraphExec_t": hipGraphExec, "hiprtcLinkState": ihiprtcLinkState,
                "hiprtcJITInputType": hipJitInputType, "hiprtcJIT_option": hipJitOption}
VALUE_TYPES = (dim3, CStr, Pointer, DeviceArray, hipDeviceProp_t, hipPointerAttribute_t)


# -- device: attributes, versions, limits, peers, contexts -------------------------
# hipDeviceAttribute_t's members in value order, from each run's first value (hip-python 10.x;
# the look-alike where hip-python is absent). Aliases follow.
_ATTRIBUTE_RUNS = {
    0: "CudaCompatibleBegin AccessPolicyMaxWindowSize AsyncEngineCount CanMapHostMemory "
       "CanUseHostPointerForRegisteredMem ClockRate ComputeMode ComputePreemptionSupported ConcurrentKernels "
       "ConcurrentManagedAccess CooperativeLaunch CooperativeMultiDeviceLaunch DeviceOverlap "
       "DirectManagedMemAccessFromHost GlobalL1CacheSupported HostNativeAtomicSupported Integrated "
       "IsMultiGpuBoard KernelExecTimeout L2CacheSize LocalL1CacheSupported Luid LuidDeviceNodeMask "
       "ComputeCapabilityMajor ManagedMemory MaxBlocksPerMultiProcessor MaxBlockDimX MaxBlockDimY MaxBlockDimZ "
       "MaxGridDimX MaxGridDimY MaxGridDimZ MaxSurface1D MaxSurface1DLayered MaxSurface2D MaxSurface2DLayered "
       "MaxSurface3D MaxSurfaceCubemap MaxSurfaceCubemapLayered MaxTexture1DWidth MaxTexture1DLayered "
       "MaxTexture1DLinear MaxTexture1DMipmap MaxTexture2DWidth MaxTexture2DHeight MaxTexture2DGather "
       "MaxTexture2DLayered MaxTexture2DLinear MaxTexture2DMipmap MaxTexture3DWidth MaxTexture3DHeight "
       "MaxTexture3DDepth MaxTexture3DAlt MaxTextureCubemap MaxTextureCubemapLayered MaxThreadsDim "
       "MaxThreadsPerBlock MaxThreadsPerMultiProcessor MaxPitch MemoryBusWidth MemoryClockRate "
       "ComputeCapabilityMinor MultiGpuBoardGroupID MultiprocessorCount Unused1 PageableMemoryAccess "
       "PageableMemoryAccessUsesHostPageTables PciBusId PciDeviceId PciDomainId PersistingL2CacheMaxSize "
       "MaxRegistersPerBlock MaxRegistersPerMultiprocessor ReservedSharedMemPerBlock MaxSharedMemoryPerBlock "
       "SharedMemPerBlockOptin SharedMemPerMultiprocessor SingleToDoublePrecisionPerfRatio "
       "StreamPrioritiesSupported SurfaceAlignment TccDriver TextureAlignment TexturePitchAlignment "
       "TotalConstantMemory TotalGlobalMem UnifiedAddressing Unused2 WarpSize MemoryPoolsSupported "
       "VirtualMemoryManagementSupported HostRegisterSupported MemoryPoolSupportedHandleTypes HostNumaId "
       "DmaBufSupported GPUDirectRDMAWithHipVMMSupported HandleTypeFabricSupported",
    9999: "CudaCompatibleEnd",
    10000: "AmdSpecificBegin Unused3 MaxSharedMemoryPerMultiprocessor Unused4 Unused5 HdpMemFlushCntl "
           "HdpRegFlushCntl CooperativeMultiDeviceUnmatchedFunc CooperativeMultiDeviceUnmatchedGridDim "
           "CooperativeMultiDeviceUnmatchedBlockDim CooperativeMultiDeviceUnmatchedSharedMem IsLargeBar "
           "AsicRevision CanUseStreamWaitValue ImageSupport PhysicalMultiProcessorCount FineGrainSupport "
           "WallClockRate NumberOfXccs MaxAvailableVgprsPerThread PciChipId ExpertSchedMode "
           "MaxDynDataPrefetchRegions",
    19999: "AmdSpecificEnd",
    20000: "VendorSpecificBegin",
}
_ATTRIBUTE_ALIASES = {"EccEnabled": 0, "PciDomainID": 69, "ClockInstructionRate": 10000}
_ENUMS["hipDeviceAttribute_t"] = {
    **{f"hipDeviceAttribute{name}": start + i for start, run in _ATTRIBUTE_RUNS.items()
       for i, name in enumerate(run.split())},
    **{f"hipDeviceAttribute{name}": value for name, value in _ATTRIBUTE_ALIASES.items()}}
_ENUMS["hipLimit_t"] = {"hipLimitStackSize": 0, "hipLimitPrintfFifoSize": 1, "hipLimitMallocHeapSize": 2,
                        "hipExtLimitScratchMin": 4096, "hipExtLimitScratchMax": 4097,
                        "hipExtLimitScratchCurrent": 4098, "hipLimitRange": 4099}
_ENUMS["hipFuncCache_t"] = {"hipFuncCachePreferNone": 0, "hipFuncCachePreferShared": 1,
                            "hipFuncCachePreferL1": 2, "hipFuncCachePreferEqual": 3}
_ENUMS["hipSharedMemConfig"] = {"hipSharedMemBankSizeDefault": 0, "hipSharedMemBankSizeFourByte": 1,
                                "hipSharedMemBankSizeEightByte": 2}
_ENUMS["hipDeviceP2PAttr"] = {"hipDevP2PAttrPerformanceRank": 0, "hipDevP2PAttrAccessSupported": 1,
                              "hipDevP2PAttrNativeAtomicSupported": 2, "hipDevP2PAttrHipArrayAccessSupported": 3}
_DEVICE_ENUMS = ("hipDeviceAttribute_t", "hipLimit_t", "hipFuncCache_t", "hipSharedMemConfig", "hipDeviceP2PAttr")
for _name in _DEVICE_ENUMS:
    ENUM_TYPES[_name] = _enum_type(_name, 0, _ENUMS[_name])
hipDeviceAttribute_t: Any = ENUM_TYPES["hipDeviceAttribute_t"]
hipLimit_t: Any = ENUM_TYPES["hipLimit_t"]
hipFuncCache_t: Any = ENUM_TYPES["hipFuncCache_t"]
hipSharedMemConfig: Any = ENUM_TYPES["hipSharedMemConfig"]
hipDeviceP2PAttr: Any = ENUM_TYPES["hipDeviceP2PAttr"]
CONSTANTS.update({"hipDeviceScheduleAuto": 0, "hipDeviceScheduleSpin": 1, "hipDeviceScheduleYield": 2,
                  "hipDeviceScheduleBlockingSync": 4, "hipDeviceScheduleMask": 7, "hipDeviceMapHost": 8,
                  "hipDeviceLmemResizeToMax": 16})


class ihipCtx_t(Handle):
    """A context handle (hipCtxGetCurrent, hipDevicePrimaryCtxRetain)."""

    __slots__ = ()


HANDLE_TYPES["ihipCtx_t"] = ihipCtx_t  # type: ignore[assignment]  # a dict of handle classes
TYPE_ALIASES["hipCtx_t"] = ihipCtx_t


class _UUIDLookAlike:
    """hipUUID_t where hip-python is absent: ``bytes`` holds the 16 bytes."""

    __slots__ = ("bytes",)

    def __init__(self, raw: bytes) -> None:
        self.bytes = raw

    def __repr__(self) -> str:
        return f"hipUUID_t({self.bytes.hex()})"


_UUID_BUFFERS: dict[bytes, Any] = {}   # one C buffer per distinct UUID (a device's), kept alive


def device_uuid(raw: bytes) -> Any:
    """hipDeviceGetUuid's result: hip-python's own ``hipUUID_t`` over a buffer that holds
    ``raw`` (its ``bytes`` field cannot be set from Python), or a look-alike."""
    raw = bytes(raw)[:16].ljust(16, b"\0")
    if _real is None:
        return _UUIDLookAlike(raw)
    buf = _UUID_BUFFERS.get(raw)
    if buf is None:
        buf = _UUID_BUFFERS[raw] = ctypes.create_string_buffer(raw, 16)
    return _real[0].hipUUID_t.fromObj(ctypes.addressof(buf))


def device_arch(**flags: int) -> Any:
    """hipDeviceProp_t's ``arch`` (hipDeviceArch_t) with ``flags`` set (0 where absent)."""
    if _real is None:
        return types.SimpleNamespace(**flags)
    arch = _real[0].hipDeviceArch_t()
    for name, value in flags.items():
        setattr(arch, name, value)
    return arch


# ---- streams, events and graphs: graph node structs and enums -------------
class _NodeParams:
    """A graph-node parameter struct where hip-python is absent: keyword construction
    with hip-python's field names, every field readable and writable."""

    FIELDS: tuple[str, ...] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        for name, value in zip(self.FIELDS, args, strict=False):
            kwargs.setdefault(name, value)
        for name in self.FIELDS:
            setattr(self, name, kwargs.pop(name, self._default(name)))
        if kwargs:
            raise TypeError(f"{type(self).__name__} has no field {sorted(kwargs)[0]!r}")

    def _default(self, name: str) -> Any:
        return None

    @classmethod
    def PROPERTIES(cls) -> list[str]:  # noqa: N802 - hip-python's name
        return list(cls.FIELDS)


class _hipKernelNodeParams(_NodeParams):
    FIELDS = ("blockDim", "extra", "func", "gridDim", "kernelParams", "sharedMemBytes")

    def _default(self, name: str) -> Any:
        return dim3() if name in ("blockDim", "gridDim") else 0 if name == "sharedMemBytes" else None


class _hipMemsetParams(_NodeParams):
    FIELDS = ("dst", "elementSize", "height", "pitch", "value", "width")

    def _default(self, name: str) -> Any:
        return None if name == "dst" else 0


class _hipHostNodeParams(_NodeParams):
    FIELDS = ("fn", "userData")


class _hipGraphInstantiateParams(_NodeParams):
    FIELDS = ("errNode_out", "flags", "result_out", "uploadStream")

    def _default(self, name: str) -> Any:
        return 0 if name in ("flags", "result_out") else None


for _cls, _name in ((_hipKernelNodeParams, "hipKernelNodeParams"), (_hipMemsetParams, "hipMemsetParams"),
                    (_hipHostNodeParams, "hipHostNodeParams"),
                    (_hipGraphInstantiateParams, "hipGraphInstantiateParams")):
    _cls.__name__ = _cls.__qualname__ = _name
# hip-python's own structs when installed (they need no HIP runtime and take hrr's handles).
hipKernelNodeParams: Any = _real[0].hipKernelNodeParams if _real is not None else _hipKernelNodeParams
hipMemsetParams: Any = _real[0].hipMemsetParams if _real is not None else _hipMemsetParams
hipHostNodeParams: Any = _real[0].hipHostNodeParams if _real is not None else _hipHostNodeParams
hipGraphInstantiateParams: Any = (_real[0].hipGraphInstantiateParams if _real is not None
                                  else _hipGraphInstantiateParams)
ReplayInstantiateParams = _hipGraphInstantiateParams
# What replay hands a backend for a kernel node: always the look-alike (its fields take
# Python objects: a kernarg ``extra`` array, a replay function handle).
ReplayKernelNodeParams = _hipKernelNodeParams
ReplayMemsetParams = _hipMemsetParams
GRAPH_STRUCTS = (hipKernelNodeParams, hipMemsetParams, hipHostNodeParams, hipGraphInstantiateParams)
_ENUMS["hipGraphNodeType"] = {f"hipGraphNodeType{k}": v for v, k in enumerate((
    "Kernel", "Memcpy", "Memset", "Host", "Graph", "Empty", "WaitEvent", "EventRecord", "ExtSemaphoreSignal",
    "ExtSemaphoreWait", "MemAlloc", "MemFree", "MemcpyFromSymbol", "MemcpyToSymbol", "BatchMemOp", "Count"))}
_ENUMS["hipGraphExecUpdateResult"] = {f"hipGraphExecUpdate{k}": v for v, k in enumerate((
    "Success", "Error", "ErrorTopologyChanged", "ErrorNodeTypeChanged", "ErrorFunctionChanged",
    "ErrorParametersChanged", "ErrorNotSupported", "ErrorUnsupportedFunctionChange"))}
hipGraphNodeType = _enum_type("hipGraphNodeType", 0, _ENUMS["hipGraphNodeType"])
hipGraphExecUpdateResult = _enum_type("hipGraphExecUpdateResult", 0, _ENUMS["hipGraphExecUpdateResult"])
ENUM_TYPES.update({e.__name__: e for e in (hipGraphNodeType, hipGraphExecUpdateResult)})


def _release7_fewer_params(mod: types.ModuleType, done: dict[str, Any], real: Any) -> dict[str, Any]:
    """hip-python 7.x's forms of calls whose 7.x binding (in ``real``, 7.x's ``hip``) lacks
    some of 10.x's parameters (e.g. ``hipGraphAddEmptyNode(graph, numDependencies)``: no
    dependency array): 7.x's parameters, the missing ones passed as None."""
    import inspect
    forms: dict[str, Any] = {}
    for name, fn in vars(mod).items():
        real_fn = getattr(real, name, None)
        if name in done or not name.startswith("hip") or not callable(fn) or real_fn is None \
                or is_uncatalogued(fn):
            continue
        try:
            ours, theirs = list(inspect.signature(fn).parameters), inspect.signature(real_fn)
        except (TypeError, ValueError):
            continue
        kept = list(theirs.parameters)
        if kept == ours or not set(kept) < set(ours) or [p for p in ours if p in kept] != kept:
            continue

        def form(*args: Any, _fn: Any = fn, _kept: list = kept, **kwargs: Any) -> Any:
            if len(args) > len(_kept):   # as hip-python 7.x's binding says, never dropped unseen
                raise TypeError(f"{_fn.__name__}() takes {len(_kept)} positional arguments but {len(args)} were given")
            kwargs.update(zip(_kept, args, strict=False))
            return _fn(**kwargs)
        form.__name__ = form.__qualname__ = name
        form.__signature__ = theirs  # type: ignore[attr-defined]
        forms[name] = form
    get_params = getattr(mod, "hipGraphKernelNodeGetParams", None)
    if get_params is not None and "hipGraphKernelNodeGetParams" not in done:
        def hipGraphKernelNodeGetParams(node: Any, pNodeParams: Any) -> tuple:  # noqa: N802,N803
            err, params = get_params(node)
            if params is not None and pNodeParams is not None:
                for field in ("gridDim", "blockDim"):
                    dst, src = getattr(pNodeParams, field), getattr(params, field)
                    dst.x, dst.y, dst.z = src.x, src.y, src.z
                for field in ("func", "sharedMemBytes", "kernelParams", "extra"):
                    setattr(pNodeParams, field, getattr(params, field))
            return (err,)
        forms["hipGraphKernelNodeGetParams"] = hipGraphKernelNodeGetParams
    return forms
TYPE_ALIASES["hipGraphNode_t"] = hipGraphNode
CONSTANTS.update({"hipGraphInstantiateFlagUpload": 2, "hipGraphInstantiateFlagDeviceLaunch": 4,
                  "hipGraphInstantiateFlagUseNodePriority": 8})
# ---- end of streams, events and graphs -----------------------------------------------


# The char arrays of hipDeviceProp_t (C header lengths); its other fields Python cannot set
# are int arrays and nested structs, whose extent hip-python's own getters tell.
_CHAR_ARRAYS = {"name": 256, "gcnArchName": 256, "luid": 8}
_LAYOUTS: dict[type, dict[str, tuple[int, int, int]]] = {}


def _settable(struct: Any, field: str) -> bool:
    try:
        setattr(struct, field, getattr(struct, field))
    except (AttributeError, TypeError, ValueError):
        return False
    return True


def _struct_layout(cls: Any) -> dict[str, tuple[int, int, int]]:
    """``(offset, element size, count)`` of each field of hip-python's struct class ``cls``
    that Python cannot set (a char or int array, a nested struct), found once per class by
    reading hip-python's own getters over memory holding two byte patterns."""
    layout = _LAYOUTS.get(cls)
    if layout is not None:
        return layout
    size = int(cls().c_sizeof())
    buf = ctypes.create_string_buffer(size + 64)
    base = ctypes.addressof(buf)
    view = cls.fromObj(base)
    fields = [f for f in cls.PROPERTIES() if not _settable(view, f)]
    # Each byte holds a value from 1 to 127 (ASCII: a text getter decodes it), and the two
    # patterns together name the byte's offset: offset = 127 * (high - 1) + (low - 1).
    reads: list[dict[str, list[int]]] = []
    for pattern in (bytes(k % 127 + 1 for k in range(size)), bytes(k // 127 + 1 for k in range(size))):
        ctypes.memmove(base, pattern, size)
        got: dict[str, list[int]] = {}
        for field in fields:
            value = getattr(view, field)
            if isinstance(value, str):
                value = value.encode("latin-1")
            if isinstance(value, (bytes, bytearray)):
                got[field] = [value[0]] if value else []
            elif isinstance(value, list):
                got[field] = [int(v) & 0xFF for v in value[:2]]
        reads.append(got)
    layout = {}
    for field in fields:
        value = getattr(view, field)
        if field in reads[0] and reads[0][field]:
            offsets = [127 * (hi - 1) + (lo - 1) for lo, hi in zip(reads[0][field], reads[1][field], strict=True)]
            if isinstance(value, list):
                step = offsets[1] - offsets[0] if len(offsets) > 1 else 4
                layout[field] = (offsets[0], step, len(value))
            else:
                layout[field] = (offsets[0], 1, _CHAR_ARRAYS.get(field, 0))
        elif hasattr(value, "c_sizeof"):   # a nested struct: a view into this one's memory
            layout[field] = (int(value) - base, int(value.c_sizeof()), 1)
    _LAYOUTS[cls] = layout
    return layout


def _poke(dst: Any, field: str, value: Any) -> bool:
    """Write ``value`` into field ``field`` of hip-python's struct ``dst`` through its memory
    (for the fields hip-python offers no setter for); False when that cannot be done."""
    spot = _struct_layout(type(dst)).get(field)
    if spot is None or value is None:
        return False
    offset, step, count = spot
    addr = int(dst) + offset
    if field in _CHAR_ARRAYS and count:
        text = as_text(value, bytes)[:count - 1]
        ctypes.memmove(addr, text.ljust(count, b"\0"), count)
    elif isinstance(value, (list, tuple)):
        data = b"".join(int(v).to_bytes(step, "little", signed=int(v) < 0) for v in list(value)[:count])
        ctypes.memmove(addr, data, len(data))
    elif count == 1 and hasattr(value, "c_sizeof"):   # a nested struct (uuid, arch): its bytes
        ctypes.memmove(addr, int(value), min(step, int(value.c_sizeof())))
    else:
        return False
    return True


def _same_enum(value: Any, owner: Any) -> Any:
    """An enum member as the same-named enum of the hip-python module that defines class
    ``owner`` (7.x's hip, beside 10.x's): a 7.x struct's setter takes 7.x's members only."""
    module = sys.modules.get(getattr(owner, "__module__", ""))
    target = getattr(module, type(value).__name__, None)
    return value if target is None or target is type(value) else target(int(value))


def _fill(dst: Any, src: Any, fields: Any) -> None:
    """Copy ``fields`` of ``src`` into the struct ``dst`` a 7.x program passed in. A field
    hip-python offers no setter for goes into hip-python's struct memory, or the instance's
    ``__dict__`` (hrr's subclass reads it from there); a field ``dst`` lacks is left out."""
    for field in fields:
        value = getattr(src, field, None)
        if isinstance(value, enum.Enum):
            value = _same_enum(value, type(dst))
        try:
            setattr(dst, field, value)
            continue
        except (AttributeError, TypeError, ValueError):
            pass
        if isinstance(dst, _REAL_POINTER) and hasattr(type(dst), field) and _poke(dst, field, value):
            continue
        if hasattr(dst, "__dict__"):
            dst.__dict__[field] = value


def _release7_forms(mod: types.ModuleType, real: Any) -> dict[str, Any]:
    """hip-python 7.x's forms of the calls whose output struct 10.x moved into the result,
    over the module's 10.x functions (so capture records the 10.x row underneath); ``real``
    is 7.x's ``hip``, whose signatures the forms take."""
    forms: dict[str, Any] = {}
    props_of = getattr(mod, "hipGetDeviceProperties", None)
    if props_of is not None:
        def hipGetDeviceProperties(prop: Any, deviceId: Any) -> tuple:  # noqa: N802
            err, props = props_of(deviceId)
            if props is not None and prop is not None:
                names = type(props).PROPERTIES() if hasattr(type(props), "PROPERTIES") else vars(props)
                _fill(prop, props, names)
            return (err,)
        forms["hipGetDeviceProperties"] = hipGetDeviceProperties
    attrs_of = getattr(mod, "hipPointerGetAttributes", None)
    if attrs_of is not None:
        def hipPointerGetAttributes(attributes: Any, ptr: Any) -> tuple:  # noqa: N802
            err, attrs = attrs_of(ptr)
            if attrs is not None and attributes is not None:
                _fill(attributes, attrs, ("type", "device", "devicePointer", "hostPointer",
                                          "isManaged", "allocationFlags"))
            return (err,)
        forms["hipPointerGetAttributes"] = hipPointerGetAttributes
    instantiate = getattr(mod, "hipGraphInstantiate", None)
    if instantiate is not None:
        def hipGraphInstantiate(graph: Any, pLogBuffer: Any, bufferSize: Any) -> tuple:  # noqa: N802,N803
            err, graph_exec, error_node, log = instantiate(graph, bufferSize)
            if pLogBuffer is not None and log is not None and int(bufferSize) > 0:
                text = bytes(log)[:int(bufferSize) - 1] + b"\0"
                ctypes.memmove(as_address(pLogBuffer), text, len(text))
            return (err, graph_exec, error_node)
        forms["hipGraphInstantiate"] = hipGraphInstantiate
    func_attrs_of = getattr(mod, "hipFuncGetAttributes", None)
    if func_attrs_of is not None:
        def hipFuncGetAttributes(attr: Any, func: Any) -> tuple:  # noqa: N802
            err, attrs = func_attrs_of(func)
            if attrs is not None and attr is not None:
                _fill(attr, attrs, ("binaryVersion", "cacheModeCA", "constSizeBytes", "localSizeBytes",
                                    "maxDynamicSharedSizeBytes", "maxThreadsPerBlock", "numRegs",
                                    "preferredShmemCarveout", "ptxVersion", "sharedSizeBytes"))
            return (err,)
        forms["hipFuncGetAttributes"] = hipFuncGetAttributes
    forms.update(_release7_fewer_params(mod, forms, real))
    for fn in forms.values():
        fn.__doc__ = f"hip-python 7.x's {fn.__name__}, over hrr's 10.x call."
    return forms


def _enum_map(release: Release) -> dict[type, type]:
    """Each enum class of hrr's hip-python release (PRIMARY) to the same-named one of
    ``release``, where they differ."""
    out: dict[type, type] = {}
    if PRIMARY is None:
        return out
    for ours, theirs in ((PRIMARY.hip, release.hip), (PRIMARY.hiprtc, release.hiprtc)):
        for key in dir(ours):
            cls, other = getattr(ours, key), getattr(theirs, key, None)
            if isinstance(cls, type) and issubclass(cls, enum.Enum) and isinstance(other, type) \
                    and issubclass(other, enum.Enum) and other is not cls:
                out[cls] = other
    return out


def _in_release(fn: Any, convert: Any) -> Any:
    """``fn`` whose results' enum members are ``release``'s (``convert`` maps one item)."""
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        return tuple(map(convert, result)) if type(result) is tuple else result
    return call


def _beside(mod: types.ModuleType, release: Release, passthrough: Any) -> dict[str, Any]:
    """The names of ``mod`` (PRIMARY's spelling) that ``release``'s module spells its own way:
    its classes, enums and constants, the module-level enum members, stand-ins (or, with
    ``passthrough``, its own functions) for its functions that ``mod`` does not implement,
    and hrr's functions returning ``release``'s enum members."""
    leaf = mod.__name__.rsplit(".", 1)[-1]
    real = release.hiprtc if leaf == "hiprtc" else release.hip
    backend = next((info[2] for v in vars(mod).values() if (info := getattr(v, _UNCATALOGUED_MARK, None))), "hrr")
    enum_map = _enum_map(release)
    from hrr.api.catalogue import rows   # only hip-python itself beside 7.x needs it
    catalogued = {row.name for row in rows()}

    def convert(value: Any) -> Any:
        target = enum_map.get(type(value))
        if target is None:
            return value
        try:
            return target(int(value))
        except ValueError:   # a value this release's enum lacks: left as it is
            return value
    out: dict[str, Any] = {}
    for key, value in vars(mod).items() if enum_map else ():
        if _is_function(value) and not is_uncatalogued(value) and key.startswith("hip"):
            out[key] = _in_release(value, convert)
        elif isinstance(value, enum.Enum):
            out[key] = convert(value)
    for key in dir(real):
        if _is_dunder(key):
            continue
        value = getattr(real, key)
        if isinstance(value, types.ModuleType) and isinstance(vars(mod).get(key), types.ModuleType):
            continue   # hrr's own module under that name (hiprtc.ext, over hrr's calls) stays
        if not _is_function(value):
            out[key] = value
        elif passthrough is not None:   # hip-python itself: a call hrr does not catalogue stays 7.x's own
            if key not in catalogued:
                out[key] = passthrough(key, value)
        elif key not in vars(mod) or is_uncatalogued(vars(mod)[key]):   # a stand-in with 7.x's signature
            out[key] = uncatalogued_function(leaf, key, backend, value)
    if hasattr(real, "__all__"):
        out["__all__"] = list(real.__all__)
    if "has_symbol" in vars(mod):
        out["has_symbol"] = mod.has_symbol
    return out


def release_module(mod: types.ModuleType, release: Release | None = None, *,
                   passthrough: Any = None) -> types.ModuleType:
    """``mod`` (a backend's ``hip`` or ``hiprtc``, in PRIMARY's spelling) as ``release``
    spells it (default: CLASSIC, the release a program's ``from hip import hip`` finds):
    itself for 10.x or none; for 7.x a copy with 7.x's forms of the calls that changed,
    and, where 7.x sits beside 10.x, 7.x's own names and enum members. ``passthrough(name,
    fn)`` gives, for a backend that is hip-python itself, what to offer for 7.x's own
    function ``fn`` that ``mod`` does not implement (default: a stand-in raising
    UncataloguedCall when called)."""
    release = CLASSIC if release is None else release
    if release is None or release.major != 7:
        return mod
    forms = {} if mod.__name__.endswith("hiprtc") else _release7_forms(mod, release.hip)
    if not forms and release is PRIMARY:   # hiprtc, in 7.x's own spelling already
        return mod
    out = types.ModuleType(mod.__name__, mod.__doc__)
    out.__dict__.update({k: v for k, v in vars(mod).items() if k not in ("__name__", "__doc__")})
    out.__dict__.update(forms)
    if PRIMARY is not None and release is not PRIMARY:
        out.__dict__.update(_beside(out, release, passthrough))
    return out


def release_modules(hip_module: types.ModuleType, hiprtc_module: types.ModuleType, *, itself: bool = False,
                    passthrough: Any = None) -> dict[str, tuple[types.ModuleType, types.ModuleType]]:
    """The ``(hip, hiprtc)`` a program finds under each spelling, ``"hip"`` (``from hip
    import hip``) and ``"rocm.bindings"``, for a backend's modules: each mirrors the release
    installed under that name (7.x's ``hip`` beside 10.x's ``rocm.bindings``: one each).
    ``itself``: the modules are hip-python's own (the ``hip`` backend), which need adapting
    only to a release they are not."""
    modern = (hip_module, hiprtc_module)
    if CLASSIC is None or CLASSIC.major != 7 or (itself and CLASSIC is PRIMARY):
        return {"hip": modern, "rocm.bindings": modern}
    classic = (release_module(hip_module, CLASSIC, passthrough=passthrough),
               release_module(hiprtc_module, CLASSIC, passthrough=passthrough))
    return {"hip": classic, "rocm.bindings": classic if CLASSIC is PRIMARY else modern}


# How a program finds out which HIP calls hrr covers: an installed command, not a file
# of the source tree (pip installs do not ship docs/).
COVERAGE_COMMAND = "python -m hrr.api.coverage --stdout"
_UNCATALOGUED_MARK = "__hrr_uncatalogued__"


class UncataloguedCall(HrrError, NotImplementedError):
    """A call of a hip-python function that the backend does not implement: hrr records
    and replays only catalogued calls. Raised when the function is called (the name itself
    exists, as in hip-python), so ``hasattr`` and ``from ... import`` see hip-python's surface.
    A NotImplementedError, not an AttributeError: the attribute is there, the call is not."""

    def __init__(self, module: str, name: str, backend: str) -> None:
        super().__init__(
            f"{module}.{name} is not offered by hrr's {backend} backend: hrr records and replays only "
            "the HIP calls its catalogue lists",
            hint=f"`{COVERAGE_COMMAND}` lists them and the hip-python functions not covered yet; "
                 "on an AMD GPU, --backend hip passes it to hip-python unrecorded")
        self.function, self.backend = name, backend


def is_uncatalogued(fn: Any) -> bool:
    """Whether ``fn`` is the stand-in for a hip-python function the backend does not offer."""
    return getattr(fn, _UNCATALOGUED_MARK, None) is not None


def uncatalogued_function(module: str, name: str, backend: str, real_fn: Any) -> Any:
    """A stand-in for hip-python's function ``module.name`` (``real_fn``): its name, its
    signature (through ``__wrapped__``), and a call that raises UncataloguedCall."""
    def uncatalogued(*args: Any, **kwargs: Any) -> Any:
        raise UncataloguedCall(module, name, backend)
    uncatalogued.__name__ = uncatalogued.__qualname__ = name
    uncatalogued.__doc__ = (f"hip-python's ``{name}``, which hrr's {backend} backend does not offer: "
                            "calling it raises UncataloguedCall.")
    uncatalogued.__wrapped__ = real_fn  # type: ignore[attr-defined]  # inspect.signature: hip-python's
    setattr(uncatalogued, _UNCATALOGUED_MARK, (module, name, backend))
    return uncatalogued


def _is_function(value: Any) -> bool:
    return callable(value) and not isinstance(value, (type, types.ModuleType))


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _unknown_name(full_name: str, real: Any) -> Any:
    """The module ``__getattr__`` (PEP 562), asked only for names the module lacks, which
    hip-python's module lacks too (every name it has is on the module): the plain
    AttributeError, saying so, with the nearest HIP name for a misspelt one."""
    def __getattr__(name: str) -> Any:
        text = f"module {full_name!r} has no attribute {name!r}"
        if not _is_dunder(name):
            if real is None:
                text += " (hip-python is not installed here, so hrr offers only what it implements)"
            else:
                text += f": hip-python's {real.__name__} has no such name either"
                if name.startswith("hip"):   # a misspelt HIP name: say which one exists
                    import difflib
                    close = difflib.get_close_matches(name, [n for n in dir(real) if n.startswith("hip")], n=1)
                    text += f" (did you mean {close[0]!r}?)" if close else ""
        raise AttributeError(text, name=name, obj=None)
    return __getattr__


def _has_symbol(mod: types.ModuleType) -> Any:
    def has_symbol(name: Any) -> bool:
        """Whether this backend offers the HIP function ``name`` (str or bytes), as
        hip-python's ``has_symbol`` tells whether the HIP runtime exports it."""
        key = name.decode() if isinstance(name, (bytes, bytearray)) else str(name)
        fn = mod.__dict__.get(key)
        return key.startswith("hip") and _is_function(fn) and not is_uncatalogued(fn)
    return has_symbol


def mirrored_names(real: Any, leaf: str, backend: str, offered: Any = ()) -> dict[str, Any]:
    """Every name of hip-python's module ``real`` but its module dunders: its own objects
    (types, structs, enums and their private ``_X__Base`` bases, constants), and for each
    function not in ``offered`` a stand-in that raises UncataloguedCall when called."""
    out: dict[str, Any] = {}
    for key in dir(real):
        if _is_dunder(key) or key in offered:
            continue
        value = getattr(real, key)
        out[key] = uncatalogued_function(leaf, key, backend, value) if _is_function(value) else value
    return out


def surface_module(name: str, doc: str, functions: dict[str, Any], backend: str | None = None) -> types.ModuleType:
    """A module with hip-python's surface: ``functions``, and every other name hip-python's
    module has, as hip-python's own object (its types, structs, handle classes, enums and
    constants) or, for a function, a stand-in raising UncataloguedCall naming ``backend``
    (default: the package above ``name``) when called. hrr's look-alikes and constants fill
    the names hip-python lacks (all of them where it is absent), with the members of the
    enums hrr uses at module level. Backends build their ``hip`` and ``hiprtc`` with it."""
    mod = types.ModuleType(name, doc)
    leaf = name.rsplit(".", 1)[-1]
    backend = backend or (name.split(".")[-2] if name.count(".") else name)
    real = None if _real is None else (_real[1] if leaf == "hiprtc" else _real[0])
    names = mod.__dict__
    names["__getattr__"] = _unknown_name(name, real)
    if real is not None:
        # hip-python's classes, never hrr's look-alikes, under hip-python's names: a Cython
        # module that cimports hip-python (its CUDA interop layer) imports each class it
        # derives from (ihipStream_t, hipDeviceProp_t...) by name from this module, and
        # refuses any class but hip-python's own (its size and vtable are checked).
        names.update(mirrored_names(real, leaf, backend, functions))
    for enum_type in ENUM_TYPES.values():
        names.setdefault(enum_type.__name__, enum_type)
        for member in enum_type:
            names.setdefault(member.name, member)
    for key, value in CONSTANTS.items():
        names.setdefault(key, value)
    # hrr offers hiprtc's classes on hip too, and hip's on hiprtc: hip-python's where it has them
    other = None if _real is None else (_real[0] if leaf == "hiprtc" else _real[1])
    for key, value in (*((c.__name__, c) for c in (*VALUE_TYPES, *GRAPH_STRUCTS, *POOL_STRUCTS,
                                                     *HANDLE_TYPES.values())), *TYPE_ALIASES.items()):
        names.setdefault(key, getattr(other, key, value))
    names.update(functions)
    names["SUPPORTED_APIS"] = tuple(functions)
    if real is not None and hasattr(real, "has_symbol"):
        names["has_symbol"] = _has_symbol(mod)
    if real is not None and hasattr(real, "__all__"):   # ``from hip.hip import *`` takes hip-python's names
        names["__all__"] = list(real.__all__)
    return mod


# hip-python's Pointer base classes, of every release installed (its handles, structs and
# DeviceArray derive from it), accepted as an argument by its address; none when it is absent.
_REAL_POINTER: Any = tuple(r.util.types.Pointer for r in RELEASES.values())


class PointerConversionError(TypeError):
    """An argument that hip-python's pointer rules do not accept."""


def buffer_address(obj: Any) -> int:
    """The data address of a C-contiguous buffer-protocol object (read-only ones too)."""
    if isinstance(obj, np.ndarray):
        return obj.__array_interface__["data"][0]
    mv = memoryview(obj)
    if mv.nbytes == 0:
        return 0
    if not mv.c_contiguous:
        raise PointerConversionError("a buffer argument must be C-contiguous")
    return np.frombuffer(mv.cast("B") if mv.ndim != 1 or mv.format != "B" else mv,
                         dtype=np.uint8).__array_interface__["data"][0]


def as_address(obj: Any) -> int:
    """Convert a pointer-like argument to an address, with hip-python's rules:
    None, ``c_void_p``, Pointer, buffer, ``__cuda_array_interface__``, int, ``as_c_void_p``."""
    if obj is None:
        return 0
    if type(obj) is int:
        return obj
    if isinstance(obj, Pointer):
        return obj._addr
    if isinstance(obj, ctypes.c_void_p):
        return obj.value or 0
    if isinstance(obj, _REAL_POINTER):  # hip-python's own Pointer/DeviceArray/handles
        return int(obj)
    try:
        memoryview(obj)
    except TypeError:
        pass
    else:
        return buffer_address(obj)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        return int(cai["data"][0])
    if isinstance(obj, int):
        return int(obj)
    conv = getattr(obj, "as_c_void_p", None)
    if conv is not None:
        return conv().value or 0
    raise PointerConversionError(f"unsupported input type {type(obj).__name__} for a pointer argument")


def as_handle_value(obj: Any) -> int:
    """A stream, event or other handle argument as an int (None and 0 are the null handle)."""
    if obj is None:
        return 0
    if isinstance(obj, (Handle, int)):
        return int(obj)
    if isinstance(obj, ctypes.c_void_p):
        return obj.value or 0
    if isinstance(obj, HandleRef):  # createRef(): names the handle it points to
        return int(obj.target)
    if isinstance(obj, _REAL_POINTER):  # a handle made by hip-python's own classes
        return int(obj)
    raise PointerConversionError(f"unsupported input type {type(obj).__name__} for a handle argument")


def buffer_nbytes(obj: Any) -> int | None:
    """The size in bytes of a buffer-protocol object, or None when it is not one."""
    try:
        return memoryview(obj).nbytes
    except TypeError:
        return None


def address_or_zero(obj: Any) -> int:
    """``as_address``, with 0 for an argument that is not pointer-like (recording must
    never fail where the call itself reports the error)."""
    try:
        return as_address(obj)
    except PointerConversionError:
        return 0


def handle_or_zero(obj: Any) -> int:
    """``as_handle_value``, with 0 for an argument that is not a handle."""
    try:
        return as_handle_value(obj)
    except PointerConversionError:
        return 0


# ---- memory pools and CU-masked streams -------------------------------------------------
# Stream-ordered allocation (hipMemPool*, hipMallocFromPoolAsync): the pool handle, the
# enums a row or a pool's properties name, and hipMemPoolProps / hipMemLocation
# (hip-python's own structs when installed; look-alikes with its field names otherwise).
_ENUMS["hipMemPoolAttr"] = {
    "hipMemPoolReuseFollowEventDependencies": 1, "hipMemPoolReuseAllowOpportunistic": 2,
    "hipMemPoolReuseAllowInternalDependencies": 3, "hipMemPoolAttrReleaseThreshold": 4,
    "hipMemPoolAttrReservedMemCurrent": 5, "hipMemPoolAttrReservedMemHigh": 6,
    "hipMemPoolAttrUsedMemCurrent": 7, "hipMemPoolAttrUsedMemHigh": 8}
_ENUMS["hipMemAllocationType"] = {"hipMemAllocationTypeInvalid": 0, "hipMemAllocationTypePinned": 1,
                                  "hipMemAllocationTypeManaged": 2, "hipMemAllocationTypeUncached": 0x40000000,
                                  "hipMemAllocationTypeMax": 0x7FFFFFFF}
_ENUMS["hipMemLocationType"] = {"hipMemLocationTypeInvalid": 0, "hipMemLocationTypeDevice": 1,
                                "hipMemLocationTypeHost": 2, "hipMemLocationTypeHostNuma": 3,
                                "hipMemLocationTypeHostNumaCurrent": 4}
_ENUMS["hipMemAllocationHandleType"] = {"hipMemHandleTypeNone": 0, "hipMemHandleTypePosixFileDescriptor": 1,
                                        "hipMemHandleTypeWin32": 2, "hipMemHandleTypeWin32Kmt": 4,
                                        "hipMemHandleTypeFabric": 8}
for _name in ("hipMemPoolAttr", "hipMemAllocationType", "hipMemLocationType", "hipMemAllocationHandleType"):
    ENUM_TYPES[_name] = _enum_type(_name, 0, _ENUMS[_name])
hipMemPoolAttr: Any = ENUM_TYPES["hipMemPoolAttr"]


class ihipMemPoolHandle_t(Handle):
    """A memory pool handle (hipDeviceGetDefaultMemPool, hipMemPoolCreate)."""

    __slots__ = ()


HANDLE_TYPES["ihipMemPoolHandle_t"] = ihipMemPoolHandle_t  # type: ignore[assignment]
TYPE_ALIASES["hipMemPool_t"] = ihipMemPoolHandle_t


class _hipMemLocation(_NodeParams):
    FIELDS = ("id", "type")

    def _default(self, name: str) -> Any:
        return 0


class _hipMemPoolProps(_NodeParams):
    FIELDS = ("allocType", "handleTypes", "location", "maxSize", "win32SecurityAttributes")

    def _default(self, name: str) -> Any:
        return _hipMemLocation() if name == "location" else None if name == "win32SecurityAttributes" else 0


_hipMemLocation.__name__ = _hipMemLocation.__qualname__ = "hipMemLocation"
_hipMemPoolProps.__name__ = _hipMemPoolProps.__qualname__ = "hipMemPoolProps"
hipMemLocation: Any = _real[0].hipMemLocation if _real is not None else _hipMemLocation
hipMemPoolProps: Any = _real[0].hipMemPoolProps if _real is not None else _hipMemPoolProps
# What replay hands a backend for hipMemPoolCreate: the look-alike (a keyword-built location).
ReplayMemPoolProps = _hipMemPoolProps
ReplayMemLocation = _hipMemLocation
POOL_STRUCTS = (hipMemLocation, hipMemPoolProps)
# ---- end of memory pools ----------------------------------------------------------------
