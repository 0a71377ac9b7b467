"""The plugin pipeline: hookspecs, the plugin manager, the capture and replay pipelines
and the contexts their stages share."""
from hrr.pipeline.hookspecs import hookimpl

__all__ = ["hookimpl"]
