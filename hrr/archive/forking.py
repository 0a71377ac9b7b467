"""Fork safety for writers: locks are taken around fork, and a child's inherited writers go inert.

One set of ``os.register_at_fork`` handlers is registered when this module is imported.
Order (the contract for other modules' fork locks):

* ``before``: first every lock given to :func:`register_fork_lock`, in the order they were
  registered, then each live writer's locks (io lock, then state lock).
* ``after_in_parent`` / ``after_in_child``: the same locks released in the reverse order;
  in the child every inherited writer is then made inert (drops its buffer, writes nothing).

A lock that code may hold while calling into a writer (the pinned-snapshot tracking lock
is held while it calls ``put_blob``) must therefore be taken before the writer's locks:
pass it to :func:`register_fork_lock` instead of registering a handler of your own. (If you
do register your own handler, do it after importing ``hrr.archive``: Python runs ``before``
handlers in reverse registration order, so a later handler's lock is taken first.)
"""
from __future__ import annotations

import os
import threading
import weakref
from typing import Any, Protocol


class _Lock(Protocol):
    def acquire(self, blocking: bool = ..., timeout: float = ...) -> bool: ...
    def release(self) -> None: ...


_external: list[_Lock] = []
_writers: "weakref.WeakSet[Any]" = weakref.WeakSet()
_registry_lock = threading.Lock()
_held: list[_Lock] = []        # what `before` took, in order (touched only by the forking thread)


def register_fork_lock(lock: _Lock) -> None:
    """Have every fork take ``lock`` before any writer lock (and release it after, in both processes)."""
    with _registry_lock:
        if not any(existing is lock for existing in _external):
            _external.append(lock)


def track_writer(writer: Any) -> None:
    """Called by a writer on open: its locks are taken around fork and it goes inert in a child."""
    with _registry_lock:
        _writers.add(writer)


def untrack_writer(writer: Any) -> None:
    """Called by a writer on close."""
    with _registry_lock:
        _writers.discard(writer)


def live_writers() -> list[Any]:
    """The writers open in this process."""
    with _registry_lock:
        return list(_writers)


def _before() -> None:
    _registry_lock.acquire()
    _held.append(_registry_lock)
    for lock in list(_external):
        lock.acquire()
        _held.append(lock)
    for writer in list(_writers):
        for lock in writer._fork_locks():
            lock.acquire()
            _held.append(lock)


def _release_all() -> None:
    while _held:
        _held.pop().release()


def _after_in_parent() -> None:
    _release_all()


def _after_in_child() -> None:
    writers = list(_writers)
    _release_all()
    for writer in writers:
        writer._become_inert()
    _writers.clear()


os.register_at_fork(before=_before, after_in_parent=_after_in_parent, after_in_child=_after_in_child)
