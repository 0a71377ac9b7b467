"""`hrr dump`: named fields, filters, untrusted records, streaming, and a closed pipe."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dump_archive_gen import DEV, PINNED, TID, write_archive
from hrr.api.catalogue import CATALOGUE
from hrr.hiptypes import ENUM_TYPES
from hrr.hiptypes.mathlibs import TYPES as LIBRARY_TYPES
from hrr.archive import open_process_writer
from hrr.archive.reader import ProcessArchive
from hrr.errors import UsageError
from hrr.events.ranges import CallRange, parse_range
from hrr.inspect.dump import DumpFilter, dump_archive, format_line, iter_dump, parse_apis, parse_thread
from old_formats import open_old_writer

sys.path.insert(0, str(Path(__file__).parent.parent / "roundtrip"))


def _run_dump(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hrr.cli.main", "dump", *args], capture_output=True,
                          text=True, timeout=120, **kw)


def _records(root, **filt) -> list[dict]:
    return [e for e in iter_dump(root, DumpFilter(**filt)) if "process" not in e]


def _write(root, pid, records, tid=TID):
    """A small archive of hand-made wire records (seq numbered in order)."""
    w = open_process_writer(root, pid, {"backend": "sim"})
    for seq, rec in enumerate(records):
        api, args, err, outs, extra = rec
        w.append([seq, tid, api, args, err, outs, extra])
    w.close()


# -- names --------------------------------------------------------------------------------

def test_every_catalogue_row_of_a_real_capture_prints_named(tmp_path):
    from every_api_app import exercise
    from hrrtest import capture

    capture(tmp_path, exercise, plugins=["pinned_snapshot", "graph_capture"])
    entries = _records(tmp_path)
    assert entries and not [e for e in entries if "bad" in e]
    seen = set()
    for e in entries:
        json.dumps(e)                                   # JSON-safe: no raw bytes anywhere
        seen.add(e["api"])
        row = CATALOGUE.get(e["api"])
        if row is None:
            assert e["api"] == "@d2h" and set(e["args"]) == {"copy_seq"}
            continue
        assert list(e["args"]) == [p.name for p in row.params][:len(e["args"])], e
        status = {"hip": ENUM_TYPES["hipError_t"], "hiprtc": ENUM_TYPES["hiprtcResult"]}.get(row.module) \
            or LIBRARY_TYPES[row.module].status
        assert isinstance(e["err"], str) and e["err"] in status.__members__, e
        for p in row.params:
            v = e["args"].get(p.name)
            if p.role == "enum" and v is not None:
                assert isinstance(v, str) and v in ENUM_TYPES[p.kind].__members__, e
            if p.role == "handle":
                assert isinstance(v, str) and v.startswith(f"{p.kind}#"), e
            if p.role == "ptr":
                assert isinstance(v, str) and v.startswith("0x"), e
        for o in row.outs:
            if o.role == "handle" and e["err"] == "hipSuccess":
                assert e["outs"][o.name].startswith(f"{o.kind}#"), e
        if row.family == "launch":
            assert e["launch"]["kernel"] in ("fill_u32", "add_u32", "sum_u32", "copy_u8"), e
        if row.family == "copy":
            assert e["copy"]["direction"] in ("H2D", "D2H", "D2D", "H2H", "default"), e
            assert isinstance(e["copy"]["bytes"], int), e
    assert {n for n, r in CATALOGUE.items() if r.replay != "unreplayable"} <= seen
    lines = [format_line(e) for e in entries]
    assert any(" hipMemcpy " in ln and "kind=hipMemcpyHostToDevice" in ln and "[H2D " in ln for ln in lines)
    assert all("\n" not in ln for ln in lines)


def test_generated_archive_lines(tmp_path):
    write_archive(str(tmp_path), 14)
    out = _run_dump(str(tmp_path))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "# pid-4242 backend=sim content=content plugins=pinned_snapshot"
    assert lines[3] == ("#2 t1 hipModuleGetFunction module=module#1 kname=add_u32 "
                        "-> function=function#1 layout=dst,src,n")
    assert lines[6] == f"#5 t1 hipHostMalloc size=1024 flags=0 -> ptr=0x{PINNED:x}"
    assert lines[9] == (f"#8 t1 hipModuleLaunchKernel kernel=add_u32(dst=0x{DEV:x},src=0x{PINNED:x},n=256) "
                        "f=function#1 grid=2x1x1 "
                        "block=128x1x1 sharedMemBytes=0 stream=stream#1 kernargs=20B ptrs=2 "
                        "pinned_snapshot=1snap/1024B")
    assert lines[10] == "#9 t1 hipEventRecord event=event#1 stream=stream#1"
    assert lines[11] == (f"#10 t1 hipMemcpyAsync dst=0x{PINNED:x}[4B] src=0x{DEV:x}[4B] sizeBytes=4 "
                         "kind=hipMemcpyDeviceToHost stream=stream#1 [D2H 4 B]")
    assert lines[13] == "#12 t1 @d2h copy_seq=10 blob=9a59905123e19a9c083459e20edd8065 bytes=4"
    js = _run_dump(str(tmp_path), "--jsonl", "--calls", "8")
    launch = json.loads(js.stdout.splitlines()[1])
    assert launch["launch"] == {"kernel": "add_u32", "grid": [2, 1, 1], "block": [128, 1, 1],
                                "kernargs_bytes": 20, "pointers": 2,
                                "args": {"dst": hex(DEV), "src": hex(PINNED), "n": 256}}
    assert launch["records"] == {"pinned_snapshot": {"records": 1, "snapshots": 1, "bytes": 1024}}
    assert launch["args"]["stream"] == "stream#1" and launch["err"] == "hipSuccess"


def test_errors_enums_and_handle_lifetimes_are_named(tmp_path):
    _write(tmp_path, 7, [
        ["hipStreamCreate", [], 0, [0x51], {}],
        ["hipStreamDestroy", [0x51], 0, [], {}],
        ["hipStreamCreate", [], 0, [0x51], {}],            # same value, a new stream
        ["hipMalloc", [1 << 40], 2, [None], {}],             # failed: hipErrorOutOfMemory
        ["hipStreamBeginCapture", [0x51, 1], 0, [], {}],
        ["hipMemcpyHtoD", [0x1000, ["h", 0x2000, 8, None], 8], 0, [], {}],
        ["hipStreamSynchronize", [0], 0, [], {}],            # the null stream
        ["hipGetErrorName", [400], 0, ["hipErrorInvalidHandle"], {}],
    ])
    lines = [format_line(e) for e in iter_dump(tmp_path)][1:]
    assert lines[0].endswith("-> stream=stream#1")
    assert lines[1].endswith("hipStreamDestroy stream=stream#1")
    assert lines[2].endswith("-> stream=stream#2")
    assert lines[3] == f"#3 t1 hipMalloc size={1 << 40} err=hipErrorOutOfMemory"
    assert lines[4] == "#4 t1 hipStreamBeginCapture stream=stream#2 mode=hipStreamCaptureModeThreadLocal"
    assert lines[5] == "#5 t1 hipMemcpyHtoD dst=0x1000 src=0x2000(host)[8B] sizeBytes=8 [H2D 8 B]"
    assert lines[6] == "#6 t1 hipStreamSynchronize stream=stream#0"
    assert lines[7] == "#7 t1 hipGetErrorName hip_error=hipErrorInvalidHandle -> name=hipErrorInvalidHandle"
    # numbers come from every record, not only the shown ones: the second stream stays #2
    syncs = _records(tmp_path, apis=frozenset({"hipStreamBeginCapture"}))
    assert [e["args"]["stream"] for e in syncs] == ["stream#2"]


# -- filters ------------------------------------------------------------------------------

def test_parse_range():
    assert parse_range("5") == CallRange(5, 6)
    assert parse_range("5:9") == CallRange(5, 9)
    assert parse_range(":9") == CallRange(0, 9)
    assert parse_range("5:") == CallRange(5, None)
    for bad in ("", "x", "-1", "5:5", "9:5", "1:2:3", "a:"):
        with pytest.raises(UsageError):
            parse_range(bad)
    assert parse_thread("t2").number == 2 and parse_thread("3").number == 3
    assert parse_thread(hex(TID)).tid == TID and parse_thread(str(TID)).tid == TID
    with pytest.raises(UsageError):
        parse_thread("main")
    assert parse_apis(("hipMalloc,hipFree", "@d2h")) == {"hipMalloc", "hipFree", "@d2h"}
    with pytest.raises(UsageError, match="hipMalloc"):
        parse_apis(("hipMaloc",))


def test_filters_select_and_numbering_ignores_them(tmp_path):
    write_archive(str(tmp_path), 40, pid=10)
    write_archive(str(tmp_path), 14, pid=11, tid=TID + 1)
    _write(tmp_path, 12, [["hipInit", [0], 0, [], {}], ["hipInit", [0], 0, [], {}]], tid=TID + 2)
    seqs = [e["seq"] for e in _records(tmp_path, pid=10, calls=parse_range("8:12"))]
    assert seqs == [8, 9, 10, 11]
    assert [e["seq"] for e in _records(tmp_path, pid=10, calls=parse_range("35:"))] == list(range(35, 40))
    assert [e["seq"] for e in _records(tmp_path, pid=11, calls=parse_range(":3"))] == [0, 1, 2]
    launches = _records(tmp_path, apis=frozenset({"hipModuleLaunchKernel"}))
    assert {e["pid"] for e in launches} == {10, 11} and all(e["api"] == "hipModuleLaunchKernel" for e in launches)
    # a stream first named by a filtered-out record keeps the number it has unfiltered
    assert {e["args"]["stream"] for e in launches} == {"stream#1"}
    assert _records(tmp_path, pid=11, thread=parse_thread(hex(TID + 1)))
    assert _records(tmp_path, pid=11, thread=parse_thread(hex(TID))) == []
    assert [e["pid"] for e in _records(tmp_path, thread=parse_thread("t1"))].count(12) == 2
    out = _run_dump(str(tmp_path), "--pid", "11", "--api", "@d2h")
    assert out.returncode == 0 and out.stdout.splitlines()[0].startswith("# pid-11 ")
    assert all(" @d2h " in ln for ln in out.stdout.splitlines()[1:]) and len(out.stdout.splitlines()) > 1


# -- untrusted records --------------------------------------------------------------------

def test_bad_and_odd_records_print_and_never_crash(tmp_path):
    _write(tmp_path, 5, [
        ["hipInit", [float("nan")], 0, [], {}],
        ["hipMemcpy", [7, "x"], 0, [], {}],                               # args of the wrong shape
        ["hipModuleLaunchKernel", [1.5], 0, [], {"launch": "junk", "records": 5}],
        ["hipFree", [b"\x00" * 9], 12345, [1, 2, 3], {"odd": b"xyz"}],     # bytes, unknown error
        ["hipNotARealCall", [b"ab", {"k": [1]}], 0, [], {}],
        ["hipStreamSynchronize", [0x99], 0, [], {"records": {"p": [{"snaps": [{"length": "big"}, 3]}]}}],
        ["hipModuleGetFunction", [0x53, b"k"], 0, [0x54],
         {"layout": [[0, 8, "pointer", "p"], [100, 4, "value", "far"], "junk", [8, 2, "value", None]]}],
        ["hipModuleLaunchKernel", [0x54, 1, 1, 1, 1, 1, 1, 0, 0, None, None], 0, [],
         {"launch": {"kernargs": (0xABC).to_bytes(8, "little") + b"\x05\x00"}}],
    ])
    w = open_old_writer(tmp_path, 6, {"backend": "sim"}, format_version=1)   # one frame per record
    w.append([0, TID, "hipInit", [0], 0, [], {}])
    w.append(["not", "an", "event"])
    w.append([1, TID, "hipInit", "args", 0, [], {}])
    w.append([2, TID, "hipInit", [0], 0, [], {}])
    w.close()
    events = tmp_path / "pid-6" / "events.bin"
    proc = ProcessArchive(str(tmp_path), "pid-6", __import__("hrr.archive", fromlist=["Limits"]).Limits())
    offset = [r.offset for r in proc.events()][3]
    proc.close()
    data = bytearray(events.read_bytes())
    data[offset + 20] ^= 0xFF                                              # payload byte: checksum fails
    events.chmod(0o600)
    events.write_bytes(bytes(data))
    for mode in ([], ["--jsonl"]):
        out = _run_dump(str(tmp_path), *mode)
        assert out.returncode == 0 and out.stderr == "", out.stderr
        lines = out.stdout.splitlines()
        if mode:
            for ln in lines:
                json.loads(ln, parse_constant=lambda c: pytest.fail(f"not strict JSON: {c}"))
            continue
        text = "\n".join(lines)
        assert "#0 t1 hipInit flags=nan" in text
        assert "#1 t1 hipMemcpy dst=0x7 src=x [? null B]" in text
        assert '#2 t1 hipModuleLaunchKernel kernel=null f=1.5 launch=junk records=5' in text
        assert "#3 t1 hipFree ptr=<9 bytes> err=12345" in text and 'extra={"odd":{"bytes":3}}' in text
        assert '#4 t1 hipNotARealCall arg0=<2 bytes> arg1={"k":[1]}' in text
        assert "#5 t1 hipStreamSynchronize stream=stream#1 p=1snap/0B" in text
        assert ("#6 t1 hipModuleGetFunction module=module#1 kname=k -> function=function#1 "
                "layout=p,far,junk,null") in text
        assert '#7 t1 hipModuleLaunchKernel kernel=k(p=0xabc,far="<outside the kernarg bytes>",param3=5) ' in text
        assert "BAD record 1 at offset" in text and "not a 7-item event record" in text
        assert "BAD record 2 at offset" in text and "event field args is a str" in text
        assert f"BAD record 3 at offset {offset}: event frame checksum mismatch" in text
    assert "b'" not in out.stdout and "xyz" not in out.stdout


# -- streaming and memory -----------------------------------------------------------------

def test_first_line_is_written_before_the_reader_reaches_the_end(tmp_path, monkeypatch):
    """Structural, not timed: dump writes its first record having pulled one record from a
    50k-record archive; an implementation that reads (or keeps) everything first fails."""
    write_archive(str(tmp_path), 50_000)
    pulled = {"n": 0, "at_first_write": None, "finished": False}
    original = ProcessArchive.events

    def counting(self):
        for item in original(self):
            pulled["n"] += 1
            yield item
        pulled["finished"] = True
    monkeypatch.setattr(ProcessArchive, "events", counting)

    class Out:
        lines = 0

        def write(self, text):
            Out.lines += 1
            if Out.lines == 2:                       # line 1 is the process header
                pulled["at_first_write"] = pulled["n"]
                raise BrokenPipeError                # stop here, as `| head -2` would
        def flush(self):
            pass

    with pytest.raises(BrokenPipeError):
        dump_archive(str(tmp_path), Out())
    assert pulled["at_first_write"] == 1 and not pulled["finished"]
    gen = iter_dump(str(tmp_path), DumpFilter(calls=parse_range(":5")))
    assert len(list(gen)) == 6 and pulled["n"] == 1 + 6 and not pulled["finished"]   # stops after the range


def test_memory_does_not_grow_with_records(tmp_path):
    """Peak traced memory over 6k records stays within that over 800 (nothing accumulates)."""
    import tracemalloc

    def peak(n: int) -> int:
        root = tmp_path / str(n)
        write_archive(str(root), n)
        tracemalloc.start()
        try:
            for entry in iter_dump(str(root)):
                format_line(entry)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    small, large = peak(800), peak(6_000)
    assert large < small * 1.25 + (256 << 10), (small, large)


def test_naming_state_is_bounded_by_live_handles(tmp_path):
    """A loop that looks up the same function and creates and destroys a stream each time
    leaves the naming state as small as one iteration does."""
    from hrr.inspect.dump import _Names

    loop = [["hipModuleGetFunction", [0x53, "k"], 0, [0x54], {}],
            ["hipStreamCreate", [], 0, [0x51], {}], ["hipStreamDestroy", [0x51], 0, [], {}]]
    names = _Names()
    for i in range(1000):
        for api, args, err, outs, extra in loop:
            names.observe(CATALOGUE[api], args, err, outs, extra)
            names.release(CATALOGUE[api], args, err)
        if i == 0:
            first = {k: len(v) for k, v in vars(names).items() if isinstance(v, dict)}
            first_sets = sum(len(v) for v in names._module_functions.values())
    assert {k: len(v) for k, v in vars(names).items() if isinstance(v, dict)} == first
    assert sum(len(v) for v in names._module_functions.values()) == first_sets == 1
    assert names.handle("stream", 0x51) == "stream#1001"


def test_closed_pipe_ends_quietly(tmp_path):
    write_archive(str(tmp_path), 5_000)
    proc = subprocess.Popen([sys.executable, "-m", "hrr.cli.main", "dump", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline().startswith(b"# pid-4242")
    proc.stdout.close()                                   # as `| head -1` does
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0 and err == b"", err


def test_missing_archive_and_bad_options_are_one_line_errors(tmp_path):
    out = _run_dump(str(tmp_path / "nope"))
    assert out.returncode != 0 and "no such archive" in out.stderr and "Traceback" not in out.stderr
    write_archive(str(tmp_path / "a"), 3)
    out = _run_dump(str(tmp_path / "a"), "--calls", "x")
    assert out.returncode != 0 and "--calls" in out.stderr and "Traceback" not in out.stderr
    assert os.path.isdir(tmp_path / "a")
