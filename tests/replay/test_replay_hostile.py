"""Hand-built hostile archives: every size is checked against the allocation it names
before anything is copied, blob or no blob; records of the wrong type are refused,
counted and named, never a traceback; replay never reads memory it does not own."""
from __future__ import annotations

import json
import struct
import subprocess
import sys
import textwrap

import pytest
from hostile import D2H, DEVICE_BASE, H2D, HostileArchive, describe, replay_cli
from hrrtest import only, replay, text

from hrr.api.catalogue import CATALOGUE
from hrr.events import PSEUDO_D2H_CHECK
from hrr.events.launch import launch_list
from hrr.replay.result import Outcome, ReplayResult

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


def _refusals(result: ReplayResult) -> list[str]:
    """The one process's refused records, as ``record N api [category]: reason``."""
    return [f"record {r.seq} {r.api} [{r.category}]: {r.reason}" for r in only(result).refusals]


def _cli_refusals(proc: subprocess.CompletedProcess) -> list[str]:
    """The same, from ``hrr replay --json`` run as a real process."""
    (replayed,) = json.loads(proc.stdout)["processes"]
    return [f"record {r['seq']} {r['api']} [{r['category']}]: {r['reason']}" for r in replayed["refusals"]]


def test_copy_of_1gib_from_a_1kib_pinned_source_is_refused_not_a_segfault(tmp_path):
    """No blob: the bounds were checked only when a blob existed, and the sim then read
    1 GiB past the 1 KiB buffer (SIGSEGV). Run as a real process so a crash cannot hide."""
    a = HostileArchive(tmp_path / "a")
    src, dst = a.pinned(KiB), a.device(GiB)
    a.copy(["a", dst, GiB, None], ["a", src, GiB, None], GiB, H2D)
    a.close()
    proc = replay_cli(a.root, "--strict", "--json")
    assert proc.returncode == 1, describe(proc)
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "record 2 hipMemcpy [bounds]: 1073741824 bytes at 0x7f0000000000 run past the end of " \
           "their 1024-byte allocation" in _cli_refusals(proc), describe(proc)


def test_copy_64kib_past_a_pinned_source_leaks_no_heap_bytes(tmp_path):
    """The same shape 64 KiB past the end used to copy replay's own heap to the device and
    print it in the mismatch of a later check. Now the copy never runs."""
    n = KiB + 64 * KiB
    a = HostileArchive(tmp_path / "a")
    src, dst = a.pinned(KiB), a.device(n)
    a.copy(["a", dst, n, None], ["a", src, n, None], n, H2D)
    a.copy(["h", 0x1234000, n, a.blob(bytes(n))], ["a", dst, n, None], n, D2H)
    a.close()
    result = replay(a.root, backend="sim", strict=False)
    assert "record 2 hipMemcpy [bounds]: 66560 bytes at 0x7f0000000000 run past the end of " \
           "their 1024-byte allocation" in _refusals(result), text(result)
    assert only(result).checks == (1, 0, 0), text(result)
    assert not any("differ" in f for f in only(result).failures), text(result)
    assert result.exit_code == 0, text(result)


@pytest.mark.parametrize("api,args", [  # (device pointer, pinned pointer, n) -> args
    ("hipMemcpyHtoD", lambda dev, pinned, n: [dev, ["a", pinned, n, None], n]),
    ("hipMemcpyDtoH", lambda dev, pinned, n: [["a", pinned, n, None], dev, n]),
    ("hipMemcpyDtoD", lambda dev, pinned, n: [dev, dev, n]),
    ("hipMemset", lambda dev, pinned, n: [dev, 7, n]),
])
def test_sized_pointer_arguments_are_checked_against_their_allocation(tmp_path, api, args):
    """A raw pointer parameter whose call names a byte count (hipMemset, the directional
    copies) is checked like a copy endpoint."""
    a = HostileArchive(tmp_path / "a")
    pinned, dev = a.pinned(4 * KiB), a.device(KiB)  # only the device pointer is too short
    a.call(api, args(dev, pinned, 2 * KiB))
    a.close()
    result = replay(a.root, backend="sim", strict=False)
    (refusal,) = _refusals(result)
    assert refusal == f"record 2 {api} [bounds]: 2048 bytes at 0x1000000000000 run past the end " \
                      "of their 1024-byte allocation", text(result)


