"""A mutation fuzzer over real archives: ``python tests/fuzz/mutate.py N [--seed S] [--jobs J]``.

Seeds are archives captured on the sim (content mode, every plugin): the bundled example
app (pinned snapshots, graphs, two streams), a parent/subprocess/fork app, and the
every-API app. Each case copies one seed, applies one mutation (byte and frame level with
checksums recomputed so the framing layer passes, record values of the wrong type or size,
manifest edits, swapped files, links, FIFOs, huge lengths, deep nesting, edited blobs and
code objects re-stored under their new names) and runs ``hrr info``, ``hrr info --events
--json`` and ``hrr replay --max-host-bytes 1MiB`` in a worker process. A finding is: an
exception other than a clean exit, a traceback in the output, an exit code outside the
documented set, a case that runs past the time bound, a worker above the memory bound, or
any change to a file outside the replay's own temp area (the archive, the canary files
that links point to, the worker's working directory).
"""
from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from typing import Any, Callable

import msgpack

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASE_TIMEOUT_S = 20.0          # a case that runs longer is a hang
MEMORY_BOUND_KB = 1_500_000    # peak RSS of a worker above this is a finding
ADDRESS_SPACE_CAP = 6 << 30    # RLIMIT_AS of a worker: a runaway allocation fails there
RECYCLE_EVERY = 150            # cases per worker before a fresh one (state hygiene)
MAX_HOST_BYTES = 1 << 20
INFO_EXITS = {0, 1, 4}          # 4: the archive cannot be read (hrr.exitcodes)
REPLAY_EXITS = {0, 1, 2, 4}

# ---------------------------------------------------------------------- seeds

_EVERY_API = """
import sys
sys.path[:0] = [{tests!r}, {roundtrip!r}]
from hrrtest import capture
from every_api_app import exercise
capture(sys.argv[1], exercise, plugins=["pinned_snapshot", "graph_capture"])
"""


def make_seeds(out: str) -> list[str]:
    """Capture the seed archives under ``out``; returns their paths."""
    hrr = [sys.executable, "-m", "hrr.cli.main"]
    env = dict(os.environ, HRR_BACKEND="sim")
    seeds = []
    for name, cmd in (
        ("serving", ["python", os.path.join(REPO, "examples", "serving_step.py")]),
        ("multiproc", ["python", os.path.join(REPO, "tests", "cli", "apps", "multiproc.py")]),
    ):
        path = os.path.join(out, name)
        subprocess.run(hrr + ["capture", "-o", path, "--content", "--backend", "sim", "--", *cmd],
                       env=env, check=True, capture_output=True, cwd=out)
        seeds.append(path)
    path = os.path.join(out, "serving_packed")   # small blobs in a pack: pack and index get mutated too
    subprocess.run(hrr + ["capture", "-o", path, "--content", "--pack-blobs", "--backend", "sim", "--", "python",
                          os.path.join(REPO, "examples", "serving_step.py")], env=env, check=True, capture_output=True,
                   cwd=out)
    seeds.append(path)
    path = os.path.join(out, "every_api")
    script = _EVERY_API.format(tests=os.path.join(REPO, "tests"), roundtrip=os.path.join(REPO, "tests", "roundtrip"))
    subprocess.run([sys.executable, "-c", script, path], env=env, check=True, capture_output=True, cwd=out)
    seeds.append(path)
    return seeds


# ---------------------------------------------------------------------- archive surgery

def _fmt() -> Any:
    from hrr.archive import format as fmt
    return fmt


def read_frames(path: str) -> tuple[bytes, list[tuple[int, bytes]], bytes]:
    """(file header bytes, [(frame type, payload)], unparsed tail) of an events.bin.

    A version 2 batch frame becomes one event frame per record, each record spelled out
    (API name, thread id; see format.escape_record), so every mutation below works on
    single records whatever the version; :func:`write_frames` batches them again."""
    fmt = _fmt()
    raw = open(path, "rb").read()
    if len(raw) < fmt.FILE_HEADER.size:
        return raw, [], b""
    hlen = fmt.FILE_HEADER.unpack_from(raw)[2]
    pos = fmt.FILE_HEADER.size + hlen
    header, frames = raw[:pos], []
    version = fmt.FILE_HEADER.unpack_from(raw)[1]
    apis = _header_apis(header)
    while pos + fmt.FRAME_HEADER.size <= len(raw):
        ftype, count3, length, _ = fmt.FRAME_HEADER.unpack_from(raw, pos)
        start = pos + fmt.FRAME_HEADER.size
        if start + length > len(raw) or (version >= 2 and ftype == fmt.FRAME_OPEN):
            break
        payload = raw[start:start + length]
        pos = start + length
        if version < 2 or ftype != fmt.FRAME_EVENT:
            frames.append((ftype, payload))
            continue
        unpacker, threads = msgpack.Unpacker(raw=False, strict_map_key=False), []
        unpacker.feed(payload)
        at = 0
        try:
            for _ in range(int.from_bytes(count3, "little") or 1):
                value = unpacker.unpack()
                try:
                    value = fmt.escape_record(fmt.decode_record(value, apis, threads))
                    frames.append((ftype, _pack(value)))
                except ValueError:
                    frames.append((ftype, payload[at:unpacker.tell()]))   # kept as it was
                at = unpacker.tell()
        except Exception:  # noqa: BLE001 - a frame a previous mutation broke: keep its bytes whole
            frames.append((ftype, payload[at:]))
    return header, frames, raw[pos:]


