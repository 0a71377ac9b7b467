"""``DeviceArray`` and ``NDBuffer``: what ``hipMalloc`` returns, as hip-python's classes.

hip-python's ``DeviceArray`` is an ``NDBuffer``: an address with CUDA-array-interface
metadata (shape, typestr, itemsize, read-only flag, stream) that ``configure`` reshapes and
``[...]`` slices into views at an offset. These are pure-Python look-alikes of those Cython
classes with every public member, the same results and the same exceptions (messages
included) as the hip-python release installed beside hrr: 7.x and 10.x differ (below), and
without hip-python hrr behaves as 10.x. ``int(a)`` is the address of the view, so a
configured or sliced array is a pointer argument like any other.

hrr keeps its own classes rather than hip-python's even when hip-python is installed: an
``NDBuffer`` is an hrr ``Pointer`` whose address every captured call reads from a slot
(``as_address``: 0.09 us, 0.24 us for hip-python's), a hipMalloc result costs
0.4 us to make where hip-python's costs 1.6 (this 2-core machine, hip-python 10.0), and the
same class serves when hip-python is absent.

Differences that remain, on purpose: hrr's arrays do not export the Python buffer protocol
(a view of device memory as host bytes would read the sim's device range, which is not host
memory, and a class cannot export it from Python before 3.12); ``==`` and ``hash`` compare
addresses as hrr's ``Pointer`` does (hip-python's compare identity); ``DeviceArray(addr,
size)`` also takes a size, which hrr's backends use; ``__index__`` is kept from ``Pointer``.
"""
from __future__ import annotations

import ctypes
import math
import sys
from typing import Any

from hrr.hiptypes.installed import _real
from hrr.hiptypes.pointers import Pointer

# The release whose behaviour these classes mirror (7 or 10); read per call, so a test can
# set it. Without hip-python, 10.x.
RELEASE = 7 if _real is not None and not _real[0].__name__.startswith("rocm.") else 10
_nothing: Any = type("_Nothing", (), {})   # a class nothing is an instance of
_REAL_POINTER: Any = _real[2].types.Pointer if _real is not None else _nothing
_REAL_NDBUFFER: Any = _real[2].types.NDBuffer if _real is not None else _nothing

_MASK64 = (1 << 64) - 1
_MISSING: Any = object()


def _v(code: str) -> tuple[str, ...]:
    """A numpy char code and its three byte-order spellings."""
    return (code, "=" + code, "<" + code, ">" + code)


_size = ctypes.sizeof
# hip-python's NDBuffer._numpy_typestr_to_bytes table, in its order: spellings and bytes.
# Its bool is Cython's sizeof(bool), which is no C bool's size: 8 bytes in 7.x, 4 in 10.x
# (_BOOL stands for it, resolved per call).
_BOOL = 0
_SIZED: tuple[tuple[tuple[str, ...], int], ...] = (
    ((*_v("?"), "bool", "bool_", "bool8"), _BOOL),
    (("uint8", *_v("u1")), 1), (("uint16", *_v("u2")), 2), (("uint32", *_v("u4")), 4), (("uint64", *_v("u8")), 8),
    (("int8", *_v("i1")), 1), (("int16", *_v("i2")), 2), (("int32", *_v("i4")), 4), (("int64", *_v("i8")), 8),
    (("float16", *_v("f2")), 2), (("float32", *_v("f4")), 4), (("float64", *_v("f8")), 8),
    (("complex64", *_v("c8")), 8), (("complex128", *_v("c16")), 16),
    (("byte", *_v("b")), 1), (("short", *_v("h")), _size(ctypes.c_short)), (("intc", *_v("i")), _size(ctypes.c_int)),
    (("intp", "int0", *_v("p")), _size(ctypes.c_void_p)), (("long", "int", "int_", *_v("l")), _size(ctypes.c_long)),
    (("longlong", *_v("q")), _size(ctypes.c_longlong)),
    (("ubyte", *_v("B")), 1), (("ushort", *_v("H")), _size(ctypes.c_ushort)),
    (("uintc", *_v("I")), _size(ctypes.c_uint)), (("uintp", "uint0", *_v("P")), _size(ctypes.c_void_p)),
    (("ulong", "uint", *_v("L")), _size(ctypes.c_ulong)), (("ulonglong", *_v("Q")), _size(ctypes.c_ulonglong)),
    (("half", *_v("e")), 2), (("single", *_v("f")), _size(ctypes.c_float)),
    (("double", "float", "float_", *_v("d")), _size(ctypes.c_double)),
    (("longdouble", "longfloat", *_v("g")), _size(ctypes.c_longdouble)),
    (("csingle", "singlecomplex", *_v("F")), 2 * _size(ctypes.c_float)),
    (("cdouble", "complex", "complex_", "cfloat", *_v("D")), 2 * _size(ctypes.c_double)),
    (("clongdouble", "clongfloat", "longcomplex", *_v("G")), 2 * _size(ctypes.c_longdouble)),
)
_UNITS = ("", "[Y]", "[M]", "[W]", "[D]", "[h]", "[m]", "[s]", "[ms]", "[us]", "[ns]", "[ps]", "[fs]", "[as]")
_UNSIZED = (
    "str", "str_", "str0", "unicode", "unicode_", *_v("U"), "bytes", "bytes_", "bytes0", *_v("S"),
    "void", "void0", *_v("V"), "object", "object_", *_v("O"),
    *(c for u in _UNITS for c in _v("datetime64" + u)), *_v("M"), *(c for u in _UNITS for c in _v("M8" + u)),
    *(c for u in _UNITS for c in _v("timedelta64" + u)), *_v("m"), *(c for u in _UNITS for c in _v("m8" + u)),
)
_TYPESTR_BYTES: dict[str, int] = {}
for _codes, _nbytes in _SIZED:
    for _code in _codes:
        _TYPESTR_BYTES.setdefault(_code, _nbytes)