def test_endpoint_size_must_be_the_calls_byte_count(tmp_path):
    """A 16-byte host endpoint with sizeBytes 64 KiB: replay made a 16-byte buffer and the
    backend wrote 64 KiB into it. Run as a real process (heap corruption can crash)."""
    a = HostileArchive(tmp_path / "a")
    dev = a.device(64 * KiB)
    a.copy(["h", 0x1234000, 16, a.blob(bytes(16))], ["a", dev, 64 * KiB, None], 64 * KiB, D2H)
    a.close()
    proc = replay_cli(a.root, "--json")
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "record 1 hipMemcpy [bounds]: dst: the endpoint holds 16 bytes but sizeBytes is 65536" \
        in _cli_refusals(proc), describe(proc)
    assert proc.returncode == 0, describe(proc)


def test_check_of_a_pinned_destination_freed_before_it_never_reads_freed_memory(tmp_path):
    """An asynchronous copy into pinned memory, the memory freed, then its check: the
    check must not read what the free gave back."""
    a = HostileArchive(tmp_path / "a")
    pinned, dev = a.pinned(4 * KiB), a.device(4 * KiB)
    s = a.stream()
    seq = a.copy(["a", pinned, 4 * KiB, None], ["a", dev, 4 * KiB, None], 4 * KiB, D2H,
                 api="hipMemcpyAsync", stream=s)
    a.call("hipHostFree", [pinned])
    a.call(PSEUDO_D2H_CHECK, [seq], extra={"blob": a.blob(bytes(4 * KiB)), "n": 4 * KiB})
    a.close()
    result = replay(a.root, backend="sim", strict=False)
    assert f"record 5 {PSEUDO_D2H_CHECK} [bounds]: the destination at 0x7f0000000000 was " \
           "released before its check" in _refusals(result), text(result)


