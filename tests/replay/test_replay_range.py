"""`hrr replay --calls RANGE`: a prefix replays and checks only what lies before its end;
N:M replays every call before N as unchecked set-up, then checks exactly the copies in
the range, with the same verdicts as a full replay."""
from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from hrr.api.catalogue import CATALOGUE, REAL
from hrr.archive import open_archive, open_process_writer
from hrr.cli.main import cli
from hrr.errors import UsageError
from hrr.events.ranges import parse_range
from hrr.replay.engine import ReplayOptions
from hrr.replay.ranges import PURE_QUERIES
from hrr.replay.result import Outcome, ProcessResult
from hrr.replay.run import replay_archive
from hrrtest import archive_calls, capture

N = 16
H2D, D2H = 1, 2
# The records the app below makes, by sequence number (checked by the fixture).
APIS = ["hipModuleLoadData", "hipModuleGetFunction", "hipMalloc", "hipMalloc", "hipMalloc",
        "hipMemcpy",           # 5: da <- a
        "hipMemcpy",           # 6: db <- b
        "hipGetDeviceCount",   # 7: a pure query
        "hipModuleLaunchKernel",  # 8: dc = da + db
        "hipMemcpy",           # 9: D2H dc   (check)
        "hipMemcpy",           # 10: D2H da  (check)
        "hipMemset",           # 11: da = 0x03030303
        "hipModuleLaunchKernel",  # 12: dc = da + db (reads the memset and the copy at 6)
        "hipStreamCreate",     # 13
        "hipMemcpyAsync",      # 14: D2H dc on the stream (checked by record 16)
        "hipStreamSynchronize",  # 15
        "@d2h",                # 16: the result of 14
        "hipMemcpy"]           # 17: D2H db  (check)


def _ok(result):
    assert int(result[0]) == 0, result
    return result[1] if len(result) == 2 else result[1:]


def several_copies_app(hip, hiprtc, be):
    mod = _ok(hip.hipModuleLoadData(be.builtin_code_object()))
    fn = _ok(hip.hipModuleGetFunction(mod, b"add_u32"))
    da, db, dc = (_ok(hip.hipMalloc(N * 4)) for _ in range(3))
    _ok(hip.hipMemcpy(da, np.arange(N, dtype=np.uint32), N * 4, H2D))
    _ok(hip.hipMemcpy(db, np.arange(N, dtype=np.uint32) * 7 + 100, N * 4, H2D))
    _ok(hip.hipGetDeviceCount())

    def launch():
        args = [ctypes.c_void_p(int(dc)), ctypes.c_void_p(int(da)), ctypes.c_void_p(int(db)),
                ctypes.c_uint32(N)]
        _ok(hip.hipModuleLaunchKernel(fn, 1, 1, 1, 64, 1, 1, 0, None,
                                      [ctypes.addressof(x) for x in args], None))

    out = np.zeros(N, np.uint32)
    launch()
    _ok(hip.hipMemcpy(out, dc, N * 4, D2H))
    _ok(hip.hipMemcpy(out, da, N * 4, D2H))
    _ok(hip.hipMemset(da, 3, N * 4))
    launch()
    stream = _ok(hip.hipStreamCreate())
    _ok(hip.hipMemcpyAsync(out, dc, N * 4, D2H, stream))
    _ok(hip.hipStreamSynchronize(stream))
    _ok(hip.hipMemcpy(out, db, N * 4, D2H))


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("range") / "arch"
    capture(root, several_copies_app)
    assert [r[2] for r in archive_calls(root)] == APIS
    return root


def tampered(src: Path, dst: Path, seq: int) -> Path:
    """A copy of the archive ``src`` in which the recorded result of the device-to-host
    copy ``seq`` has one byte changed (its blob, through the archive writer)."""
    proc = open_archive(str(src)).processes[0]
    writer = open_process_writer(str(dst), proc.pid, {"backend": "sim"},
                                 manifest={"plugins": {}, "content_mode": "content"})

    def blob(name: str, change: bool) -> str:
        data = bytearray(proc.read_blob(name))
        if change:
            data[0] ^= 0xFF
        return writer.put_blob(bytes(data))

    changed = 0
    for item in proc.events():
        s, tid, api, args, err, outs, extra = item.value
        if api == "hipModuleLoadData":
            args = [writer.put_code_object(proc.read_code_object(args[0]))]
        elif api == "@d2h":
            changed += args[0] == seq
            extra = dict(extra, blob=blob(extra["blob"], args[0] == seq))
        else:
            new = []
            for i, a in enumerate(args):
                if isinstance(a, list) and len(a) == 4 and isinstance(a[3], str):
                    hit = s == seq and i == 0  # the destination of the copy
                    changed += hit
                    a = [a[0], a[1], a[2], blob(a[3], hit)]
                new.append(a)
            args = new
        writer.append([s, tid, api, args, err, outs, extra])
    writer.close()
    assert changed == 1, f"record {seq} holds no device-to-host result"
    return dst


