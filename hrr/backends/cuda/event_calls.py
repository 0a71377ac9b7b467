"""The cuda backend's bodies of the event calls (catalogue family ``event``): each is
one CUDA runtime call (``onecall.one_call``), registered with ``body.table``.
"""
from __future__ import annotations

from hrr import hiptypes as ht
from hrr.backends.bodies import Bodies
from hrr.backends.cuda.onecall import new as _new
from hrr.backends.cuda.onecall import one_call as C

body = Bodies("event")

# Its name, how each output converts.
body.table({
    "hipEventCreate": C("rt.cudaEventCreate", _new(ht.ihipEvent_t)),
    "hipEventCreateWithFlags": C("rt.cudaEventCreateWithFlags", _new(ht.ihipEvent_t)),
    "hipEventRecord": C("rt.cudaEventRecord"),
    "hipEventRecordWithFlags": C("rt.cudaEventRecordWithFlags"),
    "hipEventSynchronize": C("rt.cudaEventSynchronize"),
    "hipEventQuery": C("rt.cudaEventQuery"),
    "hipEventElapsedTime": C("rt.cudaEventElapsedTime", lambda v: float(v or 0.0)),
    "hipEventDestroy": C("rt.cudaEventDestroy"),
})
