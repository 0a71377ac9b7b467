"""hrr-callcounter: an example third-party hrr plugin.

Capture: numbers every kernel launch and attaches ``{"n": <launch number>, "kernel": name}``
to the launch event (``hrr_capture_launch``), and adds the total to the manifest.
Replay: counts the launch records it finds on the events it replays and prints one
summary line: ``callcounter: N launches recorded, M replayed``.

It depends on nothing but pluggy's marker for the ``hrr`` project, so it imports no hrr
internals (``hrr.pipeline.hookimpl`` would do as well).
"""
from __future__ import annotations

import pluggy

__version__ = "0.3.1"
hookimpl = pluggy.HookimplMarker("hrr")
NAME = "callcounter"


class CallCounter:
    """One instance per pipeline (the entry point names the class)."""

    __version__ = __version__

    def __init__(self) -> None:
        self.launches = 0
        self.replayed = 0
        self.recorded = 0

    # ---------------------------------------------------------------- capture
    @hookimpl
    def hrr_capture_launch(self, ctx, launch):
        self.launches += 1
        return {"n": self.launches, "kernel": launch.kernel}

    @hookimpl
    def hrr_capture_manifest(self, ctx):
        return {NAME: {"launches": self.launches}}

    @hookimpl
    def hrr_capture_fork_child(self, ctx):
        self.launches = 0

    # ---------------------------------------------------------------- replay
    @hookimpl
    def hrr_replay_start(self, ctx):
        self.recorded = int((ctx.manifest.get(NAME) or {}).get("launches", 0))

    @hookimpl
    def hrr_replay_before_event(self, ctx, event, stream):
        if event.records(NAME):
            self.replayed += 1

    @hookimpl
    def hrr_replay_summary(self, ctx):
        return [f"{NAME}: {self.recorded} launches recorded, {self.replayed} replayed"]
