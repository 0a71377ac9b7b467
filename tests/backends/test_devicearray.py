"""hrr's DeviceArray (hipMalloc's result) against hip-python's, member by member.

devicearray_cases.py runs ~300 cases (construction from every kind of input, configure's
keywords and errors, slicing with ints, slices and tuples in range and out, createRef,
stream_as_int, bool, the CUDA array interface, the public names) against both classes and
compares results and exceptions, messages included: here against hip-python 10.x in this
process, and against 7.x in its own venv. Then what the rest of hrr relies on: a view is a
pointer argument at its offset, captured copies record the view's address and size, and a
program that configures and slices round-trips through ``hrr capture`` and ``replay --strict``.
"""
from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from hrr.hiptypes import devicearray as da
from hrr import hiptypes as ht
from hrr.hiptypes.kernargs import extra_bytes
from hippython7 import HP7_SPEC, venv_with_hip_python7
from hrrtest import archive_calls, capture, only, replay, text

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
APP = HERE / "apps" / "devicearray_app.py"
needs_hip_python = pytest.mark.skipif(ht.real_util() is None, reason="hip-python is not installed here")


@needs_hip_python
def test_every_case_matches_the_installed_hip_python():
    import devicearray_cases as cases
    real, mine = cases.implementations()
    assert da.RELEASE == (ht.HIP_PYTHON_MAJOR or 10)
    diffs = cases.differences(real, mine)
    assert not diffs, "\n".join(json.dumps(d) for d in diffs)


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("HRR_SKIP_HIP_PYTHON7") == "1", reason="HRR_SKIP_HIP_PYTHON7=1")
def test_every_case_matches_hip_python_7():
    """The same cases in hip-python 7.x's venv (tests/hippython7.py), where hrr mirrors 7.x:
    a returned (not raised) ValueError for stream 0, None stored as stream 0, a 4-byte
    bool, the live interface dict, construction from an interface refused."""
    py, why = venv_with_hip_python7()
    if py is None:
        pytest.skip(f"pip cannot install {HP7_SPEC} here: {why}")
    proc = subprocess.run([str(py), str(HERE / "devicearray_cases.py")], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["release"] == 7 and result["cases"] > 250, result
    assert not result["differences"], "\n".join(json.dumps(d) for d in result["differences"])


def _round_trip(command: list[str], python: str = sys.executable) -> None:
    archive = Path(tempfile.mkdtemp()) / "a"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("HRR_MODE", None)
    cap = subprocess.run([python, "-m", "hrr.cli.main", "capture", "-o", str(archive), "--plugins", "",
                          "--content", "--", *command], capture_output=True, text=True, timeout=300,
                         env=env, check=False)
    assert cap.returncode == 0 and "devicearray: ok" in cap.stdout, cap.stdout + cap.stderr
    rep = subprocess.run([python, "-m", "hrr.cli.main", "replay", "--strict", str(archive)],
                         capture_output=True, text=True, timeout=300, env=env, check=False)
    assert rep.returncode == 0, rep.stdout + rep.stderr
    assert "Device-to-host checks: 4 passed, 0 failed" in rep.stdout, rep.stdout


def test_configured_and_sliced_arrays_round_trip_through_the_cli():
    """configure, d[16:32], a 2-D row and a kernel on a view: capture --content, replay --strict."""
    _round_trip([sys.executable, str(APP)])


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("HRR_SKIP_HIP_PYTHON7") == "1", reason="HRR_SKIP_HIP_PYTHON7=1")
def test_configured_and_sliced_arrays_round_trip_under_hip_python_7():
    py, why = venv_with_hip_python7()
    if py is None:
        pytest.skip(f"pip cannot install {HP7_SPEC} here: {why}")
    _round_trip([str(py), str(APP)], python=str(py))


@needs_hip_python
def test_hipmalloc_gives_what_hip_python_makes_for_the_same_allocation():
    import devicearray_cases as cases
    from hrr.backends.sim import hip
    real, mine = cases.implementations()
    err, d = hip.hipMalloc(48)
    assert err == 0 and type(d) is ht.DeviceArray is da.DeviceArray
    ref = real.DeviceArray.DeviceArray(int(d)).configure(_force=True, shape=(48,))
    assert cases.describe(mine, d) == cases.describe(real, ref)
    hip.hipFree(d)


def test_views_are_pointer_arguments_at_their_offset():
    d = da.DeviceArray(0x10000, 256)
    assert d.configure(typestr="float32", shape=(64,)) is d
    view = d[16:32]
    assert type(view) is da.NDBuffer and view.shape == (16,) and view.itemsize == 4
    assert int(view) == ht.as_address(view) == ht.address_or_zero(view) == 0x10000 + 64
    assert view.__cuda_array_interface__["data"] == (0x10000 + 64, False)
    assert ht.as_address(d[3]) == 0x10000 + 12 and d[3].shape == (1,)
    grid = da.DeviceArray(0x20000, 96).configure(typestr="int32", shape=(4, 6))
    assert ht.as_address(grid[2]) == 0x20000 + 48 and grid[2].shape == (6, 1)
    assert ht.as_address(grid[1, 2:5]) == 0x20000 + 32 and grid[1, 2:5].shape == (3, 1)
    packed = extra_bytes((view, ctypes.c_uint32(7)))   # hip-python's extra tuple form
    assert packed == (0x10000 + 64).to_bytes(8, "little") + (7).to_bytes(4, "little")
    ref = view.createRef()   # kernelParams-style: the address of the pointer value
    assert ctypes.c_uint64.from_address(ht.as_address(ref)).value == int(view)