_CONFIGURE_KEYS = ("shape", "typestr", "stream", "itemsize", "read_only", "_force")
_STREAM_ZERO = ("'stream': value '0' is disallowed as it would be ambiguous between None and the default"
                " stream, more details: https://numba.readthedocs.io/en/stable/cuda/cuda_array_interface.html")
_NO_DATA = "input object has '__cuda_array_interface__' attribute but the dict has no 'data' key"


# -- C conversions, as Cython and CPython make them in hip-python's classes -------------------
def _void_ptr(value: Any) -> int:
    """``PyLong_AsVoidPtr``: an int as a pointer (negative ones wrap), else its errors."""
    if not isinstance(value, int):
        raise TypeError("an integer is required")
    if value < 0:
        if value < -(1 << 63):
            raise OverflowError("Python int too large to convert to C long")
        return value & _MASK64
    if value > _MASK64:
        raise OverflowError("Python int too large to convert to C unsigned long")
    return int(value)


def _as_number(value: Any) -> int:
    """Cython's coercion of an object to a C integer: an int, or what its type's ``__int__`` gives."""
    if isinstance(value, int):
        return int(value)
    to_int = getattr(type(value), "__int__", None)
    if to_int is None:
        raise TypeError("an integer is required")
    return int(to_int(value))


def _as_c_int(value: Any) -> int:
    """Cython's conversion to a C ``int``."""
    n = _as_number(value)
    if not -(1 << 31) <= n < (1 << 31):
        raise OverflowError("value too large to convert to int")
    return n


def _as_size_t(value: Any) -> int:
    """Cython's conversion to a C ``size_t``."""
    n = _as_number(value)
    if n < 0:
        raise OverflowError("can't convert negative value to size_t")
    if n > _MASK64:
        raise OverflowError("value too large to convert to size_t")
    return n


def _exact(value: Any, kind: type, name: str) -> Any:
    """A Cython variable typed ``tuple``/``str``: that exact type or None."""
    if value is None or type(value) is kind:
        return value
    raise TypeError(f"Expected {name}, got {type(value).__name__}")


def _cai_of(obj: Any) -> dict | None:
    """``cdef dict cai = getattr(obj, "__cuda_array_interface__", None)``."""
    cai = getattr(obj, "__cuda_array_interface__", None)
    return _exact(cai, dict, "dict")


class _PyBuffer(ctypes.Structure):
    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.c_void_p), ("len", ctypes.c_ssize_t),
                ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                ("format", ctypes.c_char_p), ("shape", ctypes.POINTER(ctypes.c_ssize_t)),
                ("strides", ctypes.POINTER(ctypes.c_ssize_t)), ("suboffsets", ctypes.POINTER(ctypes.c_ssize_t)),
                ("internal", ctypes.c_void_p)]


