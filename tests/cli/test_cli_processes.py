"""Every Python process under `hrr capture` records into its own pid-<pid>/ (subprocess
children and fork()ed children), and every thread is recorded with a global sequence."""
from __future__ import annotations

import re

import pytest
from cli_helpers import app, capture, describe, hrr, info_json, only_process, replay_json


def _pids(stdout: str) -> dict[str, int]:
    line = next(ln for ln in stdout.splitlines() if ln.startswith("PIDS "))
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}


@pytest.fixture(scope="module")
def multiproc_archive(tmp_path_factory):
    root = tmp_path_factory.mktemp("multi") / "archive"
    proc = capture(root, *app("multiproc.py"))
    assert "3 process(es) recorded" in proc.stderr, describe(proc)
    return root, _pids(proc.stdout)


def test_each_process_has_its_own_directory(multiproc_archive):
    root, pids = multiproc_archive
    assert sorted(p.name for p in root.iterdir()) == sorted(f"pid-{p}" for p in pids.values())
    data = info_json(root)
    by_pid = {p["pid"]: p for p in data["processes"]}
    assert set(by_pid) == set(pids.values())
    for p in by_pid.values():
        assert p["clean"], p
        assert p["manifest"]["pid"] == p["pid"]
        assert p["calls"].get("hipModuleLaunchKernel", 0) >= 1
    assert by_pid[pids["parent"]]["calls"]["hipModuleLaunchKernel"] == 2
    assert by_pid[pids["sub"]]["calls"]["hipModuleLoadData"] == 1


def test_subprocess_child_replays(multiproc_archive):
    root, pids = multiproc_archive
    proc = hrr("replay", "--strict", root / f"pid-{pids['sub']}")
    assert proc.returncode == 0, describe(proc)
    proc = hrr("replay", "--strict", root / f"pid-{pids['parent']}")
    assert proc.returncode == 0, describe(proc)


def test_forked_child_using_inherited_handles_replays(multiproc_archive):
    root, pids = multiproc_archive
    proc = hrr("replay", "--strict", root / f"pid-{pids['fork']}")
    assert proc.returncode == 0, describe(proc)


def test_forked_child_replays(tmp_path):
    root = tmp_path / "fork"
    proc = capture(root, *app("fork_own_module.py"))
    pids = _pids(proc.stdout)
    assert sorted(p.name for p in root.iterdir()) == sorted(f"pid-{p}" for p in pids.values())
    proc, result = replay_json(root, "--strict")
    assert proc.returncode == 0, describe(proc)
    assert [p["outcome"] for p in result["processes"]] == ["OK"] * 2
    assert any(p["pid"] == pids["fork"] and p["skipped"] is None for p in result["processes"]), describe(proc)
    child = next(p for p in info_json(root)["processes"] if p["pid"] == pids["fork"])
    assert child["clean"] and child["calls"]["hipModuleLaunchKernel"] == 1


def test_threads_have_ids_and_a_global_sequence(tmp_path):
    root = tmp_path / "threads"
    capture(root, *app("threads.py"))
    (proc,) = info_json(root, events=True)["processes"]
    events = proc["events"]
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(len(events))), "one global sequence, in file order, no gaps"
    launches_by_tid: dict[int, int] = {}
    for e in events:
        if e["api"] == "hipModuleLaunchKernel":
            launches_by_tid[e["tid"]] = launches_by_tid.get(e["tid"], 0) + 1
    assert sorted(launches_by_tid.values()) == [5, 5], launches_by_tid  # two worker threads
    main_tid = events[0]["tid"]
    assert main_tid not in launches_by_tid
    assert proc["threads"] == 3
    replayed, result = replay_json(root, "--strict")
    assert replayed.returncode == 0, describe(replayed)
    assert (only_process(result)["checks_passed"], only_process(result)["checks_failed"]) == (10, 0)
