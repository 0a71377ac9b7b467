"""Kernel-argument layouts and the normalisation of every hip-python launch form.

A launch can pass its arguments as ``kernelParams`` (a list of argument addresses, or
the address / buffer of a ``void*`` array), as ``extra`` in hip-python's tuple form
(values packed at min(size, 8) alignment) or in the raw
``HIP_LAUNCH_PARAM_BUFFER_POINTER / SIZE / END`` form. Backends and capture both turn
all of them into one thing: the kernarg bytes, laid out as the kernel's ``KernelLayout``.
"""
from __future__ import annotations

import ctypes
import functools
import struct
import sys
import threading
from typing import Any, Callable, NamedTuple, Sequence

import attrs

from hrr.codegen import compile_function
from hrr.hiptypes import (HIP_LAUNCH_PARAM_BUFFER_POINTER, HIP_LAUNCH_PARAM_BUFFER_SIZE,
                                   HIP_LAUNCH_PARAM_END, Pointer, address_or_zero, as_address)

# Parameter kinds. POINTER: a whole pointer argument. VALUE: a scalar that is never a
# pointer. STRUCT: a by-value aggregate whose aligned words may hold pointers.
# UNKNOWN: the backend knows only offset and size (cuda's cuFuncGetParamInfo), so an
# 8-byte UNKNOWN is treated like a STRUCT word by capture.
POINTER, VALUE, STRUCT, UNKNOWN = "pointer", "value", "struct", "unknown"
PARAM_KINDS = (POINTER, VALUE, STRUCT, UNKNOWN)


#: ctypes char array types by length, made when a layout with a parameter that long is.
_CHARS: dict[int, Any] = {}
_UNMADE: Any = object()   # a layout's reader not made yet


class LaunchArgsError(ValueError):
    """Launch arguments that cannot be turned into the kernel's kernarg bytes."""


@attrs.frozen
class ParamSpec:
    """One kernel parameter: where it lies in the kernarg buffer and what it is."""

    offset: int
    size: int
    kind: str = attrs.field(validator=attrs.validators.in_(PARAM_KINDS))
    name: str = ""


@attrs.frozen(cache_hash=True)
class KernelLayout:
    """A kernel's parameters in order; ``size`` is the kernarg buffer's length (computed
    once: every launch asks)."""

    params: tuple[ParamSpec, ...]
    size: int = attrs.field(init=False, eq=False, repr=False)
    #: (start, end, size) per parameter: how a kernelParams entry is read
    #: (``_CHARS[size].from_address(addr).raw``, a third of string_at's cost).
    reads: tuple[tuple[int, int, int], ...] = attrs.field(init=False, eq=False, repr=False)

    #: The compiled kernelParams reader (``_reader``), made at the first launch that can use
    #: it: ``_UNMADE`` until then, None for a layout that has none.
    reader: Any = attrs.field(init=False, eq=False, repr=False, default=_UNMADE)

    @size.default
    def _size(self) -> int:
        return max((p.offset + p.size for p in self.params), default=0)

    @reads.default
    def _reads(self) -> tuple[tuple[int, int, int], ...]:
        for p in self.params:
            if p.size not in _CHARS:
                _CHARS[p.size] = ctypes.c_char * p.size
        return tuple((p.offset, p.offset + p.size, p.size) for p in self.params)

    def to_wire(self) -> list:
        return [[p.offset, p.size, p.kind, p.name] for p in self.params]

    @classmethod
    def from_wire(cls, rows: Sequence) -> "KernelLayout":
        return cls(tuple(ParamSpec(int(o), int(s), str(k), str(n)) for o, s, k, n in rows))


class WordOffsets(tuple):
    """``pointer_word_offsets``' answer: the offsets (a tuple), with ``unpack(kernargs)``
    reading every word at them in one call, and ``last``, where capture's scan keeps its
    last answer for these words (``CaptureSession.scan_pointers``)."""

    unpack: Callable[[bytes], tuple[int, ...]]
    last: Any = None