def _header_apis(header: bytes) -> list:
    fmt = _fmt()
    try:
        h = msgpack.unpackb(header[fmt.FILE_HEADER.size:], raw=False, strict_map_key=False)
    except Exception:  # noqa: BLE001 - a mutated header
        return []
    apis = h.get("apis") if isinstance(h, dict) else None
    return apis if isinstance(apis, list) else []


def write_frames(path: str, header: bytes, frames: list[tuple[int, bytes]], tail: bytes = b"",
                 rng: random.Random | None = None) -> None:
    """events.bin from frames, every checksum recomputed (the framing layer passes). For a
    version 2 header with ``rng``: runs of event frames are batched again (1 to 9 records a
    frame) with API numbers and thread indexes as the writer writes them."""
    fmt = _fmt()
    version = fmt.FILE_HEADER.unpack_from(header)[1] if len(header) >= fmt.FILE_HEADER.size else 0
    if version < 2 or rng is None:
        _replace(path, header + b"".join(fmt.encode_frame(t, p) for t, p in frames) + tail)
        return
    numbers = {name: i for i, name in enumerate(_header_apis(header)) if isinstance(name, str)}
    out, k = [header], 0
    while k < len(frames):
        t, p = frames[k]
        if t != fmt.FRAME_EVENT:
            out.append(fmt.encode_frame(t, p))
            k += 1
            continue
        group = []
        while k < len(frames) and frames[k][0] == fmt.FRAME_EVENT and len(group) < rng.randrange(1, 10):
            group.append(frames[k][1])
            k += 1
        if not group:
            group.append(p)
            k += 1
        threads: dict = {}
        parts = [_numbered(q, numbers, threads) for q in group]
        out.append(fmt.encode_frame(t, b"".join(parts), len(parts)))
    _replace(path, b"".join(out) + tail)


def _numbered(payload: bytes, numbers: dict, threads: dict) -> bytes:
    """One record's bytes with its API numbered and its thread indexed, where it is an event."""
    try:
        v = msgpack.unpackb(payload, raw=False, strict_map_key=False)
    except Exception:  # noqa: BLE001 - not a record: written as it is
        return payload
    if type(v) is list and len(v) == 7 and type(v[1]) is int and type(v[2]) is str and v[2] in numbers:
        t = threads.get(v[1])
        if t is None:
            threads[v[1]] = len(threads)
            t = [v[1]]
        return _pack([v[0], t, numbers[v[2]], *v[3:]])
    return payload


def _rebuilt_header(old: bytes, h: Any) -> bytes:
    """The file header for the mutated map ``h``, at the old header's version."""
    fmt = _fmt()
    if not isinstance(h, dict):
        return old
    version = fmt.FILE_HEADER.unpack_from(old)[1]
    body = _pack(h)
    return fmt.FILE_HEADER.pack(fmt.MAGIC, version, len(body), fmt.checksum(fmt.HEADER_SEED_TYPE, body)) + body


def _replace(path: str, data: bytes) -> None:
    if os.path.islink(path) or os.path.exists(path):
        os.unlink(path)
    with open(path, "wb") as f:
        f.write(data)


def _pids(root: str) -> list[str]:
    return sorted(os.path.join(root, d) for d in os.listdir(root) if d.startswith("pid-"))


def _files(root: str, sub: str) -> list[str]:
    out = []
    for base, _, names in os.walk(root):
        if os.sep + sub in base + os.sep:
            out += [os.path.join(base, n) for n in names]
    return sorted(out)


def _pack(v: Any) -> bytes:
    return msgpack.packb(v, use_bin_type=True)


def _nest_bytes(depth: int) -> bytes:
    return b"\x91" * depth + b"\xc0"           # [[[...[nil]...]]]: packb itself refuses this depth


POOL: list[Any] = [None, True, False, -1, 0, 1, 2**31, 2**32 + 7, 2**63 - 1, -(2**63), 2**64 - 1,
                   1.5, -0.0, math.nan, math.inf, -math.inf, "", "x" * 300, "hipMalloc", "@d2h", "@x",
                   "../../etc/passwd", b"", b"\x00" * 64, [], [1, 2, 3], [[[[[[]]]]]], {}, {"a": 1},
                   {"records": 1}, {"launch": {"kernargs": 5}}, [None] * 9, {1: 2}.get(3)]


def _paths(v: Any, prefix: tuple = (), out: list | None = None, limit: int = 400) -> list[tuple]:
    """Every path (tuple of keys/indices) to a value inside ``v``."""
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    out.append(prefix)
    if isinstance(v, list):
        for i, x in enumerate(v[:64]):
            _paths(x, prefix + (i,), out, limit)
    elif isinstance(v, dict):
        for k, x in list(v.items())[:64]:
            _paths(x, prefix + (k,), out, limit)
    return out


def _get(v: Any, path: tuple) -> Any:
    for k in path:
        v = v[k]
    return v


