"""With the privacy plugin on, no byte the program wrote reaches the archive."""
from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np

from hrrtest import capture, replay

MARK = b"HRR-PRIVATE-MARKER-7f3a9c"
PLUGINS = ["privacy", "pinned_snapshot", "graph_capture"]


def _marked(nbytes: int) -> np.ndarray:
    raw = (MARK * (nbytes // len(MARK) + 1))[:nbytes]
    return np.frombuffer(bytearray(raw), dtype=np.uint8)


def marker_app(hip, hiprtc, be):
    """Writes the marker into every kind of buffer an archive could capture."""
    n = 4096
    H2D, D2H = hip.hipMemcpyKind.hipMemcpyHostToDevice, hip.hipMemcpyKind.hipMemcpyDeviceToHost
    mod = hip.hipModuleLoadData(be.builtin_code_object())[1]
    copy = hip.hipModuleGetFunction(mod, b"copy_u8")[1]
    s = hip.hipStreamCreate()[1]
    d = hip.hipMalloc(n)[1]
    d2 = hip.hipMalloc(n)[1]
    assert hip.hipMemcpy(d, _marked(n), n, H2D)[0] == 0                      # h2d payload
    out = np.zeros(n, np.uint8)
    assert hip.hipMemcpy(out, d, n, D2H)[0] == 0                             # d2h result
    pinned = hip.hipHostMalloc(n, 0)[1]
    ctypes.memmove(int(pinned), bytes(_marked(n)), n)                        # pinned snapshot
    assert hip.hipModuleLaunchKernel(copy, 4, 1, 1, 64, 1, 1, 0, s, None,
                                     (d2, pinned, ctypes.c_uint64(n)))[0] == 0
    reg = _marked(n).copy()
    assert hip.hipHostRegister(reg, n, 0)[0] == 0                            # registered memory
    assert hip.hipStreamBeginCapture(s, hip.hipStreamCaptureMode.hipStreamCaptureModeGlobal)[0] == 0
    assert hip.hipModuleLaunchKernel(copy, 4, 1, 1, 64, 1, 1, 0, s, None,
                                     (d2, reg, ctypes.c_uint64(n)))[0] == 0
    graph = hip.hipStreamEndCapture(s)[1]
    ge = hip.hipGraphInstantiate(graph, 0)[1]
    assert hip.hipGraphLaunch(ge, s)[0] == 0                                 # graph-launch snapshot
    out2 = np.zeros(n, np.uint8)
    assert hip.hipMemcpyAsync(out2, d2, n, D2H, s)[0] == 0                  # async d2h result
    assert hip.hipStreamSynchronize(s)[0] == 0
    assert bytes(out2[:len(MARK)]) == MARK
    assert hip.hipHostUnregister(reg)[0] == 0


def _archive_holds(root: Path, needle: bytes) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_metadata_only_archive_holds_no_program_bytes(tmp_path):
    capture(tmp_path, marker_app, plugins=PLUGINS, content=False, capture_content_env=False)
    assert _archive_holds(tmp_path, MARK) == []
    assert _archive_holds(tmp_path, MARK[:12]) == []


def test_content_mode_holds_them_so_the_scan_can_see(tmp_path):
    capture(tmp_path, marker_app, plugins=PLUGINS, content=True)
    assert _archive_holds(tmp_path, MARK), "the scan must be able to find the marker"


def test_privacy_plugin_is_what_makes_capture_metadata_only(tmp_path):
    capture(tmp_path, marker_app, plugins=["pinned_snapshot", "graph_capture"], content=False,
            capture_content_env=False)
    assert _archive_holds(tmp_path, MARK)


def test_content_env_variable_turns_content_back_on(tmp_path):
    capture(tmp_path, marker_app, plugins=PLUGINS, content=False, capture_content_env=True)
    assert _archive_holds(tmp_path, MARK)


def test_metadata_only_replay_runs_says_so_and_strict_fails(tmp_path):
    capture(tmp_path, marker_app, plugins=PLUGINS, content=False, capture_content_env=False)
    code, lines = replay(tmp_path, strict=False, plugins=PLUGINS)
    text = "\n".join(lines)
    assert code == 0, text
    assert "metadata-only" in text and "no device-to-host check was possible" in text
    assert "0 passed" in text and "unverifiable" in text
    strict_code, strict_lines = replay(tmp_path, strict=True, plugins=PLUGINS)
    assert strict_code == 1
    assert any("metadata-only" in line for line in strict_lines if line.startswith("STRICT"))
