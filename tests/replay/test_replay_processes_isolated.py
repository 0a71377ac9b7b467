"""Processes of one archive replay one after another in one replay process: each gets
a fresh device, and work one left queued (a pinned restore whose stream it never
synchronised) can neither run into the next one's device nor call freed memory.

Found by the mutation fuzzer: the second process's synchronisation ran the first one's
queued host function after its callback had been freed (a segfault)."""
from __future__ import annotations

import json
import struct
import subprocess
import sys
import textwrap

from hostile import HostileArchive


def _queued_restore(root, pid: int, sync: bool) -> None:
    a = HostileArchive(root, pid=pid, plugins={"pinned_snapshot": "1"})
    p = a.pinned(64)
    d = a.device(64)
    fn = a.function("copy_u8")
    data = bytes(range(64))
    blob = a.blob(data)
    record = {"v": 1, "stream": 0, "during_capture": False,
              "snaps": [{"base": p, "offset": 0, "length": 64, "chunks": [[blob, 64]]}]}
    launch = {"kernel": "copy_u8", "grid": [1, 1, 1], "block": [64, 1, 1],
              "kernargs": struct.pack("<QQQ", d, p, 64), "ptrs": [[0, d, 0], [8, p, 0]]}
    a.call("hipModuleLaunchKernel", [fn, 1, 1, 1, 64, 1, 1, 0, 0, None, None],
           extra={"launch": launch, "records": {"pinned_snapshot": [record]}})
    if sync:
        a.call("hipDeviceSynchronize", [])
    a.close()


def test_work_a_process_left_queued_does_not_reach_the_next(tmp_path):
    _queued_restore(tmp_path, 101, sync=False)   # leaves its restore queued
    _queued_restore(tmp_path, 102, sync=True)    # synchronises the device
    code = textwrap.dedent(f"""
        import gc, json, sys
        sys.path[:0] = {[str(p) for p in sys.path]!r}
        from hrr.replay.run import replay_archive
        from hrr.replay.engine import ReplayOptions
        result = replay_archive({str(tmp_path)!r}, backend="sim", options=ReplayOptions(),
                                plugins=["pinned_snapshot"])
        gc.collect()
        print(json.dumps(result.to_json()))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    result = json.loads(proc.stdout)
    assert result["exit_code"] == 0, proc.stdout
    # each process restored its own snapshot, the first one's was never run into the second
    assert [(p["pinned"]["restored"], p["pinned"]["refused"]) for p in result["processes"]] == [(1, 0)] * 2, \
        proc.stdout


def test_a_stall_one_process_left_does_not_block_the_next(tmp_path):
    """Process 1 leaves a wait_flag that nothing releases queued on the null stream (its
    program ended without synchronising); process 2's hipDeviceSynchronize returned 0
    when it was recorded, on its own device, and must again."""
    a = HostileArchive(tmp_path, pid=201)
    flag = a.device(64)
    fn = a.function("wait_flag")
    launch = {"kernel": "wait_flag", "grid": [1, 1, 1], "block": [1, 1, 1],
              "kernargs": struct.pack("<QI", flag, 1) + b"\0" * 4, "ptrs": [[0, flag, 0]]}
    a.call("hipModuleLaunchKernel", [fn, 1, 1, 1, 1, 1, 1, 0, 0, None, None],
           extra={"launch": launch})
    a.close()
    b = HostileArchive(tmp_path, pid=202)
    b.call("hipDeviceSynchronize", [])
    b.close()
    from hrrtest import replay, text
    result = replay(tmp_path, backend="sim", strict=False)
    assert result.exit_code == 0, text(result)