# Records of the wrong type or range: (label, a function of (archive, device address)
# that appends the bad record, the refusal expected for it).
LAUNCH_AT = "hipModuleLaunchKernel [bad_record]: record 4 at offset 297: event field extra.launch"
BAD_RECORDS = [
    ("size inf", lambda a, d: a.call("hipMalloc", [float("inf")], outs=[DEVICE_BASE + GiB]),
     "hipMalloc [bad_record]: record 2 at offset 156: event field args[0] (size) must be a finite number"),
    ("size nan", lambda a, d: a.call("hipHostMalloc", [float("nan"), 0], outs=[1 << 40]),
     "hipHostMalloc [bad_record]: record 2 at offset 156: event field args[0] (size) must be a finite number"),
    ("size negative", lambda a, d: a.call("hipMalloc", [-5], outs=[DEVICE_BASE + GiB]),
     "hipMalloc [bad_record]: size is -5, not a byte count"),
    ("size huge", lambda a, d: a.call("hipMallocHost", [(1 << 64) - 1], outs=[1 << 40]),
     "hipMallocHost [bad_record]: size is 18446744073709551615, not a byte count"),
    ("size a float", lambda a, d: a.call("hipMemset", [d, 0, 16.0]),
     "hipMemset [bad_record]: sizeBytes is 16.0, not a byte count"),
    ("size a string", lambda a, d: a.call("hipMemset", [d, 0, "16"]),
     "hipMemset [bad_record]: sizeBytes is '16', not a byte count"),
    ("value inf", lambda a, d: a.call("hipMemset", [d, float("inf"), 16]),
     "hipMemset [bad_record]: record 2 at offset 156: event field args[1] (value) must be a finite number"),
    ("value huge", lambda a, d: a.call("hipSetDevice", [1e300]),
     "hipSetDevice [bad_record]: parameter deviceId is 1e+300, not a number replay can pass"),
    ("enum a list", lambda a, d: a.call("hipMemcpy", [["a", d, 4, None], ["h", 1, 4, None], 4, [1]]),
     "hipMemcpy [bad_record]: record 2 at offset 156: event field args[3] (kind) must be an int"),
    ("pointer a float", lambda a, d: a.call("hipFree", [1.5]),
     "hipFree [bad_record]: record 2 at offset 156: event field args[0] (ptr) must be an address (int)"),
    ("pointer negative", lambda a, d: a.call("hipMemset", [-d, 0, 4]),
     "hipMemset [bad_record]: dst is -281474976710656, not a 64-bit address"),
    ("handle a map", lambda a, d: a.call("hipStreamSynchronize", [{"x": 1}]),
     "hipStreamSynchronize [bad_record]: record 2 at offset 156: "
     "event field args[0] (stream) must be a handle value (int)"),
    ("endpoint address a string", lambda a, d: a.call("hipMemcpy", [["a", "x", 4, None], ["h", 1, 4, None], 4, 1]),
     "hipMemcpy [bad_record]: dst address is 'x', not a 64-bit address"),
    ("endpoint size nan", lambda a, d: a.call("hipMemcpy", [["a", d, float("nan"), None], ["h", 1, 4, None], 4, 1]),
     "hipMemcpy [bad_record]: record 2 at offset 156: "
     "event field args[0] must be a number, string, bytes, null or a list"),
    ("endpoint too short", lambda a, d: a.call("hipMemcpy", [["a", d, 4], ["h", 1, 4, None], 4, 1]),
     "hipMemcpy [bad_record]: dst: a copy endpoint record is malformed"),
    ("blob name a number", lambda a, d: a.call("hipMemcpy", [["a", d, 4, None], ["h", 1, 4, 7], 4, 1]),
     "hipMemcpy [bad_record]: src: a copy endpoint names a bad blob"),
    ("extra.records an int", lambda a, d: a.call("hipDeviceSynchronize", [], extra={"records": 5}),
     "hipDeviceSynchronize [bad_record]: record 2 at offset 156: "
     "event field extra.records must be a map of plugin name to a list"),
    ("plugin records a map", lambda a, d: a.call("hipDeviceSynchronize", [], extra={"records": {"p": {}}}),
     "hipDeviceSynchronize [bad_record]: record 2 at offset 156: "
     "event field extra.records must be a map of plugin name to a list"),
    ("launch ptrs an int", lambda a, d: _launch_record(a, d, ptrs=5),
     "hipModuleLaunchKernel [bad_record]: record 4 at offset 297: event field extra.launch must be a map"),
    ("launch grid with a bool", lambda a, d: _launch_record(a, d, grid=(True, 1, 1)),
     "hipModuleLaunchKernel [bad_record]: record 4 at offset 297: event field extra.launch must be a map"),
    ("launch word past the kernargs", lambda a, d: _launch_record(a, d, ptrs=[[16, d, 0]]),
     "hipModuleLaunchKernel [bounds]: pointer word at offset 16 lies outside the kernarg buffer"),
    # Format 3's list form: each item checked as strictly, the refusal naming it (LAUNCH_AT: where).
    ("list launch ptrs an int", lambda a, d: _launch_record(a, d, ptrs=5, form="list"),
     LAUNCH_AT + "[4] (ptrs) must be a list of [offset, base, delta] int triples"),
    ("list launch grid with a bool", lambda a, d: _launch_record(a, d, grid=(True, 1, 1), form="list"),
     LAUNCH_AT + "[1] (grid) must be a list of 3 ints"),
    ("list launch kernel an int", lambda a, d: _launch_record(a, d, kernel=5, form="list"),
     LAUNCH_AT + "[0] (kernel) must be a string"),
    ("list launch kernargs a string", lambda a, d: _launch_record(a, d, kernargs="x" * 16, form="list"),
     LAUNCH_AT + "[3] (kernargs) must be bytes"),
    ("list launch more words than kernargs", lambda a, d: _launch_record(a, d, ptrs=[[0, d, 0]] * 3, form="list"),
     LAUNCH_AT + "[4] (ptrs) has 3 words, more than kernargs' 2"),
    ("list launch offsets past the cap", lambda a, d: _launch_record(a, d, offsets=[0] * 4097, form="list"),
     LAUNCH_AT + "[5] (offsets) must be a list of parameter offsets"),
    ("list launch error not a string", lambda a, d: _launch_record(a, d, error=b"why", form="list"),
     LAUNCH_AT + "[3] (error) must be a string"),
    ("list launch of 3 items", lambda a, d: _launch_record(a, d, form="list", cut=3),
     LAUNCH_AT + " has 3 items, it must be [kernel, grid, block, kernargs, ptrs]"),
    ("list launch of 7 items", lambda a, d: _launch_record(a, d, offsets=[0], form="list", more=[1]),
     LAUNCH_AT + " has 7 items"),
    ("list launch word past the kernargs", lambda a, d: _launch_record(a, d, ptrs=[[16, d, 0]], form="list"),
     "hipModuleLaunchKernel [bounds]: pointer word at offset 16 lies outside the kernarg buffer"),
    ("list launch not read at capture", lambda a, d: _launch_record(a, d, error="no layout", form="list"),
     "hipModuleLaunchKernel [bad_record]: launch arguments were not recorded ('no layout')"),
    ("sequence number negative", lambda a, d: a.call("hipDeviceSynchronize", [], seq=-1),
     "hipDeviceSynchronize [bad_record]: record 2 at offset 156: event field seq must be a non-negative int"),
    ("args not a list", lambda a, d: a.call("hipMalloc", 5),
     "hipMalloc [bad_record]: record 2 at offset 156: event field args must be a list"),
    ("api a list", lambda a, d: a.call(["hipMalloc"], [5]), "? [bad_record]: record 2 at offset"),
    ("api None", lambda a, d: a.call(None, [5]), "? [bad_record]: record 2 at offset"),
    ("thread id a map", lambda a, d: a.call("hipInit", [0], tid={"t": 1}),
     "hipInit [bad_record]: record 2 at offset 156: event field tid must be an int"),
    ("not a record", lambda a, d: a.raw({"seq": 1}), "? [bad_record]: record 2 at offset"),
]


