"""The native launch recorder (hrr/archive/native/launch.c, hrr/capture/launches.py): taken
for the common launch, and recording exactly what the row's Python wrapper records for
every form of launch, fast or not."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest
from hrrtest import archive_calls, capture, replay, text

from hrr import hiptypes as ht
from hrr.archive import native
from hrr.capture import launches

EXT, WHY = native.extension()
needs_ext = pytest.mark.skipif(EXT is None, reason=f"the native record extension did not build here: {WHY}")


def _forms(hip, be):
    """(label, args) of launches in every form a program may use; some take the fast path."""
    mod = hip.hipModuleLoadData(be.builtin_code_object())[1]
    fill = hip.hipModuleGetFunction(mod, b"fill_u32")[1]
    s = hip.hipStreamCreate()[1]
    d = hip.hipMalloc(64)[1]
    p = hip.hipHostMalloc(64, 0)[1]
    words = (ctypes.c_void_p(int(d)), ctypes.c_uint32(5), ctypes.c_uint32(16))
    params = [ctypes.addressof(w) for w in words]
    host = (ctypes.c_void_p(int(p)), ctypes.c_uint32(6), ctypes.c_uint32(16))
    host_params = [ctypes.addressof(w) for w in host]
    buf = ctypes.create_string_buffer(bytes(words[0]) + bytes(words[1]) + bytes(words[2]))
    size = ctypes.c_size_t(16)
    extra = (ctypes.c_void_p * 5)(ht.HIP_LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(buf),
                                  ht.HIP_LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(size), ht.HIP_LAUNCH_PARAM_END)
    shape = (1, 1, 1, 32, 1, 1, 0)
    return [
        ("device pointer, list of addresses", (fill, *shape, s, params, None)),
        ("a tuple, and the stream as an int", (fill, *shape, int(s), tuple(params), None)),
        ("the null stream as None", (fill, *shape, None, params, None)),
        ("the function as an int", (int(fill), *shape, s, params, None)),
        ("a longer kernelParams list", (fill, *shape, s, params + [12345], None)),
        ("pinned host memory", (fill, *shape, s, host_params, None)),
        ("ctypes objects as entries", (fill, *shape, s, [ctypes.c_void_p(a) for a in params], None)),
        ("numpy ints for the grid", (fill, np.uint32(1), 1, 1, 32, 1, 1, 0, s, params, None)),
        ("a raw extra", (fill, *shape, s, None, extra)),
        ("a NULL kernelParams entry", (fill, *shape, s, [params[0], 0, params[2]], None)),
        ("too few kernelParams", (fill, *shape, s, params[:2], None)),
        ("an unknown function", (987654321, *shape, s, params, None)),
    ], (d, s, (words, host, buf, size, extra))   # the argument memory, alive while the launches run


@needs_ext
def test_the_common_launch_is_recorded_by_the_native_recorder(tmp_path, monkeypatch):
    monkeypatch.setenv("HRR_NATIVE_RECORD", "1")   # whatever the run's default
    def app(hip, hiprtc, be):
        return type(hip.hipModuleLaunchKernel).__name__, type(hip.hipGetDevice).__name__
    assert capture(tmp_path / "n", app) == ("LaunchRecorder", "function")
    assert capture(tmp_path / "p", app, plugins=None) == ("LaunchRecorder", "function")


def test_the_python_record_path_keeps_the_python_wrapper(tmp_path, monkeypatch):
    monkeypatch.setenv("HRR_NATIVE_RECORD", "0")

    def app(hip, hiprtc, be):
        return type(hip.hipModuleLaunchKernel).__name__, hip.hipModuleLaunchKernel.__name__
    assert capture(tmp_path, app) == ("function", "hipModuleLaunchKernel")


@needs_ext
@pytest.mark.parametrize("plugins", [[], None], ids=["no-plugins", "every-plugin"])
def test_native_and_python_wrappers_record_the_same_record(tmp_path, monkeypatch, plugins):
    """Each launch form made twice in a row, through the native recorder and then its Python
    wrapper: the two records are equal but for their sequence numbers, and the archive
    replays with no divergence (--strict refuses the launches whose arguments could not be
    read, as it does for any such record: both wrappers refuse the same six)."""
    monkeypatch.setenv("HRR_NATIVE_RECORD", "1")
    def app(hip, hiprtc, be):
        fast = hip.hipModuleLaunchKernel
        assert type(fast).__name__ == "LaunchRecorder" and fast.__name__ == "hipModuleLaunchKernel"
        forms, (d, s, keep) = _forms(hip, be)
        errs = []
        for label, args in forms:
            a, b = fast(*args), fast.fallback(*args)
            assert a[0] == b[0], label
            errs.append((label, int(a[0])))
        # the table changes under the same words: the freed pointer is no longer recorded as one
        ok = forms[0][1]
        hip.hipStreamSynchronize(s)
        fast(*ok)
        fast.fallback(*ok)
        hip.hipFree(d)
        hip.hipMalloc(4096)   # another allocation elsewhere: a new table version
        fast(*ok)
        fast.fallback(*ok)
        hip.hipStreamSynchronize(None)
        del keep
        return errs
    errs = capture(tmp_path, app, plugins=plugins)
    assert dict(errs)["device pointer, list of addresses"] == 0
    assert dict(errs)["an unknown function"] != 0
    launches = [r for r in archive_calls(tmp_path) if r[2] == "hipModuleLaunchKernel"]
    assert len(launches) == 2 * len(errs) + 4
    for i in range(0, len(launches), 2):
        fast, slow = launches[i], launches[i + 1]
        assert fast[1:] == slow[1:], (i // 2, fast, slow)
    freed = launches[-2][6]["launch"]
    assert freed[4] == [], freed   # no pointer word: the allocation was freed
    assert launches[0][6]["launch"][4] != []
    result = replay(tmp_path, backend="sim", strict=False)
    assert result.exit_code == 0 and "divergences: 0" in text(result), text(result)
    assert "Refused: 6 records" in text(result), text(result)


@needs_ext
def test_a_backends_direct_launch_takes_the_read_bytes_and_records_the_same(tmp_path, monkeypatch):
    """A backend offering ``launch_kernargs`` for hipModuleLaunchKernel (cuda does; here the
    sim, given one that counts) is handed the kernarg bytes the recorder read, for the launches
    whose shape is plain ints; the records are the Python wrapper's, and the result is the
    backend's."""
    from hrr.backends import sim
    from hrr.hiptypes.kernargs import packed_extra
    monkeypatch.setenv("HRR_NATIVE_RECORD", "1")
    direct_calls, direct_labels = [], []

    def launch_kernargs(function, grid, block, shared, stream, kernargs):
        direct_calls.append((type(grid), type(block), shared, kernargs))
        return sim.hip.hipModuleLaunchKernel(function, *grid, *block, shared, stream, None, packed_extra(kernargs))
    launch_kernargs.stands_for = sim.hip.hipModuleLaunchKernel
    monkeypatch.setattr(sim, "launch_kernargs", launch_kernargs)

    def app(hip, hiprtc, be):
        fast = hip.hipModuleLaunchKernel
        forms, (d, s, keep) = _forms(hip, be)
        errs = []
        for label, args in forms:
            before = len(direct_calls)
            a, b = fast(*args), fast.fallback(*args)
            assert a[0] == b[0], label
            errs.append((label, int(a[0])))
            if len(direct_calls) > before:
                direct_labels.append(label)
        big = (forms[0][1][0], 1 << 32, 1, 1, 32, 1, 1, 0, s, forms[0][1][9], None)   # a grid past 32 bits
        errs.append(("a grid past 32 bits", int(fast(*big)[0])))
        hip.hipStreamSynchronize(None)
        del keep
        return errs
    errs = capture(tmp_path, app)
    assert dict(errs)["device pointer, list of addresses"] == 0
    # the forms the C recorder takes, each launched once through the direct launch
    assert direct_labels == ["device pointer, list of addresses", "a tuple, and the stream as an int",
                             "the null stream as None", "the function as an int", "a longer kernelParams list",
                             "pinned host memory"], direct_labels
    assert all(c[:3] == (tuple, tuple, 0) and len(c[3]) == 16 for c in direct_calls), direct_calls
    assert len(direct_calls) == 6   # a grid past 32 bits went to the hip surface, which decides on it
    launches = [r for r in archive_calls(tmp_path) if r[2] == "hipModuleLaunchKernel"]
    for i in range(0, 2 * (len(errs) - 1), 2):
        assert launches[i][1:] == launches[i + 1][1:], i // 2


