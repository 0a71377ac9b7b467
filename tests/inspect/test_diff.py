"""`hrr diff A B`: equal runs compare equal whatever their addresses and handle values; a
changed argument, an extra call or a different D2H result is the first divergence named."""
from __future__ import annotations

import attrs
import hrrtest
from inspect_helpers import describe, hrr_cli, make_app

from hrr.archive import open_archive
from hrr.capture.session import CaptureSession
from hrr.config import config
from hrr.inspect.diff import EXIT_DIFFERENT, EXIT_EQUAL, EXIT_TROUBLE, diff_archives


def _capture_shifted(root, app):
    """Capture ``app`` on a sim device that already holds memory and streams the recording
    never saw, so every address and handle value differs from a fresh capture's."""
    be = hrrtest.fresh_backend("sim")
    for _ in range(3):
        assert be.hip.hipMalloc(4096)[0] == 0
        assert be.hip.hipStreamCreate()[0] == 0
    session = CaptureSession(be, attrs.evolve(config(), backend="sim", content_mode="content"),
                             str(root), plugins=[])
    try:
        return app(session.hip, be.hiprtc, be)
    finally:
        session.close()


def _values(root, api):
    return [r.value for r in open_archive(str(root)).processes[0].events() if r.value[2] == api]


def _diff(a, b, **kw):
    lines = []
    return diff_archives(str(a), str(b), echo=lines.append, **kw), lines


def test_same_program_is_equal_despite_other_addresses_and_handles(tmp_path):
    assert hrrtest.capture(tmp_path / "a", make_app()) == _capture_shifted(tmp_path / "b", make_app())
    # The raw records do differ: allocations, streams and launch pointer words.
    for api in ("hipMalloc", "hipStreamCreate"):
        assert [v[5] for v in _values(tmp_path / "a", api)] != [v[5] for v in _values(tmp_path / "b", api)]
    result, lines = _diff(tmp_path / "a", tmp_path / "b")
    assert result.equal, lines
    assert lines[-1].startswith("equal: 1 process(es)")


def test_changed_argument_is_the_first_divergence(tmp_path):
    hrrtest.capture(tmp_path / "a", make_app(grid=1))
    hrrtest.capture(tmp_path / "b", make_app(grid=2))
    launches = [v[0] for v in _values(tmp_path / "a", "hipModuleLaunchKernel")]
    result, lines = _diff(tmp_path / "a", tmp_path / "b")
    assert not result.equal
    assert (result.index_a, result.index_b, result.field) == (launches[0], launches[0], "args.gridDimX")
    assert "args.gridDimX: 1 != 2" in lines[0]
    # Three records of context, then A's and B's record.
    assert len(lines) == 6 and lines[4].startswith("  A #") and lines[5].startswith("  B #")
    assert "gridDimX=1" in lines[4] and "gridDimX=2" in lines[5]


def test_changed_kernel_argument_is_named_with_both_values(tmp_path):
    hrrtest.capture(tmp_path / "a", make_app(value=7))
    hrrtest.capture(tmp_path / "b", make_app(value=8))
    result, lines = _diff(tmp_path / "a", tmp_path / "b")
    first_launch = _values(tmp_path / "a", "hipModuleLaunchKernel")[0][0]
    assert (result.index_a, result.field) == (first_launch, "launch.args.value"), lines
    assert "launch.args.value: 7 != 8" in lines[0]
    (a_line,) = [ln for ln in lines if ln.startswith("  A #")]
    (b_line,) = [ln for ln in lines if ln.startswith("  B #")]
    assert "value: 7" in a_line and "value: 8" in b_line and a_line != b_line


def test_one_extra_call_is_the_first_divergence(tmp_path):
    hrrtest.capture(tmp_path / "a", make_app())
    hrrtest.capture(tmp_path / "b", make_app(extra_call=True))
    sync = _values(tmp_path / "b", "hipDeviceSynchronize")[0][0]
    result, lines = _diff(tmp_path / "a", tmp_path / "b", context=1)
    assert (result.index_a, result.index_b, result.field) == (sync, sync, "api"), lines
    assert "api: hipModuleLaunchKernel != hipDeviceSynchronize" in lines[0]
    assert len(lines) == 4


def test_one_different_d2h_result_is_the_first_divergence(tmp_path):
    # Without the pinned_snapshot plugin the host's write into pinned memory is invisible:
    # the calls and arguments are the same, only the bytes copied back differ.
    assert hrrtest.capture(tmp_path / "a", make_app(pinned_input=5))[1] == 5
    assert hrrtest.capture(tmp_path / "b", make_app(pinned_input=6))[1] == 6
    memcpy = _values(tmp_path / "a", "hipMemcpy")[0][0]
    result, lines = _diff(tmp_path / "a", tmp_path / "b")
    assert (result.index_a, result.field) == (memcpy, "args.dst.content"), lines


