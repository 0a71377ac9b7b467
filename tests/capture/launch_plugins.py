"""A plugin whose launch hook wants every launch (for test_capture_fast)."""
from __future__ import annotations

from hrr.pipeline import hookimpl


class EveryLaunch:
    __version__ = "1.0"

    def __init__(self) -> None:
        self.kernels: list[str] = []

    @hookimpl
    def hrr_capture_launch(self, ctx, launch):
        self.kernels.append(launch.kernel)
