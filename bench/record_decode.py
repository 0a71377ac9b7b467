"""What one record costs to decode: Python memory per payload byte, by record shape.

    python bench/record_decode.py [MiB]        (default 8)

The reader decodes a frame's msgpack payload whole (``record_unpacker``), so the largest
record it accepts (``Limits.max_record_bytes``) bounds one record's decode memory at that
size times the worst shape's cost per byte. Each shape is a record-sized payload of one
kind of item; the figure is tracemalloc's peak while decoding it, over the payload size.
"""
from __future__ import annotations

import os
import sys
import tracemalloc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from hrr.archive.format import record_unpacker  # noqa: E402

SHAPES = {
    "empty maps {}": b"\x80",
    "empty lists []": b"\x90",
    "one-item lists [0]": b"\x91\x00",
    "small ints 0..127": b"\x05",
    "ints over 256": b"\xcd\x12\x34",
    "floats": b"\xcb" + bytes(8),
    "2-char strings": b"\xa2ab",
    "1 KiB bytes": b"\xc5\x04\x00" + bytes(1024),
}


def payload(item: bytes, size: int) -> bytes:
    """A msgpack array (array32 header) of as many ``item``s as fit in ``size`` bytes."""
    n = (size - 5) // len(item)
    return b"\xdd" + n.to_bytes(4, "big") + item * n


def cost(data: bytes) -> float:
    """Peak bytes allocated while decoding ``data`` as the reader does, per payload byte."""
    unpacker = record_unpacker(len(data))
    tracemalloc.start()
    unpacker.feed(data)
    value = next(unpacker)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del value
    return peak / len(data)


def main(argv: list[str]) -> dict[str, float]:
    size = int(float(argv[0]) * (1 << 20)) if argv else 8 << 20
    out = {}
    for name, item in SHAPES.items():
        data = payload(item, size)
        out[name] = cost(data)
        print(f"{name:>20}: {out[name]:6.1f} bytes of memory per payload byte "
              f"({out[name] * size / (1 << 20):7.0f} MiB for {size >> 20} MiB)")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