def _words_reader(offsets: tuple[int, ...]) -> Callable[[bytes], tuple[int, ...]]:
    if all(b - a >= 8 for a, b in zip(offsets, offsets[1:], strict=False)):
        fmt, at = "<", 0
        for off in offsets:
            fmt += f"{off - at}xQ" if off > at else "Q"
            at = off + 8
        return struct.Struct(fmt).unpack_from
    u64 = struct.Struct("<Q").unpack_from
    return lambda kernargs: tuple(u64(kernargs, off)[0] for off in offsets)


@functools.lru_cache(maxsize=1024)
def pointer_word_offsets(layout: KernelLayout) -> WordOffsets:
    """Offsets of the 8-byte kernarg words that may hold a pointer: whole pointer
    parameters, and every aligned word of by-value structs and unknown parameters.
    Computed once per layout (capture asks on every launch)."""
    offsets: list[int] = []
    for p in layout.params:
        if p.kind == POINTER and p.size == 8:
            offsets.append(p.offset)
        elif p.kind in (STRUCT, UNKNOWN) and p.size >= 8:
            start = (p.offset + 7) & ~7
            offsets.extend(range(start, p.offset + p.size - 7, 8))
    out = WordOffsets(offsets)
    out.unpack = _words_reader(out)
    return out


def _is_raw_extra(extra: Sequence) -> bool:
    return (len(extra) == 5 and all(type(extra[i]) is int for i in (0, 2, 4))
            and extra[0] == HIP_LAUNCH_PARAM_BUFFER_POINTER
            and extra[2] == HIP_LAUNCH_PARAM_BUFFER_SIZE and extra[4] == HIP_LAUNCH_PARAM_END)


def _read_raw_extra(words: Sequence[int] | ctypes.Array[ctypes.c_uint64]) -> bytes:
    if (words[0] != HIP_LAUNCH_PARAM_BUFFER_POINTER or words[2] != HIP_LAUNCH_PARAM_BUFFER_SIZE
            or words[4] != HIP_LAUNCH_PARAM_END):
        raise LaunchArgsError("extra is not a HIP_LAUNCH_PARAM_BUFFER_POINTER/SIZE/END array")
    buf, size_ptr = int(words[1]), int(words[3])
    if not buf or not size_ptr:
        raise LaunchArgsError("extra names a NULL buffer or size pointer")
    size = ctypes.c_size_t.from_address(size_ptr).value
    if size > 1 << 20:
        raise LaunchArgsError(f"extra claims a {size}-byte argument buffer (limit 1 MiB)")
    return ctypes.string_at(buf, size)


def _pack_extra_tuple(items: Sequence[Any]) -> bytes:
    out = bytearray()
    for item in items:
        if isinstance(item, (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array)) \
                and not isinstance(item, ctypes.c_void_p):
            raw = bytes(item)
        else:
            raw = as_address(item).to_bytes(8, "little")
        align = min(len(raw), 8) or 1
        out += b"\0" * (-len(out) % align)
        out += raw
    return bytes(out)


def extra_bytes(extra: Any) -> bytes:
    """The packed argument bytes that ``extra`` carries, in either form."""
    if isinstance(extra, (list, tuple)):
        if _is_raw_extra(extra):
            return _read_raw_extra([as_address(x) for x in extra])
        return _pack_extra_tuple(extra)
    addr = as_address(extra)
    if not addr:
        raise LaunchArgsError("extra is NULL")
    return _read_raw_extra((ctypes.c_uint64 * 5).from_address(addr))


def _param_addresses(kernel_params: Any, count: int) -> list[int]:
    if isinstance(kernel_params, (list, tuple)):
        if len(kernel_params) < count:
            raise LaunchArgsError(f"kernelParams has {len(kernel_params)} entries, the kernel takes {count}")
        return [p if type(p) is int else as_address(p) for p in kernel_params[:count]]
    addr = as_address(kernel_params)
    if not addr:
        raise LaunchArgsError("kernelParams is NULL but the kernel takes arguments")
    return list((ctypes.c_uint64 * count).from_address(addr))


class PackedKernargs(ctypes.c_void_p * 5):   # type: ignore[misc]
    """A ``HIP_LAUNCH_PARAM_BUFFER_POINTER / SIZE / END`` array that also carries its bytes
    (``kernargs``): capture packs a launch's arguments once and hands the backend this as
    ``extra``. Any backend reads it as the raw form; ``pack_kernel_args`` takes the bytes."""

    kernargs: bytes