# hip-python asks an exporter for PyBUF_SIMPLE | PyBUF_ANY_CONTIGUOUS; asking CPython for the
# same flags gives the same answers and errors (no format unless the exporter insists, a
# non-contiguous array's own error), which memoryview's fixed flags would not.
_ANY_CONTIGUOUS = 0x0080 | 0x0010 | 0x0008
# Prototypes of our own: setting argtypes on ctypes.pythonapi's shared function objects
# would change them for every other user in the process.
_check_buffer = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object)(("PyObject_CheckBuffer", ctypes.pythonapi))
_get_buffer = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int)(
    ("PyObject_GetBuffer", ctypes.pythonapi))
_release_buffer = ctypes.PYFUNCTYPE(None, ctypes.POINTER(_PyBuffer))(("PyBuffer_Release", ctypes.pythonapi))


def _buffer_view(obj: Any) -> tuple[int, tuple[int, ...], str, int, bool]:
    """An exporter's (address, shape, typestr, itemsize, read-only), as hip-python takes them."""
    view = _PyBuffer()
    _get_buffer(obj, ctypes.byref(view), _ANY_CONTIGUOUS)
    try:
        shape = tuple(view.shape[i] for i in range(view.ndim)) if view.shape else ()
        typestr = "B" if view.format is None else view.format.decode("utf-8")
        return view.buf or 0, shape, typestr, view.itemsize, bool(view.readonly)
    finally:
        _release_buffer(ctypes.byref(view))


def _holder(obj: Any) -> Any:
    """What keeps a wrapped exporter's memory in place while an array points into it."""
    try:
        return memoryview(obj)   # an export, as hip-python holds: a bytearray cannot resize
    except (TypeError, ValueError, BufferError):
        return obj


def _pointer_address(obj: Any) -> int:
    """The address hip-python's ``Pointer.fromObj(obj)`` holds (its conversion order)."""
    if isinstance(obj, _REAL_POINTER):
        return int(obj)
    if isinstance(obj, Pointer):   # hrr's: as_c_void_p, or an NDBuffer's CAI, gives this
        return obj._addr  # noqa: SLF001
    cai = _cai_of(obj)
    if obj is None:
        return 0
    if isinstance(obj, ctypes.c_void_p):
        return 0 if obj.value is None else _void_ptr(obj.value)
    if _check_buffer(obj):
        return _buffer_view(obj)[0]
    if cai is not None:
        if "data" not in cai:
            raise ValueError(_NO_DATA)
        return _void_ptr(cai["data"][0])
    if isinstance(obj, int):
        return _void_ptr(obj)
    if hasattr(obj, "as_c_void_p"):
        value = obj.as_c_void_p().value
        return 0 if value is None else _void_ptr(value)
    raise TypeError(f"unsupported input type: '{type(obj)!s}'")


