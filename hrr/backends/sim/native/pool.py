"""One native launch spread over several kernel workers (``HRR_SIM_WORKERS``).

A launch of B blocks on W workers runs as W contiguous ranges of linear block indices (x
fastest), each on its own worker, at the same time. The workers are worker.py's, each
sandboxed and checked as one alone is; they map the same device memory, pinned memory and
host windows (registered bytes are copied in once before the launch and back once after it),
and each maps the kernel images' private pages (the runtime's state and ``__shared__``:
``elfimage.NativeImage.private``) as its own memory. One deadline holds for all of them.

What comes back is what one worker would report for a program whose blocks do not race:
printf output in block order, whatever order the ranges finish in; the outcome of the lowest
range that did not finish. A failure stops the ranges above it at once; the ranges below it
run to their end, since one of them may fail first in block order.
"""
from __future__ import annotations

import concurrent.futures
import os
import threading
import time
import weakref
from typing import Callable, Sequence

import attrs

from hrr.backends.sim.native import abi
from hrr.backends.sim.native.arena import Arena
from hrr.backends.sim.native.windows import HostWindows
from hrr.backends.sim.native.worker import PRINTF_CAP, KernelWorker, LaunchOutcome, WorkerError, launch_command
from hrr.config import SIM_WORKERS_ENV, SIM_WORKERS_MIN_THREADS_ENV, config
from hrr.errors import UsageError

#: a launch is split only where each worker gets at least this many threads: below it, the
#: round trips to more workers cost more than the blocks they would take over
DEFAULT_MIN_THREADS = 16384
MAX_WORKERS = 256


@attrs.frozen
class Settings:
    """How many workers a launch may use, and the threads each must get before it is split."""

    workers: int = 1
    min_threads: int = DEFAULT_MIN_THREADS


def available_cpus() -> int:
    """The CPUs this process may run on (``HRR_SIM_WORKERS=auto``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def parse_workers(text: str | None) -> int:
    """``HRR_SIM_WORKERS``: unset or empty 1, ``auto`` or 0 one per CPU, else 1..256."""
    if text is None or not text.strip():
        return 1
    value = text.strip().lower()
    hint = f"set it to a whole number from 1 (the default) to {MAX_WORKERS}, or to 0 or auto for one per CPU"
    if value in ("auto", "0"):
        return min(available_cpus(), MAX_WORKERS)
    try:
        n = int(value)
    except ValueError:
        raise UsageError(f"{SIM_WORKERS_ENV}={text!r} is not a number of kernel workers", hint=hint) from None
    if not 1 <= n <= MAX_WORKERS:
        raise UsageError(f"{SIM_WORKERS_ENV}={text!r} is out of range", hint=hint)
    return n


def parse_min_threads(text: str | None) -> int:
    """``HRR_SIM_WORKERS_MIN_THREADS``: unset or empty the default, else a positive whole number."""
    if text is None or not text.strip():
        return DEFAULT_MIN_THREADS
    try:
        n = int(text.strip())
    except ValueError:
        n = 0
    if n < 1:
        raise UsageError(f"{SIM_WORKERS_MIN_THREADS_ENV}={text!r} is not a positive number of threads",
                         hint=f"set it to a whole number of threads per worker (default {DEFAULT_MIN_THREADS})")
    return n


def settings() -> Settings:
    """This process's settings (UsageError naming a bad value)."""
    cfg = config()
    return Settings(parse_workers(cfg.sim_workers), parse_min_threads(cfg.sim_workers_min_threads))