def run(root: Path, calls: str | None = None, strict: bool = True) -> tuple[int, ProcessResult]:
    """(exit code, the one process's result)."""
    options = ReplayOptions(strict=strict, calls=parse_range(calls) if calls is not None else None)
    result = replay_archive(str(root), options=options, plugins=[])
    (proc,) = result.processes
    return result.exit_code, proc


def checks(proc: ProcessResult) -> tuple[int, int, int]:
    return proc.checks


def failed_at(proc: ProcessResult, seq: int) -> list[str]:
    """The failures that name record ``seq``."""
    return [f for f in proc.failures if f.startswith(f"record {seq} ")]


def span(proc: ProcessResult) -> tuple[int, int | None, int | None]:
    """The range's records: (how many, first, last)."""
    assert proc.range is not None, proc
    return proc.range.in_range, proc.range.first_in_range, proc.range.last_in_range


def setup(proc: ProcessResult) -> tuple[int, int]:
    """Set-up before the range: (calls replayed, pure queries skipped)."""
    assert proc.range is not None, proc
    return proc.range.setup_replayed, proc.range.setup_skipped


def test_the_full_replay_checks_all_four_copies(archive):
    code, proc = run(archive)
    assert code == 0, proc
    assert checks(proc) == (4, 0, 0), proc
    assert proc.range is None, proc


def test_a_prefix_checks_only_the_copies_before_its_end(archive):
    code, proc = run(archive, ":11")
    assert code == 0, proc
    assert checks(proc) == (2, 0, 0), proc   # records 9 and 10, not 14 nor 17
    assert span(proc) == (11, 0, 10), proc
    assert (proc.records, proc.calls_replayed) == (11, 11), proc   # nothing from 11 on ran


def test_a_range_gives_the_full_replays_verdict_on_its_copies_and_counts_none_outside(archive, tmp_path):
    bad = tampered(archive, tmp_path / "bad10", 10)
    code, proc = run(bad)
    assert code == 1 and checks(proc) == (3, 1, 0), proc
    assert failed_at(proc, 10)[0].startswith("record 10 (hipMemcpy)"), proc

    code, proc = run(bad, "9:12")    # 9 passes, 10 fails: the full replay's verdicts
    assert code == 1 and checks(proc) == (1, 1, 0), proc
    assert failed_at(proc, 10)[0].startswith("record 10 (hipMemcpy)"), proc
    assert setup(proc) == (8, 1) and span(proc) == (3, 9, 11), proc

    code, proc = run(bad, "12:")     # the changed result lies before the range: not seen
    assert code == 0 and checks(proc) == (2, 0, 0), proc
    assert failed_at(proc, 10) == [] and not any(r.seq == 10 for r in proc.refusals), proc


def test_a_change_after_the_range_is_seen_only_without_it(archive, tmp_path):
    bad = tampered(archive, tmp_path / "bad17", 17)
    code, proc = run(bad)
    assert code == 1 and failed_at(proc, 17)[0].startswith("record 17 (hipMemcpy)"), proc
    code, proc = run(bad, ":17")
    assert code == 0 and checks(proc) == (3, 0, 0), proc


def test_set_up_gives_a_launch_in_the_range_the_memory_it_reads(archive, tmp_path):
    """The launch at 12 reads da (set by the memset at 11) and db (the copy at 6); only
    set-up puts them there, and the copy of its result (14) is checked in the range."""
    code, proc = run(archive, "12:17")
    assert code == 0, proc
    assert checks(proc) == (1, 0, 0), proc
    assert setup(proc) == (11, 1), proc
    # The same range on an archive whose result for 14 was changed fails on it.
    code, proc = run(tampered(archive, tmp_path / "bad14", 14), "12:17")
    assert code == 1 and checks(proc) == (0, 1, 0) and failed_at(proc, 14), proc


def test_a_copy_whose_check_comes_after_the_range_is_still_checked(archive, tmp_path):
    """Record 14 is an asynchronous copy synchronised at 15 and checked at 16."""
    code, proc = run(archive, "14")
    assert code == 0 and checks(proc) == (1, 0, 0), proc
    assert span(proc) == (1, 14, 14) and proc.range.late_checks == 1, proc
    code, proc = run(tampered(archive, tmp_path / "bad14", 14), "14")
    assert code == 1 and checks(proc) == (0, 1, 0) and failed_at(proc, 14), proc


def test_the_check_of_a_set_up_copy_is_neither_passed_nor_failed(archive, tmp_path):
    """The range 15:17 holds the check record (16) of the set-up copy 14: not counted."""
    code, proc = run(tampered(archive, tmp_path / "bad14", 14), "15:17")
    assert code == 0, proc
    assert checks(proc) == (0, 0, 0) and proc.refusals == (), proc


def test_a_range_past_the_end_says_where_the_records_end(archive):
    with pytest.raises(UsageError, match=r"--calls 500: starts past the end of the archive "
                                          r"\(pid-\d+: it holds 18 records, 0 to 17\)"):
        run(archive, "500:")
    code, proc = run(archive, "12:999")
    assert code == 0 and proc.range.last_seq == 17 and span(proc) == (6, 12, 17), proc


