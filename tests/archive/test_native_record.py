"""The native record path (hrr/archive/native): the same bytes as the Python path, its
choice by HRR_NATIVE_RECORD, the fallback when no compiler builds it, and its lock."""
from __future__ import annotations

import enum
import os
import random
import threading

import msgpack
import pytest

from archive_helpers import pid_dir
from hrr import cextension
from hrr.archive import native, open_archive, open_process_writer
from hrr.archive import writer as writer_mod
from hrr.archive.manifest import RECORDERS
from hrr.archive.native import writer as native_writer_mod
from hrr.errors import ArchiveError

EXT, WHY = native.extension()
needs_ext = pytest.mark.skipif(EXT is None, reason=f"the native record extension did not build here: {WHY}")


class Flag(enum.IntEnum):
    A = 7


def _values(rng: random.Random, depth: int = 0) -> object:
    pick = rng.randrange(12 if depth < 3 else 8)
    if pick == 0:
        return None
    if pick == 1:
        return rng.random() < 0.5
    if pick == 2:   # every msgpack int width, both signs, and the edges between them
        edge = rng.choice([0, 1, 31, 32, 127, 128, 255, 256, 65535, 65536, 2**31, 2**32, 2**63, 2**64 - 1])
        return rng.choice([edge, edge - 1, -edge, -edge - 1]) if edge else rng.randrange(-40, 200)
    if pick == 3:
        return rng.uniform(-1e300, 1e300)
    if pick == 4:
        n = rng.choice([0, 5, 31, 32, 255, 256, 65535, 65536])
        return "".join(chr(rng.randrange(32, 0x2FF)) for _ in range(min(n, 40))) + "\u00e9" * (n - min(n, 40))
    if pick == 5:
        return rng.randbytes(rng.choice([0, 1, 255, 256, 65535, 65536]))
    if pick == 6:
        return rng.randrange(-(2**70), 2**70)
    if pick == 7:
        return rng.choice(["short", b"b", 0, -1])
    if pick in (8, 9):
        return [_values(rng, depth + 1) for _ in range(rng.choice([0, 3, 15, 16, 17]))]
    return {str(i): _values(rng, depth + 1) for i in range(rng.choice([0, 2, 15, 16]))}


@needs_ext
def test_the_native_packer_writes_msgpack_pythons_bytes_or_declines():
    strict = msgpack.Packer(use_bin_type=True, strict_types=True)
    rng = random.Random(24)
    for _ in range(1500):
        value = _values(rng)
        try:
            want = strict.pack(value)
        except (TypeError, ValueError, OverflowError):
            strict.reset()
            want = None
        assert EXT.packb(value) == want, value if not isinstance(value, (str, bytes)) else type(value)
    for declined in ((1, 2), Flag.A, [Flag.A], {"k": (1,)}, 2**64, -(2**63) - 1, "\udc80", bytearray(b"x")):
        assert EXT.packb(declined) is None


def _same_calls(w, blob_every: int = 0, threads: bool = False) -> list[int]:
    """Calls covering the fast path, values only the lenient packer takes, a record past the
    batch's byte bound, batch closes, a sync point, growth and (``threads``) new threads;
    returns the thread of each record."""
    get, copy = w.api_number("hipGetDevice"), w.api_number("hipMemcpy")
    tids = []
    for i in range(700):
        tids.append(threading.get_ident())
        if threads and i % 97 == 5:
            t = threading.Thread(target=w.append_call, args=(get, [], 0, [i], {}))
            t.start()
            t.join()
            tids[-1] = t.ident
        elif i % 50 == 7:
            w.append_call(get, [(i, "tuple")], 0, [Flag.A], {"n": i})
        elif i % 150 == 9:
            w.append_call(copy, [bytes(range(256)) * 200], 0, [], {})
        elif i == 400:
            w.flush()
        else:
            w.append_call(get, [i, -i, "x" * (i % 40)], i % 3, [2**40 + i], {"launch": ["k", [1, 1, 1], [i, 1, 1]]})
        if blob_every and i % blob_every == 0:
            w.put_blob(bytes([i % 256]) * 100)
    return [t for i, t in enumerate(tids) if i != 400]


