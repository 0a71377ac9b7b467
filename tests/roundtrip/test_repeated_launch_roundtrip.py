"""A program's run of equal launches round-trips byte-exact, each launch after the first of
a run made again as the checked one (on cuda: the C prepared launch, cuLaunchKernel with no
Python in between), and a launch of other arguments is checked again."""
from __future__ import annotations

import ctypes

import numpy as np

import hrr.backends.cuda as cuda_backend
from hrrtest import capture, only, replay, text

LAUNCHES = 50


def _builtin_kernel(hip, be, name: bytes):
    mod = hip.hipModuleLoadData(be.builtin_code_object())[1]
    return mod, hip.hipModuleGetFunction(mod, name)[1]


def _launch(hip, function, words, times: int, threads: int) -> None:
    """``times`` equal launches of one block: the same argument words each time."""
    params = [ctypes.addressof(w) for w in words]
    for _ in range(times):
        assert hip.hipModuleLaunchKernel(function, 1, 1, 1, threads, 1, 1, 0, None, params, None)[0] == 0


def _read_words(hip, dev):
    host = np.zeros(16, np.uint32)
    hip.hipMemcpy(host, dev, 64, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
    return host


def _app(hip, hiprtc, be):
    mod, fill = _builtin_kernel(hip, be, b"fill_u32")
    dev = hip.hipMalloc(64)[1]
    out = []
    for value in (7, 9):   # two runs of equal launches, the second of other arguments
        _launch(hip, fill, (ctypes.c_void_p(int(dev)), ctypes.c_uint32(value), ctypes.c_uint32(16)),
                LAUNCHES, 32)
        out.append(_read_words(hip, dev))
    hip.hipFree(dev)
    hip.hipModuleUnload(mod)
    return out


def test_runs_of_equal_launches_round_trip(tmp_path, backend_name, monkeypatch):
    filled = capture(tmp_path, _app, backend=backend_name)
    assert (filled[0] == 7).all() and (filled[1] == 9).all()
    made = []
    prepare = cuda_backend.launch_kernargs.prepare

    def counted(*args):
        launch = prepare(*args)
        made.append(type(launch).__name__)
        return launch
    monkeypatch.setattr(cuda_backend.launch_kernargs, "prepare", counted)
    result = replay(tmp_path, backend=backend_name, strict=True)
    assert result.exit_code == 0, text(result)
    proc = only(result)
    assert proc.checks_passed == 2 and proc.checks_failed == 0, text(result)
    # the first launch of each run is checked; the copy between the runs ends the first
    assert proc.repeated_launches == 2 * (LAUNCHES - 1), text(result)
    if backend_name == "cuda":
        assert made == ["PreparedLaunch", "PreparedLaunch"]


RUN = 5000   # past the prepared launch's graph threshold (2048 launches) on cuda


def _counting_app(hip, hiprtc, be):
    """acc += ones, RUN times in one run of equal launches: acc ends at RUN only if every
    launch was made exactly once."""
    mod, add = _builtin_kernel(hip, be, b"add_u32")
    acc, ones = hip.hipMalloc(64)[1], hip.hipMalloc(64)[1]
    hip.hipMemset(acc, 0, 64)
    hip.hipMemcpy(ones, np.ones(16, np.uint32), 64, hip.hipMemcpyKind.hipMemcpyHostToDevice)
    _launch(hip, add, (ctypes.c_void_p(int(acc)), ctypes.c_void_p(int(acc)), ctypes.c_void_p(int(ones)),
                       ctypes.c_uint32(16)), RUN, 16)
    host = _read_words(hip, acc)
    hip.hipFree(acc)
    hip.hipFree(ones)
    hip.hipModuleUnload(mod)
    return host


def test_a_long_run_makes_every_launch_once(tmp_path, backend_name):
    """A run long enough to go through CUDA graphs on cuda: the count the launches leave is
    the recorded one, byte for byte."""
    acc = capture(tmp_path, _counting_app, backend=backend_name)
    assert (acc == RUN).all()
    result = replay(tmp_path, backend=backend_name, strict=True)
    assert result.exit_code == 0, text(result)
    proc = only(result)
    assert proc.checks_passed == 1 and proc.checks_failed == 0, text(result)
    assert proc.repeated_launches == RUN - 1, text(result)
