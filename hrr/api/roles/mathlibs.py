"""Roles of the math libraries' calls (``hrr.api.mathlibs``): the arrays a call reads or
writes in device memory, whose extent its shape parameters give (``lib_array``), and the
scalars it reads (``lib_scalar``: alpha, beta) or writes (``lib_result``: a dot product, a
norm, an index) through a pointer that is host or device memory as the handle's pointer mode
says. A scalar in host memory is recorded as bytes (read) or checked byte for byte at replay
(written) like a copy's host end; in device memory it is an address, translated.

``lib_array``'s ``Param.kind`` names its shape in elements of ``Param.elem`` bytes, from the
call's own parameters (negative increments and strides count by their magnitude):
  ``vector N INC``              1 + (N - 1) * |INC| elements (none when N <= 0)
  ``opvector OP N M INC``       a vector of N elements when OP is no-transpose, else of M
  ``elements N``                N elements
  ``matrix R C LD``             a column-major R x C matrix: LD * (C - 1) + R elements
  ``opmatrix OP R C LD``        R x C when OP is no-transpose, else C x R
  ``sidematrix SIDE M N LD``    M x M when SIDE is left, else N x N
  ``batch STRIDE COUNT SHAPE``  COUNT shapes STRIDE elements apart
  ``pointers COUNT SHAPE``      (``lib_pointers``) COUNT device addresses, each of an array
                                of SHAPE
A ``lib_pointers`` array (gemmBatched's A, B and C) holds addresses the program wrote into
device memory. Replay reads it once the device is idle, translates each address and checks
its SHAPE fits the allocation it is in, and passes an array of its own holding the
translated addresses (an address replay cannot translate refuses the record).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from hrr.api.rowtypes import Api
from hrr.api.roles.addresses import CopyDst, CopySrc, Ptr
from hrr.api.roles.base import (
    DEVICE,
    Action,
    Call,
    CaptureServices,
    Encoder,
    ReplayServices,
    _translate,
    check_fits,
    register,
)
from hrr.errors import EventRefused
from hrr.hiptypes import address_or_zero

# hipBLAS's values of hipblasOperation_t's HIPBLAS_OP_N and hipblasSideMode_t's HIPBLAS_SIDE_LEFT
NO_TRANSPOSE, SIDE_LEFT = 111, 141

Extent = Callable[[Sequence[Any]], int]
POINTER_BYTES = 8
#: The most addresses a ``lib_pointers`` array may hold (a batch count an archive names)
MAX_POINTERS = 1 << 20


def _vector(n: int, inc: int) -> int:
    return 1 + (n - 1) * abs(inc) if n > 0 else 0


def _matrix(rows: int, cols: int, ld: int) -> int:
    return ld * (cols - 1) + rows if rows > 0 and cols > 0 else 0


def _shape(words: list[str], at: Callable[[str], int]) -> Callable[[Sequence[Any]], int]:
    """The element count of the shape ``words`` as a function of the call's raw values."""
    form, names = words[0], words[1:]
    idx = [at(n) for n in names] if form not in ("batch", "pointers") else []
    if form == "vector":
        n_at, inc_at = idx
        return lambda r: 1 + (r[n_at] - 1) * abs(r[inc_at]) if r[n_at] > 0 else 0
    if form == "opvector":
        op_at, n_at, m_at, inc_at = idx
        return lambda r: _vector(r[n_at] if r[op_at] == NO_TRANSPOSE else r[m_at], r[inc_at])
    if form == "elements":
        (n_at,) = idx
        return lambda r: max(r[n_at], 0)
    if form == "pointers":   # the array itself: COUNT addresses (array_extent: 8 bytes each)
        count_at = at(names[0])
        return lambda r: max(r[count_at], 0)
    if form == "matrix":
        r_at, c_at, ld_at = idx
        return lambda r: _matrix(r[r_at], r[c_at], r[ld_at])
    if form == "opmatrix":
        op_at, r_at, c_at, ld_at = idx
        return lambda r: (_matrix(r[r_at], r[c_at], r[ld_at]) if r[op_at] == NO_TRANSPOSE
                          else _matrix(r[c_at], r[r_at], r[ld_at]))
    if form == "sidematrix":
        side_at, m_at, n_at, ld_at = idx
        return lambda r: (_matrix(r[m_at], r[m_at], r[ld_at]) if r[side_at] == SIDE_LEFT
                          else _matrix(r[n_at], r[n_at], r[ld_at]))
    if form == "batch":
        stride_at, count_at = at(names[0]), at(names[1])
        inner = _shape(names[2:], at)

        def batch(r: Sequence[Any]) -> int:
            one = inner(r)
            return (r[count_at] - 1) * abs(r[stride_at]) + one if r[count_at] > 0 and one else 0
        return batch
    raise ValueError(f"unknown lib_array shape {' '.join(words)!r}")