@needs_ext
def test_native_and_python_paths_write_byte_identical_events(tmp_path, monkeypatch):
    monkeypatch.setattr(writer_mod.time, "time", lambda: 1234.5)   # the trailer's "closed"
    files = {}
    for native_on in (True, False):
        root = str(tmp_path / str(native_on))
        w = open_process_writer(root, 4242, {"backend": "sim", "created": 1.0}, max_bytes=None,
                                warn_bytes=None, native=native_on)
        assert w.RECORDER == RECORDERS[0 if native_on else 1]
        _same_calls(w, blob_every=60)
        w.close()
        with open(os.path.join(pid_dir(root), "events.bin"), "rb") as f:
            files[native_on] = f.read()
        with open_archive(root) as a:
            (proc,) = a.processes
            assert proc.manifest["recorder"] == w.RECORDER
            assert sum(1 for _ in proc.events()) == 699   # 700 steps, one of them a flush
    assert files[True] == files[False]


@needs_ext
def test_native_and_python_paths_number_threads_alike(tmp_path):
    # Thread idents differ from run to run, so the two files cannot be compared byte for byte.
    got = {}
    for native_on in (True, False):
        root = str(tmp_path / str(native_on))
        w = open_process_writer(root, 4242, {"backend": "sim"}, max_bytes=None, warn_bytes=None, native=native_on)
        tids = _same_calls(w, threads=True)
        w.close()
        with open_archive(root) as a:
            events = [r.value for r in a.processes[0].events()]
        assert [v[1] for v in events] == tids
        got[native_on] = [v[:1] + v[2:] for v in events]
    assert got[True] == got[False]


@needs_ext
def test_a_value_no_packer_takes_is_refused_alike(tmp_path):
    for native_on in (True, False):
        w = open_process_writer(str(tmp_path / str(native_on)), 4242, {"backend": "sim"}, native=native_on)
        get = w.api_number("hipGetDevice")
        w.append_call(get, [], 0, [], {})
        with pytest.raises(ArchiveError, match="not msgpack-native"):
            w.append_call(get, [object()], 0, [], {})
        assert w.append_call(get, [], 0, [], {}) == 2   # the refused call kept its number, as before
        w.close()


def test_hrr_native_record_0_selects_the_python_path(tmp_path, monkeypatch):
    monkeypatch.setenv("HRR_NATIVE_RECORD", "0")
    w = open_process_writer(str(tmp_path), 4242, {"backend": "sim"})
    assert type(w) is writer_mod.ProcessWriter and w.RECORDER == "python"
    w.close()
    with open_archive(str(tmp_path)) as a:
        assert a.processes[0].manifest["recorder"] == "python"


def test_no_compiler_falls_back_with_one_line_of_notice(tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("HRR_NATIVE_RECORD", "1")
    monkeypatch.setenv("HRR_CACHE_DIR", str(tmp_path / "cache"))   # nothing built before
    monkeypatch.setattr(cextension, "c_compilers", lambda env, flavour: [["/nonexistent/cc"]])
    native.extension.cache_clear()
    native_writer_mod.native_writer.cache_clear()
    try:
        writers = [open_process_writer(str(tmp_path / f"a{i}"), 4242, {"backend": "sim"}) for i in range(2)]
    finally:
        native.extension.cache_clear()
        native_writer_mod.native_writer.cache_clear()
    for w in writers:
        assert type(w) is writer_mod.ProcessWriter
        w.append_call(w.api_number("hipGetDevice"), [], 0, [0], {})
        w.close()
    err = capfd.readouterr().err
    assert err.count("hrr: the native record path is not available") == 1, err
    assert "/nonexistent/cc" in err and "HRR_NATIVE_RECORD=0" in err


@needs_ext
def test_the_native_core_is_the_writers_lock(tmp_path):
    w = open_process_writer(str(tmp_path), 4242, {"backend": "sim"}, native=True)
    get = w.api_number("hipGetDevice")
    lock = w._lock
    assert lock.acquire() and lock.locked()
    done: list[int] = []
    t = threading.Thread(target=lambda: done.append(w.append_call(get, [], 0, [], {})))
    t.start()
    t.join(0.2)
    assert t.is_alive() and not done           # the record waits for the lock, the GIL given up
    other: list[bool] = []
    probe = threading.Thread(target=lambda: other.append(lock.acquire(timeout=0.05)))
    probe.start()
    probe.join()
    assert other == [False]
    lock.release()
    t.join()
    assert done == [0] and not lock.locked()
    w.close()
