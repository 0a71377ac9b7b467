"""Where a native kernel may run: in the sandboxed worker, or unsandboxed when that is safe.

A program's own kernels (``hrr run``, ``hrr capture``) are the user's code: they run
sandboxed where the platform allows and unsandboxed where it does not. An archive's
kernels (``hrr replay``) are a stranger's code: they run only in the sandbox, unless the
user says with ``--trust-kernels`` that they trust the archive. The same holds for the
compiler that builds them (compilebox.py's sandbox).

While replay runs it also says what a compile may use: the time left of ``--max-seconds``
and the room left in ``--max-host-bytes`` (the compiler's memory and output, the image).
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

import attrs

from hrr.errors import EventRefused


class KernelsRefused(Exception):
    """An archive's native kernels cannot run here without the user's explicit trust."""


class HostBudgetExceeded(Exception):
    """What a native module needs is over the host-memory budget (``--max-host-bytes``)."""


@attrs.define
class _Origin:
    from_archive: bool = False
    trusted: bool = False
    #: replay's host-memory budget (``cap``, ``used``, ``charge(n, what)``, ``release(n)``), or None
    budget: Any = None
    #: seconds left of replay's ``--max-seconds``, or None
    seconds_left: Callable[[], float] | None = None


_ORIGIN = _Origin()


@contextlib.contextmanager
def archive_kernels(trusted: bool, budget: Any = None,
                    seconds_left: Callable[[], float] | None = None) -> Iterator[None]:
    """While replaying an archive: its kernels are untrusted unless ``trusted``; compiles and
    images are bounded by ``budget`` and ``seconds_left`` when given."""
    saved = attrs.evolve(_ORIGIN)
    _ORIGIN.from_archive, _ORIGIN.trusted = True, trusted
    _ORIGIN.budget, _ORIGIN.seconds_left = budget, seconds_left
    try:
        yield
    finally:
        _ORIGIN.from_archive, _ORIGIN.trusted = saved.from_archive, saved.trusted
        _ORIGIN.budget, _ORIGIN.seconds_left = saved.budget, saved.seconds_left


def compile_sandbox(support: tuple[str | None, str]) -> str | None:
    """The compiler sandbox to use, given ``(mode or None, what it is or why none)``: the mode;
    None (compile unconfined) for a program's own kernels or a trusted archive's where none
    works; KernelsRefused for an untrusted archive's where none works."""
    mode, why = support
    if mode is not None:
        return mode
    if _ORIGIN.from_archive and not _ORIGIN.trusted:
        raise KernelsRefused(
            f"this archive's kernels are HIP C++ that replay would compile, and no compiler sandbox "
            f"works here ({why}); replay them only with --trust-kernels, if you trust where the "
            f"archive came from")
    return None


def seconds_for(default: float) -> float:
    """How long a compile may take: ``default``, or less when replay's ``--max-seconds`` has less left."""
    if _ORIGIN.seconds_left is None:
        return default
    return max(1.0, min(default, _ORIGIN.seconds_left()))


def host_room(default: int) -> int:
    """How many bytes a compile or an image may use: ``default``, or what ``--max-host-bytes``
    has left when that is less."""
    budget = _ORIGIN.budget
    if budget is None:
        return default
    return max(0, min(default, budget.cap - budget.used))


def charge_host(n: int, what: str) -> Callable[[], None]:
    """Charge ``n`` bytes to replay's host budget (HostBudgetExceeded when over it); returns
    what gives them back."""
    budget = _ORIGIN.budget
    if budget is None:
        return lambda: None
    try:
        budget.charge(n, what)
    except EventRefused as exc:
        raise HostBudgetExceeded(str(exc)) from None
    released: list[bool] = []

    def release() -> None:
        if not released:
            released.append(True)
            budget.release(n)
    return release


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
