"""The cases that compare hrr's DeviceArray with hip-python's, member by member.

``outcomes(T)`` runs every case against one implementation (``T`` has ``DeviceArray``,
``NDBuffer`` and ``Pointer``) and describes each result or exception in plain data, so two
implementations compare with ``==``. Inputs are made once and shared, so buffer addresses
agree. Run as a script (in hip-python 7.x's venv) it compares hrr with the hip-python
installed there and prints the differences as JSON, for tests/backends/test_devicearray.py.
"""
from __future__ import annotations

import array
import ctypes
import json
import sys
import types
from typing import Any, Callable

import numpy as np

BASE = 0x1000


class _CAI:
    def __init__(self, cai: Any) -> None:
        self.__cuda_array_interface__ = cai


class _AsVoidP:
    def as_c_void_p(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(0x6000)


class _IntLike:
    def __int__(self) -> int:
        return 2


# made once: every implementation sees the very same objects (and buffer addresses)
INPUTS: dict[str, Any] = {
    "None": None, "zero": 0, "int": 0x40, "bool": True, "negative int": -1, "too negative": -(1 << 63) - 1,
    "too big": 1 << 64, "c_void_p": ctypes.c_void_p(0x20), "null c_void_p": ctypes.c_void_p(),
    "numpy f32 2x3": np.zeros((2, 3), np.float32), "numpy read-only": np.frombuffer(b"abcd", np.uint8),
    "numpy strided": np.zeros((4, 4), np.float64)[:, ::2], "numpy 0-d": np.zeros((), np.int32),
    "bytes": b"abcd", "bytearray": bytearray(3), "empty bytes": b"", "memoryview": memoryview(b"xyz"),
    "array.array": array.array("i", [1, 2]), "c_int": ctypes.c_int(5), "str": "nope", "float": 1.5,
    "as_c_void_p": _AsVoidP(),
    "cai": _CAI({"shape": (4,), "typestr": "<f4", "data": (0x50, False), "version": 3}),
    "cai strides None": _CAI({"shape": (4,), "typestr": "<f4", "data": (0x50, True), "strides": None,
                              "version": 3, "stream": 9}),
    "cai contiguous strides": _CAI({"shape": (2, 4), "typestr": "<f4", "data": (0x50, False),
                                    "strides": (16, 4), "version": 3}),
    "cai strided": _CAI({"shape": (4, 2), "typestr": "<f4", "data": (0x50, False), "strides": (4, 16)}),
    "cai short strides": _CAI({"shape": (4, 2), "typestr": "<f4", "data": (0x50, False), "strides": (8,)}),
    "cai no data": _CAI({"shape": (4,)}),
    "cai offset": _CAI({"shape": (4,), "typestr": "B", "data": (0x50, False), "strides": None, "offset": 2}),
    "cai mask": _CAI({"shape": (4,), "typestr": "B", "data": (0x50, False), "strides": None, "mask": 1}),
    "cai not a dict": _CAI([1]),
    "cai stream 0": _CAI({"shape": (4,), "typestr": "B", "data": (0x50, False), "strides": None, "stream": 0}),
}

CONFIGURES: list[dict[str, Any]] = [
    {}, {"bogus": 1}, {"shape": (16,)}, {"shape": (4, 4)}, {"shape": (3,)}, {"shape": (3,), "_force": True},
    {"shape": ()}, {"shape": [16]}, {"shape": None}, {"shape": (16.0,)}, {"shape": (True,)},
    {"shape": (-16,), "_force": True}, {"shape": (np.int64(16),)},
    {"typestr": "float32", "shape": (4,)}, {"typestr": "<f8", "shape": (2,)}, {"typestr": "f4"},
    {"typestr": "f4", "_force": True}, {"typestr": "f4", "itemsize": 2, "_force": True}, {"typestr": "zz"},
    {"typestr": "O"}, {"typestr": "datetime64", "itemsize": 8, "shape": (2,)}, {"typestr": b"f4"},
    {"typestr": None}, {"typestr": "G", "_force": True}, {"typestr": "g", "_force": True},
    {"typestr": "l", "shape": (2,)}, {"typestr": "?"}, {"typestr": "c8", "shape": (2,)},
    {"typestr": "int", "shape": (2,)}, {"typestr": "uint", "shape": (2,)}, {"typestr": "float", "shape": (2,)},
    {"itemsize": 2, "shape": (8,)}, {"itemsize": 0}, {"itemsize": -3}, {"itemsize": 2.5}, {"itemsize": "3"},
    {"itemsize": None}, {"itemsize": 1 << 40}, {"itemsize": np.int64(4), "shape": (4,)}, {"itemsize": True},
    {"itemsize": _IntLike(), "shape": (8,)},
    {"_force": "yes", "shape": (3,)}, {"_force": None, "shape": (3,)},
    {"read_only": True}, {"read_only": "x"}, {"read_only": None}, {"read_only": 0},
    {"stream": 5}, {"stream": None}, {"stream": 0}, {"stream": -1}, {"stream": False}, {"stream": True},
    {"stream": "s"}, {"stream": 1.5}, {"stream": 1 << 64}, {"stream": ctypes.c_void_p(7)},
    {"stream": INPUTS["bytes"]}, {"stream": INPUTS["cai"]}, {"stream": INPUTS["as_c_void_p"]},
    {"stream": 0, "read_only": True, "shape": (4,), "typestr": "f4"},
    {"typestr": "f8", "read_only": True, "stream": 5},
]

SUBSCRIPTS_1D: list[Any] = [
    0, 3, 15, 16, -1, True, slice(None), slice(2, 5), slice(2, None), slice(None, 5), slice(-1, None),
    slice(None, -1), slice(0, 0), slice(5, 2), slice(5, 5), slice(0, 17), slice(16, None), slice(0, 4, 1),
    slice(0, 4, 2), slice(0, 4, True), slice(0, 4, -1), slice(1.0, 3), slice(1, 3.5), slice("a", 3),
    (2,), (slice(1, 3),), (1, 2), (), [1], "a", 2.0, None, Ellipsis, np.int64(2),
]
SUBSCRIPTS_2D: list[Any] = [
    0, 3, 4, (1, 2), (1, slice(None)), (slice(1, 3),), (slice(1, 3), slice(None)), (slice(1, 3), slice(0, 2)),
    (1, slice(2, 5)), (slice(None), 2), (slice(0, 4), slice(0, 6)), (1, 2, 3), (slice(None), slice(1, 3)),
    ((1,), 2), (1, "x"),
]
SUBSCRIPTS_3D: list[Any] = [(1,), (1, 2), (1, 2, 3), (slice(None), 0), (slice(0, 1), 2), (0, slice(1, 3))]


def describe(T: Any, value: Any) -> Any:
    """Plain data for a result: an array's every public property, else its type and repr."""
    if isinstance(value, T.NDBuffer):
        return ["array", type(value).__name__, int(value), value.shape, value.typestr, value.itemsize,
                value.is_read_only, value.stream_as_int, value.size, value.rank, bool(value), value.is_ptr_null,
                repr(value), sorted(value.__cuda_array_interface__.items(), key=lambda kv: kv[0])]
    return ["value", type(value).__name__, repr(value)]


def attempt(T: Any, fn: Callable[[], Any]) -> Any:
    try:
        return describe(T, fn())
    except Exception as exc:  # noqa: BLE001 - the exception is the outcome compared
        return ["raises", type(exc).__name__, str(exc)]


def _array(T: Any, shape: tuple = (16,), **kwargs: Any) -> Any:
    return T.DeviceArray.DeviceArray(BASE).configure(_force=True, shape=shape, **kwargs)


def _configured(T: Any, kwargs: dict) -> Any:
    a = _array(T)
    try:
        returned = describe(T, a.configure(**kwargs))
    except Exception as exc:  # noqa: BLE001
        returned = ["raises", type(exc).__name__, str(exc)]
    return [returned, describe(T, a)]   # what configure gave, and what a failed one left


def _identities(T: Any) -> list:
    a, nd = _array(T), T.NDBuffer(BASE)
    return [T.DeviceArray.fromObj(a) is a, T.DeviceArray.DeviceArray(a) is a, T.NDBuffer.fromObj(a) is a,
            T.NDBuffer.fromObj(nd) is nd, T.DeviceArray.DeviceArray(nd) is nd, T.DeviceArray(a) is a]


def _ref(T: Any) -> list:
    a = _array(T)
    r1, r2, view = a.createRef(), a.createRef(), a[2:4]   # a ref lives as long as its array
    return [type(r1).__name__, int(r1) == int(r2), int(r1) != int(a),
            ctypes.c_uint64.from_address(int(r1)).value == int(a),
            ctypes.c_uint64.from_address(int(view.createRef())).value == int(a) + 2]


def _cai_edit(T: Any) -> list:
    a = _array(T)
    a.__cuda_array_interface__["shape"] = (99,)
    return [a.shape, a.__cuda_array_interface__ is a.__cuda_array_interface__]


def _iterate(T: Any) -> Any:
    return [describe(T, x) for x in _array(T, (3,))]


def outcomes(T: Any) -> list[tuple[str, Any]]:
    """Every case's label and described outcome for implementation ``T``."""
    cases: list[tuple[str, Callable[[], Any]]] = []
    for label, obj in INPUTS.items():
        cases += [(f"DeviceArray.fromObj({label})", lambda o=obj: T.DeviceArray.fromObj(o)),
                  (f"DeviceArray.DeviceArray({label})", lambda o=obj: T.DeviceArray.DeviceArray(o)),
                  (f"DeviceArray({label})", lambda o=obj: T.DeviceArray(o)),
                  (f"NDBuffer({label})", lambda o=obj: T.NDBuffer(o)),
                  (f"NDBuffer.fromObj({label})", lambda o=obj: T.NDBuffer.fromObj(o))]
    cases += [("DeviceArray(own Pointer)", lambda: T.DeviceArray(T.Pointer(0x30))),
              ("DeviceArray(own array)", lambda: T.DeviceArray(_array(T, (4,), typestr="f4", read_only=True,
                                                                      stream=3))),
              ("NDBuffer(own array)", lambda: T.NDBuffer(_array(T, (2, 2), typestr="i2"))),
              ("DeviceArray()", lambda: T.DeviceArray()),
              ("configure positional", lambda: _array(T).configure({"shape": (1,)}))]
    for i, kwargs in enumerate(CONFIGURES):
        cases.append((f"configure#{i} {kwargs!r}", lambda k=kwargs: _configured(T, k)))
    one = lambda: _array(T, (16,), typestr="float32", read_only=False)  # noqa: E731
    for sub in SUBSCRIPTS_1D:
        cases.append((f"1d[{sub!r}]", lambda s=sub: one()[s]))
    for sub in SUBSCRIPTS_2D:
        cases.append((f"2d[{sub!r}]", lambda s=sub: _array(T, (4, 6), typestr="i4")[s]))
    for sub in SUBSCRIPTS_3D:
        cases.append((f"3d[{sub!r}]", lambda s=sub: _array(T, (2, 3, 4), typestr="B")[s]))
    cases += [
        ("slice of a slice", lambda: one()[4:8][1:3]),
        ("slice keeps read_only and stream", lambda: _array(T, (8,), read_only=True, stream=7)[2:4]),
        ("slice of a stream-less view", lambda: _array(T, (8,), stream=7)[2:4][0:1]),
        ("slice after a failed typestr", lambda: _leftover_slice(T)),
        ("iterate", lambda: _iterate(T)),
        ("identities", lambda: _identities(T)),
        ("createRef", lambda: _ref(T)),
        ("cai edit", lambda: _cai_edit(T)),
        ("null", lambda: T.DeviceArray(None)),
        ("null bool", lambda: [bool(T.DeviceArray(None)), bool(T.DeviceArray(0x10))]),
        ("as_c_void_p", lambda: [T.DeviceArray(0x10).as_c_void_p().value, T.DeviceArray(None).as_c_void_p().value]),
        ("rank", lambda: [_array(T, s).rank for s in ((1, 4, 1, 3), (1,), (0,), (5,))]),
        ("size", lambda: [_array(T, s).size for s in ((0,), (2, 3), (7,))]),
        ("NUMPY_CHAR_CODES", lambda: list(T.DeviceArray.NUMPY_CHAR_CODES)),
        ("public names", lambda: [sorted(n for n in dir(c) if not n.startswith("_"))
                                  for c in (T.DeviceArray, T.NDBuffer)]),
        ("special methods", lambda: [n for n in ("__bool__", "__getitem__", "__int__", "__cuda_array_interface__",
                                                 "__len__", "__iter__") if hasattr(_array(T), n)]),
    ]
    return [(label, attempt(T, fn)) for label, fn in cases]


def _leftover_slice(T: Any) -> Any:
    a = _array(T)
    try:
        a.configure(typestr="zz")
    except ValueError:
        pass
    return a[0:2]


def jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=repr))


def differences(real: Any, mine: Any) -> list[list]:
    """[label, hip-python's outcome, hrr's] for every case where they differ."""
    return [[label, want, got] for (label, want), (_, got) in zip(jsonable(outcomes(real)), jsonable(outcomes(mine)),
                                                                      strict=True)
            if want != got]


def implementations() -> tuple[Any, Any]:
    """(hip-python's classes, hrr's) in this environment."""
    from hrr import hiptypes
    from hrr.hiptypes import devicearray
    util = hiptypes.real_util()
    real = types.SimpleNamespace(DeviceArray=util.types.DeviceArray, NDBuffer=util.types.NDBuffer,
                                 Pointer=util.types.Pointer)
    mine = types.SimpleNamespace(DeviceArray=devicearray.DeviceArray, NDBuffer=devicearray.NDBuffer,
                                 Pointer=hiptypes.Pointer)
    return real, mine


if __name__ == "__main__":
    from hrr.hiptypes import devicearray as _da
    real_T, mine_T = implementations()
    json.dump({"release": _da.RELEASE, "cases": len(outcomes(mine_T)),
               "differences": differences(real_T, mine_T)}, sys.stdout)
