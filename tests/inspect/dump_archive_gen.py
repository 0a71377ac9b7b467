"""Test-only: write a large, realistic archive straight through the archive writer.

No program runs: records are built in the wire form capture writes (set-up calls, then a
loop of launches with pinned snapshot records, async copies, syncs and ``@d2h`` checks).
``python dump_archive_gen.py OUT N`` writes an N-record archive; ``--measure [ARGS]`` then
runs ``hrr dump OUT ARGS`` and prints time to the first line and peak RSS (the 1M figures).
"""
from __future__ import annotations

import os
import struct
import sys

from hrr.archive import open_process_writer

TID = 0x7F0000001000
MODULE, STREAM, EVENT = 0x53000010, 0x51000010, 0x52000010
FUNCS = {0x54000010: "add_u32", 0x54000020: "sum_u32"}
DEV, PINNED = 0x1000000000000, 0x7F5500000000
CODE = "cc7777e8e56e1decc232dd2d99984041"
BLOB = "9a59905123e19a9c083459e20edd8065"


def setup_records() -> list[list]:
    """The calls before the loop: module, functions, allocations, a stream and an event."""
    recs = [["hipInit", [0], [], {}],
            ["hipModuleLoadData", [CODE], [MODULE], {}]]
    for fn, name in FUNCS.items():
        recs.append(["hipModuleGetFunction", [MODULE, name], [fn],
                     {"layout": [[0, 8, "pointer", "dst"], [8, 8, "pointer", "src"], [16, 4, "value", "n"]]}])
    recs += [["hipMalloc", [1024], [DEV], {}],
             ["hipHostMalloc", [1024, 0], [PINNED], {}],
             ["hipStreamCreate", [], [STREAM], {}],
             ["hipEventCreate", [], [EVENT], {}]]
    return recs


def loop_records(i: int, seq: int) -> list[list]:
    """One loop iteration (5 records); ``seq`` is the sequence number of its first record."""
    fn = 0x54000010 if i % 2 == 0 else 0x54000020
    snap = {"pinned_snapshot": [{"v": 1, "stream": STREAM, "during_capture": False, "snaps": [
        {"base": PINNED, "offset": 0, "length": 1024, "chunks": [[BLOB, 1024]]}]}]}
    launch = {"kernel": FUNCS[fn], "grid": [2, 1, 1], "block": [128, 1, 1],
              "kernargs": struct.pack("<QQI", DEV, PINNED, 256), "ptrs": [[0, DEV, 0], [8, PINNED, 0]]}
    return [
        ["hipModuleLaunchKernel", [fn, 2, 1, 1, 128, 1, 1, 0, STREAM, None, None], [],
         {"launch": launch, "records": snap}],
        ["hipEventRecord", [EVENT, STREAM], [], {}],
        ["hipMemcpyAsync", [["a", PINNED, 4, None], ["a", DEV, 4, None], 4, 2, STREAM], [], {}],
        ["hipStreamSynchronize", [STREAM], [], {}],
        ["@d2h", [seq + 2], [], {"blob": BLOB, "n": 4}],
    ]


def write_archive(root: str, n_records: int, pid: int = 4242, tid: int = TID) -> str:
    """Write ``root/pid-<pid>/`` holding exactly ``n_records`` event records; returns root."""
    writer = open_process_writer(root, pid, {"backend": "sim"},
                                 manifest={"plugins": {"pinned_snapshot": "0.1.0"}})
    seq, i = 0, 0
    pending = setup_records()
    while seq < n_records:
        if not pending:
            pending = loop_records(i, seq)
            i += 1
        api, args, outs, extra = pending.pop(0)
        writer.append([seq, tid, api, args, 0, outs, extra])
        seq += 1
    writer.close()
    return root


def measure(root: str, *dump_args: str) -> str:
    """Run ``hrr dump ROOT`` as a child; time to its first and second line, total, peak RSS."""
    import subprocess
    import time

    t0 = time.monotonic()
    child = subprocess.Popen([sys.executable, "-m", "hrr.cli.main", "dump", root, *dump_args],
                             stdout=subprocess.PIPE)
    assert child.stdout is not None
    child.stdout.readline()
    t1 = time.monotonic()
    child.stdout.readline()
    t2 = time.monotonic()
    lines = 2 + sum(1 for _ in child.stdout)
    _, status, usage = os.wait4(child.pid, 0)
    return (f"lines={lines} first_line={t1 - t0:.3f}s first_record={t2 - t0:.3f}s "
            f"total={time.monotonic() - t0:.1f}s peak_rss={usage.ru_maxrss / 1024:.1f}MiB status={status}")


if __name__ == "__main__":
    # python dump_archive_gen.py OUT N [--measure [DUMP ARGS...]]
    if not os.path.exists(sys.argv[1]):
        write_archive(sys.argv[1], int(sys.argv[2]))
    if "--measure" in sys.argv:
        print(measure(sys.argv[1], *sys.argv[sys.argv.index("--measure") + 1:]))
