"""Replaying each recorded thread's calls on a thread of its own, in global order.

Calls run one at a time in the recording's sequence order; only the thread identity is
kept, because HIP state such as the thread-local capture mode belongs to a thread.
"""
from __future__ import annotations

import queue
import threading
from typing import Any, Callable

from hrr.errors import LimitExceeded


class _Worker:
    def __init__(self) -> None:
        self.jobs: queue.Queue = queue.Queue()
        self.thread = threading.Thread(target=self._loop, name="hrr-replay-thread", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            fn, done, box = job
            try:
                box.append((True, fn()))
            except BaseException as exc:  # noqa: BLE001 - re-raised on the dispatching thread
                box.append((False, exc))
            done.set()


class ThreadRouter:
    """Runs each job on the replay thread that stands for its recorded thread id."""

    def __init__(self, max_threads: int) -> None:
        self.max_threads = max_threads
        # The recorded thread the dispatching thread stands for (the first one seen): a
        # caller runs that thread's jobs inline, with no call through here.
        self.first: int | None = None
        self._workers: dict[int, _Worker] = {}

    def run(self, tid: int, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` on the replay thread of recorded thread ``tid``; its result or exception."""
        if self.first is None:
            self.first = tid
        if tid == self.first:
            return fn()
        worker = self._workers.get(tid)
        if worker is None:
            if len(self._workers) + 1 >= self.max_threads:
                raise LimitExceeded(f"thread {tid} would be replay thread {len(self._workers) + 2}, over "
                                    f"--max-threads ({self.max_threads}): its records are not replayed")
            worker = self._workers[tid] = _Worker()
        done = threading.Event()
        box: list[Any] = []
        worker.jobs.put((fn, done, box))
        done.wait()
        ok, value = box[0]
        if not ok:
            raise value
        return value

    def close(self) -> None:
        for worker in self._workers.values():
            worker.jobs.put(None)
        self._workers.clear()