def test_a_captured_copy_into_a_view_records_its_address_and_size(tmp_path):
    def app(hip, rtc, be):
        d = hip.hipMalloc(64 * 4)[1]
        d.configure(typestr="float32", shape=(64,))
        src = np.arange(16, dtype=np.float32)
        assert hip.hipMemcpy(d[16:32], src, 64, hip.hipMemcpyKind.hipMemcpyHostToDevice)[0] == 0
        out = np.zeros(16, np.float32)
        assert hip.hipMemcpy(out, d[16:32], 64, hip.hipMemcpyKind.hipMemcpyDeviceToHost)[0] == 0
        return int(d), out
    base, out = capture(tmp_path, app)
    assert (out == np.arange(16)).all()
    h2d, d2h = (r[3] for r in archive_calls(tmp_path) if r[2] == "hipMemcpy")
    assert h2d[0][:3] == ["a", base + 64, 64] and h2d[2] == 64
    assert d2h[1][:3] == ["a", base + 64, 64] and d2h[2] == 64
    result = replay(tmp_path)
    assert result.exit_code == 0 and only(result).checks_passed == 1, text(result)


def test_hip_python_7_forms_in_process(monkeypatch):
    """7.x's own behaviour, where only 10.x (or no hip-python) is installed: the 7.x venv
    test compares it with 7.x itself."""
    monkeypatch.setattr(da, "RELEASE", 7)
    d = da.DeviceArray(0x1000, 16)
    assert d.configure(stream=None).stream_as_int == 0
    returned = d.configure(stream=0, read_only=True)
    assert isinstance(returned, ValueError) and d.is_read_only is False   # configure stopped there
    fresh = da.DeviceArray(0x1000, 16)   # a view's stream is 0, so a view of a view is that error
    assert fresh[0:4].stream_as_int == 0 and isinstance(fresh[0:4][0:2], ValueError)
    assert d.__cuda_array_interface__ is d.__cuda_array_interface__
    assert da.DeviceArray(0x1000, 16).configure(typestr="bool", _force=True).itemsize == 8

    class FromInterface:
        __cuda_array_interface__ = {"data": (0x10, False), "strides": None, "shape": (1,), "typestr": "B"}
    with pytest.raises(TypeError, match="configure"):   # 7.x passes the dict positionally
        da.DeviceArray(FromInterface())


def test_differences_kept_on_purpose():
    """What hrr's class does that hip-python's does not (see devicearray.py's docstring)."""
    a, b = da.DeviceArray(0x1000, 16), da.DeviceArray(0x1000, 16)
    assert a == b and hash(a) == hash(b)            # hip-python: identity
    assert hex(a) == "0x1000"                       # Pointer's __index__; hip-python: TypeError
    with pytest.raises(TypeError):
        memoryview(a)                               # no buffer over device memory
    assert da.DeviceArray(0x1000, 16).shape == (16,)   # the backends' (address, size) form


def test_wrapping_a_host_buffer_keeps_it_exported():
    """As hip-python holds a Py_buffer: the bytearray cannot resize under the array."""
    buf = bytearray(8)
    a = da.DeviceArray(buf)
    assert a.shape == (8,) and int(a) == ht.buffer_address(buf)
    with pytest.raises(BufferError):
        buf.extend(b"x")
    del a
    buf.extend(b"x")


def test_import_order_and_without_hip_python():
    """devicearray imported first still gives hiptypes' class; with no hip-python at all
    the classes behave as 10.x's."""
    code = (
        "import sys\n"
        "sys.modules['rocm'] = None; sys.modules['hip'] = None\n"
        "import hrr.hiptypes.devicearray as m\n"
        "from hrr import hiptypes as ht\n"
        "assert m.DeviceArray is ht.DeviceArray and ht.real_util() is None and m.RELEASE == 10\n"
        "d = m.DeviceArray(0x1000, 64).configure(typestr='float32', shape=(16,))\n"
        "v = d[4:8]\n"
        "assert int(v) == 0x1000 + 16 and v.stream_as_int is None and v.createRef()\n"
        "try:\n"
        "    d.configure(stream=0)\n"
        "except ValueError:\n"
        "    print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr


def test_pointer_and_handles_follow_hip_python_is_ptr_null_and_create_ref():
    """hip-python's ``is_ptr_null`` is a property on Pointer and handles (``if p.is_ptr_null:``
    must not be a bound method's truth), and Pointer has ``createRef``: a void** to it."""
    import ctypes as c

    from hrr import hiptypes as ht
    p, null = ht.Pointer(0x1234), ht.Pointer(0)
    assert p.is_ptr_null is False and null.is_ptr_null is True
    assert ht.ihipStream_t(0).is_ptr_null is True and ht.ihipStream_t(7).is_ptr_null is False
    ref = p.createRef()
    assert c.c_void_p.from_address(int(ref)).value == 0x1234
    real = ht.real_util()
    if real is not None:
        assert real.types.Pointer(0).is_ptr_null is True   # the property this mirrors


@pytest.mark.parametrize("version, words", [((3, 12, 3), "int() argument must be"),
                                            ((3, 11, 7), "an integer is required")])
def test_hip_python_10s_words_for_a_none_itemsize_follow_its_wheel(monkeypatch, version, words):
    """hip-python 10.0.0.0.1.2's cp312-abi3 wheel (the GPU machine's) says int()'s words for
    ``configure(itemsize=None)``; its cp311 wheel says Cython's, as 7.x does."""
    monkeypatch.setattr(da, "RELEASE", 10)
    monkeypatch.setattr(da.sys, "version_info", version)
    arr = da.DeviceArray.fromObj(None)
    with pytest.raises(TypeError, match=words.replace("(", r"\(").replace(")", r"\)")):
        arr.configure(itemsize=None)
