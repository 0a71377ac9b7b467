"""append_call's fast path (a thread already declared in the open batch): what it skips
checking must still hold at a batch's record and byte bounds, across a growth of the
mapping, after blobs move the size cap closer, once recording stopped, and for values
its exact-type packer refuses."""
from __future__ import annotations

import enum
import os
import threading

import numpy as np
import pytest

from archive_helpers import LoggedMap, pid_dir
from hrr.archive import Record, open_archive, open_process_writer
from hrr.archive import writer as writer_mod
from hrr.archive.format import FRAME_EVENT, FRAME_HEADER
from hrr.errors import ArchiveError, LimitExceeded


def _writer(root, **kw):
    kw.setdefault("max_bytes", None)
    kw.setdefault("warn_bytes", None)
    return open_process_writer(str(root), 4242, {"backend": "sim"}, **kw)


def _events(root):
    with open_archive(str(root)) as a:
        (proc,) = a.processes
        return [r.value if isinstance(r, Record) else r for r in proc.events()], proc


def _frames(root, proc):
    """(record count, payload length) of each closed event frame, in file order."""
    data = open(os.path.join(pid_dir(str(root)), "events.bin"), "rb").read()
    out, pos = [], proc._data_start
    while pos + FRAME_HEADER.size <= len(data):
        ftype, count3, length, _ = FRAME_HEADER.unpack_from(data, pos)
        if ftype != FRAME_EVENT:
            break
        out.append((int.from_bytes(count3, "little"), length))
        pos += FRAME_HEADER.size + length
    return out


def test_batches_close_at_their_record_bound_with_two_threads(tmp_path):
    w = _writer(tmp_path)
    get = w.api_number("hipGetDevice")
    n = writer_mod.BATCH_RECORDS * 2 + 5
    tids = []
    for i in range(n):
        if i % 3 == 2:      # another thread now and then: declared again in each batch
            t = threading.Thread(target=w.append_call, args=(get, [], 0, [i], {}))
            t.start()
            t.join()
            tids.append(t.ident)
        else:
            w.append_call(get, [], 0, [i], {})
            tids.append(threading.get_ident())
    w.close()
    got, proc = _events(tmp_path)
    assert [(v[0], v[1], v[2], v[5]) for v in got] == [(i, tids[i], "hipGetDevice", [i]) for i in range(n)]
    assert [c for c, _ in _frames(tmp_path, proc)] == [writer_mod.BATCH_RECORDS, writer_mod.BATCH_RECORDS, 5]


def test_batches_close_at_their_byte_bound(tmp_path):
    w = _writer(tmp_path)
    get = w.api_number("hipMemcpy")
    blob = bytes(range(256)) * 12      # 3 KiB a record: the byte bound comes first
    n = 3 * writer_mod.BATCH_BYTES // len(blob)
    for i in range(n):
        w.append_call(get, [blob], 0, [], {"i": i})
    w.close()
    got, proc = _events(tmp_path)
    assert [v[6]["i"] for v in got] == list(range(n)) and all(v[3] == [blob] for v in got)
    frames = _frames(tmp_path, proc)
    assert sum(c for c, _ in frames) == n and len(frames) >= 3
    assert all(writer_mod.BATCH_BYTES <= size < writer_mod.BATCH_BYTES + len(blob) + 64 for _, size in frames[:-1])


def test_records_across_growths_of_the_mapping(tmp_path):
    w = _writer(tmp_path)
    get = w.api_number("hipGetDevice")
    payload = b"x" * 100
    n = 3 * writer_mod.FIRST_STEP // len(payload)     # past the first two steps
    for i in range(n):
        assert w.append_call(get, [payload], 0, [i], {}) == i
    grown = os.path.getsize(os.path.join(pid_dir(str(tmp_path)), "events.bin"))
    w.close()
    got, proc = _events(tmp_path)
    assert grown > 2 * writer_mod.FIRST_STEP and proc.clean
    assert [v[5] for v in got] == [[i] for i in range(n)]


def test_a_blob_brings_the_size_cap_closer_for_the_next_call(tmp_path):
    """The fast path's bound is lowered when a blob is stored: the call after a blob that
    takes the archive to its cap is not recorded, exactly as the slow path would decide."""
    w = _writer(tmp_path, max_bytes=64 << 10, pack_blobs=False)
    get = w.api_number("hipGetDevice")
    for i in range(10):
        w.append_call(get, [], 0, [i], {})
    room = (64 << 10) - w.bytes_written
    w.put_blob(os.urandom(room - 4))       # 4 bytes left: no record fits
    assert w.incomplete is None
    assert w.append_call(get, [], 0, [10], {}) == 10
    assert w.incomplete is not None and "size cap" in w.incomplete["reason"]
    assert w.bytes_written <= 64 << 10
    w.close()
    got, proc = _events(tmp_path)
    assert [v[5] for v in got] == [[i] for i in range(10)]
    assert proc.manifest["incomplete"]["calls_not_recorded"] == 1


