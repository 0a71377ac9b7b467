"""Capture's hot path (issue 11): what each captured call does, counted, never timed."""
from __future__ import annotations

import collections
import ctypes
import sys
from importlib import metadata

import attrs
import numpy as np
import pytest
from hrrtest import archive_calls, capture, fresh_backend, replay, text

import hrr.pipeline.manager as manager
from hrr.api.catalogue import CATALOGUE
from hrr.api.roles import OUT_ROLES, PARAM_ROLES
from hrr.archive import open_archive
from hrr import hiptypes as ht
from hrr.backends import sim
from hrr.hiptypes.kernargs import PackedKernargs, extra_bytes, pack_kernel_args, packed_extra
from hrr.capture import recorder
from hrr.capture.session import CaptureSession
from hrr.config import config
from hrr.events.launch import launch_map
from old_formats import open_old_writer


def _session(tmp_path, plugins):
    be = fresh_backend("sim")
    cfg = attrs.evolve(config(), backend="sim", content_mode="content")
    return CaptureSession(be, cfg, str(tmp_path / "arch"), plugins=plugins)


def _python_calls(fn, n=5, warm=False) -> collections.Counter:
    """Python-level functions entered while ``fn`` runs, per call of ``fn`` (``warm``: after
    one call not counted, since a capture wrapper is written and compiled at its first call)."""
    if warm:
        fn()
    seen: collections.Counter = collections.Counter()

    def prof(frame, event, arg):
        if event == "call":
            seen[frame.f_code.co_name] += 1
    sys.setprofile(prof)
    try:
        for _ in range(n):
            fn()
    finally:
        sys.setprofile(None)
    return collections.Counter({k: v // n for k, v in seen.items()})


def test_a_cheap_call_costs_the_wrapper_and_one_append(tmp_path):
    """A captured hipGetDevice enters two Python functions besides the backend's own: its
    compiled wrapper and the writer's append_call (one lock, numbered there), which the
    native record path makes a C method: then the wrapper alone. (20 calls: the slow path
    that opens a batch, once per batch, rounds away.)"""
    s = _session(tmp_path, None)   # every installed plugin
    try:
        bare = _python_calls(sim.hip.hipGetDevice, n=20)
        captured = _python_calls(s.hip.hipGetDevice, n=20, warm=True)
        want = {"wrapper": 1} if s.writer.RECORDER == "native" else {"wrapper": 1, "append_call": 1}
        assert captured - bare == collections.Counter(want), captured - bare
    finally:
        s.close()


def _fill_app(values):
    def app(hip, hiprtc, be):
        mod = hip.hipModuleLoadData(be.builtin_code_object())[1]
        fill = hip.hipModuleGetFunction(mod, b"fill_u32")[1]
        s = hip.hipStreamCreate()[1]
        d = hip.hipMalloc(64)[1]
        words = (ctypes.c_void_p(int(d)), ctypes.c_uint32(0), ctypes.c_uint32(16))
        params = [ctypes.addressof(w) for w in words]
        got = []
        for v in values:
            words[1].value = v     # the same kernelParams list, new contents
            assert hip.hipModuleLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, s, params, None)[0] == 0
            out = np.zeros(16, np.uint32)
            assert hip.hipMemcpyDtoH(out, d, 64)[0] == 0
            got.append(int(out[0]))
        hip.hipStreamSynchronize(s)
        return got
    return app


def test_a_launch_is_packed_once_and_the_backend_gets_the_bytes(tmp_path, monkeypatch):
    """The backend is handed the packed bytes as a raw extra (no second read of the app's
    argument memory); the record keeps the app's arguments and the bytes it ran with."""
    real = sim.hip.hipModuleLaunchKernel
    handed = []

    def spy(*args):
        extra = args[10]
        handed.append((args[9], type(extra), bytes(extra.kernargs)))
        return real(*args)
    monkeypatch.setattr(sim.hip, "hipModuleLaunchKernel", spy)
    packs = []
    real_pack = pack_kernel_args

    def counting(layout, kernel_params=None, extra=None):
        packs.append(type(extra))
        return real_pack(layout, kernel_params, extra)
    monkeypatch.setattr(sim.module_calls, "pack_kernel_args", counting)
    got = capture(tmp_path, _fill_app([7, 9]), plugins=None)
    assert got == [7, 9]
    launches = [r for r in archive_calls(tmp_path) if r[2] == "hipModuleLaunchKernel"]
    assert [h[:2] for h in handed] == [(None, PackedKernargs)] * 2
    assert [h[2] for h in handed] == [launch_map(r[6]["launch"])["kernargs"] for r in launches]
    assert [int.from_bytes(launch_map(r[6]["launch"])["kernargs"][8:12], "little") for r in launches] == [7, 9]
    assert packs == [PackedKernargs] * 2     # the backend took the bytes, it did not read them back
    assert all(r[3][9] is None and r[3][1:4] == [1, 1, 1] for r in launches)
    monkeypatch.undo()
    result = replay(tmp_path, backend="sim", strict=True)
    assert result.exit_code == 0, text(result)


def test_packed_extra_is_a_raw_extra_any_backend_reads():
    data = bytes(range(24))
    words = packed_extra(data)
    assert list(words)[0::2] == [ht.HIP_LAUNCH_PARAM_BUFFER_POINTER, ht.HIP_LAUNCH_PARAM_BUFFER_SIZE,
                                 ht.HIP_LAUNCH_PARAM_END]
    assert extra_bytes(words) == data     # read through its pointers, as a backend would
    again = packed_extra(b"\x01" * 8)     # the thread's array is reused, its bytes replaced
    assert again is words and extra_bytes(again) == b"\x01" * 8
    big = packed_extra(b"\x02" * 10000)   # longer than the thread's buffer: a larger one
    assert extra_bytes(big) == b"\x02" * 10000


def _launcher(hip, pinned: bool):
    """A fill_u32 launch whose pointer argument is device memory or pinned host memory,
    set up once: ``launch()`` makes it."""
    mod = hip.hipModuleLoadData(sim.builtin_code_object())[1]
    fill = hip.hipModuleGetFunction(mod, b"fill_u32")[1]
    s = hip.hipStreamCreate()[1]
    d = hip.hipHostMalloc(64, 0)[1] if pinned else hip.hipMalloc(64)[1]
    words = (ctypes.c_void_p(int(d)), ctypes.c_uint32(3), ctypes.c_uint32(16))
    params = [ctypes.addressof(w) for w in words]

    def launch():
        assert hip.hipModuleLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, s, params, None)[0] == 0
    launch.keep = (words, params)   # type: ignore[attr-defined]
    return launch


