"""hip-python's structs, as hrr's backends fill them in: hip-python's own classes when it
is installed (they need no HIP runtime), look-alikes with its field names otherwise
(``dim3``, ``hipDeviceProp_t``, ``hipPointerAttribute_t``, ``hipFuncAttributes``,
``hipUUID_t``, the graph-node and memory-pool parameter structs), and hip-python's type
aliases (``hipStream_t``...).
"""
from __future__ import annotations

import ctypes
import types
from typing import Any

from hrr.hiptypes.devicearray import DeviceArray
from hrr.hiptypes.enums import hipJitInputType, hipJitOption, hipMemoryType
from hrr.hiptypes.installed import TEXT_TYPE, _real
from hrr.hiptypes.pointers import (CStr, Pointer, hipGraphExec, hipGraphNode, ihipCtx_t, ihipEvent_t, ihipGraph,
                                   ihipMemPoolHandle_t, ihipModule_t, ihipModuleSymbol_t, ihipStream_t,
                                   ihiprtcLinkState)


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


class _FuncAttributesLookAlike:
    """hipFuncGetAttributes' result where hip-python is absent (its field names)."""

    def __init__(self) -> None:
        for field in ("binaryVersion", "cacheModeCA", "constSizeBytes", "localSizeBytes",
                      "maxDynamicSharedSizeBytes", "maxThreadsPerBlock", "numRegs",
                      "preferredShmemCarveout", "ptxVersion", "sharedSizeBytes"):
            setattr(self, field, 0)


hipFuncAttributes: Any = (_real[0].hipFuncAttributes if _real is not None and hasattr(_real[0], "hipFuncAttributes")
                          else type("hipFuncAttributes", (_FuncAttributesLookAlike,), {}))


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


# ---- graphs: node parameter structs ------------------------------------------------
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


# ---- memory pools: hipMemPoolProps and hipMemLocation --------------------------------
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


# hip-python's type aliases, exposed on the module beside the classes.
TYPE_ALIASES = {"hipFunction_t": ihipModuleSymbol_t, "hipStream_t": ihipStream_t,
                "hipEvent_t": ihipEvent_t, "hipModule_t": ihipModule_t, "hipGraph_t": ihipGraph,
                "hipGraphExec_t": hipGraphExec, "hiprtcLinkState": ihiprtcLinkState,
                "hiprtcJITInputType": hipJitInputType, "hiprtcJIT_option": hipJitOption,
                "hipCtx_t": ihipCtx_t, "hipGraphNode_t": hipGraphNode, "hipMemPool_t": ihipMemPoolHandle_t}
VALUE_TYPES = (dim3, CStr, Pointer, DeviceArray, hipDeviceProp_t, hipPointerAttribute_t)
