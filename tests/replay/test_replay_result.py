"""The structured replay result: ``replay_archive`` returns it, ``hrr replay`` prints
``render`` of it (so the text and the object cannot disagree) and ``--json`` prints it
as JSON; the archive's verdict is its worst process's."""
from __future__ import annotations

import json

from click.testing import CliRunner
from hostile import D2H, PID, HostileArchive
from hrrtest import fresh_backend, replay

from hrr.cli.main import cli
from hrr.replay.engine import ProcessReplayer, ReplayOptions
from hrr.replay.result import (
    SKIPPED_AFTER_INTERRUPT,
    Divergence,
    Outcome,
    PinnedSnapshots,
    ProcessResult,
    Refusal,
    ReplayResult,
    render,
)
from hrr.replay.run import replay_archive


def _mixed(root, pid: int = PID) -> HostileArchive:
    """One check that passes, one refused record (a copy past its allocation), one
    reproduced error."""
    a = HostileArchive(root, pid=pid)
    dev = a.device(16)
    a.call("hipMemset", [dev, 9, 16])
    a.copy(["h", 0x1000, 16, a.blob(b"\x09" * 16)], ["a", dev, 16, None], 16, D2H)
    a.copy(["h", 0x2000, 64, a.blob(bytes(64))], ["a", dev, 64, None], 64, D2H)   # 64 > 16
    a.call("hipSetDevice", [9], err=101)                                           # invalid device
    return a.close()


def _diverging(root, pid: int) -> HostileArchive:
    a = HostileArchive(root, pid=pid)
    a.call("hipSetDevice", [0], err=101)   # the sim's device 0 exists: replay returns success
    a.call("hipInit", [0])
    return a.close()


def test_a_process_result_holds_the_counts_refusals_and_verdict(tmp_path):
    _mixed(tmp_path)
    result = replay(tmp_path, backend="sim", strict=True)
    (proc,) = result.processes
    assert (proc.pid, proc.backend, proc.records, proc.calls_replayed) == (PID, "sim", 5, 4)
    assert proc.checks == (1, 0, 0) and proc.reproduced_errors == 1 and proc.divergence_count == 0
    assert [(r.seq, r.api, r.category) for r in proc.refusals] == [(3, "hipMemcpy", "bounds")]
    assert {k: [r.seq for r in v] for k, v in proc.refusals_by_category().items()} == {"bounds": [3]}
    assert proc.strict_reasons == ("1 records refused",)
    assert proc.outcome is Outcome.REFUSED and result.outcome is Outcome.REFUSED and result.exit_code == 1
    assert replay(tmp_path, backend="sim", strict=False).outcome is Outcome.OK


def test_the_printed_summary_is_render_of_the_result(tmp_path):
    """What `hrr replay` prints is, line for line, ``render`` of what ``replay_archive``
    returns; the lines streamed through ``echo`` are the same."""
    _mixed(tmp_path)
    fresh_backend("sim")
    streamed: list[str] = []
    result = replay_archive(str(tmp_path), backend="sim", options=ReplayOptions(strict=True), plugins=[],
                            echo=streamed.append)
    assert streamed == render(result)
    fresh_backend("sim")
    printed = CliRunner().invoke(cli, ["replay", "--strict", "--plugins", "", str(tmp_path)])
    assert printed.exit_code == result.exit_code == 1, printed.output
    assert printed.output.splitlines() == render(result)
    assert render(result)[-1] == "Result: REFUSED by --strict"


def test_json_prints_the_result_object(tmp_path):
    _mixed(tmp_path)
    fresh_backend("sim")
    expected = replay_archive(str(tmp_path), backend="sim", options=ReplayOptions(strict=True), plugins=[])
    fresh_backend("sim")
    printed = CliRunner().invoke(cli, ["replay", "--strict", "--json", "--plugins", "", str(tmp_path)])
    assert printed.exit_code == 1, printed.output
    data = json.loads(printed.output)
    assert data == json.loads(json.dumps(expected.to_json()))
    (proc,) = data["processes"]
    assert data["outcome"] == "REFUSED" and data["exit_code"] == 1
    assert (proc["checks_passed"], proc["checks_failed"], proc["checks_unverifiable"]) == (1, 0, 0)
    assert proc["refusals_by_category"] == {"bounds": 1}
    assert proc["refusals"][0]["seq"] == 3 and proc["refusals"][0]["category"] == "bounds"
    assert proc["pinned"] == {"restored": 0, "refused": 0, "skipped_graph_capture": 0}
    assert "Result:" not in printed.output   # JSON only, no summary text