@needs_ext
def test_a_stage_watching_launches_sees_every_launch(tmp_path, monkeypatch):
    """With a watcher on the row the native recorder hands every call to the Python wrapper."""
    monkeypatch.setenv("HRR_NATIVE_RECORD", "1")
    seen = []

    def app(hip, hiprtc, be):
        forms, keep = _forms(hip, be)
        from hrrtest import _SESSIONS
        ctx = _SESSIONS[-1].ctx
        cell = ctx.row_watchers("hipModuleLaunchKernel")
        cell.before = (("spy", lambda call: seen.append(type(call).__name__)),)
        try:
            hip.hipModuleLaunchKernel(*forms[0][1])
        finally:
            cell.before = ()
        hip.hipModuleLaunchKernel(*forms[0][1])
        hip.hipStreamSynchronize(None)
        del keep
        return True
    capture(tmp_path, app)
    launches = [r for r in archive_calls(tmp_path) if r[2] == "hipModuleLaunchKernel"]
    assert len(launches) == 2 and seen == ["CallInfo"], seen   # the watched call only


@needs_ext
@pytest.mark.parametrize("bad, why", [
    ({"kinds": bytes([0, 3])}, "each 0, 1 or 2"),
    ({"kinds": b""}, "1 to 64"),
    ({"func_at": 11}, "outside the row's parameters"),
    ({"grid": (1, 2, 99)}, "outside the row's parameters"),
    ({"func_at": 1}, "must be a handle"),
    ({"direct": 5, "shared_at": 7}, "must be callable"),
    ({"direct": print}, "with shared_at"),
    ({"direct": print, "shared_at": 70}, "outside the row's parameters"),
])
def test_a_launch_recorder_refuses_a_bad_description(bad, why):
    kw = dict(fallback=print, real=print, session=None, watchers=None, ctx=None, handles=frozenset(),
              functions={}, make_plan=print, miss=print, packed=print, num=1,
              kinds=bytes([1, 0, 0, 0, 0, 0, 0, 0, 1, 2, 2]), func_at=0, params_at=9, extra_at=10,
              grid=(1, 2, 3), block=(4, 5, 6))
    with pytest.raises(ValueError, match=why):
        EXT.LaunchRecorder(**{**kw, **bad})


