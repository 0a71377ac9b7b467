"""What the roles of structures and of packed word arrays share (``graphs``, ``pools``,
``outputs``).

``StructRole`` is a structure the call reads (a memory pool's properties, a graph node's
parameters): recorded as a list of ``size`` items read from its fields (null: no
structure), checked item by item at replay, and handed to the backend rebuilt.
``pack_words``/``unpack_words`` are the wire form of an array of 32- or 64-bit words (a CU
mask, a node's dependencies); ``lookup`` is a recorded handle that replay must know.
"""
from __future__ import annotations

import struct
from typing import Any, ClassVar, Sequence

from hrr.api.catalogue import Api
from hrr.api.roles.base import (
    Action,
    Call,
    CaptureServices,
    Check,
    Encoder,
    ReplayServices,
    Role,
    bad,
    check_record,
)
from hrr.errors import EventRefused
from hrr.hiptypes import handle_or_zero

MAX_LISTED_HANDLES = 1 << 16   # handles one array argument or output may name
_FORMATS = {4: "I", 8: "Q"}


def pack_words(values: Any, width: int = 8) -> bytes:
    """Integers as little-endian words of ``width`` bytes (4 or 8), each taken modulo the
    word (a wire value of any length: callers cap their lists)."""
    mod = 1 << (8 * width)
    return struct.pack(f"<{len(values)}{_FORMATS[width]}", *(int(x) % mod for x in values))


def unpack_words(v: Any, what: str, width: int = 8, most: int = MAX_LISTED_HANDLES) -> tuple[int, ...]:
    """Replay: the words of a recorded ``pack_words`` value (at most ``most`` of them)."""
    if type(v) is not bytes or len(v) % width or len(v) // width > most:
        raise bad(f"{what} is not an array of at most {most} {8 * width}-bit words")
    return struct.unpack(f"<{len(v) // width}{_FORMATS[width]}", v)


def handle_values(v: Any) -> list[int]:
    """Capture: a handle-array argument (None, one handle, or a sequence) as handle values."""
    if v is None:
        return []
    if isinstance(v, (list, tuple)):
        return [handle_or_zero(x) for x in v]
    return [handle_or_zero(v)]


def lookup(rep: ReplayServices, kind: str, value: int, what: str) -> Any:
    """Replay's object for a recorded ``kind`` handle; refused (untranslated) when it has none."""
    try:
        return rep.lookup_handle(kind, value)
    except KeyError:
        raise EventRefused(f"{what}: unknown {kind} handle 0x{value:x}", category="untranslated") from None


class StructRole(Role):
    """A structure the call reads, recorded as a list of ``size`` items (null: none given).

    A subclass says what is read from it (``read``), how the recorded items are checked
    (``check_items``, after the list's length: a refusal names the parameter and
    ``called``), and what the backend is handed for them at replay (``build``)."""

    size: ClassVar[int]
    called: ClassVar[str]   # how a refusal names the structure: "a memset node"

    def read(self, p: Any) -> list:
        """Capture: the items recorded for a structure ``p`` (not None)."""
        raise NotImplementedError

    def check_items(self, v: Sequence, what: str) -> Any:
        """Replay: the checked value of the recorded items ``v`` (``size`` of them)."""
        raise NotImplementedError

    def build(self, v: Any, rep: ReplayServices, what: str) -> Any:
        """Replay: what the backend is handed for the checked value ``v``."""
        raise NotImplementedError

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        read = self.read
        return lambda a: None if a[i] is None else read(a[i])

    def check(self, row: Api, i: int) -> Check:
        what, n, called, items = row.params[i].name, self.size, self.called, self.check_items

        def check(v: Any) -> Any:
            if v is None:
                return None
            return items(check_record(v, n, f"{what}: {called}"), what)
        return check

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        what, build = row.params[i].name, self.build

        def act(call: Call) -> Any:
            v = call.raw[i]
            return None if v is None else build(v, rep, what)
        return act
