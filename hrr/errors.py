"""The one error hierarchy. Every error a user can see says what was wrong, where
(file, record, offset) and what to do about it."""
from __future__ import annotations


class HrrError(Exception):
    """Base of every error hrr raises on purpose."""

    def __init__(self, what: str, *, where: str | None = None, hint: str | None = None) -> None:
        self.what, self.where, self.hint = what, where, hint
        super().__init__(self.message())

    def message(self) -> str:
        text = self.what
        if self.where:
            text = f"{self.where}: {text}"
        if self.hint:
            text = f"{text} ({self.hint})"
        return text


class UsageError(HrrError):
    """Bad command-line input or configuration."""


class BackendError(HrrError):
    """A backend that cannot be loaded or used here (no driver, no library)."""


class InterpreterError(HrrError):
    """COMMAND's Python interpreter cannot run hrr (hrr is not installed in it)."""


class PluginError(HrrError):
    """A plugin that cannot be found, loaded or validated."""


class ArchiveError(HrrError):
    """An archive that cannot be read or written."""


class FormatError(ArchiveError):
    """An archive whose bytes are not the format hrr writes: bad magic, version, checksum."""


class LimitExceeded(ArchiveError):
    """An archive that asks for more than a configured limit allows."""


class BlobError(ArchiveError):
    """A blob that is missing, oversized, or whose content does not match its name."""


class ReplayError(HrrError):
    """A replay that cannot go on."""


class DivergenceError(ReplayError):
    """Replay reached a state that differs from the recording early enough to abort."""


class EventRefused(Exception):
    """Raised by a replay stage to end an event before it runs; replay counts it under
    ``category`` and names it with ``reason`` (one line) in the summary."""

    def __init__(self, reason: str, *, category: str = "refused") -> None:
        super().__init__(reason)
        self.reason, self.category = reason, category