class NDBuffer(Pointer):
    """hip-python's ``NDBuffer``: a contiguous n-dimensional buffer at an address, reshaped by
    ``configure``, sliced by ``[...]`` into views, described by ``__cuda_array_interface__``."""

    __slots__ = ("_cai", "_itemsize", "_owner", "_ref")

    NUMPY_CHAR_CODES = tuple(c for codes, _n in _SIZED for c in codes) + _UNSIZED

    def __init__(self, pyobj: Any = _MISSING, size: int | None = None) -> None:
        # hrr's backends pass (address, size): a byte array made without any conversion.
        if pyobj is _MISSING:
            raise TypeError("__init__() takes exactly 1 positional argument (0 given)")
        self._itemsize = 1
        self._owner: Any = None
        self._ref: ctypes.c_uint64 | None = None
        self._cai: dict[str, Any]
        if size is not None:
            self._addr = pyobj
            self._cai = {"shape": (size,), "typestr": "B", "data": (pyobj, False), "strides": None,
                         "offset": 0, "mask": None, "version": 3, "stream": None}
            return
        self._addr = 0
        self._cai = {"shape": (1,), "typestr": "B", "data": (None, False), "strides": None,
                     "offset": 0, "mask": None, "version": 3, "stream": None}
        self._init_from(pyobj)

    def _set_addr(self, addr: int) -> None:
        self._addr = addr
        self._cai["data"] = (addr, self._cai["data"][1])

    def _init_from(self, obj: Any) -> None:
        """hip-python's ``NDBuffer.init_from_pyobj``: the same inputs, order and errors."""
        cai = _cai_of(obj)
        if obj is None:
            self._set_addr(0)
        elif isinstance(obj, ctypes.c_void_p):
            self._set_addr(0 if obj.value is None else _void_ptr(obj.value))
        elif isinstance(obj, NDBuffer):
            # hip-python's NDBuffer is a buffer: its address, typestr, itemsize, shape, flag
            self._set_addr(obj._addr)
            self.configure(_force=True, typestr=obj.typestr, itemsize=obj._itemsize,
                           shape=tuple(obj.shape), read_only=bool(obj.is_read_only))
            self._owner = obj
        elif _check_buffer(obj):
            addr, shape, typestr, itemsize, read_only = _buffer_view(obj)
            self._set_addr(addr)
            self.configure(_force=True, typestr=typestr, itemsize=itemsize, shape=shape, read_only=read_only)
            self._owner = _holder(obj)
        elif cai is not None:
            self._init_from_cai(cai)
        else:
            self._set_addr(_pointer_address(obj))

    def _init_from_cai(self, cai: dict) -> None:
        if "data" not in cai:
            raise ValueError(_NO_DATA)
        if RELEASE == 7:
            # 7.x refuses strides before it looks further, then hands the whole dict to
            # configure as a positional argument, which configure does not take.
            if cai["strides"] is not None:
                raise RuntimeError("CUDA array interface is not contiguous")
            self._set_addr(_void_ptr(cai["data"][0]))
            raise TypeError("configure() takes exactly 0 positional arguments (1 given)")
        self._set_addr(_void_ptr(cai["data"][0]))
        self.configure(_force=True, shape=tuple(cai["shape"]), typestr=cai["typestr"],
                       read_only=bool(cai["data"][1]), stream=cai.get("stream", None))
        self._check_supported_layout(cai)

    def _check_supported_layout(self, cai: dict) -> None:
        """10.x refuses a masked, offset or non-contiguous interface it would misread."""
        shape, strides, expected = self._cai["shape"], cai.get("strides", None), self._itemsize
        if cai.get("mask", None) is not None:
            raise NotImplementedError("Masked arrays are not supported")
        if cai.get("offset", 0):
            raise NotImplementedError("a non-zero 'offset' is not supported")
        if strides is None or not math.prod(shape):
            return
        if len(strides) != len(shape):
            raise ValueError(f"'strides': got {len(strides)} entries for a {len(shape)}-dimensional 'shape'")
        for i in range(len(shape) - 1, -1, -1):
            if shape[i] > 1 and strides[i] != expected:
                raise RuntimeError("CUDA array interface is not contiguous")
            expected *= shape[i]

    @staticmethod
    def fromObj(pyobj: Any) -> Any:  # noqa: N802 - hip-python's name
        """An NDBuffer over ``pyobj`` (``pyobj`` itself when it is one), as hip-python's."""
        return pyobj if isinstance(pyobj, NDBuffer) else NDBuffer(pyobj)

    def configure(self, *args: Any, **kwargs: Any) -> Any:
        """Reshape in place and return self: hip-python's keywords, checks and errors."""
        if args:
            raise TypeError(f"configure() takes exactly 0 positional arguments ({len(args)} given)")
        for k in kwargs:
            if k not in _CONFIGURE_KEYS:
                raise KeyError("allowed keyword arguments are: " + ", ".join(f"'{e}'" for e in _CONFIGURE_KEYS))
        cai = self._cai
        force = bool(kwargs.get("_force", False))
        shape = old_shape = cai["shape"]
        itemsize = -1
        if "shape" in kwargs:
            shape = _exact(kwargs["shape"], tuple, "tuple")
            if not len(shape):
                raise ValueError("'shape': must have at least one entry")
            for i in shape:
                if not isinstance(i, int):
                    raise TypeError("'shape': entries must be int")
        if "typestr" in kwargs:
            typestr = _exact(kwargs["typestr"], str, "str" if RELEASE != 7 else "unicode")
            cai["typestr"] = typestr   # kept even when the checks below fail, as hip-python does
            itemsize = _TYPESTR_BYTES.get(typestr, -1) if typestr is not None else -1
            if itemsize == _BOOL:
                itemsize = 8 if RELEASE == 7 else 4
            if itemsize < 0:
                if typestr not in self.NUMPY_CHAR_CODES:
                    raise ValueError(f"typestr: value '{typestr}' is not a valid numpy char code. See class"
                                     " attribute 'NUMPY_CHAR_CODES' for valid expressions.")
                if "itemsize" not in kwargs:
                    raise ValueError(f"'typestr': value '{typestr}' could not be mapped to a number of bytes."
                                     " Please also specify 'itemsize'.")
        if "itemsize" in kwargs:
            value = kwargs["itemsize"]
            # 10.x's wheel for Python 3.12+ is built for the limited API (cp312-abi3), whose
            # conversion says int()'s words for None (its cp311 wheel says Cython's, as 7.x does)
            if RELEASE != 7 and value is None and sys.version_info >= (3, 12):
                raise TypeError("int() argument must be a string, a bytes-like object or a real number, "
                                "not 'NoneType'")
            itemsize = _as_c_int(value)
            if itemsize <= 0:
                raise ValueError("'itemsize': must be positive int")
        if "stream" in kwargs:
            early = self._configure_stream(kwargs["stream"])
            if early is not None:
                return early
        if "read_only" in kwargs:
            cai["data"] = (cai["data"][0], bool(kwargs["read_only"]))
        if itemsize > 0 or shape != old_shape:
            old_num_bytes = self._itemsize * math.prod(old_shape)
            if itemsize < 0:
                itemsize = self._itemsize
            if old_num_bytes != itemsize * math.prod(shape) and not force:
                raise ValueError("new shape would change buffer size information: {old_num_bytes} B ->"
                                 " {new_num_bytes} B. Specify `_force=True` if this is intended.")
            self._itemsize = itemsize
            cai["shape"] = shape
        return self

    def _configure_stream(self, stream: Any) -> Any:
        """Set the stream; 7.x *returns* (not raises) the ValueError for 0 or a negative int,
        ending configure there, and stores None as 0."""
        cai = self._cai
        if stream is None and RELEASE != 7:
            cai["stream"] = None
        elif isinstance(stream, int):
            if stream == 0 or stream < 0:
                error = ValueError(_STREAM_ZERO if stream == 0 else "'stream': expected positive integer")
                if RELEASE == 7:
                    return error
                raise error
            cai["stream"] = stream
        else:
            cai["stream"] = _pointer_address(stream)
        return None

    def __getitem__(self, subscript: Any) -> Any:
        """A contiguous view at an offset, with hip-python's rules (non-negative ints and
        step-1 slices, row major; an int keeps its axis with extent 1)."""
        shape = _exact(self._cai["shape"], tuple, "tuple")
        len_shape = len(shape)
        expanded: list[Any]
        if isinstance(subscript, tuple):
            expanded = list(subscript)
        elif isinstance(subscript, (slice, int)):
            expanded = [subscript]
        else:
            raise TypeError(f"subscript type='{type(subscript)}' is none of: 'slice', 'int', 'tuple'")
        if len_shape < len(expanded):
            raise IndexError("too many indices specified, maximum number of indices that can be specified"
                             " is {len_shape}")
        expanded += [slice(None)] * (len_shape - len(expanded))
        stride, offset, contiguous, result_shape = 1, 0, True, []
        for j, spec in enumerate(reversed(expanded)):   # row major: the last axis first
            i = len_shape - j - 1
            if isinstance(spec, int):
                start, stop = _handle_int(spec, shape[i])
                contiguous = False
            elif isinstance(spec, slice):
                if not contiguous:
                    raise ValueError(f"subscript='{expanded}' yields no contiguous subarray")
                start, stop, contiguous = _handle_slice(spec, shape[i])
            else:
                raise TypeError(f"subscript tuple entry type='{type(spec)}' is none of: 'slice', 'int'")
            result_shape.append(stop - start)
            offset = _as_size_t(offset + start * stride)
            stride = (stride * _as_size_t(shape[i])) & _MASK64
        view = NDBuffer((self._addr + offset * self._itemsize) & _MASK64, 1)
        return view.configure(_force=True, typestr=self.typestr, itemsize=self.itemsize,
                              shape=tuple(result_shape), read_only=self.is_read_only, stream=self.stream_as_int)

    def __bool__(self) -> bool:
        return self._addr != 0

    def createRef(self) -> Pointer:  # noqa: N802 - hip-python's name
        """A Pointer to memory holding this array's address (hip-python's points into the
        array itself, so it lives as long as the array: so does this one's)."""
        if self._ref is None:
            self._ref = ctypes.c_uint64(self._addr)
        return Pointer(ctypes.addressof(self._ref))

    @property
    def rank(self) -> int:
        """The number of axes longer than 1."""
        return sum(1 for r in self._cai["shape"] if r > 1)

    @property
    def typestr(self) -> Any:
        """The type string (CUDA array interface)."""
        return self._cai["typestr"]

    @property
    def shape(self) -> Any:
        """The extent of each axis."""
        return self._cai["shape"]

    @property
    def size(self) -> int:
        """The number of elements (product of ``shape``)."""
        return math.prod(self._cai["shape"])

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self._itemsize

    @property
    def is_read_only(self) -> Any:
        """The CUDA array interface's read-only flag."""
        return self._cai["data"][1]

    @property
    def stream_as_int(self) -> Any:
        """The stream the CUDA array interface names (None: none)."""
        return self._cai["stream"]

    @property
    def __cuda_array_interface__(self) -> dict:
        self._cai["data"] = (self._addr, self._cai["data"][1])
        # 7.x hands out its own dict (a consumer's edit reshapes the array), 10.x a copy
        return self._cai if RELEASE == 7 else dict(self._cai)

    def __repr__(self) -> str:
        return (f"<NDBuffer object, _ptr={self._addr}, typestr={self.typestr}, itemsize={self.itemsize},"
                f" shape={self.shape!s}, is_read_only={self.is_read_only}, stream={self.stream_as_int}>")