def array_extent(row: Api, i: int) -> Extent:
    """The bytes ``lib_array`` parameter ``i`` of ``row`` spans, from the call's raw values."""
    p = row.params[i]
    words = (p.kind or "").split()
    count, elem = _shape(words, row.param_index), (POINTER_BYTES if words[:1] == ["pointers"] else p.elem)
    return lambda raw: count(raw) * elem


@register
class LibArray(Ptr):
    """A device array of a math-library call: translated, and the whole extent its shape
    names must lie inside one allocation replay made."""

    name = "lib_array"

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        return self.bounded(row.params[i].name, i, array_extent(row, i), rep)


@register
class LibPointers(LibArray):
    """An array of device addresses (gemmBatched's): see the module's docstring."""

    name = "lib_pointers"

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        p = row.params[i]
        words = (p.kind or "").split()
        count_at, each = row.param_index(words[1]), _shape(words[2:], row.param_index)

        def act(call: Call) -> Any:
            addr, count = call.raw[i], call.raw[count_at]
            replay = _translate(rep, addr, p.name)
            if replay is None or count <= 0:
                return replay
            if count > MAX_POINTERS:
                raise EventRefused(f"{p.name}: {count} addresses (at most {MAX_POINTERS})", category="limit")
            check_fits(rep.find(addr), addr, count * POINTER_BYTES)
            n = each(call.raw) * p.elem
            translated = []
            for k, word in enumerate(np.frombuffer(rep.device_bytes(replay, count * POINTER_BYTES), "<u8")):
                target = _translate(rep, int(word), f"{p.name}[{k}]")
                if target is not None and n:
                    check_fits(rep.find(int(word)), int(word), n)
                translated.append(target or 0)
            return rep.device_array(np.array(translated, "<u8").tobytes(), f"{row.name}'s {p.name}")
        return act


class _Scalar:
    """What ``lib_scalar`` and ``lib_result`` share: an endpoint of ``Param.span`` bytes."""

    @staticmethod
    def sized(row: Api, i: int) -> Callable[[Call], tuple[str, int, int, str | None]]:
        p = row.params[i]

        def endpoint(call: Call) -> tuple[str, int, int, str | None]:
            tag, addr, n, blob = call.raw[i]
            if n != p.span:
                raise EventRefused(f"{p.name}: the scalar holds {n} bytes, {p.span} expected",
                                   category="bounds")
            return tag, addr, n, blob
        return endpoint


@register
class LibScalar(_Scalar, CopySrc):
    """A scalar the call reads (alpha, beta): host bytes recorded, a device address translated."""

    name = "lib_scalar"
    copy_endpoint = False

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        n = row.params[i].span or 0
        find, host_blob = cap.find_allocation, cap.host_blob

        def encode(a: tuple) -> list:
            obj = a[i]
            addr = address_or_zero(obj)
            alloc = find(addr)
            if alloc is not None and alloc.kind == DEVICE:
                return ["a", addr, n, None]
            return ["a" if alloc is not None else "h", addr, n, host_blob("h2d_payload", obj, addr, n)]
        return encode


@register
class LibResult(_Scalar, CopyDst):
    """A scalar the call writes (a dot product, a norm, an index): host bytes checked at
    replay once the call returned (its row is ``sync``), a device address translated."""

    name = "lib_result"
    copy_endpoint = False

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        n = row.params[i].span or 0
        find, host_blob = cap.find_allocation, cap.host_blob

        def encode(a: tuple) -> Any:
            obj = a[i]
            addr = address_or_zero(obj)
            alloc = find(addr)
            if alloc is not None and alloc.kind == DEVICE:
                return ["a", addr, n, None]
            tag = "a" if alloc is not None else "h"

            def after(result: tuple) -> list:
                blob = host_blob("d2h_result", obj, addr, n) if int(result[0]) == 0 else None
                return [tag, addr, n, blob]
            return after
        return encode

    def after_call(self, row: Api, i: int, cap: CaptureServices) -> Any:
        return None


__all__ = ["LibArray", "LibPointers", "LibScalar", "LibResult", "array_extent", "NO_TRANSPOSE", "SIDE_LEFT"]
