"""The sim's bodies of the event calls (catalogue family ``event``).

Each body is registered with ``@body`` (``hrr.backends.bodies``); ``api.py`` builds
``hip`` from them.
"""
from __future__ import annotations

from hrr import hiptypes as ht
from hrr.backends.bodies import Bodies
from hrr.hiptypes import hipError_t
from hrr.backends.sim.device import current as _dev
from hrr.backends.sim.device import keep
from hrr.backends.sim.device import raise_device_error
from hrr.backends.sim.streams import Event, Stream
from hrr.backends.surface import HipError

SUCCESS = hipError_t.hipSuccess


body = Bodies("event")


@body
def hipEventRecord(ev: Event, s: Stream) -> None:
    _dev().record_event(ev, s)


def _refuse_captured_event(ev: Event, what: str) -> None:
    if ev.capture is not None:
        raise HipError("hipErrorCapturedEvent", f"{what}: the event was recorded in a capture")


@body
def hipEventSynchronize(ev: Event) -> None:
    _refuse_captured_event(ev, "hipEventSynchronize")
    dev = _dev()
    dev.check_capture_safe("hipEventSynchronize")
    if ev.stream is not None:
        dev.wait([(ev.stream, ev.seq)])


@body
def hipEventQuery(ev: Event) -> tuple:
    _refuse_captured_event(ev, "hipEventQuery")
    sched = _dev().scheduler
    done = ev.stream is None or sched.poll([(ev.stream, ev.seq)])
    raise_device_error(sched.take_async_error())
    return (SUCCESS,) if done else (hipError_t.hipErrorNotReady,)


@body
def hipEventElapsedTime(a: Event, b: Event) -> tuple:
    for ev in (a, b):
        _refuse_captured_event(ev, "hipEventElapsedTime")
        if ev.flags & ht.CONSTANTS["hipEventDisableTiming"]:
            raise HipError("hipErrorInvalidHandle", "an event created with hipEventDisableTiming")
        if ev.stream is None:
            raise HipError("hipErrorInvalidHandle", "an event that was never recorded")
    if a.timestamp_us is None or b.timestamp_us is None:
        raise HipError("hipErrorNotReady", "an event has not completed yet")
    return (SUCCESS, (b.timestamp_us - a.timestamp_us) / 1000.0)


@body
def hipEventRecordWithFlags(ev: Event, s: Stream, flags: int) -> None:
    if int(flags) not in (0, 1):   # hipEventRecordDefault, hipEventRecordExternal
        raise HipError("hipErrorInvalidValue", f"hipEventRecordWithFlags: unknown flags {flags}")
    _dev().record_event(ev, s)


body.table({
    "hipEventDestroy": lambda ev: _dev().forget("events", ev),
    "hipEventCreate": lambda: (SUCCESS, keep("event", lambda h: Event(h, 0))),
    "hipEventCreateWithFlags": lambda flags: (SUCCESS, keep("event", lambda h: Event(h, int(flags)))),
})
