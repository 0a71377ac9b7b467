"""fork() under capture while another thread is inside a recorded HIP call: every lock the
child needs is taken by the fork handler, so the child records its own calls and exits."""
from __future__ import annotations

import threading

import attrs
import pytest
from forkcheck import HeldLock, run_child

from hrr.archive import forking, open_archive
from hrr.backends import load_backend
from hrr.backends.sim import device as sim_device
from hrr.capture.session import CaptureSession
from hrr.config import config


@pytest.fixture
def session(tmp_path):
    be = load_backend("sim")
    be.reset_device()
    cfg = attrs.evolve(config(), backend="sim", content_mode="content")
    s = CaptureSession(be, cfg, str(tmp_path / "arch"), plugins=["pinned_snapshot"])
    yield s
    s.close()
    be.reset_device()


def _child_records(session) -> int:
    session.after_fork_in_child()      # what activate() registers with os.register_at_fork
    hip = session.hip
    err, p = hip.hipMalloc(64)
    ok = int(err) == 0 and int(hip.hipMemset(p, 1, 64)[0]) == 0 and int(hip.hipFree(p)[0]) == 0
    session.close()
    return 0 if ok else 3


def _child_archive(tmp_path, parent_pid):
    procs = [p for p in open_archive(str(tmp_path / "arch")).processes if p.pid != parent_pid]
    assert len(procs) == 1
    return procs[0]


@pytest.mark.parametrize("which", ["device", "record"])
def test_fork_while_a_lock_is_held_under_capture(session, tmp_path, which):
    assert int(session.hip.hipInit(0)[0]) == 0
    # Records are numbered and appended under the writer's lock (no session lock of their own).
    lock = sim_device.current().lock if which == "device" else session.writer._lock
    with HeldLock(lock):
        code = run_child(lambda: _child_records(session))
    assert code == 0, f"the child hung on the {which} lock" if code is None else code
    child = _child_archive(tmp_path, session._pid)
    assert child.clean
    assert [r.value[2] for r in child.events()] == ["hipMalloc", "hipMemset", "hipFree"]


def test_fork_while_another_thread_is_busy_recording(session, tmp_path):
    hip = session.hip
    stop = threading.Event()
    started = threading.Event()

    def busy():
        while not stop.is_set():
            err, p = hip.hipMalloc(64)
            hip.hipMemset(p, 1, 64)
            hip.hipFree(p)
            started.set()
    t = threading.Thread(target=busy)
    t.start()
    try:
        assert started.wait(30)
        codes = [run_child(lambda: _child_records(session)) for _ in range(5)]
    finally:
        stop.set()
        t.join(30)
    assert codes == [0] * 5


def test_lock_ranks_order_the_fork_handler(session):
    """The documented order: plugin locks, then the backend's device lock, then the
    session's lock (writers' locks, records' lock among them, come after all of them)."""
    ranks = {id(lock): rank for rank, lock in forking.fork_locks()}
    order = [rank for rank, _ in forking.fork_locks()]
    assert order == sorted(order)
    assert ranks[id(session.allocations.lock)] == forking.RANK_SESSION
    # plugins subscribe to calls once they have work, under their own (plugin-rank) locks
    assert ranks[id(session.ctx.watch_lock)] == forking.RANK_SESSION
    assert id(session.writer._lock) not in ranks   # taken in the writers' phase, after every rank
    tracker = session.ctx.shared["pinned_snapshot"].tracker.lock
    assert ranks[id(tracker)] == forking.RANK_PLUGIN


def test_closed_session_no_longer_takes_its_lock(tmp_path):
    be = load_backend("sim")
    cfg = attrs.evolve(config(), backend="sim", content_mode="content")
    s = CaptureSession(be, cfg, str(tmp_path / "arch"), plugins=[])
    assert any(lock is s.allocations.lock for _, lock in forking.fork_locks())
    assert any(lock is s.ctx.watch_lock for _, lock in forking.fork_locks())
    s.close()
    assert not any(lock is s.allocations.lock for _, lock in forking.fork_locks())
    assert not any(lock is s.ctx.watch_lock for _, lock in forking.fork_locks())
