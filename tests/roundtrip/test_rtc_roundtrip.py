"""hiprtc under capture: every call recorded with what it was given and made (sources by
size and digest, their text only in content mode), replayed as no-ops, and the linked
program's kernel round-trips byte-exact."""
from __future__ import annotations

import numpy as np
import pytest

from hrr.api.catalogue import rows
from hrrtest import archive_calls, capture, only, replay, text
from rtc_app import DEVICE_FN, KERNEL, N, exercise_rtc

RTC_ROWS = {row.name for row in rows() if row.module == "hiprtc"}


def _app(hip, hiprtc, be):
    return exercise_rtc(hip, hiprtc)


def _by_api(root) -> dict[str, list[list]]:
    out: dict[str, list[list]] = {}
    for rec in archive_calls(root):
        out.setdefault(rec[2], []).append(rec)
    return out


def test_the_linking_example_round_trips(tmp_path, backend_name):
    results = capture(tmp_path, _app, backend=backend_name)
    assert (results["filled"] == 7).all() and results["lowered"] == "fill_u32"
    assert set(_by_api(tmp_path)) >= RTC_ROWS, "every hiprtc call is recorded"
    result = replay(tmp_path, backend=backend_name)
    assert result.exit_code == 0, text(result)
    proc = only(result)
    assert proc.checks_failed == 0 and proc.refusals == () and proc.checks_passed >= 1, text(result)


def test_what_a_compile_and_link_record_says(tmp_path):
    import xxhash
    capture(tmp_path, _app, plugins=["privacy"], content=False, capture_content_env=False)
    calls = _by_api(tmp_path)
    sources = [rec[3][0] for rec in calls["hiprtcCreateProgram"]]
    # the kernel source by size and digest, never its text without --content
    assert [len(KERNEL), xxhash.xxh3_128_hexdigest(KERNEL), None, 1] in sources
    assert [len(DEVICE_FN), xxhash.xxh3_128_hexdigest(DEVICE_FN), None, 1] in sources
    names = [rec[3][1] for rec in calls["hiprtcCreateProgram"]]
    assert names == ["plain.cu", "kernel", "device_fn"]
    options = [rec[3][2] for rec in calls["hiprtcCompileProgram"]]
    assert options[0] == "-std=c++17" and options[1] == "--offload-arch=gfx942:sramecc+:xnack- -fgpu-rdc -O3"
    linked = calls["hiprtcLinkComplete"][0][5][0]
    load = next(rec for rec in calls["hipModuleLoadData"])
    assert linked[1] == load[3][0], "the linked image's digest is the name its code object is stored under"
    add = calls["hiprtcLinkAddData"][0][3]
    assert add[1] == 100 and add[4] == "kernel" and add[2][0] == add[3]
    assert calls["hiprtcLinkAddFile"][0][3][2].endswith("device_fn.o")
    assert calls["hiprtcGetLoweredName"][0][5] == ["fill_u32"]
    log = calls["hiprtcGetProgramLog"][0][3][1]
    assert log is not None and log[2] is None   # the log's size and digest; its text only in content mode


@pytest.mark.usefixtures("loose_blobs")
def test_content_mode_keeps_the_source_text(tmp_path):
    capture(tmp_path, _app, content=True)
    calls = _by_api(tmp_path)
    blob = next(rec[3][0][2] for rec in calls["hiprtcCreateProgram"] if rec[3][1] == "kernel")
    pid_dir = next(tmp_path.glob("pid-*"))
    assert (pid_dir / "blobs" / blob[:2] / blob).read_bytes() == KERNEL


def test_replay_runs_no_compiler(tmp_path, monkeypatch):
    """hiprtc rows are no-ops at replay: with every hiprtc function broken, replay passes."""
    capture(tmp_path, _app)
    from hrr.backends.sim import hiprtc

    for name in RTC_ROWS:
        monkeypatch.setattr(hiprtc, name, lambda *a, **k: pytest.fail("replay called hiprtc"))
    result = replay(tmp_path, backend="sim")
    assert result.exit_code == 0, text(result)
    assert only(result).checks_passed >= 1


@pytest.mark.parametrize("drop", ["device_fn"])
def test_an_unresolved_symbol_is_a_linking_error_with_a_log(drop):
    import ctypes

    from hrr.backends.sim import hip, hiprtc
    from rtc_app import compile_rdc
    _, bitcode, _ = compile_rdc(hiprtc, KERNEL, b"kernel", "gfx942")
    log = ctypes.create_string_buffer(512)
    opts = [hiprtc.hipJitOption.hipJitOptionErrorLogBuffer, hiprtc.hipJitOption.hipJitOptionErrorLogBufferSizeBytes]
    err, state = hiprtc.hiprtcLinkCreate(2, opts, [ctypes.addressof(log), 512])
    kind = hiprtc.hipJitInputType.hipJitInputLLVMBitcode
    assert hiprtc.hiprtcLinkAddData(state, kind, bitcode, len(bitcode), b"kernel", 0, None, None)[0] == 0
    assert hiprtc.hiprtcLinkComplete(state) == (hiprtc.hiprtcResult.HIPRTC_ERROR_LINKING, None, None)
    assert b"undefined reference to 'pick'" in log.value
    assert hiprtc.hiprtcLinkDestroy(state)[0] == 0
    assert np is not None and hip is not None and N == 64