def _handle_int(subscript: int, shape_dim: Any) -> tuple[int, int]:
    """hip-python's ``_handle_int`` (its arguments are C ``size_t``)."""
    index, extent = _as_size_t(subscript), _as_size_t(shape_dim)
    if index >= extent:
        raise ValueError(f"subscript='{index}' must be smaller than axis' exclusive upper bound ('{{shape_dim}}')")
    return index, index + 1


def _handle_slice(subscript: slice, shape_dim: Any) -> tuple[int, int, bool]:
    """hip-python's ``_handle_slice``: (start, stop, whether it is the whole axis)."""
    extent = _as_size_t(shape_dim)
    if subscript.step not in (None, 1):
        raise ValueError(f"subscript's step='{subscript.step}' must be 'None' or '1'.")
    if subscript.stop is not None:
        if subscript.stop <= 0:
            raise ValueError(f"subscript's stop='{subscript.stop}' must be greater than zero.")
        if subscript.stop > extent:
            raise ValueError(f"subscript's stop='{subscript.stop}' must not be greater than axis' exclusive"
                             f" upper bound ({extent}).")
        stop = _as_size_t(subscript.stop)
    else:
        stop = extent
    if subscript.start is not None:
        if subscript.start < 0:
            raise ValueError(f"subscript's start='{subscript.start}' must be non-negative.")
        if subscript.start >= extent:
            raise ValueError(f"subscript's start='{subscript.start}' must be smaller than axis' exclusive"
                             " upper bound ({shape_dim}).")
        start = _as_size_t(subscript.start)
    else:
        start = 0
    if start >= stop:
        raise ValueError(f"subscript's stop='{subscript.stop}' must be greater than subscript's"
                         f" start='{subscript.start}'")
    return start, stop, start == 0 and stop == extent


class DeviceArray(NDBuffer):
    """hip-python's ``DeviceArray``: device memory (hipMalloc's result), an ``NDBuffer``."""

    __slots__ = ()

    @staticmethod
    def DeviceArray(pyobj: Any) -> Any:  # noqa: N802 - hip-python's name
        """A DeviceArray over ``pyobj`` (``pyobj`` itself when it is one), as hip-python's."""
        return pyobj if isinstance(pyobj, DeviceArray) else DeviceArray(pyobj)