class _Handoff:
    """One thread's reusable ``PackedKernargs`` and the buffer it points at."""

    def __init__(self, capacity: int) -> None:
        self.buf = ctypes.create_string_buffer(capacity)
        self.view = memoryview(self.buf).cast("B")
        self.size = ctypes.c_size_t(0)
        self.words = PackedKernargs(HIP_LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(self.buf),
                                    HIP_LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(self.size),
                                    HIP_LAUNCH_PARAM_END)
        self.words.kernargs = b""


_handoff = threading.local()


def packed_extra(kernargs: bytes) -> PackedKernargs:
    """``kernargs`` as a raw ``extra`` for the launch call this thread makes next. The array
    and its buffer are the thread's own, reused: a backend copies the arguments during the
    launch call (HIP's rule), and nothing runs on the thread between this and that call."""
    h = getattr(_handoff, "h", None)
    n = len(kernargs)
    if h is None or n > len(h.view):
        h = _handoff.h = _Handoff(max(n, 4096))
    h.view[:n] = kernargs
    h.size.value = n
    words = h.words
    words.kernargs = kernargs
    return words


#: The process's address space as one byte view: a slice of it reads app memory with no
#: ctypes object per read (``_reader``). Made lazily; nothing is read until sliced.
_MEMORY: memoryview | None = None
#: The most parameters a layout gets a compiled reader for (past that, the loop).
_MAX_READER_PARAMS = 256


def _memory() -> memoryview | None:
    """The address-space view (None where ctypes cannot make one: no reader then)."""
    global _MEMORY
    if _MEMORY is None:
        try:
            _MEMORY = memoryview((ctypes.c_char * sys.maxsize).from_address(0)).cast("B")
        except (OverflowError, ValueError, TypeError, MemoryError):
            return None
    return _MEMORY


def _reader(layout: KernelLayout) -> Callable[[Sequence], bytes | None] | None:
    """The layout's compiled kernelParams reader, made once per layout: ``read(entries)``
    gives the kernarg bytes for a list or tuple of argument addresses (ints), or None when
    the entries are not all positive ints below the view's end (the loop in
    ``pack_kernel_args`` then reads them, or says why it cannot). None: no reader for this
    layout (parameters overlapping or out of order, or too many)."""
    if layout.reader is not _UNMADE:
        return layout.reader
    params = layout.params
    read: Callable[[Sequence], bytes | None] | None = None
    ordered = all(a.offset + a.size <= b.offset for a, b in zip(params, params[1:], strict=False))
    memory = _memory()
    if ordered and len(params) <= _MAX_READER_PARAMS and memory is not None:
        n = len(params)
        names = [f"p{i}" for i in range(n)]
        pieces, at = [], 0
        for name, p in zip(names, params, strict=True):
            if p.offset > at:
                pieces.append(repr(bytes(p.offset - at)))
            pieces.append(f"m[{name}:{name} + {p.size}]")
            at = p.offset + p.size
        checks = " and ".join(f"type({x}) is int and {x} > 0" for x in names) or "True"
        unpack = "".join(f"{x}, " for x in names)
        source = (f"def read(kp):\n"
                  f"    if len(kp) != {n}:\n"
                  f"        if len(kp) < {n}:\n            return None\n"
                  f"        kp = kp[:{n}]\n"
                  + (f"    {unpack}= kp\n" if n else "")
                  + f"    if not ({checks}):\n        return None\n"
                  f"    out = join(({''.join(x + ', ' for x in pieces)}))\n"
                  f"    return out if len(out) == {layout.size} else None\n")
        read = compile_function("read", source, {"m": memory, "join": b"".join}, "kernelParams reader")
    object.__setattr__(layout, "reader", read)   # frozen: a cache, outside eq and hash
    return read


