"""Helpers shared by the plugin tests (sim backend, programmatic capture and replay)."""
from __future__ import annotations

import ctypes
import os
import re
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np
import xxhash

from hrr.archive import open_archive
from hrr.backends import load_backend
from hrr.capture.session import CaptureSession
from hrr.config import config
from hrr.replay.engine import ReplayOptions
from hrr.replay.result import PinnedSnapshots, ReplayResult, render
from hrr.replay.run import replay_archive


def fresh_sim(backend: str = "sim") -> Any:
    be = load_backend(backend)
    if hasattr(be, "reset_device"):
        be.reset_device()
    return be


def capture(root: Any, app: Callable[[Any, Any], Any], *, plugins: list[str],
            backend: str = "sim", **overrides: Any) -> Any:
    be = fresh_sim(backend)
    cfg = attrs.evolve(config(), backend=backend, content_mode="content", **overrides)
    session = CaptureSession(be, cfg, str(root), plugins=plugins)
    try:
        return app(session.hip, be, session)
    finally:
        session.close()


def replay(root: Any, *, plugins: list[str] | None = None, limits: Any = None,
           strict: bool = True, backend: str = "sim") -> ReplayResult:
    """Replay ``root`` in this process; its last process's pinned counts are
    ``pinned(result)`` (``text(result)`` is the printed summary, for messages)."""
    fresh_sim(backend)
    return replay_archive(str(root), backend=backend, options=ReplayOptions(strict=strict),
                          plugins=plugins, limits=limits)


def pinned(result: ReplayResult) -> PinnedSnapshots:
    """The pinned-snapshot counts of the archive's last process."""
    return result.processes[-1].pinned


def text(result: ReplayResult) -> str:
    """The summary ``hrr replay`` would print: for assertion messages only."""
    return "\n".join(render(result))


def events(root: Any) -> list[list]:
    proc = open_archive(str(root)).processes[0]
    return [item.value for item in proc.events()]


def manifest(root: Any) -> dict:
    return open_archive(str(root)).processes[0].manifest


def pid_dir(root: Any) -> str:
    return next(os.path.join(str(root), d) for d in os.listdir(str(root)) if d.startswith("pid-"))


def blob_files(root: Any) -> dict[str, int]:
    """name → size of every blob in the first process archive."""
    out = {}
    base = os.path.join(pid_dir(root), "blobs")
    for dirpath, _dirs, files in os.walk(base):
        for f in files:
            if re.fullmatch(r"[0-9a-f]{32}", f):
                out[f] = os.path.getsize(os.path.join(dirpath, f))
    return out


def read_blob(root: Any, name: str) -> bytes:
    with open(os.path.join(pid_dir(root), "blobs", name[:2], name), "rb") as f:
        return f.read()


def xxh(data: bytes) -> str:
    return xxhash.xxh3_128_hexdigest(data)


def records(root: Any, plugin: str = "pinned_snapshot") -> list[tuple[str, list]]:
    """(api, records) of every event carrying records of ``plugin``."""
    out = []
    for ev in events(root):
        extra = ev[6] if len(ev) > 6 and isinstance(ev[6], dict) else {}
        recs = (extra.get("records") or {}).get(plugin)
        if recs:
            out.append((ev[2], recs))
    return out


def whole_chunks(recs: list[dict], chunk_bytes: int) -> list[list[list]]:
    """Each record's allocation as replay holds it after that record: the ``[name, n]`` of
    every chunk, the record's snaps (runs of changed chunks) applied over the earlier
    records' (one allocation per record)."""
    state: dict[int, list] = {}
    out = []
    for rec in recs:
        for snap in rec["snaps"]:
            assert snap["offset"] % chunk_bytes == 0
            first = snap["offset"] // chunk_bytes
            for k, chunk in enumerate(snap["chunks"]):
                state[first + k] = chunk
        out.append([state[i] for i in range(len(state))])
    return out


class Kernels:
    """The built-in kernels loaded through a (recorded) hip module."""

    def __init__(self, hip: Any, be: Any) -> None:
        self.hip = hip
        err, self.mod = hip.hipModuleLoadData(be.builtin_code_object())
        assert err == 0, err
        for name in ("fill_u32", "copy_u8", "add_u32", "sum_u32", "struct_sum_u32",
                     "wait_flag", "set_flag"):
            err, fn = hip.hipModuleGetFunction(self.mod, name.encode())
            assert err == 0, (name, err)
            setattr(self, name, fn)

    def launch(self, fn: Any, args: Any, stream: Any = None, extra: Any = None) -> None:
        if extra is not None:
            err = self.hip.hipModuleLaunchKernel(fn, 1, 1, 1, 64, 1, 1, 0, stream, None, extra)[0]
        else:
            err = self.hip.hipModuleLaunchKernel(fn, 1, 1, 1, 64, 1, 1, 0, stream, None, tuple(args))[0]
        assert err == 0, err

    def sum(self, dst: Any, src: Any, n: int, stream: Any = None) -> None:
        self.launch(self.sum_u32, (dst, src, ctypes.c_uint32(n)), stream)


def pinned_array(ptr: Any, n_u32: int) -> np.ndarray:
    """A numpy view of pinned host memory at ``int(ptr)``."""
    buf = (ctypes.c_uint32 * n_u32).from_address(int(ptr))
    return np.ctypeslib.as_array(buf)


def d2h(hip: Any, dev: Any, nbytes: int) -> np.ndarray:
    out = np.zeros(nbytes, np.uint8)
    err = hip.hipMemcpy(out, dev, nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost)[0]
    assert err == 0, err
    return out