def failed_query_app(hip, hiprtc, be):
    err = int(hip.hipGetDeviceProperties(9)[0])          # 0: fails (no device 9)
    assert err != 0
    assert int(hip.hipGetLastError()[0]) == err          # 1: returns and clears it
    assert int(hip.hipGetDeviceProperties(9)[0]) == err  # 2: fails again; nothing clears it
    d = _ok(hip.hipMalloc(64))                           # 3
    _ok(hip.hipMemcpy(d, np.arange(16, dtype=np.uint32), 64, H2D))   # 4
    assert int(hip.hipGetLastError()[0]) == err          # 5: the error of 2
    out = np.zeros(16, np.uint32)
    _ok(hip.hipMemcpy(out, d, 64, D2H))                  # 6


def test_a_query_that_failed_is_replayed_in_set_up(tmp_path):
    """Its error is the thread's last error, which hipGetLastError in the range returns."""
    capture(tmp_path, failed_query_app)
    code, proc = run(tmp_path, "5:")
    assert code == 0, proc
    assert setup(proc) == (5, 0), proc
    assert checks(proc) == (1, 0, 0) and proc.divergence_count == 0, proc


def test_pure_queries_are_catalogue_rows_with_no_effect():
    for name in PURE_QUERIES:
        row = CATALOGUE[name]
        assert row.destroys is None and not row.sync, name
        # A stream it names is only looked at (the capture state), never given work.
        assert not row.stream or name in ("hipStreamIsCapturing", "hipStreamGetCaptureInfo"), name
        assert all(o.role == "value" for o in row.outs), name
        assert all(p.role in ("value", "enum", "ptr", "handle") for p in row.params), name
    # Calls that change state although they look like queries.
    for name in ("hipGetLastError", "hipStreamQuery", "hipEventQuery", "hipThreadExchangeStreamCaptureMode"):
        assert CATALOGUE[name].replay == REAL and name not in PURE_QUERIES


def test_the_cli_replays_a_range(archive):
    runner = CliRunner()
    result = runner.invoke(cli, ["replay", "--strict", "--calls", "9:12", str(archive)])
    assert result.exit_code == 0, result.output
    assert "Range 9:12: 8 set-up calls replayed before 9" in result.output, result.output
    result = runner.invoke(cli, ["replay", "--calls", "12:9", str(archive)])
    assert result.exit_code != 0 and "--calls '12:9' is empty" in result.output, result.output
    result = runner.invoke(cli, ["replay", "--calls", "500", str(archive)])
    assert result.exit_code != 0 and "starts past the end of the archive" in result.output, result.output


def capture_cut_app(hip, hiprtc, be):
    d = _ok(hip.hipMalloc(64))                                           # 0
    _ok(hip.hipMemcpy(d, np.arange(16, dtype=np.uint32), 64, H2D))       # 1
    stream = _ok(hip.hipStreamCreate())                                  # 2
    _ok(hip.hipStreamBeginCapture(stream, 0))                            # 3 (global mode)
    out = np.zeros(16, np.uint32)
    _ok(hip.hipMemcpyAsync(out, d, 64, D2H, stream))                     # 4 (a graph node)
    graph = _ok(hip.hipStreamEndCapture(stream))                         # 5
    gexec = _ok(hip.hipGraphInstantiateWithFlags(graph, 0))              # 6
    _ok(hip.hipGraphLaunch(gexec, stream))                               # 7
    _ok(hip.hipStreamSynchronize(stream))                                # 8


def test_a_range_that_ends_inside_a_stream_capture_leaves_its_copy_unverifiable(tmp_path):
    """Synchronising the device at M is refused while a capture is open: the copy awaiting
    its check is unverifiable (what --strict fails on), never a failed check."""
    capture(tmp_path, capture_cut_app)
    assert [r[2] for r in archive_calls(tmp_path)][3:6] == [
        "hipStreamBeginCapture", "hipMemcpyAsync", "hipStreamEndCapture"]
    code, proc = run(tmp_path, ":5", strict=False)
    assert code == 0 and checks(proc) == (0, 0, 1), proc
    assert proc.range.tail_error.startswith("hipErrorStreamCaptureUnsupported"), proc
    assert proc.failures == () and proc.outcome is not Outcome.FAILED, proc
    code, proc = run(tmp_path, ":5", strict=True)
    assert code == 1 and "1 checks could not be verified" in proc.strict_reasons, proc


def test_a_set_up_divergence_names_the_range(tmp_path):
    from hostile import HostileArchive
    a = HostileArchive(tmp_path)
    a.call("hipSetDevice", [0], err=101)   # recorded as failing; the sim's device 0 exists
    d = a.device(64)
    a.call("hipMemset", [d, 1, 64])
    a.close()
    code, proc = run(tmp_path, "1:")
    assert code == 2, proc
    assert [(d.seq, d.api, d.setup) for d in proc.divergences] == [(0, "hipSetDevice", True)], proc
    assert failed_at(proc, 0)[0].startswith("record 0 (hipSetDevice, set-up before --calls 1:): the recording "
                                            "returned"), proc
