"""A fork()ed child of a process that had initialised a GPU runtime cannot use the device:
every call it makes returns hipErrorNotInitialized. The cuda backend behaves so there, the
child's manifest says so (``forked_from.device: "lost"``), and replay reproduces it on every
backend instead of diverging (the child's calls succeeding, or failing otherwise, on the
replaying process's live device). The real thing on a GPU: tests/backends/cuda/test_fork_gpu.py."""
from __future__ import annotations

import json
import os

import attrs
import pytest
from forkcheck import run_child
from hrrtest import replay, text

from hrr.backends import load_backend
from hrr.backends.cuda import _runtime
from hrr.backends.forkchild import NOT_INITIALIZED, lost_device
from hrr.capture.session import CaptureSession
from hrr.config import config
from hrr.replay.result import Outcome

BAD = 0x1234_5678


@pytest.fixture
def cuda_driver_in_use():
    """The cuda backend as a process that has loaded the driver sees itself (no GPU is
    touched: a fork()ed child must not call the driver at all), restored afterwards."""
    S = _runtime.STATE
    saved = (S.ready, S.forked, S.pid)
    cuda = load_backend("cuda")
    yield cuda
    S.ready, S.forked, S.pid = saved
    cuda.hip.hipGetLastError()


def _fork_with_driver_loaded(body):
    """Fork while the cuda backend says its driver is loaded in this process; the child runs
    ``body``. The parent's state is put back at once (nothing here has a driver)."""
    S = _runtime.STATE
    S.ready, S.pid = True, os.getpid()
    try:
        pid_code = run_child(body)
    finally:
        S.ready = False
    return pid_code


def test_the_cuda_backend_in_a_fork_child_returns_not_initialized(cuda_driver_in_use):
    hip = cuda_driver_in_use.hip

    def body() -> int:
        if not cuda_driver_in_use.lost_in_fork_child():
            return 3
        if hip.hipFree(BAD) != (NOT_INITIALIZED,) or hip.hipMalloc(64) != (NOT_INITIALIZED, None):
            return 4
        if hip.hipGetLastError() != (NOT_INITIALIZED,) or hip.hipGetLastError() != (NOT_INITIALIZED,):
            return 5     # the last error, then the runtime's own: it cannot start here
        if hip.hipPeekAtLastError() != (NOT_INITIALIZED,):
            return 6
        return 0

    assert _fork_with_driver_loaded(body) == 0
    assert not cuda_driver_in_use.lost_in_fork_child()   # the parent is not a child


def _capture_lost_child(root, cuda):
    """A parent recording on the cuda backend forks a child that calls hipFree on a bad
    pointer, hipMalloc and hipGetLastError (the hidden workload's shape); returns the
    child's exit code. Recording happens through the same session as under `hrr capture`."""
    cfg = attrs.evolve(config(), backend="cuda", content_mode="content")
    session = CaptureSession(cuda, cfg, str(root), plugins=[])

    def body() -> int:
        session.after_fork_in_child()   # what the session's fork handler does under `hrr capture`
        hip = session.hip
        errs = [hip.hipFree(BAD)[0], hip.hipMalloc(64)[0], hip.hipGetLastError()[0]]
        session.close()
        return 0 if errs == [NOT_INITIALIZED] * 3 else 7

    try:
        return _fork_with_driver_loaded(body)
    finally:
        session.close()


def _child_dir(root):
    return next(d for d in sorted(root.iterdir())
                if "forked_from" in json.loads((d / "manifest.json").read_text()))


def test_a_lost_device_child_is_recorded_so_and_replays_on_every_backend(tmp_path, cuda_driver_in_use):
    root = tmp_path / "a.hrr"
    assert _capture_lost_child(root, cuda_driver_in_use) == 0
    child = _child_dir(root)
    forked = json.loads((child / "manifest.json").read_text())["forked_from"]
    assert forked["device"] == "lost" and forked["pid"] == os.getpid()
    for backend in (None, "sim", "cuda"):       # None: the recorded one (cuda)
        result = replay(child, backend=backend)
        (proc,) = result.processes
        assert proc.outcome is Outcome.OK, (backend, text(result))
        assert proc.reproduced_errors == 3 and proc.calls_replayed == 3, text(result)
        assert any("hipErrorNotInitialized" in n for n in proc.notes), proc.notes


def test_a_lost_device_child_named_inherited_diverges(tmp_path, cuda_driver_in_use):
    """The manifest field is what replay goes by: the same child said to have inherited a
    usable device replays on a live one, where hipFree of a bad pointer is invalid value."""
    root = tmp_path / "a.hrr"
    assert _capture_lost_child(root, cuda_driver_in_use) == 0
    child = _child_dir(root)
    manifest = json.loads((child / "manifest.json").read_text())
    manifest["forked_from"]["device"] = "inherited"
    (child / "manifest.json").write_text(json.dumps(manifest))
    result = replay(child, backend="sim")
    assert result.processes[0].outcome is Outcome.DIVERGED, text(result)
    assert "hipErrorNotInitialized" in text(result) and "hipErrorInvalidValue" in text(result)


def test_the_lost_device_answers_every_catalogued_call_not_initialized():
    sim = load_backend("sim")
    lost = lost_device(sim)
    assert lost.NAME == "sim" and lost.hiprtc is sim.hiprtc and lost.lost_in_fork_child()
    assert lost.hip.hipFree(BAD) == (NOT_INITIALIZED,)
    assert lost.hip.hipMalloc(64) == (NOT_INITIALIZED, None)
    assert lost.hip.hipStreamCreate() == (NOT_INITIALIZED, None)
    assert lost.hip.hipDeviceSynchronize() == (NOT_INITIALIZED,)
