"""Format version 3: capture writes a launch's ``extra.launch`` as a list with fixed
positions; replay, ``hrr dump``, ``hrr diff``, ``hrr info`` and the timeline read it as
they read formats 1 and 2's map, and an archive of those older formats still replays."""
from __future__ import annotations

import ctypes
import json
import os
import shutil

import msgpack
import numpy as np
import pytest
from click.testing import CliRunner
from hostile import HostileArchive
from hrrtest import archive_calls, capture, only, replay, text

from hrr.archive.format import EVENTS_FILE, FILE_HEADER, MANIFEST_FILE, encode_file_header, join_events, split_events
from hrr.cli.main import cli
from hrr.events.launch import launch_list

N = 64


def _params(words: tuple) -> list[int]:
    return [ctypes.addressof(w) for w in words]


def _app(unreadable: bool):
    """fill, a cooperative fill, add, a copy back; with ``unreadable``, also a launch whose
    kernelParams capture cannot read (recorded as the error form)."""
    def app(hip, rtc, be):
        mod = hip.hipModuleLoadData(be.builtin_code_object())[1]
        fill = hip.hipModuleGetFunction(mod, b"fill_u32")[1]
        add = hip.hipModuleGetFunction(mod, b"add_u32")[1]
        s = hip.hipStreamCreate()[1]
        a, b, c = (hip.hipMalloc(N * 4)[1] for _ in range(3))
        fa = (ctypes.c_void_p(int(a)), ctypes.c_uint32(3), ctypes.c_uint32(N))
        fb = (ctypes.c_void_p(int(b)), ctypes.c_uint32(4), ctypes.c_uint32(N))
        abc = (ctypes.c_void_p(int(c)), ctypes.c_void_p(int(a)), ctypes.c_void_p(int(b)), ctypes.c_uint32(N))
        assert int(hip.hipModuleLaunchKernel(fill, 1, 1, 1, N, 1, 1, 0, s, _params(fa), None)[0]) == 0
        assert int(hip.hipModuleLaunchCooperativeKernel(fill, 1, 1, 1, N, 1, 1, 0, s, _params(fb))[0]) == 0
        assert int(hip.hipModuleLaunchKernel(add, 2, 1, 1, N // 2, 1, 1, 0, s, _params(abc), None)[0]) == 0
        if unreadable:
            hip.hipModuleLaunchKernel(fill, 1, 1, 1, N, 1, 1, 0, s, _params(fa[:1]), None)
        hip.hipStreamSynchronize(s)
        out = np.zeros(N, np.uint32)
        hip.hipMemcpyDtoH(out, c, N * 4)
        return out
    return app


def _launches(root) -> list:
    return [r[6]["launch"] for r in archive_calls(root) if "launch" in r[6]]


def _old_map(launch: list) -> dict:
    """The map formats 1 and 2 wrote for ``launch``, its keys in their order."""
    kernel, grid, block, *rest = launch
    out = {"kernel": kernel, "grid": grid, "block": block}
    if len(rest) == 1:
        out["error"] = rest[0]
    else:
        out["kernargs"] = rest[0]
        if len(rest) == 3:
            out["offsets"] = rest[2]
        out["ptrs"] = rest[1]
    return out


def _as_format_2(src, dst) -> None:
    """``dst``: the archive ``src`` as formats 1 and 2 wrote it (a version 2 header, each
    launch a map): what an older hrr made of the same capture."""
    shutil.copytree(src, dst)
    (pid_dir,) = [os.path.join(dst, p) for p in os.listdir(dst) if p.startswith("pid-")]
    path = os.path.join(pid_dir, EVENTS_FILE)
    head, version, values, trailer = split_events(open(path, "rb").read())
    assert version == 3
    fields = msgpack.unpackb(head[FILE_HEADER.size:], raw=False)
    for v in values:
        if type(v) is list and len(v) == 7 and "launch" in v[6]:
            v[6]["launch"] = _old_map(v[6]["launch"])
    with open(path, "wb") as f:
        f.write(join_events(encode_file_header(fields, 2), values, trailer, 2))
    manifest_path = os.path.join(pid_dir, MANIFEST_FILE)
    manifest = json.load(open(manifest_path))
    manifest["format_version"] = 2
    with open(manifest_path, "w") as f:
        json.dump(manifest, f)


def test_capture_writes_lists_and_they_replay_byte_exact(tmp_path, paths):
    root = tmp_path / "v3"
    out = capture(root, _app(False))
    assert (out == 7).all()
    kernargs = [lst[3] for lst in _launches(root)]
    assert [type(lst) for lst in _launches(root)] == [list] * 3
    assert [len(lst) for lst in _launches(root)] == [5, 6, 5]   # the cooperative one carries offsets
    assert _launches(root)[1][5] == [0, 8, 12] and [len(k) for k in kernargs] == [16, 16, 28]
    assert [[w[0] for w in lst[4]] for lst in _launches(root)] == [[0], [0], [0, 8, 16]]
    (pid_dir,) = root.glob("pid-*")
    assert json.loads((pid_dir / MANIFEST_FILE).read_text())["format_version"] == 3
    result = replay(root, backend="sim", strict=True)
    assert result.exit_code == 0 and only(result).checks == (1, 0, 0), text(result)
    assert paths["fast"] == 2   # the two hipModuleLaunchKernel records; the cooperative one is the general path's


def test_the_same_capture_as_format_2_replays_the_same(tmp_path, paths):
    capture(tmp_path / "v3", _app(False))
    _as_format_2(tmp_path / "v3", tmp_path / "v2")
    assert [type(m) for m in _launches(tmp_path / "v2")] == [dict] * 3
    assert list(_launches(tmp_path / "v2")[1]) == ["kernel", "grid", "block", "kernargs", "offsets", "ptrs"]
    result = replay(tmp_path / "v2", backend="sim", strict=True)
    assert result.exit_code == 0 and only(result).checks == (1, 0, 0), text(result)
    assert only(result).calls_replayed == only(replay(tmp_path / "v3", backend="sim", strict=True)).calls_replayed
    assert paths["fast"] == 4   # the map form takes the fast path too


def _run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_dump_diff_info_and_timeline_read_both_forms_alike(tmp_path):
    v3, v2 = tmp_path / "v3", tmp_path / "v2"
    capture(v3, _app(True))
    _as_format_2(v3, v2)
    assert [len(lst) for lst in _launches(v3)] == [5, 6, 5, 4]    # the unreadable launch: its error
    assert "kernelParams has 1 entries" in _launches(v3)[3][3]
    dump3 = _run("dump", str(v3))
    assert dump3 == _run("dump", str(v2))
    assert "kernel=add_u32" in dump3 and "ptrs=3" in dump3 and "malformed" not in dump3
    jsonl3 = [json.loads(line) for line in _run("dump", "--jsonl", str(v3)).splitlines()]
    assert jsonl3 == [json.loads(line) for line in _run("dump", "--jsonl", str(v2)).splitlines()]
    entries = [e["launch"] for e in jsonl3 if "launch" in e]
    assert [e["kernel"] for e in entries] == ["fill_u32", "fill_u32", "add_u32", "fill_u32"]
    assert "error" in entries[3] and entries[2]["grid"] == [2, 1, 1] and entries[2]["pointers"] == 3
    _run("diff", str(v3), str(v2))   # exit 0: no record differs
    info3 = json.loads(_run("info", "--json", str(v3)))
    info2 = json.loads(_run("info", "--json", str(v2)))
    for info in (info3, info2):
        (proc,) = info["processes"]
        proc.pop("manifest", None)
        info.pop("archive")
    assert info3 == info2
    text3 = _run("info", str(v3)).replace(str(v3), "A").replace("format 3", "format N")
    assert text3 == _run("info", str(v2)).replace(str(v2), "A").replace("format 2", "format N")
    assert "add_u32" in text3
    trace3, trace2 = tmp_path / "3.json", tmp_path / "2.json"
    _run("export", "--chrome-trace", str(trace3), str(v3))
    _run("export", "--chrome-trace", str(trace2), str(v2))
    events3 = json.loads(trace3.read_text())["traceEvents"]
    assert events3 == json.loads(trace2.read_text())["traceEvents"]
    assert any(e.get("name") == "add_u32" and e.get("args", {}).get("grid") == [2, 1, 1] for e in events3)


@pytest.mark.parametrize("form", ["list", "map"])
def test_info_names_a_kernel_from_either_form(tmp_path, form):
    """A launch of a function no record created: only extra.launch names its kernel."""
    launch = {"kernel": "mystery_k", "grid": [3, 1, 1], "block": [4, 1, 1], "kernargs": bytes(8), "ptrs": []}
    a = HostileArchive(tmp_path / "a")
    a.call("hipInit", [0])
    a.call("hipModuleLaunchKernel", [0x77, 3, 1, 1, 4, 1, 1, 0, 0, None, None],
           extra={"launch": launch_list(launch) if form == "list" else launch})
    a.close()
    info = json.loads(_run("info", "--json", str(a.root)))
    assert [k["name"] for k in info["processes"][0]["kernels"]["rows"]] == ["mystery_k"], info


def test_a_manifest_repair_rebuilds_names_the_version_events_bin_has(tmp_path):
    """hrr repair rebuilding a format 2 archive's lost manifest keeps it at version 2, as
    events.bin says, so ``hrr info`` and the manifest check tell the same."""
    capture(tmp_path / "v3", _app(False))
    _as_format_2(tmp_path / "v3", tmp_path / "v2")
    (pid_dir,) = (tmp_path / "v2").glob("pid-*")
    (pid_dir / MANIFEST_FILE).unlink()
    _run("repair", str(tmp_path / "v2"))
    assert json.loads((pid_dir / MANIFEST_FILE).read_text())["format_version"] == 2
    assert "format 2" in _run("info", str(tmp_path / "v2"))
    assert only(replay(tmp_path / "v2", backend="sim", strict=False)).checks == (1, 0, 0)
