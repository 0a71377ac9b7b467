"""The privacy tier, on by default: capture is metadata-only unless content is asked for.

With this plugin running, no byte the program computed or read reaches the archive
(the ``content`` kinds of ``hrr.inventory``) unless ``HIP_HRR_CAPTURE_CONTENT`` is set
or ``hrr capture --content`` is given. Sizes, shapes, addresses, kernel names and the
call sequence remain. PRIVACY.md lists every kind of data an archive can hold.
"""
from __future__ import annotations

from typing import Any

from hrr.pipeline import CONTENT_KINDS, CaptureContext, hookimpl, hrr_version



class PrivacyPlugin:
    """Vetoes every content kind unless the user asked for content."""

    __version__ = hrr_version()  # built-ins ship with hrr and carry its version

    @staticmethod
    def content_requested(config: Any) -> bool:
        """Whether the user asked for content (``--content`` or HIP_HRR_CAPTURE_CONTENT)."""
        return config.content_mode == "content" or (
            config.content_mode is None and config.capture_content_env)

    @hookimpl
    def hrr_capture_content_allowed(self, ctx: CaptureContext, kind: str) -> bool | None:
        if kind not in CONTENT_KINDS:
            return None
        return self.content_requested(ctx.config)

    @hookimpl
    def hrr_capture_manifest(self, ctx: CaptureContext) -> dict:
        requested = self.content_requested(ctx.config)
        return {"privacy": {
            "content_requested": requested,
            "why": ("content was asked for (--content or HIP_HRR_CAPTURE_CONTENT)" if requested
                    else "metadata-only by default: set HIP_HRR_CAPTURE_CONTENT=1 or pass --content "
                         "to record the bytes that replay checks"),
        }}


plugin = PrivacyPlugin
