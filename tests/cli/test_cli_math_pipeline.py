"""A program of our own chaining hipRAND (normal), hipBLAS (gemm) and an R2C/C2R hipFFT pair,
checked against numpy inside the program, captured and replayed --strict through the real
command line: on the sim here, and on the cuda backend where a GPU is (issue 22)."""
from __future__ import annotations

import pytest
from cli_helpers import app, capture, describe, hrr

CHECKS = "Device-to-host checks: 4 passed, 0 failed, 0 unverifiable"


def _capture_and_replay(root, backend: str) -> str:
    proc = capture(root, *app("math_pipeline_app.py"), env={"HRR_BACKEND": backend}, check=None)
    assert proc.returncode == 0 and "math pipeline: ok" in proc.stdout, describe(proc)
    out = hrr("replay", "--strict", "--backend", backend, root, check=None)
    assert out.returncode == 0 and CHECKS in out.stdout, describe(out)
    return out.stdout


def test_the_math_pipeline_replays_strictly_on_the_sim(tmp_path):
    _capture_and_replay(tmp_path / "a.hrr", "sim")
    dump = hrr("dump", tmp_path / "a.hrr", check=0).stdout
    assert "hipblasSgemm" in dump and "hipfftExecR2C" in dump and "hipfftExecC2R" in dump, dump


@pytest.mark.gpu
def test_the_math_pipeline_replays_strictly_on_cuda(tmp_path):
    _capture_and_replay(tmp_path / "a.hrr", "cuda")