def test_no_launch_info_without_a_launch_hook(tmp_path):
    """With no stage implementing hrr_capture_launch nothing builds or dispatches one; the
    built-in plugins (both implement it, both act only on launches into host memory) get
    a launch that points into pinned memory, and nothing is built for one that does not."""
    for plugins, pinned, dispatched in (([], True, False), (None, False, False), (None, True, True)):
        where = tmp_path / f"{plugins}-{pinned}"
        where.mkdir()
        s = _session(where, plugins)
        try:
            launch = _launcher(s.hip, pinned)
            seen = _python_calls(launch, n=1)
            assert ("run_launch" in seen) is dispatched, seen
            assert seen["hrr_capture_launch"] == (2 if dispatched else 0), seen
        finally:
            s.close()


def test_a_launch_hook_that_wants_every_launch_gets_every_launch(tmp_path, monkeypatch):
    """A plugin that does not say it acts only on launches into host memory sees every
    launch; the built-in ones beside it still see only those."""
    real = manager.installed_plugins

    def installed():
        return {**real(), "every": metadata.EntryPoint("every", "launch_plugins:EveryLaunch",
                                                       manager.ENTRY_POINT_GROUP)}
    monkeypatch.setattr(manager, "installed_plugins", installed)
    s = _session(tmp_path, None)
    try:
        device, host = _launcher(s.hip, False), _launcher(s.hip, True)
        assert _python_calls(device, n=1)["hrr_capture_launch"] == 1
        assert _python_calls(host, n=1)["hrr_capture_launch"] == 3
        assert s.ctx.pm.get_plugin("every").kernels == ["fill_u32"] * 2
    finally:
        s.close()


