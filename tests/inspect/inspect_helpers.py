"""Helpers for the inspection tests: a small parametrised sim app, a Trace Event Format
checker, and the CLI run as a subprocess."""
from __future__ import annotations

import ctypes
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from hrr.backends.sim import builtin_code_object

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "serving_step.py"
N = 64


def check(result: Any) -> Any:
    err, *outs = result if isinstance(result, tuple) else (result,)
    assert err == 0, err
    return outs[0] if len(outs) == 1 else outs


def make_app(*, value: int = 7, extra_call: bool = False, pinned_input: int = 5,
             grid: int = 1, fill_offset: int = 0) -> Any:
    """An app (for hrrtest.capture) that fills a device buffer with ``value``, copies a pinned
    buffer the host wrote with ``pinned_input`` to the device with a kernel (not through HIP:
    invisible to an archive without the pinned_snapshot plugin) and reads both back."""
    def app(hip: Any, _hiprtc: Any, _be: Any) -> list[int]:
        d2h = hip.hipMemcpyKind.hipMemcpyDeviceToHost
        check(hip.hipInit(0))
        module = check(hip.hipModuleLoadData(builtin_code_object()))
        fill = check(hip.hipModuleGetFunction(module, b"fill_u32"))
        copy = check(hip.hipModuleGetFunction(module, b"copy_u8"))
        stream = check(hip.hipStreamCreate())
        dev, dev2 = check(hip.hipMalloc(N * 4)), check(hip.hipMalloc(N * 4))
        pin = check(hip.hipHostMalloc(N * 4, 0))
        np.ctypeslib.as_array((ctypes.c_uint32 * N).from_address(int(pin)))[:] = pinned_input
        fargs = [ctypes.c_void_p(int(dev) + fill_offset), ctypes.c_uint32(value), ctypes.c_uint32(N - 1)]
        check(hip.hipModuleLaunchKernel(fill, grid, 1, 1, 64, 1, 1, 0, stream,
                                        [ctypes.addressof(a) for a in fargs], None))
        if extra_call:
            check(hip.hipDeviceSynchronize())
        cargs = [ctypes.c_void_p(int(dev2)), ctypes.c_void_p(int(pin)), ctypes.c_uint64(N * 4)]
        check(hip.hipModuleLaunchKernel(copy, 1, 1, 1, 64, 1, 1, 0, stream,
                                        [ctypes.addressof(a) for a in cargs], None))
        out = np.zeros(N, np.uint32)
        check(hip.hipMemcpyAsync(out, dev, N * 4, d2h, stream))
        check(hip.hipStreamSynchronize(stream))
        out2 = np.zeros(N, np.uint32)
        check(hip.hipMemcpy(out2, dev2, N * 4, d2h))
        for obj, free in ((dev, hip.hipFree), (dev2, hip.hipFree), (pin, hip.hipHostFree),
                          (stream, hip.hipStreamDestroy), (module, hip.hipModuleUnload)):
            check(free(obj))
        return [int(out[0]), int(out2[0])]
    return app