def _launch_record(a: HostileArchive, d: int, ptrs=None, grid=(1, 1, 1), form="map", cut=None, more=(),
                   seq=None, **change) -> int:
    """fill_u32(d, 7, 4) on the null stream, with the given pointer words and grid (``change``:
    other fields; ``form`` "list": format 3's list, cut to ``cut`` items, ``more`` appended)."""
    fn = a.function("fill_u32")
    launch = {"kernel": "fill_u32", "grid": list(grid), "block": [1, 1, 1],
              "kernargs": struct.pack("<QII", d, 7, 4), "ptrs": [[0, d, 0]] if ptrs is None else ptrs}
    launch.update(change)
    if "error" in change:
        del launch["kernargs"], launch["ptrs"]
    wire = launch if form == "map" else [*launch_list(launch)[:cut], *more]
    return a.call("hipModuleLaunchKernel", [fn, *grid, 1, 1, 1, 0, 0, None, None], extra={"launch": wire}, seq=seq)


@pytest.mark.parametrize("label,append,expected", BAD_RECORDS, ids=[b[0] for b in BAD_RECORDS])
def test_record_of_the_wrong_type_is_refused_and_named(tmp_path, label, append, expected):
    a = HostileArchive(tmp_path / "a")
    a.call("hipInit", [0])
    dev = a.device(64)
    append(a, dev)
    a.call("hipDeviceSynchronize", [])
    a.close()
    result = replay(a.root, backend="sim", strict=True)
    refusals = _refusals(result)
    assert any(expected in r for r in refusals), (expected, text(result))
    assert result.exit_code == 1 and "1 records refused" in only(result).strict_reasons, text(result)
    assert only(result).outcome is Outcome.REFUSED