def test_launch_watchers_are_subscribed_once_they_have_work(tmp_path):
    """pinned_snapshot watches launches from the first tracked pinned allocation on, and
    graph_capture never (a launch changes no capture state): before that a device-only
    launch costs the wrapper, its encoder and one append, and no watcher."""
    s = _session(tmp_path, None)
    cell = s.ctx.row_watchers("hipModuleLaunchKernel")
    try:
        launch, bare = _launcher(s.hip, False), _launcher(s.backend.hip, False)
        launch()
        seen = _python_calls(launch, n=20) - _python_calls(bare, n=20)
        if s.writer.RECORDER == "native":   # the launch recorded by launch.c: only the handoff is Python
            assert seen == collections.Counter({"packed_extra": 1}), seen
        else:
            assert seen == collections.Counter({
                "wrapper": 1, "encode": 1, "function_info": 1, "pack_kernel_args": 1, "scan_pointers": 1,
                "launch_scope": 1, "packed_extra": 1, "append_call": 1}), seen
        assert (cell.before, cell.after) == ((), ())
        p = s.hip.hipHostMalloc(64, 0)[1]
        assert [w[0] for w in cell.before] == [w[0] for w in cell.after] == ["pinned_snapshot"]
        stream = s.hip.hipStreamCreate()[1]
        mode = s.hip.hipStreamCaptureMode.hipStreamCaptureModeGlobal
        assert s.hip.hipStreamBeginCapture(stream, mode)[0] == 0
        assert [w[0] for w in cell.after] == ["pinned_snapshot"]
        assert s.hip.hipStreamEndCapture(stream)[0] == 0
        s.hip.hipHostMalloc(64, 0)                       # subscribed once only
        assert s.hip.hipStreamBeginCapture(stream, mode)[0] == 0
        assert len(cell.before) == 1 and len(cell.after) == 1
        assert s.hip.hipStreamEndCapture(stream)[0] == 0
        s.hip.hipHostFree(p)
    finally:
        s.close()


def test_a_watcher_subscribed_after_wrapping_is_called(tmp_path):
    """Wrappers read their row's watchers from one live object: ``watch`` and a plugin's
    failure update it in place."""
    s = _session(tmp_path, [])
    seen = []
    try:
        s.ctx.watch("late", ["hipGetDevice"], before=lambda call: seen.append("before"),
                    after=lambda call, result: seen.append("after"))
        s.hip.hipGetDevice()
        assert seen == ["before", "after"]
        s.ctx.plugin_failed("late", "test", RuntimeError("off"))
        s.hip.hipGetDevice()
        assert seen == ["before", "after"]
    finally:
        s.close()


def test_the_writer_numbers_records_under_its_lock(tmp_path):
    """append_call gives consecutive numbers, records the API by number, and goes on
    numbering once recording stopped; the v1 writer records the same."""
    for version in (1, 2):
        root = tmp_path / f"v{version}"
        w = open_old_writer(str(root), 4242, {"backend": "sim"}, format_version=version)
        get = w.api_number("hipGetDevice")
        assert [w.append_call(get, [], 0, [0], {}) for _ in range(3)] == [0, 1, 2]
        w.close()
        assert w.append_call(get, [], 0, [0], {}) == 3
        (proc,) = open_archive(str(root)).processes
        assert [(e.value[0], e.value[2]) for e in proc.events()] == [(i, "hipGetDevice") for i in range(3)]


VALUES = [0, 5, -3, 1 << 40, True, 2.5, None, "s", np.uint32(7), np.float32(1.5), ctypes.c_uint32(9),
          ctypes.c_void_p(123), ht.ihipStream_t(0x77), ht.ihipModuleSymbol_t(5), ht.Pointer(0x1000),
          np.zeros(4, np.uint8), object()]


@pytest.mark.parametrize("role", sorted(recorder._INLINE))
def test_inline_encoders_equal_their_roles(role):
    """Each encoder the wrapper writes inline gives what its role's encoder gives."""
    row = next((r for r in CATALOGUE.values() if any(p.role == role for p in r.params)),
               CATALOGUE["hipMalloc"])   # a role no row uses yet: any row's parameter 0
    i = next((k for k, p in enumerate(row.params) if p.role == role), 0)
    enc = PARAM_ROLES[role].encoder(row, i, None)
    inline = eval("lambda a0: " + recorder._INLINE[role].format(v="a0"), dict(recorder._NAMESPACE))  # noqa: S307
    for v in VALUES:
        args = tuple(v if k == i else None for k in range(len(row.params)))
        try:
            want = ("ok", enc(args))
        except Exception as exc:  # noqa: BLE001 - the same exception either way
            want = ("raised", type(exc))
        try:
            got = ("ok", inline(v))
        except Exception as exc:  # noqa: BLE001
            got = ("raised", type(exc))
        assert got == want, (role, v)


@pytest.mark.parametrize("role", sorted(recorder._INLINE_OUT))
def test_inline_out_encoders_equal_their_roles(role):
    out = next(o for r in CATALOGUE.values() for o in r.outs if o.role == role)
    enc = OUT_ROLES[role].encoder(out)
    inline = eval("lambda a0: " + recorder._INLINE_OUT[role].format(v="a0"), dict(recorder._NAMESPACE))  # noqa: S307
    for v in VALUES:
        assert inline(v) == enc(v) or (inline(v) is None and enc(v) is None), v
