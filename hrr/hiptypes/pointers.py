"""hip-python's pointer-like values and their conversion: ``Pointer`` (an address), the
opaque handle classes (``int(h)`` is the handle's value), ``CStr``, and hip-python's rules
for turning an argument into an address or a handle value (``as_address``,
``as_handle_value``), which every backend, capture and replay share.
"""
from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from hrr.hiptypes.installed import RELEASES


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

    @property
    def is_ptr_null(self) -> bool:
        """True for the null address (a property, as hip-python's)."""
        return self._addr == 0

    def createRef(self) -> "Pointer":  # noqa: N802 - hip-python's name
        """A pointer to memory holding this address (C's ``void**``), as hip-python's."""
        return HandleRef(self)

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

    @property
    def is_ptr_null(self) -> bool:
        """True for the null handle (a property, as hip-python's)."""
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


class ihipCtx_t(Handle):
    """A context handle (hipCtxGetCurrent, hipDevicePrimaryCtxRetain)."""

    __slots__ = ()


class ihipMemPoolHandle_t(Handle):
    """A memory pool handle (hipDeviceGetDefaultMemPool, hipMemPoolCreate)."""

    __slots__ = ()


HANDLE_TYPES: dict[str, type[Handle]] = {
    c.__name__: c for c in (ihipStream_t, ihipEvent_t, ihipModule_t, ihipModuleSymbol_t, ihipGraph, hipGraphExec,
                            hipGraphNode, hiprtcProgram, ihiprtcLinkState, ihipCtx_t, ihipMemPoolHandle_t)}


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


# hip-python's Pointer base classes, of every release installed (its handles, structs and
# DeviceArray derive from it), accepted as an argument by its address; none when it is absent.
REAL_POINTER: Any = tuple(r.util.types.Pointer for r in RELEASES.values())


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


def write_into_read_only(dest: Any, data: bytes) -> None:
    """Write ``data`` at a read-only buffer's address, as C does through hip-python and
    cuda-python (programs fill ``b" " * size`` with nvrtcGetPTX this way).

    A ``bytes`` of length 0 or 1 is never written: CPython shares one object per such value
    across the whole interpreter (``b" " * 1`` is the same object as every ``b" "``), so
    writing an empty log's NUL there would change every ``b" "`` the process (and hrr's own
    recorder in it) reads afterwards."""
    if isinstance(dest, bytes) and len(dest) <= 1:
        return
    ctypes.memmove(buffer_address(dest), data, len(data))


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
    if isinstance(obj, REAL_POINTER):  # hip-python's own Pointer/DeviceArray/handles
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
    if isinstance(obj, REAL_POINTER):  # a handle made by hip-python's own classes
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