def test_calls_after_a_stop_are_numbered_counted_and_not_written(tmp_path):
    w = _writer(tmp_path, max_bytes=16 << 10)
    get = w.api_number("hipGetDevice")
    seqs = [w.append_call(get, [b"y" * 200], 0, [i], {}) for i in range(200)]   # passes the cap
    assert seqs == list(range(200)) and w.incomplete is not None
    kept = w.incomplete["events_recorded"]
    size = w.bytes_written
    t = threading.Thread(target=w.append_call, args=(get, [], 0, [0], {}))
    t.start()
    t.join()
    assert w.append_call(get, (object(),), 0, [], {}) == 201    # not packed: nothing is recorded now
    assert w.bytes_written == size
    w.close()
    got, proc = _events(tmp_path)
    assert [v[0] for v in got] == list(range(kept))
    assert proc.manifest["incomplete"]["calls_not_recorded"] == 202 - kept


class _Kind(enum.IntEnum):
    ONE = 1


class _Name(str):
    pass


def test_values_the_exact_type_packer_refuses_are_packed_the_same_by_the_other(tmp_path):
    w = _writer(tmp_path)
    get = w.api_number("hipGetDevice")
    w.append_call(get, [], 0, [0], {})                          # the thread is declared
    w.append_call(get, (1, (2, 3)), _Kind.ONE, [np.float64(1.5), True], {"k": _Name("v")})
    w.append_call(get, [], 0, [1 << 63], {})
    with pytest.raises(ArchiveError, match="msgpack-native"):
        w.append_call(get, [object()], 0, [], {})
    w.append_call(get, [], 0, [2], {})
    w.close()
    got, _ = _events(tmp_path)
    assert [v[0] for v in got] == [0, 1, 2, 4]
    assert got[1][3:] == [[1, [2, 3]], 1, [1.5, True], {"k": "v"}]
    assert [got[2][5], got[3][5]] == [[1 << 63], [2]]


@pytest.mark.parametrize("declared", [True, False])
def test_a_record_over_the_size_limit_leaves_the_thread_numbering_whole(tmp_path, monkeypatch, declared):
    """Refused for its size, a thread's first record in the batch must not leave the thread
    numbered there: its next record declares it again and reads back under its own id."""
    monkeypatch.setattr(writer_mod, "MAX_RECORD_BYTES", 300)
    w = _writer(tmp_path)
    get = w.api_number("hipGetDevice")
    w.append_call(get, [], 0, [0], {})
    errors = []

    def other():
        if declared:
            w.append_call(get, [], 0, [1], {})
        try:
            w.append_call(get, [b"z" * 400], 0, [], {})
        except LimitExceeded as exc:
            errors.append(exc)
        w.append_call(get, [], 0, [3], {})
    t = threading.Thread(target=other)
    t.start()
    t.join()
    w.append_call(get, [], 0, [4], {})
    w.close()
    assert len(errors) == 1
    got, _ = _events(tmp_path)
    assert all(isinstance(v, list) for v in got), got
    me, them = threading.get_ident(), t.ident
    expect = [(0, me)] + ([(1, them)] if declared else []) + [(3, them), (4, me)]
    assert [(v[5][0], v[1]) for v in got] == expect


def test_the_fast_path_writes_a_record_first_byte_last(tmp_path):
    # The Python path's writes, logged; the native core's order is record.c's commit()
    # (its kills are tests/archive/test_archive_crash.py's, run with either path).
    w = _writer(tmp_path, native=False)
    get = w.api_number("hipGetDevice")
    w.append_call(get, [], 0, [0], {})       # declares the thread: the next call takes the fast path
    log: list = []
    w._mm = LoggedMap(w._mm, log)
    w.append_call(get, [b"abc"], 0, [1], {})
    w._mm = w._mm.mm
    assert len(log) == 2 and log[1][1] - log[1][0] == 1 and log[1][1] == log[0][0]   # rest, then first byte
    w.close()
    got, _ = _events(tmp_path)
    assert [v[5] for v in got] == [[0], [1]]
