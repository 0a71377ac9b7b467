"""Events: what one recorded HIP call is (model) and how it travels (codec).

The codec (the schema's checks, built from the catalogue) loads at the first use of its
names: a recorded process writes events without it, and ``hrr capture``'s plugins import
only the model."""
from __future__ import annotations

from typing import TYPE_CHECKING

from hrr.events.model import PSEUDO_D2H_CHECK, Event
from hrr.lazynames import lazy_names

if TYPE_CHECKING:
    from hrr.events.codec import event_from_wire, event_to_wire

__getattr__, __dir__ = lazy_names(globals(), {"hrr.events.codec": ("event_from_wire", "event_to_wire")})

__all__ = ["Event", "PSEUDO_D2H_CHECK", "event_from_wire", "event_to_wire"]
