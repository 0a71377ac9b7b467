"""Fork safety: every lock a forked child can need is taken around fork, in one fixed order.

One set of ``os.register_at_fork`` handlers is registered when this module is imported.
A fork made while another thread holds a lock would leave that lock held for ever in the
child (the holder does not exist there), so the child would hang at its first use. The
``before`` handler therefore takes every registered lock, waiting for other threads to
leave them, so that nothing is held mid-update when the process is copied.

Order (the contract for other modules' fork locks): ascending *rank*, registration order
within a rank, then every live writer's locks (io lock, then state lock):

====================  =====  ==========================================================
rank                  value  locks
====================  =====  ==========================================================
``RANK_PLUGIN``         100  plugin state (the pinned-snapshot tracking lock): held
                             while calling the backend and the writer
``RANK_BACKEND``        200  the backend's device lock (sim): held while host functions
                             run, which may record calls
``RANK_SESSION``        300  the capture session's allocation table lock
(writers)                    each live writer's io lock, then its state lock (records
                             are numbered and appended under the state lock)
====================  =====  ==========================================================

A lock that code may hold while taking another lock must have the lower rank, so the
``before`` handler never waits for a lock whose holder waits for one it already took.
``after_in_parent`` / ``after_in_child`` release them in reverse order; in the child every
inherited writer is then made inert (drops its buffer, writes nothing), and each
registered ``in_child`` callback runs (to rebuild what a vanished thread left behind,
e.g. a condition variable's waiter list). A lock object may instead offer its own
``acquire``/``release`` (the sim registers a guard for whichever device is current).
"""
from __future__ import annotations

import os
import threading
import weakref
from typing import Any, Callable, Protocol

RANK_PLUGIN = 100
RANK_BACKEND = 200
RANK_SESSION = 300


class _Lock(Protocol):
    def acquire(self, blocking: bool = ..., timeout: float = ...) -> bool: ...
    def release(self) -> None: ...


# (rank, registration number, lock, in_child); kept sorted by (rank, number).
_external: list[tuple[int, int, _Lock, "Callable[[], None] | None"]] = []
_counter = 0
_writers: "weakref.WeakSet[Any]" = weakref.WeakSet()
_registry_lock = threading.Lock()
_held: list[_Lock] = []        # what `before` took, in order (touched only by the forking thread)


def register_fork_lock(lock: _Lock, rank: int = RANK_PLUGIN, *,
                       in_child: "Callable[[], None] | None" = None) -> None:
    """Have every fork take ``lock`` (in ``rank`` order, before any writer lock) and release
    it after, in both processes; ``in_child`` then runs in the child. Registering the same
    lock again changes nothing."""
    global _counter
    with _registry_lock:
        if any(entry[2] is lock for entry in _external):
            return
        _counter += 1
        _external.append((rank, _counter, lock, in_child))
        _external.sort(key=lambda entry: (entry[0], entry[1]))


def unregister_fork_lock(lock: _Lock) -> None:
    """Stop taking ``lock`` around fork (its owner is closed)."""
    with _registry_lock:
        _external[:] = [entry for entry in _external if entry[2] is not lock]


def fork_locks() -> list[tuple[int, _Lock]]:
    """The registered locks as (rank, lock), in the order a fork takes them."""
    with _registry_lock:
        return [(entry[0], entry[2]) for entry in _external]


def track_writer(writer: Any) -> None:
    """Called by a writer on open: its locks are taken around fork and it goes inert in a child."""
    with _registry_lock:
        _writers.add(writer)


def untrack_writer(writer: Any) -> None:
    """Called by a writer on close."""
    with _registry_lock:
        _writers.discard(writer)


def _before() -> None:
    _registry_lock.acquire()
    _held.append(_registry_lock)
    for _rank, _n, lock, _in_child in list(_external):
        lock.acquire()
        _held.append(lock)
    for writer in list(_writers):
        for lock in writer._fork_locks():
            lock.acquire()
            _held.append(lock)
        writer._at_fork()    # the open batch is closed at every fork


def _release_all() -> None:
    while _held:
        _held.pop().release()


def _after_in_parent() -> None:
    _release_all()


def _after_in_child() -> None:
    writers = list(_writers)
    callbacks = [entry[3] for entry in _external if entry[3] is not None]
    _release_all()
    for writer in writers:
        writer._become_inert()
    _writers.clear()
    for callback in callbacks:
        callback()


os.register_at_fork(before=_before, after_in_parent=_after_in_parent, after_in_child=_after_in_child)
