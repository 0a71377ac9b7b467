"""The one error every AMD code-object reader raises."""
from __future__ import annotations


class CodeObjectError(ValueError):
    """An AMD code object or offload bundle that cannot be read: ``what`` was wrong,
    ``offset`` is where (a byte offset into the input, or into the decompressed bundle
    when ``where`` says so)."""

    def __init__(self, what: str, offset: int, where: str = "") -> None:
        self.what = what
        self.offset = offset
        self.where = where
        prefix = f"{where}: " if where else ""
        super().__init__(f"{prefix}{what} (at offset {offset:#x})")

    def within(self, where: str, base: int = 0) -> "CodeObjectError":
        """The same error seen from an enclosing container that holds this input at ``base``."""
        inner = f"{where}, {self.where}" if self.where else where
        return CodeObjectError(self.what, base + self.offset, inner)


def check_range(data_len: int, offset: int, size: int, what: str) -> None:
    """Raise unless ``[offset, offset + size)`` lies inside a buffer of ``data_len`` bytes."""
    if offset < 0 or size < 0 or offset > data_len or size > data_len - offset:
        raise CodeObjectError(f"{what} of {size} bytes runs past the end of the input ({data_len} bytes)",
                              offset)