def hrr_cli(*args: Any, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``python -m hrr.cli.main ARGS`` and return the completed process (text)."""
    return subprocess.run([sys.executable, "-m", "hrr.cli.main", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, check=False)


def describe(proc: subprocess.CompletedProcess) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


# -- Trace Event Format rules -------------------------------------------------------------
class TraceError(AssertionError):
    """The file breaks a rule of the Trace Event Format (as chrome://tracing and Perfetto read it)."""


def _num(v: Any) -> bool:
    return type(v) in (int, float)


def validate_trace(path: Path | str) -> dict[str, Any]:
    """Check a JSON-object trace against the format's rules; returns the parsed object.

    JSON parses; ``traceEvents`` is a list; every event has ``ph`` (str), ``ts`` (number),
    ``pid`` and ``tid`` (ints); X has a number ``dur`` >= 0; B/E pair up per track in order
    (E closes the innermost open B of its track, none left open); i/I has scope g/p/t;
    timestamps never decrease on a track (file order, metadata excluded); M events have a
    known name and ``args.name`` (for names); every (pid, tid) used has a ``thread_name``
    and every pid a ``process_name``; s/f flow events come in id pairs."""
    data = json.loads(Path(path).read_text())
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        raise TraceError("not a JSON object with a traceEvents list")
    last: dict[tuple, float] = {}
    open_b: dict[tuple, list] = defaultdict(list)
    used_tracks: set[tuple] = set()
    named_tracks: set[tuple] = set()
    named_pids: set[int] = set()
    flows: dict[Any, list[str]] = defaultdict(list)
    for n, ev in enumerate(data["traceEvents"]):
        where = f"event {n} {ev!r:.200}"
        if not isinstance(ev, dict):
            raise TraceError(f"{where}: not an object")
        ph = ev.get("ph")
        if not isinstance(ph, str) or not _num(ev.get("ts")) \
                or type(ev.get("pid")) is not int or type(ev.get("tid")) is not int:
            raise TraceError(f"{where}: ph/ts/pid/tid missing or of the wrong type")
        track = (ev["pid"], ev["tid"])
        if ph == "M":
            if ev.get("name") not in ("process_name", "thread_name", "process_sort_index",
                                      "thread_sort_index", "process_labels"):
                raise TraceError(f"{where}: unknown metadata event")
            args = ev.get("args")
            if ev["name"] in ("process_name", "thread_name") and not (
                    isinstance(args, dict) and isinstance(args.get("name"), str) and args["name"]):
                raise TraceError(f"{where}: a name metadata event without args.name")
            if ev["name"] == "thread_name":
                named_tracks.add(track)
            if ev["name"] == "process_name":
                named_pids.add(ev["pid"])
            continue
        if ph not in ("X", "B", "E", "i", "I", "s", "t", "f"):
            raise TraceError(f"{where}: phase {ph!r} is not one this checker knows")
        if ev["ts"] < last.get(track, float("-inf")):
            raise TraceError(f"{where}: timestamp goes backwards on track {track}")
        last[track] = ev["ts"]
        used_tracks.add(track)
        if ph != "E" and not isinstance(ev.get("name"), str):
            raise TraceError(f"{where}: no name")
        if ph == "X" and not (_num(ev.get("dur")) and ev["dur"] >= 0):
            raise TraceError(f"{where}: X without a dur >= 0")
        if ph == "B":
            open_b[track].append(ev)
        if ph == "E":
            if not open_b[track]:
                raise TraceError(f"{where}: E with no open B on track {track}")
            begin = open_b[track].pop()
            if "name" in ev and ev["name"] != begin["name"]:
                raise TraceError(f"{where}: E closes {begin['name']!r}, not {ev['name']!r}")
        if ph in ("i", "I") and ev.get("s", "t") not in ("g", "p", "t"):
            raise TraceError(f"{where}: instant scope must be g, p or t")
        if ph in ("s", "t", "f"):
            if "id" not in ev:
                raise TraceError(f"{where}: flow event without id")
            flows[(ev.get("cat"), ev["id"])].append(ph)
    for track, stack in open_b.items():
        if stack:
            raise TraceError(f"track {track}: B {stack[-1]['name']!r} never ends")
    unnamed = used_tracks - named_tracks
    if unnamed:
        raise TraceError(f"tracks without a thread_name metadata event: {sorted(unnamed)}")
    unnamed_pids = {p for p, _ in used_tracks} - named_pids
    if unnamed_pids:
        raise TraceError(f"processes without a process_name metadata event: {sorted(unnamed_pids)}")
    for key, phases in flows.items():
        if phases[0] != "s" or phases[-1] != "f" or phases.count("s") != 1 or phases.count("f") != 1:
            raise TraceError(f"flow {key}: phases {phases} are not one s ... one f")
    return data


def by_track(data: dict[str, Any]) -> dict[tuple[int, int], tuple[str, list[dict]]]:
    """(pid, tid) → (track name, its non-metadata events in file order)."""
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in data["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name"}
    out: dict[tuple[int, int], tuple[str, list[dict]]] = {k: (v, []) for k, v in names.items()}
    for e in data["traceEvents"]:
        if e["ph"] != "M":
            out[(e["pid"], e["tid"])][1].append(e)
    return out