@pytest.mark.parametrize("form", ["list", "map"])
def test_a_launch_the_schema_refuses_is_not_replayed_by_the_fast_path(tmp_path, form):
    """A launch in capture's common shape but numbered -1: the launch runner declines it
    (its checks keep every bound an archive's int can break), the schema refuses it."""
    a = HostileArchive(tmp_path / "a")
    dev = a.device(64)
    _launch_record(a, dev, form=form, seq=-1)
    a.close()
    result = replay(a.root, backend="sim", strict=True)
    assert [r for r in _refusals(result) if "hipModuleLaunchKernel [bad_record]" in r
            and "event field seq must be a non-negative int" in r], text(result)
    assert result.exit_code == 1, text(result)


def test_every_record_replays_after_refusals(tmp_path):
    """A refused record ends only itself: what follows still replays and is checked."""
    a = HostileArchive(tmp_path / "a")
    dev = a.device(16)
    a.call("hipMalloc", [float("nan")], outs=[DEVICE_BASE + 4096])
    a.call("hipMemset", [dev, 9, 16])
    a.copy(["h", 0x1000, 16, a.blob(b"\x09" * 16)], ["a", dev, 16, None], 16, D2H)
    a.close()
    result = replay(a.root, backend="sim", strict=False)
    assert only(result).checks == (1, 0, 0), text(result)
    assert result.exit_code == 0


def test_an_unforeseen_shape_is_a_refusal_not_a_traceback(tmp_path, monkeypatch):
    """The last line of defence: a backend that raises on an argument it cannot take (here
    made to raise) refuses that record and names the exception."""
    from hrr.backends import sim

    def broken(flags):
        raise TypeError("cannot take this")

    monkeypatch.setattr(sim.hip, "hipInit", broken)
    a = HostileArchive(tmp_path / "a")
    a.call("hipInit", [0])
    a.close()
    result = replay(a.root, backend="sim", strict=False)
    assert "record 0 hipInit [bad_record]: replay could not use this record (TypeError: cannot " \
           "take this)" in _refusals(result), text(result)


def test_sim_copy_past_a_pinned_buffer_is_an_error_not_a_read_past_it():
    """The sim itself (under `hrr run` too): a copy whose source starts in pinned memory and
    runs past its end is hipErrorInvalidValue, as the sim cannot know what follows."""
    code = textwrap.dedent("""
        from hrr.backends.sim import hip
        err, p = hip.hipHostMalloc(1024, 0)
        err, d = hip.hipMalloc(1 << 30)
        print(int(hip.hipMemcpy(d, int(p), 1 << 30, hip.hipMemcpyKind.hipMemcpyHostToDevice)[0]))
        print(int(hip.hipMemcpy(int(p) + 1000, d, 100, hip.hipMemcpyKind.hipMemcpyDeviceToHost)[0]))
        err, big = hip.hipHostMalloc(1 << 40, 0)
        print(int(err), big)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, describe(proc)
    assert proc.stdout.split() == ["1", "1", "2", "None"], describe(proc)  # invalid value; out of memory


def test_catalogue_sizes_are_all_validated():
    """Every parameter that names a byte count somewhere in the catalogue is validated as
    one (the table this test reads is the engine's own)."""
    from hrr.replay.engine import _size_names

    for row in CATALOGUE.values():
        sized = {p.size for p in row.params if p.size} | {o.size for o in row.outs if o.size}
        assert sized <= _size_names(row), row.name


def test_a_code_object_with_deeply_nested_json_is_an_invalid_image(tmp_path):
    """The sim parses the code object's JSON header: 100,000 levels of nesting are
    hipErrorInvalidImage (as recorded), not a RecursionError."""
    header = b"[" * 100_000 + b"]" * 100_000
    image = b"\x7fHRRSIM\x01" + struct.pack("<I", len(header)) + header
    a = HostileArchive(tmp_path / "a")
    code_name = a.writer.put_code_object(image)
    a.call("hipModuleLoadData", [code_name], err=200, outs=[None])   # hipErrorInvalidImage
    a.close()
    result = replay(a.root, backend="sim", strict=True)
    assert result.exit_code == 0, text(result)
    assert (only(result).reproduced_errors, only(result).divergence_count) == (1, 0), text(result)
