"""Where a native kernel may run: in the sandboxed worker, or unsandboxed when that is safe.

A program's own kernels (``hrr run``, ``hrr capture``) are the user's code: they run
sandboxed where the platform allows and unsandboxed where it does not. An archive's
kernels (``hrr replay``) are a stranger's code: they run only in the sandbox, unless the
user says with ``--trust-kernels`` that they trust the archive.
"""
from __future__ import annotations

import contextlib
from typing import Iterator

import attrs


class KernelsRefused(Exception):
    """An archive's native kernels cannot run here without the user's explicit trust."""


@attrs.define
class _Origin:
    from_archive: bool = False
    trusted: bool = False


_ORIGIN = _Origin()


@contextlib.contextmanager
def archive_kernels(trusted: bool) -> Iterator[None]:
    """While replaying an archive: its kernels are untrusted unless ``trusted``."""
    saved = attrs.evolve(_ORIGIN)
    _ORIGIN.from_archive, _ORIGIN.trusted = True, trusted
    try:
        yield
    finally:
        _ORIGIN.from_archive, _ORIGIN.trusted = saved.from_archive, saved.trusted


def use_sandbox(support: tuple[bool, str]) -> bool:
    """Whether to run kernels sandboxed, given ``(sandbox available, why not)``;
    KernelsRefused when an archive's kernels would have to run unsandboxed untrusted."""
    available, why = support
    if available:
        return True
    if _ORIGIN.from_archive and not _ORIGIN.trusted:
        raise KernelsRefused(
            f"this archive's kernels are HIP C++ that replay would compile and run natively, and the "
            f"sandbox that contains them is not available here ({why}); replay them only with "
            f"--trust-kernels, if you trust where the archive came from")
    return False
