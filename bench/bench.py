"""hrr's benchmark: ratios from one run, never timed assertions.

    python bench/bench.py [--backend sim|cuda] [--launches N] [--calls N] [--snapshot-mb M]

Prints:
  * capture overhead per non-launch call (µs) and captured/uncaptured ratio;
  * captured/uncaptured wall time of an app making N small kernel launches;
  * pinned-snapshot cost per launch vs. one xxh3-128 pass over the same bytes;
  * replay time vs. the app's own (uncaptured) time.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import sys
import tempfile
import time

import attrs
import numpy as np
import xxhash

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from hrr.backends import load_backend  # noqa: E402
from hrr.capture.session import CaptureSession  # noqa: E402
from hrr.config import config  # noqa: E402
from hrr.replay.engine import ReplayOptions  # noqa: E402
from hrr.replay.run import replay_archive  # noqa: E402


def small_calls(hip, n: int) -> None:
    for _ in range(n):
        hip.hipGetDevice()


def launches(hip, be, n: int, pinned_bytes: int = 0) -> None:
    mod = hip.hipModuleLoadData(be.builtin_code_object())[1]
    fill = hip.hipModuleGetFunction(mod, b"fill_u32")[1]
    copy = hip.hipModuleGetFunction(mod, b"copy_u8")[1]
    s = hip.hipStreamCreate()[1]
    d = hip.hipMalloc(max(pinned_bytes, 64))[1]
    p = hip.hipHostMalloc(max(pinned_bytes, 64), 0)[1] if pinned_bytes else None
    dp, v, cnt = ctypes.c_void_p(int(d)), ctypes.c_uint32(1), ctypes.c_uint32(16)
    params = [ctypes.addressof(dp), ctypes.addressof(v), ctypes.addressof(cnt)]
    host = np.frombuffer((ctypes.c_uint8 * pinned_bytes).from_address(int(p)), np.uint8) if p else None
    for i in range(n):
        if p is not None:
            host[i % pinned_bytes] = i & 0xFF  # changes one chunk per launch
            hip.hipModuleLaunchKernel(copy, 1, 1, 1, 64, 1, 1, 0, s, None,
                                      (d, p, ctypes.c_uint64(pinned_bytes)))
        else:
            hip.hipModuleLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, s, params, None)
    hip.hipStreamSynchronize(s)
    out = np.zeros(16, np.uint32)
    hip.hipMemcpy(out, d, 64, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
    hip.hipFree(d)
    if p is not None:
        hip.hipHostFree(p)
    hip.hipStreamDestroy(s)
    hip.hipModuleUnload(mod)


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def fresh(be) -> None:
    if hasattr(be, "reset_device"):
        be.reset_device()


def captured(be, plugins, fn) -> tuple[float, str]:
    root = tempfile.mkdtemp(prefix="hrr-bench-")
    cfg = attrs.evolve(config(), backend=be.NAME, content_mode="content")
    session = CaptureSession(be, cfg, root, plugins=plugins)
    t = timed(lambda: fn(session.hip))
    session.close()
    return t, root


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="sim")
    ap.add_argument("--launches", type=int, default=20_000)
    ap.add_argument("--calls", type=int, default=100_000)
    ap.add_argument("--snapshot-mb", type=float, default=4.0)
    ap.add_argument("--snapshot-launches", type=int, default=200)
    args = ap.parse_args()
    be = load_backend(args.backend)
    hip = be.hip
    print(f"backend {args.backend}; python {sys.version.split()[0]}")

    fresh(be)
    base = timed(lambda: small_calls(hip, args.calls))
    fresh(be)
    cap, _ = captured(be, [], lambda h: small_calls(h, args.calls))
    print(f"non-launch call (hipGetDevice x{args.calls}): uncaptured {base / args.calls * 1e6:.2f} us, "
          f"captured {cap / args.calls * 1e6:.2f} us, added {(cap - base) / args.calls * 1e6:.2f} us/call, "
          f"ratio {cap / base:.2f}x")

    fresh(be)
    launches(hip, be, 10)  # warm-up: code object build and load
    fresh(be)
    base = timed(lambda: launches(hip, be, args.launches))
    fresh(be)
    cap, root = captured(be, None, lambda h: launches(h, be, args.launches))
    print(f"{args.launches} small launches: uncaptured {base:.3f} s, captured (all plugins) {cap:.3f} s, "
          f"ratio {cap / base:.2f}x")
    fresh(be)
    lines: list[str] = []
    rep = timed(lambda: replay_archive(root, backend=args.backend, options=ReplayOptions(strict=False),
                                       echo=lines.append))
    print(f"replay of that archive: {rep:.3f} s, replay/original ratio {rep / base:.2f}x "
          f"({lines[-1] if lines else ''})")

    nbytes = int(args.snapshot_mb * 1024 * 1024)
    n = args.snapshot_launches
    fresh(be)
    launches(hip, be, 2, pinned_bytes=nbytes)  # warm-up: code object build, first allocations
    fresh(be)
    base = timed(lambda: launches(hip, be, n, pinned_bytes=nbytes))
    fresh(be)
    cap, _ = captured(be, ["pinned_snapshot"], lambda h: launches(h, be, n, pinned_bytes=nbytes))
    buf = np.random.default_rng(0).integers(0, 255, nbytes, dtype=np.uint8)
    hash_t = min(timed(lambda: xxhash.xxh3_128_digest(buf)) for _ in range(5))
    per_launch = (cap - base) / n
    print(f"pinned snapshot of {args.snapshot_mb:g} MiB per launch ({n} launches, one byte changed each): "
          f"{per_launch * 1e3:.3f} ms added; one xxh3-128 pass {hash_t * 1e3:.3f} ms; "
          f"ratio {per_launch / hash_t:.2f}x")


if __name__ == "__main__":
    main()
