"""Events: what one recorded HIP call is (model) and how it travels (codec).

The codec (the schema's checks, built from the catalogue) loads at the first use of its
names: a recorded process writes events without it, and ``hrr capture``'s plugins import
only the model."""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hrr.events.model import PSEUDO_D2H_CHECK, Event

if TYPE_CHECKING:
    from hrr.events.codec import event_from_wire, event_to_wire

_CODEC_NAMES = ("event_from_wire", "event_to_wire")


def __getattr__(name: str) -> Any:
    if name not in _CODEC_NAMES:
        raise AttributeError(f"module 'hrr.events' has no attribute {name!r}")
    value = getattr(importlib.import_module("hrr.events.codec"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_CODEC_NAMES))


__all__ = ["Event", "PSEUDO_D2H_CHECK", "event_from_wire", "event_to_wire"]