def pack_kernel_args(layout: KernelLayout, kernel_params: Any = None, extra: Any = None) -> bytes:
    """Normalise a launch's arguments, in any hip-python form, to the kernarg bytes.

    Raises LaunchArgsError when both or neither form is given (for a kernel with
    parameters), or when the bytes do not cover the layout. A ``PackedKernargs`` extra
    gives its bytes without reading them back (capture packed them for this layout)."""
    if type(extra) is PackedKernargs and kernel_params is None and len(extra.kernargs) == layout.size:
        return extra.kernargs
    if extra is None and (type(kernel_params) is list or type(kernel_params) is tuple):
        read = layout.reader
        if read is _UNMADE:
            read = _reader(layout)
        if read is not None:
            out = read(kernel_params)
            if out is not None:
                return out
    # A NULL pointer given as 0 or c_void_p() is no argument (cuda-python passes ``extra=0``)
    if extra is not None and not isinstance(extra, (list, tuple)) and not address_or_zero(extra):
        extra = None
    if kernel_params is not None and not isinstance(kernel_params, (list, tuple)) \
            and not address_or_zero(kernel_params):
        kernel_params = None
    has_params = kernel_params is not None and not (isinstance(kernel_params, (list, tuple))
                                                    and len(kernel_params) == 0 and extra is not None)
    if extra is not None and has_params:
        raise LaunchArgsError("a launch takes kernelParams or extra, not both")
    if extra is not None:
        raw = extra_bytes(extra)
        if len(raw) < max((p.offset + p.size for p in layout.params), default=0):
            raise LaunchArgsError(f"extra carries {len(raw)} bytes, the kernel's arguments need {layout.size}")
        return raw[:layout.size].ljust(layout.size, b"\0")
    if not layout.params:
        return b""
    if kernel_params is None:
        raise LaunchArgsError("the kernel takes arguments but neither kernelParams nor extra was given")
    buf = bytearray(layout.size)
    chars = _CHARS
    for (start, end, size), addr in zip(layout.reads, _param_addresses(kernel_params, len(layout.params)),
                                        strict=False):
        if not addr:
            raise LaunchArgsError(f"kernelParams entry for parameter at offset {start} is NULL")
        buf[start:end] = chars[size].from_address(addr).raw
    return bytes(buf)


def kernarg_array(kernargs: bytes) -> tuple[Any, Any]:
    """A raw ``extra`` array that carries ``kernargs``; keep the returned pair alive
    until the launch call returns (backends copy the arguments at launch)."""
    buf = ctypes.create_string_buffer(kernargs, max(len(kernargs), 1))
    size = ctypes.c_size_t(len(kernargs))
    arr = (ctypes.c_void_p * 5)(HIP_LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(buf),
                                HIP_LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(size),
                                HIP_LAUNCH_PARAM_END)
    return arr, (buf, size)


class PointerWord(NamedTuple):
    """A kernarg word that points into a tracked allocation at capture. Immutable (a named
    tuple: capture makes one per pointer word of every launch, so it must be cheap)."""

    offset: int      # byte offset of the 8-byte word in the kernarg buffer
    base: int        # the allocation's base address at capture
    delta: int       # where inside the allocation it points
    kind: str        # the allocation kind: device, pinned or registered

    def to_wire(self) -> list:
        """The word as the launch event stores it: ``[offset, base, delta]``."""
        return [self.offset, self.base, self.delta]


class LaunchInfo(NamedTuple):
    """A kernel launch, normalised whatever form the application used (a launch call's
    kernel parameters or its ``extra`` buffer). Immutable (a named tuple, cheap to make:
    capture builds one per launch when a stage implements ``hrr_capture_launch``)."""

    api: str                 # the launch call's catalogue name
    function: int            # the function handle's value at capture
    kernel: str              # the kernel's name ("" when unknown)
    layout: KernelLayout
    kernargs: bytes          # the kernarg buffer as the kernel receives it
    pointers: tuple[PointerWord, ...]
    stream: int              # the launch stream's handle value (0: the null stream)
    stream_handle: Any       # the application's stream object, to query the backend
    grid: tuple[int, int, int]
    block: tuple[int, int, int]


__all__ = ["ParamSpec", "KernelLayout", "LaunchArgsError", "pack_kernel_args", "extra_bytes",
           "pointer_word_offsets", "WordOffsets", "PackedKernargs", "packed_extra",
           "kernarg_array", "POINTER", "VALUE", "STRUCT", "UNKNOWN", "Pointer", "PointerWord", "LaunchInfo"]
