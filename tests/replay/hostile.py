"""A small builder of hand-made (hostile) archives for the replay tests.

``HostileArchive`` writes one ``pid-<pid>/`` through the archive writer, so the framing,
checksums and blob names are valid and only the records say what a tamperer chose.
Addresses are the capture-side values the records name; replay translates them.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from hrr.archive.format import EVENTS_FILE, FILE_HEADER, FRAME_EVENT, FRAME_HEADER
from hrr.backends.sim import builtin_code_object
from old_formats import open_old_writer

PID = 4242
TID = 1000
PINNED_BASE = 0x7F00_0000_0000       # capture-side pinned addresses (page aligned)
DEVICE_BASE = 1 << 48                # the sim's device range
H2D, D2H = 1, 2                      # hipMemcpyKind


class HostileArchive:
    """Records appended by hand: ``call`` takes the wire form of one event."""

    def __init__(self, root: str | os.PathLike, *, pid: int = PID, plugins: dict | None = None,
                 content: bool = True, **manifest: Any) -> None:
        self.root = Path(root)
        self.pid = pid
        fields = {"plugins": plugins or {}, "content_mode": "content" if content else "metadata-only"}
        fields.update(manifest)
        # Version 1 (one frame per record): the tests name records by their frame offsets.
        self.writer = open_old_writer(str(root), pid, {"backend": "sim"}, manifest=fields, format_version=1)
        self.seq = 0
        self._next_pinned = PINNED_BASE
        self._next_device = DEVICE_BASE
        self._next_handle = 0x5000

    @property
    def path(self) -> Path:
        return self.root / f"pid-{self.pid}"

    # -- raw records ------------------------------------------------------------------
    def raw(self, value: Any) -> None:
        """Append any msgpack-native value as an event frame (wrong shapes included)."""
        self.writer.append(value)
        self.seq += 1

    def call(self, api: Any, args: Any, *, err: int = 0, outs: Any = (), extra: Any = None,
             tid: Any = TID, seq: Any = None) -> int:
        """Append ``[seq, tid, api, args, err, outs, extra]``; returns its seq."""
        s = self.seq if seq is None else seq
        self.raw([s, tid, api, list(args) if isinstance(args, tuple) else args, err,
                  list(outs) if isinstance(outs, tuple) else outs, {} if extra is None else extra])
        return s

    def blob(self, data: bytes) -> str:
        return self.writer.put_blob(data)

    # -- well-formed building blocks ----------------------------------------------------
    def pinned(self, size: int, api: str = "hipHostMalloc") -> int:
        """A pinned allocation of ``size`` bytes; returns its capture address."""
        addr = self._next_pinned
        self._next_pinned += max(size, 1) + (-max(size, 1) % 4096) + 4096
        args = {"hipHostMalloc": [size, 0], "hipMallocHost": [size], "hipHostAlloc": [size, 0]}[api]
        self.call(api, args, outs=[addr])
        return addr

    def device(self, size: int) -> int:
        """A device allocation of ``size`` bytes; returns its capture address."""
        addr = self._next_device
        self._next_device += max(size, 1) + (-max(size, 1) % 256)
        self.call("hipMalloc", [size], outs=[addr])
        return addr

    def stream(self) -> int:
        self._next_handle += 0x10
        self.call("hipStreamCreate", [], outs=[self._next_handle])
        return self._next_handle

    def function(self, kernel: str) -> int:
        """Load the sim's built-in code object and get ``kernel``; returns the function handle."""
        code = self.writer.put_code_object(builtin_code_object())
        self._next_handle += 0x10
        module = self._next_handle
        self.call("hipModuleLoadData", [code], outs=[module])
        self._next_handle += 0x10
        self.call("hipModuleGetFunction", [module, kernel], outs=[self._next_handle])
        return self._next_handle

    def copy(self, dst: list, src: list, n: int, kind: int, api: str = "hipMemcpy",
             stream: int | None = None) -> int:
        args = [dst, src, n, kind] + ([] if stream is None else [stream])
        return self.call(api, args)

    def close(self) -> "HostileArchive":
        self.writer.close()
        return self

    def leave_open(self) -> "HostileArchive":
        """Flush without a trailer: what a killed capture leaves (clean_shutdown false)."""
        self.writer.flush()
        return self


def split_frames(pid_dir: str | os.PathLike) -> tuple[bytes, list[tuple[int, bytes]]]:
    """events.bin as (file header bytes, [(frame type, whole frame bytes), ...])."""
    data = (Path(pid_dir) / EVENTS_FILE).read_bytes()
    _, _, hlen, _ = FILE_HEADER.unpack_from(data, 0)
    pos = FILE_HEADER.size + hlen
    head, frames = data[:pos], []
    while pos < len(data):
        ftype, _, length, _ = FRAME_HEADER.unpack_from(data, pos)
        end = pos + FRAME_HEADER.size + length
        frames.append((ftype, data[pos:end]))
        pos = end
    return head, frames


def keep_frames(pid_dir: str | os.PathLike, events: list[int] | slice, *, trailer: bool = True) -> None:
    """Rewrite events.bin with only the event frames ``events`` (indices or a slice) and,
    if ``trailer``, the original trailer frame unchanged (a tamperer who cut records out
    but kept a valid trailer that still claims them all)."""
    head, frames = split_frames(pid_dir)
    evs = [f for t, f in frames if t == FRAME_EVENT]
    tail = [f for t, f in frames if t != FRAME_EVENT]
    chosen = evs[events] if isinstance(events, slice) else [evs[i] for i in events]
    (Path(pid_dir) / EVENTS_FILE).write_bytes(head + b"".join(chosen) + (b"".join(tail) if trailer else b""))


def replay_cli(root: str | os.PathLike, *args: Any, env: dict | None = None,
               timeout: float = 120) -> subprocess.CompletedProcess:
    """``hrr replay ARGS ROOT`` as a real process (a crash there cannot take pytest down)."""
    full_env = dict(os.environ)
    full_env.pop("HRR_MODE", None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "hrr.cli.main", "replay", *map(str, args), str(root)],
                          env=full_env, capture_output=True, text=True, timeout=timeout, check=False)


def describe(proc: subprocess.CompletedProcess) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
