"""A program that uses hipFFT and hipRAND through ``from hip import hipfft, hiprand``,
captured and replayed byte for byte through the real command line (issue 22)."""
from __future__ import annotations

from cli_helpers import app, capture, hrr


def test_a_hipfft_hiprand_program_is_captured_and_replays_strictly(tmp_path):
    root = tmp_path / "archive"
    proc = capture(root, *app("fft_rand_app.py"))
    assert "hipfft+hiprand: ok" in proc.stdout
    out = hrr("replay", "--strict", root, check=0).stdout
    assert "Device-to-host checks: 5 passed, 0 failed, 0 unverifiable" in out, out
    dump = hrr("dump", root, check=0).stdout
    assert "hipfftPlan1d nx=16 type=HIPFFT_C2C batch=3" in dump, dump
    assert "hiprandGenerateNormal generator=rand_generator#1" in dump and "stddev=1.0" in dump, dump
    assert "hipfftPlanMany rank=1 n=[6] inembed=null istride=1" in dump, dump   # a few words, as themselves
