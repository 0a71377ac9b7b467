"""Memory a pack index of 200,000 entries takes when the reader loads it (tracemalloc).

    python bench/pack_index_memory.py

docs/threat-model.md quotes its output (held and peak bytes per entry, before and after).
"""
from __future__ import annotations

import os
import tempfile
import time
import tracemalloc

from hrr.archive import open_archive, open_process_writer
from hrr.archive.pack import encode_entry

N = 200_000


def main() -> None:
    root = tempfile.mkdtemp()
    w = open_process_writer(root, 7, {"backend": "sim"}, pack_blobs=True, max_bytes=None, warn_bytes=None)
    name = w.put_blob(b"abcd" * 8)
    w.append({"blobs": [name]})
    w.close()
    blobs = os.path.join(root, "pid-7", "blobs")
    start = os.path.getsize(os.path.join(blobs, "pack-0.dat"))
    with open(os.path.join(blobs, "pack-0.dat"), "ab") as f:
        f.write(b"x" * N)
    with open(os.path.join(blobs, "pack-0.idx"), "ab") as f:
        f.write(b"".join(encode_entry(f"{i:032x}", start + i, 1) for i in range(1, N)))
    with open_archive(root) as a:
        (p,) = a.processes
        tracemalloc.start()
        t = time.time()
        p.read_blob(name)
        cur, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    print(f"{N} entries: held {cur / N:.0f} B/entry, peak {peak / N:.0f} B/entry, "
          f"{time.time() - t:.2f} s (tracemalloc on)")


if __name__ == "__main__":
    main()
