"""A bounded mutation-fuzz run in CI: every mutated archive ends in a clean exit of info and
replay (no traceback, hang, odd exit code, memory blow-up or write outside replay's own
area). The long run is `bash scripts/fuzz.sh N`."""
from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys

import pytest

import mutate

CI_CASES = 200


@pytest.mark.slow
def test_bounded_fuzz_run_finds_nothing():
    lines: list[str] = []
    summary = mutate.fuzz(CI_CASES, seed=8, jobs=min(2, os.cpu_count() or 1), log=lines.append)
    assert summary["cases"] == CI_CASES
    assert not summary["findings"], "\n".join(lines)
    # Every kind of mutation ran (the draw is seeded, so this is deterministic).
    assert set(summary["by_mutation"]) == {name for name, _ in mutate.MUTATIONS}


def test_mutator_rewrites_frames_with_valid_checksums(tmp_path):
    """A frame-level mutation passes the framing layer: every frame's checksum is good."""
    from hrr.archive import open_archive, open_process_writer
    root = tmp_path / "a"
    w = open_process_writer(str(root), 77, {"backend": "sim"}, manifest={})
    for i in range(5):
        w.append([i, 1, "hipDeviceSynchronize", [], 0, [], {}])
    w.close()
    path = str(root / "pid-77" / "events.bin")
    header, frames, tail = mutate.read_frames(path)
    frames[:-1] = frames[-2::-1]          # the events reversed, the trailer kept last
    mutate.write_frames(path, header, frames, tail)
    with open_archive(str(root)) as a:
        state = a.processes[0].scan()
        seqs = [r.value[0] for r in a.processes[0].events()]
    assert state.bad_checksums == 0 and not state.stopped and state.frames == 5
    assert seqs == [4, 3, 2, 1, 0]


def test_mutator_batches_v2_records_again_with_numbers_and_valid_checksums(tmp_path):
    """write_frames with an rng puts the spelled-out records back into numbered batches."""
    import random

    from hrr.archive import open_archive, open_process_writer
    root = tmp_path / "a"
    w = open_process_writer(str(root), 78, {"backend": "sim"}, manifest={})
    values = [[i, 1 + i % 2, "hipDeviceSynchronize", [], 0, [], {}] for i in range(20)] + [["odd", 1]]
    for v in values:
        w.append(v)
    w.close()
    path = str(root / "pid-78" / "events.bin")
    header, frames, tail = mutate.read_frames(path)
    assert len(frames) == 22                # 21 records spelled out one a frame, and the trailer
    mutate.write_frames(path, header, frames, tail, random.Random(3))
    with open_archive(str(root)) as a:
        state = a.processes[0].scan()
        got = [r.value for r in a.processes[0].events()]
    assert state.bad_checksums == 0 and not state.stopped and state.frames == 21
    assert got == values
    assert len(open(path, "rb").read()) < len(header) + sum(len(p) + 16 for _, p in frames)   # batched, numbered


@pytest.fixture(scope="module")
def serving_seed(tmp_path_factory):
    out = tmp_path_factory.mktemp("seeds")
    hrr = [sys.executable, "-m", "hrr.cli.main"]
    path = str(out / "serving")
    subprocess.run(hrr + ["capture", "-o", path, "--content", "--backend", "sim", "--", sys.executable,
                          os.path.join(mutate.REPO, "examples", "serving_step.py")],
                   env=dict(os.environ, HRR_BACKEND="sim"), check=True, capture_output=True, cwd=str(out))
    return path


@pytest.mark.parametrize("rng", range(12))
def test_mutated_kernel_source_containers_end_cleanly_and_read_no_host_file(serving_seed, tmp_path, monkeypatch, rng):
    """Each mutation of the kernel-source container (hostile options, header names that
    cannot be files, wrong types, many or huge parts, bad lengths; its kernel tries to
    #embed a canary file and print it): info and replay end cleanly and print no canary."""
    from hrr.backends.sim.native import toolchain
    if toolchain.find_toolchain() is None:
        pytest.skip("no C++ compiler for the sim")
    monkeypatch.setenv("HRR_CACHE_DIR", str(tmp_path / "cache"))
    root, outside = str(tmp_path / "archive"), str(tmp_path / "outside")
    shutil.copytree(serving_seed, root, symlinks=True)
    os.makedirs(outside)
    with open(os.path.join(outside, "canary.bin"), "wb") as f:
        f.write(b"canary " * 100)
    m = mutate.Mutator(random.Random(rng), root, outside)
    mutate._kernel_source(m)
    assert "kernel source" in m.what
    assert mutate.run_commands(root) == [], m.what
