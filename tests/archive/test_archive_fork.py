"""Fork safety: a child's inherited writer writes nothing; locks are taken in the documented order."""
from __future__ import annotations

import os
import threading

from hrr.archive import Record, open_archive, open_process_writer, register_fork_lock


def _files(root):
    return {os.path.join(dp, f): open(os.path.join(dp, f), "rb").read()
            for dp, _, fs in os.walk(root) for f in fs}


def test_forked_child_writes_nothing_to_the_parents_files(tmp_path):
    root = str(tmp_path / "a")
    w = open_process_writer(root, os.getpid(), {"backend": "sim"})
    w.append(["flushed", 0])
    w.flush()
    w.append(["buffered", 1])          # in the parent's open batch
    w.flush()                          # what the fork handler does in the parent (the batch closed)
    before = _files(root)
    pid = os.fork()
    if pid == 0:                       # child: every call must be a no-op on the parent's files
        code = 0
        try:
            w.append(["child", 2])
            w.flush()
            w.put_blob(b"child blob")
            w.put_code_object(b"child code")
            w.update_manifest(host_snapshots=True)
            w.add_unreplayable("hipFoo", "child")
            w.close(clean_shutdown=True)
            if not w.closed:
                code = 3
        except BaseException:
            code = 2
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert _files(root) == before
    w.append(["after", 3])
    w.close()
    proc = open_archive(root).processes[0]
    assert [r.value for r in proc.events()] == [["flushed", 0], ["buffered", 1], ["after", 3]]
    assert proc.clean


def test_child_can_open_its_own_writer(tmp_path):
    root = str(tmp_path / "a")
    w = open_process_writer(root, os.getpid(), {"backend": "sim"})
    pid = os.fork()
    if pid == 0:
        try:
            c = open_process_writer(root, os.getpid(), {"backend": "sim"})
            c.append(["child"])
            c.close()
            os._exit(0)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    w.append(["parent"])
    w.close()
    archive = open_archive(root)
    assert {p.pid: [r.value for r in p.events()] for p in archive.processes} == {
        os.getpid(): [["parent"]], pid: [["child"]]}
    assert all(p.clean for p in archive.processes)


class _LoggingLock:
    def __init__(self, name, log):
        self._lock, self.name, self.log = threading.Lock(), name, log

    def acquire(self, blocking=True, timeout=-1):
        ok = self._lock.acquire(blocking, timeout)
        self.log.append(("acquire", self.name))
        return ok

    def release(self):
        self.log.append(("release", self.name))
        self._lock.release()

    __enter__ = acquire

    def __exit__(self, *exc):
        self.release()


def test_registered_fork_locks_are_taken_before_writer_locks(tmp_path):
    log: list = []
    w = open_process_writer(str(tmp_path / "a"), os.getpid(), {"backend": "sim"})
    w._io_lock, w._lock = _LoggingLock("io", log), _LoggingLock("state", log)
    tracking = _LoggingLock("tracking", log)
    register_fork_lock(tracking)
    register_fork_lock(tracking)       # registering twice takes it once
    log.clear()
    pid = os.fork()
    if pid == 0:
        os._exit(0 if not tracking._lock.locked() and not w._lock._lock.locked() else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0      # child got every lock released
    assert log == [("acquire", "tracking"), ("acquire", "io"), ("acquire", "state"),
                   ("release", "state"), ("release", "io"), ("release", "tracking")]
    w._io_lock, w._lock = threading.Lock(), threading.Lock()
    w.close()


def test_fork_while_another_thread_appends(tmp_path):
    root = str(tmp_path / "a")
    w = open_process_writer(root, os.getpid(), {"backend": "sim"})
    stop = threading.Event()

    def spin():
        i = 0
        while not stop.is_set():
            w.append(["t", i])
            i += 1
    t = threading.Thread(target=spin)
    t.start()
    for _ in range(5):
        pid = os.fork()
        if pid == 0:
            w.append(["child"])
            w.flush()
            os._exit(0)
        os.waitpid(pid, 0)
    stop.set()
    t.join()
    w.close()
    values = [r.value for r in open_archive(root).processes[0].events() if isinstance(r, Record)]
    assert ["child"] not in values
    assert [v[1] for v in values] == list(range(len(values)))