def split(blocks: int, threads_per_block: int, workers: int, min_threads: int) -> list[tuple[int, int]]:
    """The block ranges [begin, end) of a launch: as many as ``workers`` allows, no more than
    the blocks, each with at least ``min_threads`` threads; sizes differ by one at most (the
    first ranges get the extra blocks)."""
    n = max(1, min(workers, blocks, blocks * threads_per_block // max(1, min_threads)))
    size, extra = divmod(blocks, n)
    ranges, begin = [], 0
    for i in range(n):
        end = begin + size + (1 if i < extra else 0)
        ranges.append((begin, end))
        begin = end
    return ranges


def _failed(out: LaunchOutcome) -> bool:
    return out.fault is not None or out.status != abi.OK


def merge(outcomes: Sequence[LaunchOutcome]) -> LaunchOutcome:
    """The launch's outcome from its ranges' (in block order): printf joined in block order
    (up to the cap one worker has); the lowest failed range's outcome, with the output of the
    ranges up to it where it returned (a signal ends a worker with its output, as alone)."""
    first = next((i for i, out in enumerate(outcomes) if _failed(out)), None)
    if first is None:
        return LaunchOutcome(abi.OK, b"".join(out.printf for out in outcomes)[:PRINTF_CAP])
    bad = outcomes[first]
    if bad.fault is not None:
        return bad
    return attrs.evolve(bad, printf=b"".join(out.printf for out in outcomes[:first + 1])[:PRINTF_CAP])


_STOPPED = LaunchOutcome(-1, b"", "stopped: a lower block range of the launch failed")

_pools: "weakref.WeakSet[WorkerPool]" = weakref.WeakSet()


class WorkerPool:
    """A device's kernel workers (one, or ``Settings.workers``): launches run on the first, or
    split over several. One launch at a time (thread-safe)."""

    def __init__(self, device_arena: Arena | None, pinned_arena: Arena | None, sandbox: bool = True,
                 registered: Callable[[], list[tuple[int, int]]] | None = None,
                 private: Callable[[], list[tuple[int, int]]] | None = None,
                 setup: Settings = Settings()) -> None:
        """``registered``: the program's registered host ranges now; ``private``: the loaded
        images' private pages now, (address, bytes) each."""
        self.settings = setup
        self._registered, self._private = registered, private
        self._windows = HostWindows()
        self._workers = [KernelWorker(device_arena, pinned_arena, sandbox, windows=self._windows)
                         for _ in range(setup.workers)]
        self._lock = threading.Lock()
        self._threads: concurrent.futures.ThreadPoolExecutor | None = None
        _pools.add(self)

    @property
    def pid(self) -> int | None:
        """The first worker's process id (None when it does not run)."""
        return self._workers[0].pid

    @property
    def pids(self) -> list[int]:
        """The process ids of the workers that run now."""
        return [w.pid for w in self._workers if w.pid is not None]

    def launch(self, launch_fn: int, kernel: int, kernargs: bytes, grid: Sequence[int], block: Sequence[int],
               dyn_shared: int, timeout: float | None = None, splittable: bool = True) -> LaunchOutcome:
        """Run a launch (see ``KernelWorker.launch``), over several workers where the settings
        and its size allow and its image has private pages (``splittable``)."""
        blocks = grid[0] * grid[1] * grid[2]
        ranges = [(0, 0)]   # every block, on one worker: as before workers were pooled
        if splittable and len(self._workers) > 1:
            ranges = split(blocks, block[0] * block[1] * block[2], len(self._workers), self.settings.min_threads)
            if len(ranges) == 1:
                ranges = [(0, 0)]
        commands = [launch_command(launch_fn, kernel, kernargs, grid, block, dyn_shared, r) for r in ranges]
        with self._lock:
            self._windows.update(self._registered() if self._registered is not None else [])
            if len(self._workers) > 1 and self._private is not None:
                private = tuple(sorted(self._private()))
                for w in self._workers:
                    w.private = private
            deadline = None if timeout is None else time.monotonic() + timeout
            self._windows.copy_in()
            try:
                if len(commands) == 1:
                    return self._workers[0].run(commands[0], deadline, timeout)
                return self._spread(commands, deadline, timeout)
            finally:
                self._windows.copy_out()

    def _spread(self, commands: list[bytes], deadline: float | None, timeout: float | None) -> LaunchOutcome:
        """Run ``commands[i]`` on worker i, all at once (the first on this thread); merged."""
        n = len(commands)
        outcomes: list[LaunchOutcome] = [_STOPPED] * n
        running = [False] * n
        state = threading.Lock()
        lowest_failed = [n]

        def one(i: int) -> None:
            with state:
                if i > lowest_failed[0]:
                    return   # a lower range failed: this one's result would not count
                running[i] = True
            try:
                out = self._workers[i].run(commands[i], deadline, timeout)
            except WorkerError:
                with state:
                    if i > lowest_failed[0]:
                        return   # stopped while it started, since a lower range failed
                raise
            finally:
                with state:
                    running[i] = False
            outcomes[i] = out
            if _failed(out):
                with state:
                    lowest_failed[0] = min(lowest_failed[0], i)
                    above = [j for j in range(i + 1, n) if running[j]]
                for j in above:
                    self._workers[j].kill()

        if self._threads is None:
            self._threads = concurrent.futures.ThreadPoolExecutor(len(self._workers) - 1,
                                                                  thread_name_prefix="hrr-sim-worker")
        futures = [self._threads.submit(one, i) for i in range(1, n)]
        try:
            one(0)
        except BaseException:
            for w in self._workers[1:n]:
                w.kill()
            concurrent.futures.wait(futures)
            raise
        concurrent.futures.wait(futures)
        for f in futures:
            f.result()   # a worker that could not start (WorkerError)
        return merge(outcomes)

    def close(self) -> None:
        """Stop every worker (a later launch starts them again)."""
        with self._lock:
            for w in self._workers:
                w.close()

    def _forget_after_fork(self) -> None:
        """In a forked child (after each worker forgot its parent's process): fresh shared
        windows, lock and threads."""
        self._lock = threading.Lock()
        self._threads = None
        self._windows = HostWindows()
        for w in self._workers:
            w.use_windows(self._windows)


def _forget_all_after_fork() -> None:
    for pool in list(_pools):
        pool._forget_after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_all_after_fork)
