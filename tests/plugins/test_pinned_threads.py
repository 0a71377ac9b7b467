"""Threads: 8 threads × 1500 calls, each thread's kernels reading pinned memory that the
thread rewrites between launches. Every call is recorded exactly once (sequence numbers
unique and dense; each thread's calls, in order, are its events) and replay --strict
matches byte for byte.

16 and 32 threads are checked by hand: ``python tests/plugins/test_pinned_threads.py 32 1500``.
"""
from __future__ import annotations

import collections
import ctypes
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from pinned_helpers import Kernels, capture, d2h, events, pinned, pinned_array, records, replay, text  # noqa: E402

N = 256          # u32 per pinned buffer (1 KiB)
BOTH = ["pinned_snapshot", "graph_capture"]


def make_app(threads: int, calls: int):
    """The app, and the dict it fills: thread ident → the APIs it called, in order."""
    made: dict[int, list[str]] = {}
    errors: list[BaseException] = []

    def app(hip, be, session):
        k = Kernels(hip, be)
        start = threading.Barrier(threads)

        def work(t: int) -> None:
            mine: list[str] = []

            def call(api, *args):
                mine.append(api)
                return getattr(hip, api)(*args)
            try:
                stream = None
                if t % 2:                         # odd threads: a stream of their own
                    err, stream = call("hipStreamCreate")
                    assert err == 0
                err, p = call("hipHostMalloc", N * 4, 0)
                assert err == 0
                err, d = call("hipMalloc", 4)
                assert err == 0
                view = pinned_array(p, N)
                out = np.zeros(1, np.uint32)
                start.wait()
                i = 0
                last = 1 if stream is not None else 0        # hipStreamDestroy at the end
                while len(mine) + 2 + last <= calls:
                    # New bytes every other launch (the others reuse the last record),
                    # cycling through 5 contents so that blobs are shared, not rewritten.
                    view[:] = np.arange(N, dtype=np.uint32) * (t + 1) + (i // 2) % 5 * 1000
                    err = call("hipModuleLaunchKernel", k.sum_u32, 1, 1, 1, 64, 1, 1, 0, stream,
                               None, (d, p, ctypes.c_uint32(N)))[0]
                    assert err == 0
                    err = call("hipMemcpy", out, d, 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost)[0]
                    assert err == 0
                    assert int(out[0]) == int(view.sum(dtype=np.uint64) % (1 << 32))
                    i += 1
                if stream is not None:
                    assert call("hipStreamDestroy", stream)[0] == 0
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                errors.append(exc)
                start.abort()
            made[threading.get_ident()] = mine

        ts = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
        for th in ts:
            th.start()
        for th in ts:
            th.join()
    return app, made, errors


def check(root, threads: int, calls: int) -> dict:
    """Capture ``threads`` × ``calls`` into ``root``, replay it strictly; returns figures."""
    app, made, errors = make_app(threads, calls)
    capture(root, app, plugins=BOTH)
    assert not errors, errors
    assert len(made) == threads and all(len(m) == calls for m in made.values())

    evs = events(root)
    seqs = sorted(ev[0] for ev in evs)
    assert seqs == list(range(len(evs))), "sequence numbers are not unique and dense"
    by_tid: dict[int, list[str]] = collections.defaultdict(list)
    for ev in sorted(evs, key=lambda e: e[0]):
        by_tid[ev[1]].append(ev[2])
    for tid, apis in made.items():
        assert by_tid.pop(tid) == apis, f"thread {tid}: its events are not its calls"
    assert len(by_tid) == 1  # the main thread (module load), nothing else

    n_records = len(records(root))
    result = replay(root, strict=True)
    assert result.exit_code == 0, text(result)
    (proc,) = result.processes
    d2h_checks = threads * ((calls - 4) // 2)  # two calls a round; ≤ 4 others a thread
    assert proc.checks_passed >= d2h_checks and proc.checks_failed == 0
    assert pinned(result).restored == n_records and pinned(result).refused == 0
    return {"events": len(evs), "records": n_records, "d2h_checks": proc.checks_passed}


@pytest.mark.slow
def test_eight_threads_thousands_of_calls(tmp_path):
    figures = check(tmp_path / "arch", 8, 1500)
    assert figures["events"] >= 8 * 1500
    # Each thread's bytes change every other launch: about half the launches need a record.
    assert 8 * 1500 // 4 - 16 <= figures["records"] <= 8 * 1500 // 2


def test_launch_that_returns_first_does_not_lean_on_one_still_in_flight(tmp_path, monkeypatch):
    """Two threads launch over the same pinned bytes on the null stream. Thread A
    snapshots first, then (held here) reaches the device only after thread B's launch
    and copy have returned. B's launch comes first in the archive, so it must carry its
    own record: A's record, still in flight when B snapshotted, is restored after it."""
    from hrr.backends import load_backend

    real = load_backend("sim").hip.hipModuleLaunchKernel
    a_snapshotted, b_done = threading.Event(), threading.Event()
    names: dict[int, str] = {}

    def held_launch(*args):
        if names.get(threading.get_ident()) == "A":
            a_snapshotted.set()
            assert b_done.wait(60), "thread B never finished"
        return real(*args)
    monkeypatch.setattr(load_backend("sim").hip, "hipModuleLaunchKernel", held_launch)
    errors: list[BaseException] = []

    def app(hip, be, session):
        k = Kernels(hip, be)
        _err, p = hip.hipHostMalloc(N * 4, 0)
        pinned_array(p, N)[:] = np.arange(N, dtype=np.uint32) + 40

        def work(name: str) -> None:
            names[threading.get_ident()] = name
            try:
                _err, d = hip.hipMalloc(4)
                if name == "B":
                    assert a_snapshotted.wait(60), "thread A never launched"
                k.sum(d, p, N)
                d2h(hip, d, 4)
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                errors.append(exc)
            finally:
                if name == "B":
                    b_done.set()
        ts = [threading.Thread(target=work, args=(n,)) for n in "AB"]
        for th in ts:
            th.start()
        for th in ts:
            th.join()

    root = tmp_path / "arch"
    capture(root, app, plugins=BOTH)
    assert not errors, errors
    launches = [ev for ev in events(root) if ev[2] == "hipModuleLaunchKernel"]
    assert [names[ev[1]] for ev in launches] == ["B", "A"]    # B's launch returned first
    result = replay(root, strict=True)
    assert result.exit_code == 0, text(result)
    assert pinned(result).restored == 2 and pinned(result).refused == 0


if __name__ == "__main__":  # manual: python tests/plugins/test_pinned_threads.py THREADS CALLS
    import tempfile
    import time

    nthreads, ncalls = int(sys.argv[1]), int(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        print(check(Path(tmp) / "arch", nthreads, ncalls), f"{time.perf_counter() - t0:.1f} s")
