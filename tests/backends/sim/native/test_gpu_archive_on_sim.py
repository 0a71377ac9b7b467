"""An archive captured on an NVIDIA H200 replays on the sim: its kernels' source travels in
the cuda backend's code object, and the sim compiles it for the CPU.

``h200/archive`` was made on the H200 machine at commit 509fd6e with
``hrr capture --content --backend cuda -o h200.hrr -- python apps/gpu_to_cpu.py`` (a
histogram with shared memory and atomics, and a struct-by-value sqrt kernel)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hrr.hiptypes import kernelsource
from hrr.backends.sim.native import toolchain
from hrrtest import only, replay, text

ARCHIVE = Path(__file__).parent / "h200" / "archive"   # (a *.hrr name is git-ignored)
pytestmark = pytest.mark.skipif(toolchain.find_toolchain() is None, reason="no C++ compiler for the sim")


def test_the_code_object_recorded_on_the_gpu_carries_cubin_and_source():
    (code,) = list(ARCHIVE.glob("pid-*/code/*"))
    ks = kernelsource.decode(code.read_bytes())
    assert ks.native_kind == "cubin" and ks.native[:4] == b"\x7fELF"
    assert b"__global__ void histogram" in ks.units[0].source and "-O3" in ks.options


def test_an_h200_archive_replays_byte_exact_on_the_sim(tmp_path):
    root = tmp_path / "h200.hrr"
    shutil.copytree(ARCHIVE, root)
    result = replay(root, backend="sim")
    assert result.exit_code == 0, text(result)
    proc = only(result)
    assert proc.backend == "sim" and proc.checks_passed == 2 and proc.checks_failed == 0, text(result)
    assert proc.refusals == () and proc.divergence_count == 0, text(result)