@needs_ext
def test_a_launch_plan_refuses_offsets_outside_its_buffer():
    with pytest.raises(ValueError, match="outside the kernarg buffer"):
        EXT.LaunchPlan("k", 8, [(0, 8), (8, 4)], (0,), (0,), None)
    with pytest.raises(ValueError, match="outside the kernarg buffer"):
        EXT.LaunchPlan("k", 16, [(0, 8)], (12,), (12,), None)
    with pytest.raises(ValueError, match="must not be negative"):
        EXT.LaunchPlan("k", -1, [], (), (), None)


def test_every_fast_kind_is_a_role_encoder():
    """The C code writes these encoders itself: each is a real role's inline encoder."""
    from hrr.api.roles import PARAM_ROLES
    inlines = {r.inline for r in PARAM_ROLES.values()}
    assert set(launches.FAST_KINDS) <= inlines
    assert sorted(set(launches.FAST_KINDS.values())) == [0, 1, 2]


@pytest.mark.parametrize("native_record", ["1", "0"])
def test_numpy_grid_dimensions_record_as_plain_ints(tmp_path, monkeypatch, native_record):
    """A grid or block given as numpy ints (``n // 256`` of a numpy size) is recorded as plain
    ints, and the launch replays byte-exact (the record once kept numpy's objects, which the
    writer refused: capture failed with "record is not msgpack-native")."""
    monkeypatch.setenv("HRR_NATIVE_RECORD", native_record)

    def app(hip, hiprtc, be):
        mod = hip.hipModuleLoadData(be.builtin_code_object())[1]
        fill = hip.hipModuleGetFunction(mod, b"fill_u32")[1]
        d = hip.hipMalloc(64)[1]
        words = (ctypes.c_void_p(int(d)), ctypes.c_uint32(9), ctypes.c_uint32(16))
        n = np.int64(16)
        assert hip.hipModuleLaunchKernel(fill, n // 16, np.uint32(1), 1, np.int32(32), 1, 1, 0, None,
                                         [ctypes.addressof(w) for w in words], None)[0] == 0
        out = np.zeros(16, np.uint32)
        assert hip.hipMemcpyDtoH(out, d, 64)[0] == 0
        return out.tolist()
    assert capture(tmp_path, app) == [9] * 16
    launch = [r for r in archive_calls(tmp_path) if r[2] == "hipModuleLaunchKernel"][0]
    grid, block = launch[6]["launch"][1:3]
    assert (grid, block) == ([1, 1, 1], [32, 1, 1]) and all(type(v) is int for v in grid + block)
    result = replay(tmp_path, backend="sim")
    assert result.exit_code == 0 and "1 passed" in text(result), text(result)