def _set(v: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    _get(v, path[:-1])[path[-1]] = new
    return v


def _tweak(rng: random.Random, old: Any) -> Any:
    """A value near ``old`` of the same kind, or one from the pool of wrong types and sizes."""
    if type(old) is int and rng.random() < 0.6:
        new = rng.choice([old + 1, old - 1, -old, old * 2, old << 20, old + (1 << 40), 0, -1,
                          2**64 - 1, 2**63, old ^ (1 << rng.randrange(64))])
        return new if -(2**63) <= new < 2**64 else new & (2**64 - 1)   # msgpack's int range
    if type(old) is bytes and old and rng.random() < 0.5:
        b = bytearray(old)
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        return bytes(b) if rng.random() < 0.7 else bytes(b[: rng.randrange(len(b))])
    if type(old) is list and old and rng.random() < 0.3:
        return old * rng.choice([0, 2]) if rng.random() < 0.5 else old[:-1]
    return rng.choice(POOL)


class Mutator:
    """One mutation applied in place to a copy of a seed archive; ``describe`` says which."""

    def __init__(self, rng: random.Random, root: str, outside: str) -> None:
        self.rng, self.root, self.outside = rng, root, outside
        self.what = ""

    def apply(self) -> str:
        name, fn = self.rng.choice(MUTATIONS)
        self.what = name
        fn(self)
        return self.what

    # -- helpers
    def pid(self) -> str:
        return self.rng.choice(_pids(self.root))

    def events(self) -> str:
        return os.path.join(self.pid(), "events.bin")

    def any_file(self) -> str:
        files = [f for f in _files(self.root, "") if not os.path.islink(f)]
        return self.rng.choice(files)

    def note(self, s: str) -> None:
        self.what += f" {s}"

    # -- byte level
    def flip(self) -> None:
        path = self.any_file()
        data = bytearray(open(path, "rb").read())
        if not data:
            return
        for _ in range(self.rng.choice([1, 1, 2, 8])):
            i = self.rng.randrange(len(data))
            data[i] ^= 1 << self.rng.randrange(8)
        _replace(path, bytes(data))
        self.note(os.path.relpath(path, self.root))

    def truncate(self) -> None:
        path = self.any_file()
        size = os.path.getsize(path)
        n = self.rng.randrange(size + 1) if size else 0
        os.truncate(path, n)
        self.note(f"{os.path.relpath(path, self.root)} to {n} of {size}")

    def append_junk(self) -> None:
        path = self.events()
        with open(path, "ab") as f:
            f.write(self.rng.choice([b"\x00" * 4096, os.urandom(self.rng.randrange(1, 64)),
                                     _fmt().encode_frame(1, _pack([0, 0, "hipInit", [0], 0, [], {}]))]))
        self.note(os.path.relpath(path, self.root))

    # -- frame level (checksums recomputed)
    def _frames(self) -> tuple[str, bytes, list, bytes]:
        path = self.events()
        header, frames, tail = read_frames(path)
        return path, header, frames, tail

    def frame_op(self) -> None:
        path, header, frames, tail = self._frames()
        if not frames:
            return
        op = self.rng.choice(["dup", "delete", "swap", "shuffle", "move_trailer", "flip_payload",
                              "cut_payload", "type", "drop_trailer"])
        i, j = self.rng.randrange(len(frames)), self.rng.randrange(len(frames))
        if op == "dup":
            frames.insert(j, frames[i])
        elif op == "delete":
            del frames[i]
        elif op == "swap":
            frames[i], frames[j] = frames[j], frames[i]
        elif op == "shuffle":
            self.rng.shuffle(frames)
        elif op == "move_trailer":
            frames.insert(i, frames.pop())
        elif op == "drop_trailer":
            frames = [f for f in frames if f[0] != 2]
        elif op in ("flip_payload", "cut_payload"):
            t, p = frames[i]
            b = bytearray(p)
            if b and op == "flip_payload":
                b[self.rng.randrange(len(b))] ^= 1 << self.rng.randrange(8)
            elif b:
                del b[self.rng.randrange(len(b)):]
            frames[i] = (t, bytes(b))
        elif op == "type":
            frames[i] = (3 - frames[i][0] if frames[i][0] in (1, 2) else 1, frames[i][1])
        write_frames(path, header, frames, tail, self.rng)
        self.note(f"{op} {i} {j} in {os.path.relpath(path, self.root)}")

    def huge_length(self) -> None:
        fmt = _fmt()
        path = self.events()
        header, frames, tail = read_frames(path)
        write_frames(path, header, frames, tail)       # one frame per record: the offsets below hold
        data = bytearray(open(path, "rb").read())
        n = self.rng.choice([0xFFFFFFFF, 0x7FFFFFFF, 1 << 27, 65 << 20])
        if self.rng.random() < 0.3 or not frames:
            data[12:16] = n.to_bytes(4, "little")
            self.note("file header length")
        else:
            k = self.rng.randrange(len(frames))
            pos = len(header) + sum(fmt.FRAME_HEADER.size + len(p) for _, p in frames[:k])
            data[pos + 4:pos + 8] = n.to_bytes(4, "little")
            self.note(f"frame {k}")
        _replace(path, bytes(data))

    def record_value(self) -> None:
        """A record re-encoded with one value changed (wrong type, size, nesting), framed validly."""
        path, header, frames, tail = self._frames()
        events = [k for k, (t, _) in enumerate(frames) if t == 1]
        if not events:
            return
        for _ in range(self.rng.choice([1, 1, 1, 3])):
            k = self.rng.choice(events)
            try:
                value = msgpack.unpackb(frames[k][1], raw=False, strict_map_key=False)
            except (ValueError, msgpack.StackError):
                continue  # made too deep for msgpack by an earlier step of this mutation
            where = self.rng.choice(_paths(value))
            if self.rng.random() < 0.08 and isinstance(value, list) and where and type(where[0]) is int:
                parts = [_pack(x) for x in value]
                parts[where[0]] = _nest_bytes(self.rng.choice([20, 600, 5000, 100000]))
                payload = bytes([0x90 | len(parts)]) + b"".join(parts) if len(parts) < 16 else _pack(value)
                self.note(f"deep nest at record {k} field {where[0]}")
            else:
                old = _get(value, where)
                if isinstance(_get(value, where[:-1]) if where else None, dict) and self.rng.random() < 0.15:
                    del _get(value, where[:-1])[where[-1]]
                    self.note(f"record {k} del {where}")
                else:
                    value = _set(value, where, _tweak(self.rng, old))
                    self.note(f"record {k} {where} {str(old)[:40]!r}->{str(_get(value, where))[:40]!r}")
                payload = _pack(value)
            frames[k] = (1, payload)
        write_frames(path, header, frames, tail, self.rng)

    def raw_payload(self) -> None:
        """A frame whose payload is arbitrary msgpack (not a record at all), framed validly."""
        path, header, frames, tail = self._frames()
        k = self.rng.randrange(len(frames) + 1)
        v = self.rng.choice(POOL)
        payload = self.rng.choice([_pack(v), os.urandom(self.rng.randrange(1, 40)), _nest_bytes(3000),
                                   b"\xc1", b"\xd4\x05\x00", b"\x92\x01"])
        frames.insert(k, (1, payload))
        write_frames(path, header, frames, tail, self.rng)
        self.note(f"at {k}")

    def header_value(self) -> None:
        fmt = _fmt()
        path = self.events()
        header, frames, tail = read_frames(path)
        if len(header) <= fmt.FILE_HEADER.size:
            return
        h = msgpack.unpackb(header[fmt.FILE_HEADER.size:], raw=False)
        where = self.rng.choice(_paths(h))
        h = _set(h, where, _tweak(self.rng, _get(h, where)))
        write_frames(path, _rebuilt_header(header, h), frames, tail, self.rng)
        self.note(str(where))

    # -- manifest
    def manifest(self) -> None:
        path = os.path.join(self.pid(), "manifest.json")
        if not os.path.isfile(path):
            return
        text = open(path, "rb").read()
        op = self.rng.random()
        if op < 0.1:
            d = self.rng.choice([50, 990, 5000, 200000])
            data = text.rstrip()[:-1] + b', "deep": ' + b"[" * d + b"]" * d + b"}"
            self.note(f"deep {d}")
        elif op < 0.15:
            data = text[: self.rng.randrange(len(text))] + self.rng.choice([b"", b"\xff\xfe", b"NaN"])
            self.note("cut")
        else:
            m = json.loads(text)
            where = self.rng.choice(_paths(m))
            if where and self.rng.random() < 0.2:
                del _get(m, where[:-1])[where[-1]]
                self.note(f"del {where}")
            else:
                new = _tweak(self.rng, _get(m, where))
                if isinstance(new, bytes):
                    new = new.decode("latin-1")
                if isinstance(new, dict):
                    new = {str(k): v for k, v in new.items()}
                m = _set(m, where, new)
                self.note(f"{where} = {str(new)[:40]!r}")
            data = json.dumps(m, allow_nan=True).encode()
        _replace(path, data)

    # -- files
    def swap_files(self) -> None:
        pids = _pids(self.root)
        if len(pids) < 2:
            return self.rename_pid()
        a, b = self.rng.sample(pids, 2)
        name = self.rng.choice(["events.bin", "manifest.json", "blobs", "code"])
        pa, pb = os.path.join(a, name), os.path.join(b, name)
        if not (os.path.exists(pa) and os.path.exists(pb)):
            return
        tmp = pa + ".swap"
        os.rename(pa, tmp)
        os.rename(pb, pa)
        os.rename(tmp, pb)
        self.note(f"{name} {os.path.basename(a)} <-> {os.path.basename(b)}")

    def rename_pid(self) -> None:
        a = self.pid()
        new = os.path.join(self.root, self.rng.choice(["pid-1", "pid-0", "pid-9999999999", "pid-x"]))
        if not os.path.exists(new):
            os.rename(a, new)
            self.note(f"{os.path.basename(a)} -> {os.path.basename(new)}")

    def link(self) -> None:
        """A symlink or hard link (to a canary file outside the archive), a FIFO or a directory."""
        targets = [os.path.join(p, n) for p in _pids(self.root) for n in ("events.bin", "manifest.json")]
        targets += _files(self.root, "blobs") + _files(self.root, "code")
        path = self.rng.choice(targets)
        kind = self.rng.choice(["symlink", "hardlink", "fifo", "dir", "symlink_dir", "dangling"])
        canary = os.path.join(self.outside, self.rng.choice(["canary.bin", "canary_events.bin"]))
        if os.path.lexists(path):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
        if kind == "symlink":
            os.symlink(canary, path)
        elif kind == "hardlink":
            os.link(canary, path)
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "dir":
            os.mkdir(path)
        elif kind == "dangling":
            os.symlink(os.path.join(self.outside, "nothing-here"), path)
        else:
            os.symlink(self.outside, path)
        self.note(f"{kind} at {os.path.relpath(path, self.root)}")

    def link_pid_dir(self) -> None:
        a = self.pid()
        shutil.rmtree(a)
        os.symlink(self.outside, a)
        self.note(os.path.basename(a))

    def _restore_store(self, kind: str, new_bytes: Callable[[bytes], bytes]) -> None:
        """Replace one stored object with new bytes under their own content name and rewrite
        every record that named the old one (so the store's hash check passes)."""
        from hrr.archive.blobs import relpath
        fmt = _fmt()
        files = [f for f in _files(self.root, "blobs" if kind == "blob" else "code")
                 if fmt.is_valid_name(os.path.basename(f))]   # loose objects only, not packs
        if not files:
            return
        path = self.rng.choice(files)
        old_name = os.path.basename(path)
        data = new_bytes(open(path, "rb").read())
        new_name = fmt.content_name(data)
        pid_dir = path.split(os.sep + ("blobs" if kind == "blob" else "code") + os.sep)[0]
        os.unlink(path)
        dest = os.path.join(pid_dir, *relpath(kind, new_name))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as f:
            f.write(data)
        ev = os.path.join(pid_dir, "events.bin")
        header, frames, tail = read_frames(ev)

        def rename(v: Any) -> Any:
            if v == old_name:
                return new_name
            if isinstance(v, list):
                return [rename(x) for x in v]
            if isinstance(v, dict):
                return {k: rename(x) for k, x in v.items()}
            return v
        frames = [(t, _pack(rename(msgpack.unpackb(p, raw=False, strict_map_key=False)))) if t == 1 else (t, p)
                  for t, p in frames]
        write_frames(ev, header, frames, tail, self.rng)
        self.note(f"{kind} {old_name[:8]} -> {new_name[:8]} ({len(data)} bytes)")

    def edit_blob(self) -> None:
        def change(b: bytes) -> bytes:
            op = self.rng.choice(["flip", "cut", "grow"])
            if op == "flip" and b:
                x = bytearray(b)
                x[self.rng.randrange(len(x))] ^= 0xFF
                return bytes(x)
            if op == "cut":
                return b[: self.rng.randrange(len(b) + 1)]
            return b + b"\x01" * self.rng.choice([1, 4096, 1 << 20])
        self._restore_store("blob", change)

    def edit_code(self) -> None:
        import struct

        def change(b: bytes) -> bytes:
            magic = b[:8]
            op = self.rng.choice(["deep", "types", "huge_len", "junk", "empty_kernels", "big_header"])
            if op == "deep":
                d = self.rng.choice([100, 5000, 200000])
                body = b'{"library": "builtin", "version": "1.0", "kernels": ' + b"[" * d + b"]" * d + b"}"
            elif op == "types":
                body = json.dumps(self.rng.choice([
                    {"library": 1, "version": [], "kernels": "x"}, [1, 2], "s", {"library": "builtin"},
                    {"library": "builtin", "version": "1.0", "kernels": [None]}])).encode()
            elif op == "huge_len":
                return magic + struct.pack("<I", 0xFFFFFFFF) + b[12:]
            elif op == "junk":
                return magic + struct.pack("<I", 16) + os.urandom(16)
            elif op == "empty_kernels":
                body = b'{"library": "builtin", "version": "1.0", "kernels": []}'
            else:
                body = b'{"library": "' + b"a" * (2 << 20) + b'", "version": "1.0", "kernels": []}'
            self.note(op)
            return magic + struct.pack("<I", len(body)) + body
        self._restore_store("code", change)


def _pack_index_entry(self: "Mutator") -> None:
    """Rewrite one pack index entry (checksum recomputed) to point elsewhere: past the end,
    over another entry, at zero length, or at a huge length."""
    from hrr.archive.pack import ENTRY, IDX_MAGIC, encode_entry
    idxs = [f for f in _files(self.root, "blobs") if f.endswith(".idx")]
    if not idxs:
        return
    path = self.rng.choice(idxs)
    raw = bytearray(open(path, "rb").read())
    count = (len(raw) - len(IDX_MAGIC)) // ENTRY.size
    if count <= 0:
        return
    i = self.rng.randrange(count)
    pos = len(IDX_MAGIC) + i * ENTRY.size
    digest, off, length, _ = ENTRY.unpack_from(raw, pos)
    off, length = self.rng.choice([(off + length, length), (0, length + 64), (off, 0), (off, 1 << 62),
                                   (1 << 63, length), (max(0, off - 1), length)])
    raw[pos:pos + ENTRY.size] = encode_entry(digest.hex(), off, length)
    _replace(path, bytes(raw))
    self.note(f"{os.path.relpath(path, self.root)} entry {i} -> offset {off} length {length}")


_KERNEL = ('#define P "{path}"\nstatic const unsigned char d[] = {{\n#embed P suffix(,)\n0}};\n'
           'extern "C" __global__ void k(int *x) {{ printf("%s\\n", (const char *)d); }}\n')


def _kernel_source(self: "Mutator") -> None:
    """Replace a code object with a kernel source container (HIP C++ that replay compiles)
    that tries to read a canary file into its image and print it, mutated: hostile options,
    header names that cannot be files, wrong types, many or huge parts, a bad length."""
    import struct
    from hrr.hiptypes import kernelsource as ks

    canary = os.path.join(self.outside, "canary.bin")

    def change(_: bytes) -> bytes:
        op = self.rng.choice(["embed", "embed_up", "options", "headers", "types", "many", "huge", "length"])
        self.note(f"kernel source: {op}")
        path = canary if op != "embed_up" else "../" * 30 + canary.lstrip("/")
        unit = ks.SourceUnit("k.hip", _KERNEL.format(path=path).encode())
        options: tuple[str, ...] = ()
        if op == "options":
            options = tuple(self.rng.sample(["-DASM=__asm__", "-DX=1\n#include \"/etc/hostname\"", "-I../../..",
                                             "-I/", "-D" + "A" * 5000, "-U", "-D", "--include-path=/etc",
                                             "-include/etc/hostname", "-DP=\"" + canary + "\""], 4))
        elif op == "headers":
            unit = ks.SourceUnit("k.hip", unit.source, tuple((n, b"#define H 1\n") for n in self.rng.choice(
                [[".", "a"], ["a", "a/b"], ["x" * 300], ["/".join(["d"] * 3000)], ["../x.h"], ["a//b"]])))
        elif op == "types":
            body = msgpack.packb(self.rng.choice([
                {"units": [["k.hip", "text, not bytes", []]]}, {"units": [["k.hip", b"", [[1, b""]]]]},
                {"units": [], "options": [b"-DX"]}, {"units": [["k.hip", b"", [["h"]]]], "names": "k"},
                {"units": [["k.hip", b"", []]], "options": [["-DX"]]}]), use_bin_type=True)
            return ks.MAGIC + struct.pack("<I", len(body)) + body
        elif op == "many":
            return ks.encode(ks.KernelSource(tuple(unit for _ in range(self.rng.choice([2, 300]))), options))
        elif op == "huge":
            unit = ks.SourceUnit("k.hip", unit.source + b"//" + b"x" * (3 << 20) + b"\n")
        elif op == "length":
            data = ks.encode(ks.KernelSource((unit,)))
            return data[:8] + struct.pack("<I", self.rng.choice([0, 1, len(data), 0xFFFFFFFF])) + data[12:]
        return ks.encode(ks.KernelSource((unit,), options))
    self._restore_store("code", change)


MUTATIONS: list[tuple[str, Callable[[Mutator], None]]] = [
    ("flip", Mutator.flip), ("truncate", Mutator.truncate), ("append", Mutator.append_junk),
    ("frame", Mutator.frame_op), ("frame", Mutator.frame_op), ("huge_length", Mutator.huge_length),
    ("record", Mutator.record_value), ("record", Mutator.record_value), ("record", Mutator.record_value),
    ("record", Mutator.record_value), ("raw_payload", Mutator.raw_payload), ("header", Mutator.header_value),
    ("manifest", Mutator.manifest), ("manifest", Mutator.manifest), ("swap", Mutator.swap_files),
    ("rename_pid", Mutator.rename_pid), ("link", Mutator.link), ("link_pid_dir", Mutator.link_pid_dir),
    ("blob", Mutator.edit_blob), ("code", Mutator.edit_code), ("pack_index", _pack_index_entry),
    ("kernel_source", _kernel_source), ("kernel_source", _kernel_source),
]


# ---------------------------------------------------------------------- checking one case

def _tree(root: str) -> dict[str, tuple]:
    """A fingerprint of every entry under ``root`` (links not followed)."""
    out = {}
    for base, dirs, names in os.walk(root):
        for n in dirs + names:
            p = os.path.join(base, n)
            st = os.lstat(p)
            out[os.path.relpath(p, root)] = (st.st_mode, st.st_size, st.st_mtime_ns, st.st_nlink)
    return out


def run_commands(archive: str) -> list[str]:
    """Run info, info --events --json and replay on ``archive`` in this process; findings."""
    from click.testing import CliRunner

    from hrr.cli.main import cli

    findings = []
    runner = CliRunner()
    for argv, allowed in ((["info", archive], INFO_EXITS),
                          (["info", "--events", "--json", archive], INFO_EXITS),
                          (["replay", "--max-host-bytes", str(MAX_HOST_BYTES), archive], REPLAY_EXITS)):
        result = runner.invoke(cli, argv, catch_exceptions=True)
        name = " ".join(argv[:-1])
        exc = result.exception
        if exc is not None and not isinstance(exc, SystemExit):
            tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            findings.append(f"{name}: unexpected {type(exc).__name__}: {exc!s:.300}\n{tb[-3000:]}")
            continue
        out = result.output + (getattr(result, "stderr", "") or "")
        if "Traceback" in out:
            findings.append(f"{name}: traceback in the output:\n{out[-3000:]}")
        if "canary canary" in out:
            findings.append(f"{name}: a canary file's content reached the output:\n{out[-1000:]}")
        if "this is a bug in hrr" in out:
            findings.append(f"{name}: internal error: {out.strip()[-500:]}")
        if result.exit_code not in allowed:
            findings.append(f"{name}: exit code {result.exit_code} (allowed {sorted(allowed)}): {out.strip()[-300:]}")
        if name == "info --events --json" and result.exit_code == 0:
            try:
                json.loads(result.stdout, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
            except ValueError as e:
                findings.append(f"{name}: output is not strict JSON: {e!s:.200}")
    return findings


def check_case(case: dict) -> dict:
    """Build one mutated archive, run the commands, check for side effects. Runs in a worker."""
    rng = random.Random(case["rng"])
    scratch = case["scratch"]
    root = os.path.join(scratch, "archive")
    outside = os.path.join(scratch, "outside")
    shutil.copytree(case["seed"], root, symlinks=True)
    os.makedirs(outside)
    for name in ("canary.bin", "canary_events.bin"):
        src = os.path.join(case["seed"], os.path.basename(_pids(case["seed"])[0]), "events.bin") \
            if name == "canary_events.bin" else None
        with open(os.path.join(outside, name), "wb") as f:
            f.write(open(src, "rb").read() if src else b"canary " * 100)
    what = Mutator(rng, root, outside).apply()
    before_archive, before_outside = _tree(root), _tree(outside)
    cwd = os.path.join(scratch, "cwd")
    os.makedirs(cwd)
    os.chdir(cwd)
    # Each case starts on a fresh sim device, as each `hrr replay` process does.
    from hrr.backends.sim import device as sim_device
    sim_device.reset_device()
    t0 = time.monotonic()
    try:
        findings = run_commands(root)
    finally:
        os.chdir(scratch)
    seconds = time.monotonic() - t0
    if _tree(root) != before_archive:
        findings.append("the archive changed under info/replay")
    if _tree(outside) != before_outside:
        findings.append("a file outside the archive changed")
    if os.listdir(cwd):
        findings.append(f"files written into the working directory: {os.listdir(cwd)[:5]}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if rss > MEMORY_BOUND_KB:
        findings.append(f"peak RSS {rss} kB over the bound {MEMORY_BOUND_KB} kB")
    shutil.rmtree(scratch, ignore_errors=True)
    return {"id": case["id"], "what": what, "seed": os.path.basename(case["seed"]), "rng": case["rng"],
            "findings": findings,
            "seconds": seconds, "rss": rss}


def _worker(inbox: Any, outbox: Any) -> None:
    import faulthandler
    faulthandler.enable()  # a segfault prints every thread's Python stack to the log
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_CAP, ADDRESS_SPACE_CAP))
    os.environ["HRR_BACKEND"] = "sim"
    parent = os.getppid()
    while True:
        try:
            case = inbox.get(timeout=2)
        except Exception:  # queue.Empty: exit if the fuzzer that started us is gone
            if os.getppid() != parent:
                return
            continue
        if case is None:
            return
        try:
            outbox.put(check_case(case))
        except BaseException as exc:  # noqa: BLE001 -- the harness itself must report, not die
            outbox.put({"id": case["id"], "what": "?", "seed": os.path.basename(case["seed"]),
                        "rng": case["rng"], "seconds": 0, "rss": 0,
                        "findings": [f"harness error: {type(exc).__name__}: {exc}\n{traceback.format_exc()[-2000:]}"]})


class Worker:
    """A worker process and its queues; replaced after a hang, a memory finding or RECYCLE_EVERY cases."""

    def __init__(self, ctx: Any) -> None:
        self.inbox, self.outbox = ctx.Queue(), ctx.Queue()
        self.proc = ctx.Process(target=_worker, args=(self.inbox, self.outbox), daemon=True)
        self.proc.start()
        self.done = 0
        self.case: dict | None = None
        self.started = 0.0

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.proc.kill()
        else:
            self.inbox.put(None)
        self.proc.join(10)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()


def fuzz(n: int, seed: int = 0, jobs: int = 2, seeds_dir: str | None = None, log: Callable[[str], None] = print,
         timeout: float = CASE_TIMEOUT_S) -> dict:
    """Run ``n`` mutated cases over the seed archives with ``jobs`` workers; a summary dict."""
    t0 = time.monotonic()
    own_seeds = seeds_dir is None
    base = tempfile.mkdtemp(prefix="hrr-fuzz-")
    seeds_dir = seeds_dir or os.path.join(base, "seeds")
    if own_seeds:
        os.makedirs(seeds_dir)
        seeds = make_seeds(seeds_dir)
    else:
        seeds = sorted(os.path.join(seeds_dir, d) for d in os.listdir(seeds_dir))
    seed_time = time.monotonic() - t0
    ctx = mp.get_context("spawn")
    workers = [Worker(ctx) for _ in range(jobs)]
    master = random.Random(seed)
    results: list[dict] = []
    retries: list[dict] = []
    next_id = 0
    try:
        while len(results) < n:
            for i, w in enumerate(workers):
                if w.case is None and (retries or next_id < n):
                    if retries:
                        case = retries.pop()
                        case["scratch"] = case["scratch"] + "-retry"
                    else:
                        case = {"id": next_id, "rng": master.getrandbits(64), "seed": master.choice(seeds),
                                "scratch": os.path.join(base, f"case-{next_id}")}
                        next_id += 1
                    os.makedirs(case["scratch"])
                    w.case, w.started = case, time.monotonic()
                    w.inbox.put(case)
                    continue
                if w.case is None:
                    continue
                case = w.case
                try:
                    res = w.outbox.get(timeout=0.005)
                except Exception:  # queue.Empty
                    elapsed = time.monotonic() - w.started
                    if elapsed <= timeout and w.proc.is_alive():
                        continue
                    why = "hang" if w.proc.is_alive() else f"worker died (exit {w.proc.exitcode})"
                    res = {"id": case["id"], "seed": os.path.basename(case["seed"]), "rng": case["rng"],
                           "what": _describe(case), "seconds": elapsed, "rss": 0,
                           "findings": [f"{why}: no result after {elapsed:.0f} s"]}
                    w.stop(kill=True)
                    workers[i] = w = Worker(ctx)
                    if not case.get("retry"):
                        # Run it again, first thing in a fresh worker: does it fail alone?
                        retries.append(dict(case, retry=True, first=res))
                        continue
                if case.get("retry"):
                    res = _merge_retry(case["first"], res)
                results.append(res)
                if res["findings"]:
                    log(f"FINDING case {res['id']} [{res['what']}]; rebuild it with "
                        f"`mutate.py --rebuild {res['seed']} {res['rng']} DIR`")
                    for f in res["findings"]:
                        log("    " + f.replace("\n", "\n    "))
                w.case = None
                w.done += 1
                if w.done >= RECYCLE_EVERY or any("RSS" in f for f in res["findings"]):
                    w.stop()
                    workers[i] = Worker(ctx)
    finally:
        for w in workers:
            w.stop(kill=w.case is not None)
        shutil.rmtree(base, ignore_errors=True)
    found = [r for r in results if r["findings"]]
    kinds: dict[str, int] = {}
    for r in results:
        k = r["what"].split(" ")[0]
        kinds[k] = kinds.get(k, 0) + 1
    return {"cases": len(results), "findings": found, "seconds": time.monotonic() - t0,
            "seed_seconds": seed_time, "by_mutation": kinds,
            "slowest": max((r["seconds"] for r in results), default=0.0),
            "peak_rss_kb": max((r["rss"] for r in results), default=0)}


def _merge_retry(first: dict, again: dict) -> dict:
    """A hang/crash result, told whether the same case failed again alone in a fresh worker."""
    alone = bool(again["findings"])
    note = ("it fails the same way alone, in a fresh worker" if alone else
            "it passes alone in a fresh worker: state left by the worker's earlier cases is needed")
    return dict(first, findings=[f"{first['findings'][0]}; {note}"] + again["findings"][1:] if alone
                else [f"{first['findings'][0]}; {note}"])


def _describe(case: dict) -> str:
    """Re-apply a case's mutation on a scratch copy to name it (after its worker hung)."""
    scratch = tempfile.mkdtemp(prefix="hrr-fuzz-describe-")
    try:
        root, outside = os.path.join(scratch, "a"), os.path.join(scratch, "o")
        shutil.copytree(case["seed"], root, symlinks=True)
        os.makedirs(outside)
        for name in ("canary.bin", "canary_events.bin"):
            open(os.path.join(outside, name), "wb").close()
        return Mutator(random.Random(case["rng"]), root, outside).apply()
    except Exception as exc:  # noqa: BLE001
        return f"? ({exc})"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def rebuild(seed_name: str, rng: int, out: str) -> str:
    """Capture fresh seeds and write the mutated archive of case (seed_name, rng) to ``out``.
    Captured pids differ from run to run; the mutation's choices are the same."""
    seeds = tempfile.mkdtemp(prefix="hrr-fuzz-seeds-")
    make_seeds(seeds)
    root, outside = os.path.join(out, "archive"), os.path.join(out, "outside")
    shutil.copytree(os.path.join(seeds, seed_name), root, symlinks=True)
    os.makedirs(outside)
    for name in ("canary.bin", "canary_events.bin"):
        with open(os.path.join(outside, name), "wb") as f:
            f.write(b"canary " * 100)
    shutil.rmtree(seeds, ignore_errors=True)
    return Mutator(random.Random(rng), root, outside).apply()


def main(argv: list[str] | None = None) -> int:
    """Command line: run N cases, print count, time and findings; exit 1 if anything was found."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("n", type=int, nargs="?", default=300)
    ap.add_argument("--rebuild", nargs=3, metavar=("SEED", "RNG", "DIR"),
                    help="write one case's mutated archive to DIR/archive and stop")
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=CASE_TIMEOUT_S)
    args = ap.parse_args(argv)
    if args.rebuild:
        seed_name, rng, out = args.rebuild
        print(rebuild(seed_name, int(rng), out))
        return 0
    print(f"hrr fuzz: {args.n} mutations, seed {args.seed}, {args.jobs} workers", flush=True)
    s = fuzz(args.n, seed=args.seed, jobs=args.jobs, timeout=args.timeout,
             log=lambda line: print(line, flush=True))
    print(f"hrr fuzz: {s['cases']} cases in {s['seconds']:.1f} s (seeds {s['seed_seconds']:.1f} s); "
          f"slowest case {s['slowest']:.2f} s; peak worker RSS {s['peak_rss_kb'] // 1024} MiB")
    print("hrr fuzz: mutations: " + ", ".join(f"{k} {v}" for k, v in sorted(s["by_mutation"].items())))
    print(f"hrr fuzz: {len(s['findings'])} finding(s)")
    return 1 if s["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())
