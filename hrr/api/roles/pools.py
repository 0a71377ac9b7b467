"""Roles of memory pools, CU masks and FFT sizes: word arrays, attribute values, pool properties."""
from __future__ import annotations

import ctypes
from typing import Any, Callable, Sequence

import numpy as np

from hrr.api.catalogue import Api, Param
from hrr.api.roles.base import (
    Action,
    Call,
    CaptureServices,
    Check,
    Encoder,
    ReplayServices,
    Role,
    View,
    WireType,
    _first,
    bad,
    check_scalar,
    register,
    scalar,
)
from hrr.api.roles.structs import StructRole, pack_words, unpack_words
from hrr.hiptypes import (
    PointerConversionError,
    ReplayMemLocation,
    ReplayMemPoolProps,
    address_or_zero,
    buffer_nbytes,
)

MAX_WORDS = 1 << 12   # 32-bit words a ``words`` argument may hold (a CU mask: 32 CUs a word)
SHOWN_WORDS = 8       # readers show at most this many words themselves, else the byte count


def _words(obj: Any, n: int) -> bytes | None:
    """Capture: ``n`` 32-bit words of a list, a buffer or memory at an address, packed
    little-endian (None: not readable, or more than MAX_WORDS)."""
    if obj is None or not 0 <= n <= MAX_WORDS:
        return None
    if isinstance(obj, (list, tuple)):
        return pack_words(obj[:n], 4)
    have = buffer_nbytes(obj)
    addr = address_or_zero(obj)
    if not addr:
        return None if n else b""
    return ctypes.string_at(addr, 4 * n if have is None else min(4 * n, have))


@register
class Words(Role):
    """An array of ``Param.size`` 32-bit words the call reads (a CU mask): recorded as
    packed little-endian bytes, handed back at replay as a list of the same words."""

    name = "words"
    wire = WireType(lambda v: v is None or type(v) is bytes, "bytes (packed 32-bit words) or null")

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        at = row.size_index(row.params[i])

        def encode(a: tuple) -> Any:
            try:
                return _words(a[i], int(scalar(a[at]) or 0) if at is not None else 0)
            except (PointerConversionError, TypeError, ValueError):
                return None
        return encode

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name

        return lambda v: None if v is None else list(unpack_words(v, what, 4, MAX_WORDS))

    def show(self, view: View, p: Param, v: Any) -> Any:
        """A few words as themselves (an FFT's sizes: ``n=[16, 8]``), more as their byte count."""
        if type(v) is bytes and len(v) % 4 == 0 and len(v) <= 4 * SHOWN_WORDS:
            return view.plain(list(unpack_words(v, p.name, 4, SHOWN_WORDS)))
        return view.plain(v)



@register
class IntArray(Words):
    """An array of ``Param.size`` C ints the call reads through a pointer (hipFFT's ``n``,
    ``inembed``, ``onembed``): recorded as ``words`` are; handed back at replay as a numpy
    int32 array, which hip-python's own functions take through the buffer protocol."""

    name = "int_array"

    def check(self, row: Api, i: int) -> Check:
        words = super().check(row, i)

        def check(v: Any) -> Any:
            listed = words(v)
            return None if listed is None else np.array(listed, np.uint32).view(np.int32)
        return check

# The width of the value each hipMemPoolAttr names (HIP's: int32 flags, then uint64 sizes).
_ATTR_WIDTHS = {"hipMemPoolAttr": lambda attr: 4 if attr in (1, 2, 3) else 8}


@register
class AttrValue(Role):
    """A value the call reads through a pointer, as wide as the attribute the row's enum
    parameter of kind ``Param.kind`` names (``_ATTR_WIDTHS``): its bytes are recorded, and
    replay hands the backend a buffer of its own holding them (None: a NULL pointer)."""

    name = "attr_value"
    wire = WireType(lambda v: v is None or (type(v) is bytes and len(v) <= 8), "at most 8 bytes or null")

    def _attr_at(self, row: Api, i: int) -> tuple[int, Callable[[int], int]]:
        kind = row.params[i].kind or ""
        at = _first(row, "enum", kind)
        if at is None or kind not in _ATTR_WIDTHS:
            raise ValueError(f"{row.name}: {row.params[i].name} names no attribute of a known width")
        return at, _ATTR_WIDTHS[kind]

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        at, width = self._attr_at(row, i)

        def encode(a: tuple) -> Any:
            try:
                n, addr, have = width(int(a[at])), address_or_zero(a[i]), buffer_nbytes(a[i])
            except (TypeError, ValueError):
                return None
            return ctypes.string_at(addr, n if have is None else min(n, have)) if addr else None
        return encode

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name

        def check(v: Any) -> Any:
            if v is not None and (type(v) is not bytes or len(v) > 8):
                raise bad(f"{what} is not the bytes of an attribute's value")
            return v
        return check

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        self._attr_at(row, i)   # the row must name its attribute

        def act(call: Call) -> Any:
            data = call.raw[i]
            if data is None:
                return None
            buf = rep.buffer(8, f"the value of {row.name}")
            buf[:len(data)] = np.frombuffer(data, dtype=np.uint8)
            rep.hold(buf)
            return buf
        return act


def _field(obj: Any, name: str) -> Any:
    """A struct field as an int, None when it cannot be read (hip-python raises for an enum
    field holding a value outside its enum, e.g. a location never set)."""
    try:
        value = getattr(obj, name)
        return None if value is None else int(value)
    except (AttributeError, TypeError, ValueError):
        return None


@register
class PoolProps(StructRole):
    """A hipMemPoolProps: ``[allocType, handleTypes, location type, location id, maxSize]``
    (a field that cannot be read: null); replay hands the backend a look-alike holding them."""

    name = "pool_props"
    wire = WireType(lambda v: v is None or (type(v) is list and len(v) == 5 and all(x is None or type(x) is int
                                                                                  for x in v)),
                    "a list of 5 ints (or nulls), or null")
    size, called = 5, "a memory pool's properties"

    def read(self, p: Any) -> list:
        location = getattr(p, "location", None)
        return [_field(p, "allocType"), _field(p, "handleTypes"), _field(location, "type"),
                _field(location, "id"), _field(p, "maxSize")]

    def check_items(self, v: Sequence, what: str) -> Any:
        return [None if x is None else check_scalar(x, f"{what} field") for x in v]

    def build(self, v: Any, rep: ReplayServices, what: str) -> Any:
        alloc_type, handle_types, loc_type, loc_id, max_size = v
        return ReplayMemPoolProps(allocType=alloc_type, handleTypes=handle_types, maxSize=max_size,
                                  location=ReplayMemLocation(type=loc_type, id=loc_id))