def test_a_shorter_archive_diverges_where_it_ends(tmp_path):
    hrrtest.capture(tmp_path / "a", make_app())
    hrrtest.capture(tmp_path / "b", lambda hip, rtc, be: (make_app()(hip, rtc, be), hip.hipDeviceSynchronize()))
    n = len(_values(tmp_path / "a", "hipModuleUnload")) and _values(tmp_path / "a", "hipModuleUnload")[0][0] + 1
    result, lines = _diff(tmp_path / "a", tmp_path / "b")
    assert (result.index_a, result.index_b, result.field) == (None, n, "count"), lines
    assert "A ends here" in lines[0]


def test_cli_exit_codes_and_unreadable_archive(serving_archive, serving_archive_again, tmp_path):
    # Two captures of serving_step.py (two processes, so other pids and host addresses).
    proc = hrr_cli("diff", serving_archive, serving_archive_again)
    assert proc.returncode == EXIT_EQUAL == 0, describe(proc)
    assert "equal: 1 process(es), 67 record(s) compared" in proc.stdout
    hrrtest.capture(tmp_path / "a", make_app(grid=1))
    hrrtest.capture(tmp_path / "b", make_app(grid=2))
    proc = hrr_cli("diff", tmp_path / "a", tmp_path / "b")
    assert proc.returncode == EXIT_DIFFERENT == 1, describe(proc)
    assert "first divergence" in proc.stdout and "args.gridDimX" in proc.stdout
    (tmp_path / "empty").mkdir()
    for bad in (tmp_path / "empty", tmp_path / "missing"):
        proc = hrr_cli("diff", tmp_path / "a", bad)
        assert proc.returncode == EXIT_TROUBLE == 4, describe(proc)
        assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1, describe(proc)
        assert proc.stderr.startswith("hrr: error:") and str(bad) in proc.stderr


def test_snapshot_ranges_listed_in_address_order_compare_as_a_set():
    # Pinned snapshot records list their ranges in capture-address order; another run may
    # place the same buffers the other way round.
    from hrr.inspect.diff import _Normaliser, first_difference
    from hrr.inspect.records import Call

    def run(first, second):
        norm = _Normaliser()
        for i, base in enumerate((first, second)):
            norm.record(Call(i, 0, i, 1, "hipHostMalloc", [64, 0], 0, [base], {}))
        snaps = [{"base": b, "length": 64, "chunks": [[("%032x" % n), 64]]}
                 for b, n in sorted([(first, 1), (second, 2)])]
        return norm.record(Call(2, 0, 2, 1, "hipDeviceSynchronize", [], 0, [],
                                {"records": {"pinned_snapshot": [{"snaps": snaps}]}})).fields

    a, b = run(0x10000, 0x20000), run(0x20000, 0x10000)
    assert first_difference(a, b) is None
    c = run(0x10000, 0x20000)
    c["details"]["records"]["pinned_snapshot"][0]["snaps"][0]["length"] = 65
    assert first_difference(a, c)[0].startswith("details.records.pinned_snapshot[0].snaps")


def test_a_pointer_to_another_place_in_the_buffer_is_a_divergence(tmp_path):
    hrrtest.capture(tmp_path / "a", make_app(fill_offset=0))
    _capture_shifted(tmp_path / "b", make_app(fill_offset=4))
    first_launch = _values(tmp_path / "a", "hipModuleLaunchKernel")[0][0]
    result, lines = _diff(tmp_path / "a", tmp_path / "b")
    # named by the kernel's parameter (dst), as an allocation and offset on each side
    assert (result.index_a, result.field) == (first_launch, "launch.args.dst"), lines
    assert "alloc#1+0 != alloc#1+4" in lines[0]


def test_a_missing_process_is_a_divergence(tmp_path):
    import shutil

    from inspect_helpers import REPO
    proc = hrr_cli("capture", "--content", "-o", tmp_path / "a", "--", "python",
                   REPO / "tests" / "cli" / "apps" / "multiproc.py")
    assert proc.returncode == 0, describe(proc)
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    last = sorted((tmp_path / "b").iterdir(), key=lambda p: int(p.name[4:]))[-1]
    shutil.rmtree(last)
    result, lines = _diff(tmp_path / "a", tmp_path / "b")
    assert (result.equal, result.field, result.process) == (False, "processes", 2), lines
    assert f"A has 3 process(es), B has 2; {last.name} (A) has no counterpart" in lines[-1]
    assert _diff(tmp_path / "a", tmp_path / "a")[0].equal
