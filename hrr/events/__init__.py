"""Events: what one recorded HIP call is (model) and how it travels (codec)."""
from hrr.events.model import Event, PSEUDO_D2H_CHECK
from hrr.events.codec import event_from_wire, event_to_wire

__all__ = ["Event", "PSEUDO_D2H_CHECK", "event_from_wire", "event_to_wire"]