def test_a_divergence_names_its_record_api_and_both_errors(tmp_path):
    _diverging(tmp_path, PID)
    result = replay(tmp_path, backend="sim", strict=False)
    (proc,) = result.processes
    assert proc.divergences == (Divergence(0, "hipSetDevice", 101, 0),)
    assert proc.divergences[0].recorded_name == "hipErrorInvalidDevice (101)"
    assert proc.divergences[0].replayed_name == "hipSuccess (0)"
    assert proc.outcome is Outcome.DIVERGED and result.exit_code == 2
    assert proc.records == 1   # stopped early
    data = result.to_json()["processes"][0]["divergences"]
    assert data == [{"seq": 0, "api": "hipSetDevice", "recorded": 101, "replayed": 0, "setup": False,
                     "module": "hip", "recorded_name": "hipErrorInvalidDevice (101)",
                     "replayed_name": "hipSuccess (0)"}]
    kept = replay_archive(str(tmp_path), backend="sim", options=ReplayOptions(keep_going=True), plugins=[])
    assert kept.processes[0].outcome is Outcome.FAILED and kept.processes[0].records == 2


def test_the_archive_takes_its_worst_processs_verdict(tmp_path):
    _mixed(tmp_path, pid=101)
    _diverging(tmp_path, pid=102)
    result = replay(tmp_path, backend="sim", strict=True)
    assert [(p.pid, p.outcome) for p in result.processes] == [(101, Outcome.REFUSED), (102, Outcome.DIVERGED)]
    assert result.outcome is Outcome.DIVERGED and result.exit_code == 2
    assert result.process(102).divergence_count == 1


def test_ctrl_c_gives_an_interrupted_result_naming_what_was_not_replayed(tmp_path, monkeypatch):
    for pid in (101, 102, 103):
        _mixed(tmp_path, pid=pid)
    real, seen = ProcessReplayer._replay_wire, []

    def interrupted_at_the_third(self, ev):
        seen.append(ev)
        if len(seen) == 3:
            raise KeyboardInterrupt
        return real(self, ev)

    monkeypatch.setattr(ProcessReplayer, "_replay_wire", interrupted_at_the_third)
    result = replay(tmp_path, backend="sim", strict=True)
    first, *rest = result.processes
    assert first.interrupted and first.outcome is Outcome.INTERRUPTED and first.records == 3
    assert [(p.pid, p.outcome, p.skipped) for p in rest] == [
        (102, Outcome.SKIPPED, SKIPPED_AFTER_INTERRUPT), (103, Outcome.SKIPPED, SKIPPED_AFTER_INTERRUPT)]
    assert result.outcome is Outcome.INTERRUPTED and result.exit_code == 130
    assert render(result)[-2:] == ["Result: INTERRUPTED (Ctrl-C) after 3 records: the summary above is partial",
                                   "Not replayed: pid-102, pid-103"]


def test_the_pinned_contract_line_is_rendered_from_the_counters():
    proc = ProcessResult(pid=7, outcome=Outcome.OK, backend="sim",
                         counters={"pinned_restored": 3, "pinned_refused": 1, "pinned_skipped_graph_capture": 2},
                         refusals=(Refusal(4, "hipModuleLaunchKernel", "no such allocation", "pinned_snapshot"),))
    assert proc.pinned == PinnedSnapshots(restored=3, refused=1, skipped_graph_capture=2)
    lines = render(ReplayResult("a", (proc,)))
    assert "Pinned host snapshots: 3 restored, 1 refused, 2 skipped (graph capture)" in lines
    assert "  record 4 hipModuleLaunchKernel [pinned_snapshot]: no such allocation" in lines
    assert lines[-1] == "Result: OK"
