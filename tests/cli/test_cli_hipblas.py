"""A program that uses hipBLAS through ``from hip import hipblas``, captured and replayed
byte for byte through the real command line (issue 22)."""
from __future__ import annotations

from cli_helpers import app, capture, hrr


def test_a_hipblas_program_is_captured_and_replays_strictly(tmp_path):
    root = tmp_path / "archive"
    proc = capture(root, *app("hipblas_app.py"))
    assert "hipblas: ok" in proc.stdout
    out = hrr("replay", "--strict", root, check=0).stdout
    assert "Device-to-host checks: 1 passed, 0 failed, 0 unverifiable" in out, out
    dump = hrr("dump", root, check=0).stdout
    assert "hipblasSaxpy handle=blas_handle#1 n=33 alpha=" in dump, dump
