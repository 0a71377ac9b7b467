"""`hrr info`: the tables hold the right numbers, --json is the same data as strict JSON,
per-key tables are bounded, and memory does not grow with the number of records."""
from __future__ import annotations

import json
import os
import sys
import tracemalloc
from pathlib import Path

import pytest
from cli_helpers import EXAMPLE, describe, hrr
from click.testing import CliRunner

from hrr.archive import open_archive, open_process_writer
from hrr.cli.info import MAX_SHOWN, Top, archive_info, render_info
from hrr.cli.main import cli

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "inspect"))
import dump_archive_gen  # noqa: E402


@pytest.fixture(scope="module")
def serving(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/serving_step.py captured through the CLI, content on, every plugin."""
    root = tmp_path_factory.mktemp("info") / "a"
    # loose blobs: the test counts the unique blob files itself
    proc = hrr("capture", "--content", "--loose-blobs", "-o", root, "--", "python", EXAMPLE, timeout=120)
    assert proc.returncode == 0, describe(proc)
    return root


def _strict(text: str) -> dict:
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON {c}"))


def _row(text: str, first: str) -> list[str]:
    """The cells of the table row whose first cell is ``first``."""
    for line in text.splitlines():
        cells = [c.strip() for c in line.replace("┃", "│").split("│")]
        if cells and cells[0] == first:
            return cells
    raise AssertionError(f"no row {first!r} in:\n{text}")


def _table_after(text: str, title: str) -> str:
    """The lines after the line starting with ``title`` (up to the next blank-titled table)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    return "\n".join(lines[start:start + 60])


def _expected_from_records(root: Path) -> dict:
    """What the tables should say, counted here straight from the reader (independent of info)."""
    snaps = {"records": 0, "allocations": 0, "bytes": 0, "chunks": 0}
    refs, ref_bytes = 0, 0
    with open_archive(str(root)) as arc:
        (proc,) = arc.processes
        for item in proc.checked_events():
            ev = item.event
            for recs in (ev.extra.get("records") or {}).values():
                for rec in recs:
                    if isinstance(rec, dict) and "snaps" in rec:
                        snaps["records"] += 1
                        for s in rec["snaps"]:
                            snaps["allocations"] += 1
                            snaps["bytes"] += s["length"]
                            snaps["chunks"] += len(s["chunks"])
                            refs += len(s["chunks"])
                            ref_bytes += sum(n for _, n in s["chunks"])
            if ev.api == "@d2h" and ev.extra.get("blob"):
                refs, ref_bytes = refs + 1, ref_bytes + ev.extra["n"]
            for a in ev.args:
                if isinstance(a, list) and len(a) == 4 and isinstance(a[3], str):
                    refs, ref_bytes = refs + 1, ref_bytes + a[2]
        blob_dir = Path(proc.path) / "blobs"
        files = [p for p in blob_dir.rglob("*") if p.is_file()]
    return {"snaps": snaps, "refs": refs, "ref_bytes": ref_bytes,
            "unique": len(files), "unique_bytes": sum(p.stat().st_size for p in files)}


def test_info_tables_hold_the_serving_steps_numbers(serving):
    proc = hrr("info", serving, check=0)
    text = proc.stdout
    # serving_step.py: step 0 launches add_u32 and sum_u32 once and struct_sum_u32 once eagerly;
    # the captured graph holds add_u32 + sum_u32 and is launched 3 times, each followed by an
    # eager struct_sum_u32 on the post stream; 2 streams; one thread.
    assert _row(text, "add_u32")[1:] == ["2", "2x1x1/128x1x1 x2"]
    assert _row(text, "sum_u32")[1:] == ["2", "1x1x1/128x1x1 x2"]
    assert _row(text, "struct_sum_u32")[1:] == ["4", "1x1x1/64x1x1 x4"]
    assert _row(text, "hipModuleLaunchKernel")[1:] == ["8", "0"]
    assert _row(text, "hipGraphLaunch")[1:] == ["3", "0"]
    graphs = _table_after(text, "Graphs")
    assert _row(graphs, "1")[1:] == ["1", "3"]       # captures, instantiations, launches
    assert "Streams (2 created)" in text and "Threads (1)" in text
    data = _strict(hrr("info", "--json", serving, check=0).stdout)
    (p,) = data["processes"]
    want = _expected_from_records(serving)
    assert p["snapshots"] == want["snaps"] and want["snaps"]["records"] > 0
    b = p["blobs"]
    assert (b["references"], b["referenced_bytes"]) == (want["refs"], want["ref_bytes"])
    assert (b["unique"], b["unique_bytes"]) == (want["unique"], want["unique_bytes"])
    assert b["saved_bytes"] == want["ref_bytes"] - want["unique_bytes"] > 0   # pinned inputs repeat
    snap_row = _row(_table_after(text, "Pinned snapshots"), str(want["snaps"]["records"]))
    assert snap_row[1:] == [str(want["snaps"][k]) for k in ("allocations", "bytes", "chunks")]
    blob_row = _row(_table_after(text, "Blobs"), str(want["refs"]))
    assert blob_row[1:] == [str(x) for x in (want["ref_bytes"], want["unique"], want["unique_bytes"],
                                             b["saved_bytes"])]
    assert p["records"] == sum(p["calls"].values()) == p["manifest"]["counts"]["events"]
    assert [r["calls"] for r in p["per_thread"]["rows"]] == [p["records"]]
    assert sum(r["calls"] for r in p["streams"]["rows"]) > 0 and len(p["streams"]["rows"]) == 2
    assert p["graphs"] == {"captures": 1, "instantiations": 1, "launches": 3}
    cells = _row(text, str(p["pid"]))
    assert cells[3] == "content" and cells[4].startswith("graph_capture 0.1.0") \
        and cells[5:7] == ["yes", str(p["records"])]


def _write(root: Path, records: list[list], manifest: dict | None = None, pid: int = 4242) -> Path:
    w = open_process_writer(str(root), pid, {"backend": "sim"}, manifest=manifest or {})
    for seq, (api, args, err, outs, extra) in enumerate(records):
        w.append([seq, 0x7000 + seq % 3, api, args, err, outs, extra])
    w.close()
    return root


def _launch(kernel: str, grid: list, block: list) -> list:
    return ["hipModuleLaunchKernel", [0x54000010, *grid, *block, 0, 0, None, None], 0, [],
            {"launch": {"kernel": kernel, "grid": grid, "block": block}}]


def test_info_bounds_per_key_tables_and_lists_unreplayable_calls(tmp_path):
    n = MAX_SHOWN + 7
    records = [_launch(f"k{i:03d}", [1 + i % 2, 1, 1], [64, 1, 1]) for i in range(n) for _ in range(1 + (i < 3))]
    records.append(["hipMalloc", [16], 1, [0], {}])     # a failed call
    unreplayable = [{"api": "hipIpcOpenMemHandle", "reason": "another process's memory"}]
    root = _write(tmp_path / "a", records, {"unreplayable_apis": unreplayable})
    data = archive_info(str(root))
    (p,) = data["processes"]
    k = p["kernels"]
    assert len(k["rows"]) == MAX_SHOWN and k["more_kernels"] == 7 and k["more_launches"] == 7
    assert [r["name"] for r in k["rows"][:3]] == ["k000", "k001", "k002"] and k["rows"][0]["launches"] == 2
    assert p["failed_calls"] == {"hipMalloc": 1} and p["threads"] == 3
    assert p["unreplayable"] == unreplayable
    text = render_info(data)
    assert "and 7 more kernels (7 calls)" in text
    assert _row(text, "hipIpcOpenMemHandle")[1] == "another process's memory"
    assert _row(text, "hipMalloc")[1:] == ["1", "1"]
    json.dumps(data, allow_nan=False)


def test_top_counts_what_does_not_fit_in_other():
    top = Top(cap=2)
    for key in "aabcdd":
        top.add(key)
    assert top.counts == {"a": 2, "b": 1} and top.other == 3
    rows, more_keys, more_records = top.table(shown=1)
    assert rows == [("a", 2)] and (more_keys, more_records) == (1, 4)


def test_kernel_names_from_the_archive_are_not_markup(tmp_path):
    root = _write(tmp_path / "a", [_launch("[bold]x[/bold]", [1, 1, 1], [1, 1, 1]),
                                   _launch("[/oops]", [1, 1, 1], [1, 1, 1])])
    result = CliRunner().invoke(cli, ["info", str(root)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "[bold]x[/bold]" in result.stdout and "[/oops]" in result.stdout


def test_info_events_streams_every_record_after_the_tables(serving):
    result = CliRunner().invoke(cli, ["info", "--events", str(serving)], catch_exceptions=False)
    lines = result.stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("pid-") and line.endswith("records:"))
    events = lines[first + 1:]
    assert events[0].split()[0] == "#0" and "hipInit" in events[0]
    assert [int(line.split()[0][1:]) for line in events] == list(range(len(events)))
    assert [line.strip() for line in lines].index("Kernels") < first


def _peak(root: str) -> int:
    tracemalloc.start()
    try:
        archive_info(root)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_info_memory_does_not_grow_with_records(tmp_path):
    small = dump_archive_gen.write_archive(str(tmp_path / "small"), 1_000)
    big = dump_archive_gen.write_archive(str(tmp_path / "big"), 10_000)
    (p,) = archive_info(big)["processes"]
    assert p["records"] == 10_000
    # The generator writes references to blobs but no blob files: nothing was saved by dedup.
    assert p["blobs"]["references"] > 0 and p["blobs"]["unique"] == 0 and p["blobs"]["saved_bytes"] is None
    _peak(small)   # warm caches (imports, catalogue lookups) so they count in neither
    p_small, p_big = _peak(small), _peak(big)
    # Ten times the records: the peak may move by buffer noise, never by records kept.
    assert p_big < p_small * 1.25 + 64 * 1024, (p_small, p_big)


def test_info_json_unknown_totals_and_manifest_fields_are_strict(tmp_path):
    root = _write(tmp_path / "a", [["hipInit", [0], 0, [], {}]])
    path = root / "pid-4242" / "manifest.json"
    m = json.loads(path.read_text())
    m["counts"] = {"events": 1}          # no blob counts: dedup savings unknown
    m["ended"] = {"how": "exit", "status": 3}
    path.write_text(json.dumps(m))
    result = CliRunner().invoke(cli, ["info", "--json", str(root)], catch_exceptions=False)
    (p,) = _strict(result.stdout)["processes"]
    assert p["blobs"]["unique"] is None and p["blobs"]["saved_bytes"] is None
    assert p["ended"] == {"how": "exit", "status": 3}
    text = CliRunner().invoke(cli, ["info", str(root)], catch_exceptions=False).stdout
    assert _row(text, "4242")[-1] == "exited with status 3"
    assert os.path.isdir(root)


@pytest.mark.parametrize("native", [True, False])
def test_info_names_the_record_path_that_wrote_each_process(tmp_path: Path, native: bool) -> None:
    w = open_process_writer(str(tmp_path), 4242, {"backend": "sim"}, native=native)
    w.append_call(w.api_number("hipGetDevice"), [], 0, [0], {})
    w.close()
    data = archive_info(str(tmp_path))
    assert data["processes"][0]["manifest"]["recorder"] == w.RECORDER
    assert f"{w.RECORDER} record path, clean" in render_info(data)
