"""Roles of code: code objects and hiprtc's programs, options and outputs."""
from __future__ import annotations

import ctypes
import enum
import shlex
from typing import Any

from hrr.api.catalogue import Api
from hrr.api.roles.base import Action, CaptureServices, Check, Encoder, ReplayServices, Role, _digest, register, scalar
from hrr.hiptypes.codefile import buffer_or_address, image_at, read_code_file
from hrr.hiptypes import PointerConversionError, address_or_zero, kernelsource
from hrr.errors import EventRefused


def _file_image(path: Any) -> bytes | None:
    """The bytes of the code object file hipModuleLoad names (None: it cannot be read,
    and the call fails the same way)."""
    try:
        return read_code_file(path)
    except (OSError, ValueError, TypeError):
        return None


@register
class Code(Role):
    """A code object image (``kind`` ``file``: the file hipModuleLoad names, whose bytes
    are stored as hipModuleLoadData's image is; the path itself is never recorded)."""

    name = "code"
    deferred = True   # an image given by address is read once the load succeeded
    names_code_object = True

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        put = cap.put_code_object
        if row.params[i].kind == "file":
            return lambda a: put(_file_image(a[i]))

        def encode(a: tuple) -> Any:
            try:
                image = buffer_or_address(a[i]) if a[i] is not None else 0
            except PointerConversionError:
                return None   # the backend says what is wrong with it
            if isinstance(image, bytes):
                return put(image)
            # an address (cuda-python passes ``ptx.ctypes.data``): its format says how long
            # it is; read only after a successful load, when the loader has read it too
            return lambda result: None if int(result[0]) else put(image_at(image))
        return encode

    def check(self, row: Api, i: int) -> Check:
        def check(v: Any) -> str:
            if not isinstance(v, str):
                raise EventRefused("the code object was not recorded (it was passed by address)",
                                   category="missing_blob")
            return v
        return check

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        def read(call: Any) -> Any:
            data = rep.read_code_object(call.raw[i])
            if isinstance(data, bytes) and kernelsource.is_kernel_source(data):
                try:   # a program's source that the sim would write out as files: checked first
                    kernelsource.decode(data)
                except kernelsource.KernelSourceError as exc:
                    raise EventRefused(f"code object {call.raw[i]}: {exc}", category="bad_record") from None
            return data
        return read


# hiprtc rows replay as no-ops (the code object is recorded at hipModuleLoadData): these
# roles only record what the compile and link calls were given and made. A source's or
# log's text is data kind "kernel_source" (content mode only); its size and xxh3-128
# digest (the name a code object is stored under) are always recorded.
def _rtc_bytes(obj: Any, n: int | None) -> bytes | None:
    """The bytes of a hiprtc input: text, a buffer, or ``n`` bytes at an address."""
    if isinstance(obj, str):
        return obj.encode()
    try:
        data = memoryview(obj).cast("B").tobytes()
    except (TypeError, ValueError):
        addr = address_or_zero(obj)
        return ctypes.string_at(addr, n) if addr and n else None
    return data[:n] if n is not None else data


@register
class Source(Role):
    """``[nbytes, digest, blob or None, count]``; a list (headers) is hashed as its items
    joined by NUL bytes, ``count`` items."""

    name = "source"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        p = row.params[i]
        at = row.size_index(p)
        host_blob = cap.host_blob

        def encode(a: tuple) -> Any:
            obj = a[i]
            if obj is None:
                return None
            items = list(obj) if isinstance(obj, (list, tuple)) else [obj]
            n = scalar(a[at]) if at is not None else None
            parts = [_rtc_bytes(x, n if isinstance(n, int) else None) for x in items]
            if any(b is None for b in parts):
                return [None, None, None, len(items)]
            data = b"\0".join(parts)   # type: ignore[arg-type]
            blob = host_blob("kernel_source", data, address_or_zero(data), len(data)) if data else None
            return [len(data), _digest(data), blob, len(items)]
        return encode


def _option_text(v: Any) -> str:
    if isinstance(v, enum.Enum):
        return v.name
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).split(b"\0", 1)[0].decode(errors="replace")
    if isinstance(v, str):
        return v
    value = scalar(v)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return hex(address_or_zero(v))


@register
class Options(Role):
    """A list of options (or include names, JIT options, their values): one shell-quoted
    string (lossless for text; enum members by name, numbers in decimal, pointers in hex)."""

    name = "options"

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        def encode(a: tuple) -> Any:
            obj = a[i]
            if obj is None:
                return None
            if isinstance(obj, (list, tuple)):
                return shlex.join(_option_text(x) for x in obj)
            return _option_text(obj)
        return encode


@register
class RtcOut(Role):
    """A buffer the call fills: ``[nbytes, digest, blob or None]`` once it returned (None
    when it failed or the buffer was passed by address); ``Param.kind`` "text": a log, whose
    text (up to its NUL) is kept in content mode."""

    name = "rtc_out"
    deferred = True

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        text = row.params[i].kind == "text"
        host_blob = cap.host_blob

        def encode(a: tuple) -> Any:
            obj = a[i]

            def filled(result: tuple) -> Any:
                if int(result[0]) != 0:
                    return None
                try:
                    data = memoryview(obj).cast("B").tobytes()
                except (TypeError, ValueError):
                    return None
                if text:
                    data = data.split(b"\0", 1)[0]
                    blob = host_blob("kernel_source", data, address_or_zero(data), len(data)) if data else None
                    return [len(data), _digest(data), blob]
                return [len(data), _digest(data), None]
            return filled
        return encode
