"""hrr: HIP Record & Replay for Python."""
__version__ = "0.1.0"
