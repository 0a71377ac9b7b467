"""The cuda backend on a real NVIDIA GPU: every API, every launch form, the built-in
kernels, pinned memory read by kernels, capture/graphs, host functions and the errors a
GPU gives. Skipped cleanly where there is no NVIDIA GPU (see conftest.py)."""
from __future__ import annotations

import ctypes
import threading
import time

import numpy as np
import pytest

from hrr import hiptypes as ht

pytestmark = pytest.mark.gpu

E = ht.hipError_t
OK = E.hipSuccess
K = ht.hipMemcpyKind
MODE = ht.hipStreamCaptureMode
STATUS = ht.hipStreamCaptureStatus
HOST_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def ok(result):
    assert result[0] == OK, result
    return result[1] if len(result) == 2 else (result[1:] if len(result) > 2 else None)


def u32(v):
    return ctypes.c_uint32(v)


def ptr_arg(p):
    """kernelParams entry for a pointer argument: the address of a c_void_p holding it."""
    holder = ctypes.c_void_p(int(p))
    _keep.append(holder)
    return ctypes.addressof(holder)


_keep: list = []


def params(*args):
    """kernelParams list: pointers (Pointer/DeviceArray) or ctypes values."""
    return [ptr_arg(a) if isinstance(a, ht.Pointer) else a for a in args]


def to_host(hip, dptr, n, dtype=np.uint32):
    out = np.zeros(n, dtype=dtype)
    ok(hip.hipMemcpy(out, dptr, out.nbytes, K.hipMemcpyDeviceToHost))
    return out


def to_dev(hip, arr):
    d = ok(hip.hipMalloc(arr.nbytes))
    ok(hip.hipMemcpy(d, arr, arr.nbytes, K.hipMemcpyHostToDevice))
    return d


def launch(hip, f, grid, block, *args, stream=None):
    return hip.hipModuleLaunchKernel(f, *grid, *block, 0, stream, params(*args), None)


class Span(ctypes.Structure):
    _fields_ = [("src", ctypes.c_void_p), ("n", ctypes.c_uint32), ("pad", ctypes.c_uint32)]


# ------------------------------------------------------------------------ device, errors

def test_device_and_init(hip):
    assert hip.hipInit(0) == (OK,)
    assert ok(hip.hipGetDeviceCount()) >= 1
    assert hip.hipSetDevice(0) == (OK,)
    assert ok(hip.hipGetDevice()) == 0
    props = ok(hip.hipGetDeviceProperties(0))
    assert props.gcnArchName.startswith("sm_") and props.major >= 7
    assert isinstance(props.name, str) and props.name
    assert props.canMapHostMemory == 1 and props.totalGlobalMem > 0
    err, free, total = hip.hipMemGetInfo()
    assert err == OK and 0 < free <= total
    assert hip.hipDeviceSynchronize() == (OK,)
    err, _ = hip.hipGetDeviceProperties(999)
    assert err == E.hipErrorInvalidDevice


def test_last_error_and_strings(hip):
    hip.hipGetLastError()
    d = ok(hip.hipMalloc(64))
    assert hip.hipFree(d) == (OK,)
    assert hip.hipFree(d) == (E.hipErrorInvalidValue,)  # double free
    assert hip.hipPeekAtLastError() == (E.hipErrorInvalidValue,)
    assert hip.hipGetLastError() == (E.hipErrorInvalidValue,)
    assert hip.hipGetLastError() == (OK,)
    err, name = hip.hipGetErrorName(E.hipErrorHostMemoryAlreadyRegistered)
    assert str(name) == "hipErrorHostMemoryAlreadyRegistered"
    assert str(hip.hipGetErrorString(E.hipErrorInvalidValue)[1])


# ------------------------------------------------------------------------------ memory

def test_memory_copies_and_sets(hip):
    n = 4096
    a = np.arange(n, dtype=np.uint32)
    d = ok(hip.hipMalloc(a.nbytes))
    assert isinstance(d, ht.DeviceArray) and int(d) and d.size == a.nbytes
    assert d.__cuda_array_interface__["data"][0] == int(d)
    ok(hip.hipMemcpyHtoD(d, a, a.nbytes))
    d2 = ok(hip.hipMalloc(a.nbytes))
    ok(hip.hipMemcpyDtoD(d2, d, a.nbytes))
    out = np.zeros_like(a)
    ok(hip.hipMemcpyDtoH(out, d2, a.nbytes))
    assert (out == a).all()
    ok(hip.hipMemset(d2, 0xAB, a.nbytes))
    assert (to_host(hip, d2, n * 4, np.uint8) == 0xAB).all()
    s = ok(hip.hipStreamCreate())
    ok(hip.hipMemsetAsync(d2, 1, a.nbytes, s))
    ok(hip.hipMemcpyHtoDAsync(d, (a * 3).astype(np.uint32), a.nbytes, s))
    ok(hip.hipMemcpyDtoDAsync(d2, d, a.nbytes, s))
    out2 = np.zeros_like(a)
    ok(hip.hipMemcpyDtoHAsync(out2, d2, a.nbytes, s))
    ok(hip.hipStreamSynchronize(s))
    assert (out2 == a * 3).all()
    ok(hip.hipMemcpyAsync(d2, a, a.nbytes, K.hipMemcpyHostToDevice, s))
    ok(hip.hipMemcpyAsync(out2, d2, a.nbytes, K.hipMemcpyDefault, s))
    ok(hip.hipStreamSynchronize(s))
    assert (out2 == a).all()
    ok(hip.hipMemcpy(d, bytes(a), a.nbytes, K.hipMemcpyHostToDevice))  # read-only buffer
    # async allocation
    da = ok(hip.hipMallocAsync(1024, s))
    assert isinstance(da, ht.DeviceArray)
    ok(hip.hipMemsetAsync(da, 7, 1024, s))
    ok(hip.hipFreeAsync(da, s))
    ok(hip.hipStreamSynchronize(s))
    attrs = ok(hip.hipPointerGetAttributes(d))
    assert attrs.type == ht.hipMemoryType.hipMemoryTypeDevice and int(attrs.devicePointer) == int(d)
    for p in (d, d2):
        assert hip.hipFree(p) == (OK,)
    assert hip.hipFree(None) == (OK,)
    ok(hip.hipStreamDestroy(s))
    err, none = hip.hipMalloc(1 << 50)
    assert err == E.hipErrorOutOfMemory and none is None


def test_pinned_memory_alloc_free_register(hip, builtin):
    n = 256
    for alloc in (lambda: hip.hipHostMalloc(n, hip.hipHostMallocDefault),
                  lambda: hip.hipHostMalloc(n, hip.hipHostMallocMapped),
                  lambda: hip.hipMallocHost(n), lambda: hip.hipHostAlloc(n, 0)):
        p = ok(alloc())
        assert isinstance(p, ht.Pointer) and not isinstance(p, ht.DeviceArray)
        ctypes.memset(int(p), 0x5A, n)  # real host memory of the process
        assert int(ok(hip.hipHostGetDevicePointer(p, 0))) == int(p)  # UVA
        attrs = ok(hip.hipPointerGetAttributes(p))
        assert attrs.type == ht.hipMemoryType.hipMemoryTypeHost
        d = ok(hip.hipMalloc(n))
        ok(launch(hip, builtin["copy_u8"], (2, 1, 1), (64, 1, 1), d, p, ctypes.c_uint64(n)))
        ok(hip.hipDeviceSynchronize())
        assert (to_host(hip, d, n, np.uint8) == 0x5A).all()
        ok(hip.hipFree(d))
    p1, p2, p3 = ok(hip.hipHostMalloc(n, 0)), ok(hip.hipMallocHost(n)), ok(hip.hipHostMalloc(n, 0))
    assert hip.hipHostFree(p1) == (OK,)
    assert hip.hipHostFree(p1)[0] != OK  # double free
    assert hip.hipFreeHost(p2) == (OK,)
    assert hip.hipFree(p3) == (OK,)  # hipFree frees pinned memory too
    assert hip.hipHostFree(None) == (OK,)
    # register / unregister
    arr = np.zeros(4096, dtype=np.uint8)
    assert hip.hipHostRegister(arr, arr.nbytes, hip.hipHostRegisterMapped) == (OK,)
    assert hip.hipHostRegister(arr, arr.nbytes, 0) == (E.hipErrorHostMemoryAlreadyRegistered,)
    arr[:] = 9
    d = ok(hip.hipMalloc(arr.nbytes))
    ok(launch(hip, builtin["copy_u8"], (4, 1, 1), (128, 1, 1), d, ht.Pointer(arr.ctypes.data),
              ctypes.c_uint64(arr.nbytes)))
    ok(hip.hipDeviceSynchronize())
    assert (to_host(hip, d, arr.nbytes, np.uint8) == 9).all()
    # the kernel writes registered host memory directly
    ok(launch(hip, builtin["fill_u32"], (1, 1, 1), (32, 1, 1), ht.Pointer(arr.ctypes.data), u32(0x01020304), u32(16)))
    ok(hip.hipDeviceSynchronize())
    assert (arr[:64].view(np.uint32) == 0x01020304).all()
    assert hip.hipHostUnregister(arr) == (OK,)
    assert hip.hipHostUnregister(arr) == (E.hipErrorHostMemoryNotRegistered,)
    ok(hip.hipFree(d))


# ------------------------------------------------------------------------ streams, events

def test_streams_and_events(hip, builtin):
    s1 = ok(hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking))
    s2 = ok(hip.hipStreamCreate())
    assert isinstance(s1, ht.ihipStream_t) and int(s1)
    e0, e1 = ok(hip.hipEventCreate()), ok(hip.hipEventCreateWithFlags(hip.hipEventDefault))
    assert isinstance(e0, ht.ihipEvent_t)
    n = 1 << 20
    d = ok(hip.hipMalloc(4 * n))
    ok(hip.hipEventRecord(e0, s1))
    for _ in range(5):
        ok(launch(hip, builtin["fill_u32"], (64, 1, 1), (256, 1, 1), d, u32(3), u32(n), stream=s1))
    ok(hip.hipEventRecord(e1, s1))
    ok(hip.hipStreamWaitEvent(s2, e1, 0))
    out = np.zeros(n, dtype=np.uint32)
    ok(hip.hipMemcpyAsync(out, d, out.nbytes, K.hipMemcpyDeviceToHost, s2))
    ok(hip.hipStreamSynchronize(s2))
    assert (out == 3).all()
    ok(hip.hipEventSynchronize(e1))
    assert hip.hipEventQuery(e1) == (OK,)
    assert hip.hipStreamQuery(s1) == (OK,)
    err, ms = hip.hipEventElapsedTime(e0, e1)
    assert err == OK and isinstance(ms, float) and ms >= 0.0
    nt = ok(hip.hipEventCreateWithFlags(hip.hipEventDisableTiming))
    ok(hip.hipEventRecord(nt, None))
    ok(hip.hipEventSynchronize(nt))
    for e in (e0, e1, nt):
        assert hip.hipEventDestroy(e) == (OK,)
    for s in (s1, s2):
        assert hip.hipStreamDestroy(s) == (OK,)
    ok(hip.hipFree(d))


def test_stream_query_not_ready_and_wait_value(hip, builtin):
    flag = ok(hip.hipHostMalloc(64, 0))
    fl = (ctypes.c_uint32 * 16).from_address(int(flag))
    fl[0] = 0
    s = ok(hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking))
    d = ok(hip.hipMalloc(64))
    ok(hip.hipStreamWaitValue32(s, flag, 5, hip.hipStreamWaitValueEq, 0xFFFFFFFF))
    ok(launch(hip, builtin["fill_u32"], (1, 1, 1), (16, 1, 1), d, u32(77), u32(16), stream=s))
    ok(hip.hipStreamWriteValue32(s, ht.Pointer(int(flag) + 4), 1234, 0))
    time.sleep(0.05)
    assert hip.hipStreamQuery(s) == (E.hipErrorNotReady,)
    assert fl[1] == 0
    fl[0] = 5  # the host releases the stream
    ok(hip.hipStreamSynchronize(s))
    assert fl[1] == 1234
    assert (to_host(hip, d, 16) == 77).all()
    assert hip.hipStreamWaitValue32(s, flag, 1, hip.hipStreamWaitValueGte, 0xFF) == (E.hipErrorNotSupported,)
    ok(hip.hipStreamDestroy(s))
    ok(hip.hipHostFree(flag))
    ok(hip.hipFree(d))


def test_host_func_on_stream(hip):
    seen = []
    cb = HOST_FN(lambda ud: seen.append(ud))
    s = ok(hip.hipStreamCreate())
    box = ctypes.c_uint64(42)
    ok(hip.hipLaunchHostFunc(s, ctypes.cast(cb, ctypes.c_void_p).value, ctypes.addressof(box)))
    ok(hip.hipLaunchHostFunc(s, cb, None))  # ctypes object: code address used, kept alive
    ok(hip.hipStreamSynchronize(s))
    assert seen == [ctypes.addressof(box), None]
    with pytest.raises(TypeError):
        hip.hipLaunchHostFunc(s, lambda ud: None, None)
    ok(hip.hipStreamDestroy(s))


# ------------------------------------------------------------------------- launch forms

def _check_fill(hip, d, n, value):
    got = to_host(hip, d, n)
    assert (got == value).all(), (value, got[:8])


def test_every_launch_form(hip, builtin):
    f = builtin["fill_u32"]
    n = 1000
    d = ok(hip.hipMalloc(4 * n))
    grid, block = (3, 1, 1), (64, 1, 1)

    def run(kernel_params, extra, value):
        ok(hip.hipMemset(d, 0, 4 * n))
        ok(hip.hipModuleLaunchKernel(f, *grid, *block, 0, None, kernel_params, extra))
        ok(hip.hipDeviceSynchronize())
        _check_fill(hip, d, n, value)

    # 1. kernelParams: list of argument addresses (ctypes values, ints)
    run(params(d, u32(11), u32(n)), None, 11)
    v, cnt = u32(12), u32(n)
    run([ptr_arg(d), ctypes.addressof(v), ctypes.addressof(cnt)], None, 12)
    # 2. kernelParams: address of a void*[] (int) and the array object / numpy array
    dp, v, cnt = ctypes.c_void_p(int(d)), u32(13), u32(n)
    arr = (ctypes.c_void_p * 3)(ctypes.addressof(dp), ctypes.addressof(v), ctypes.addressof(cnt))
    run(ctypes.addressof(arr), None, 13)
    v.value = 14
    run(arr, None, 14)
    v.value = 15
    run(np.array([ctypes.addressof(dp), ctypes.addressof(v), ctypes.addressof(cnt)], dtype=np.uint64), None, 15)
    # 3. extra: hip-python's tuple form (values packed at min(size, 8) alignment)
    run(None, (d, u32(16), u32(n)), 16)
    run(None, [ctypes.c_void_p(int(d)), u32(17), u32(n)], 17)
    # 4. extra: the raw HIP_LAUNCH_PARAM_BUFFER_POINTER/SIZE/END form
    buf = ctypes.create_string_buffer(int(d).to_bytes(8, "little") + (18).to_bytes(4, "little")
                                      + n.to_bytes(4, "little"), 16)
    size = ctypes.c_size_t(16)
    run(None, [hip.HIP_LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(buf),
               hip.HIP_LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(size), hip.HIP_LAUNCH_PARAM_END], 18)
    raw = (ctypes.c_void_p * 5)(1, ctypes.addressof(buf), 2, ctypes.addressof(size), 3)
    ctypes.memmove(ctypes.addressof(buf) + 8, (19).to_bytes(4, "little"), 4)
    run(None, ctypes.addressof(raw), 19)
    # 5. hipLaunchKernel with dim3 and argument addresses
    ok(hip.hipMemset(d, 0, 4 * n))
    ok(hip.hipLaunchKernel(f, hip.dim3(x=2), hip.dim3(x=32, y=2), params(d, u32(20), u32(n)), 0, None))
    ok(hip.hipDeviceSynchronize())
    _check_fill(hip, d, n, 20)
    # keyword call, int handle
    ok(hip.hipModuleLaunchKernel(int(f), 1, 1, 1, 1, 1, 1, sharedMemBytes=0, stream=None,
                                 kernelParams=params(d, u32(21), u32(n)), extra=None))
    ok(hip.hipDeviceSynchronize())
    _check_fill(hip, d, n, 21)
    # 6. capture's and replay's handoff (kernargs.packed_extra): the bytes launched from the
    # thread's own buffer, on the null stream and on a stream; a bad shape fails as CUDA says
    from hrr.hiptypes.kernargs import packed_extra
    def packed(value):
        return int(d).to_bytes(8, "little") + value.to_bytes(4, "little") + n.to_bytes(4, "little")
    run(None, packed_extra(packed(22)), 22)
    s = ok(hip.hipStreamCreate())
    ok(hip.hipMemset(d, 0, 4 * n))
    ok(hip.hipModuleLaunchKernel(f, *grid, *block, 0, s, None, packed_extra(packed(23))))
    ok(hip.hipStreamSynchronize(s))
    _check_fill(hip, d, n, 23)
    ok(hip.hipStreamDestroy(s))
    assert hip.hipModuleLaunchKernel(f, 1, 1, 1, 2048, 1, 1, 0, None, None, packed_extra(packed(1))) == (
        E.hipErrorInvalidValue,)
    # bad launches
    assert hip.hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, None, None) == (E.hipErrorInvalidValue,)
    assert hip.hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, params(d, u32(1), u32(1)),
                                     (d, u32(1), u32(1))) == (E.hipErrorInvalidValue,)
    assert hip.hipLaunchKernel(12345, hip.dim3(1), hip.dim3(1), [], 0, None) == (E.hipErrorInvalidDeviceFunction,)
    ok(hip.hipFree(d))


# ---------------------------------------------------------------------- built-in kernels

SHAPES = [((1, 1, 1), (1, 1, 1)), ((1, 1, 1), (96, 1, 1)), ((7, 1, 1), (128, 1, 1)),
          ((3, 2, 2), (16, 4, 2)), ((300, 1, 1), (1024, 1, 1))]


@pytest.mark.parametrize("grid,block", SHAPES)
def test_builtin_kernels_any_shape(hip, builtin, grid, block):
    rng = np.random.default_rng(1)
    n = 100_003
    a = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    da, db = to_dev(hip, a), to_dev(hip, b)
    dst = ok(hip.hipMalloc(4 * n))
    ok(launch(hip, builtin["fill_u32"], grid, block, dst, u32(0xDEADBEEF), u32(n)))
    assert (to_host(hip, dst, n) == 0xDEADBEEF).all()
    ok(launch(hip, builtin["add_u32"], grid, block, dst, da, db, u32(n)))
    assert (to_host(hip, dst, n) == (a + b)).all()
    ok(launch(hip, builtin["copy_u8"], grid, block, dst, da, ctypes.c_uint64(4 * n - 3)))
    got = to_host(hip, dst, 4 * n, np.uint8)
    assert (got[:4 * n - 3] == a.view(np.uint8)[:4 * n - 3]).all()
    expected = int(a.astype(np.uint64).sum()) & 0xFFFFFFFF
    s = ok(hip.hipMalloc(16))
    for _rep in range(2):  # written once, not accumulated
        ok(launch(hip, builtin["sum_u32"], grid, block, s, da, u32(n)))
        assert int(to_host(hip, s, 1)[0]) == expected
    span = Span(int(da), n - 1, 0)
    ok(hip.hipModuleLaunchKernel(builtin["struct_sum_u32"], *grid, *block, 0, None,
                                 [ptr_arg(s), span], None))
    assert int(to_host(hip, s, 1)[0]) == int(a[:n - 1].astype(np.uint64).sum()) & 0xFFFFFFFF
    ok(hip.hipModuleLaunchKernel(builtin["struct_sum_u32"], *grid, *block, 0, None, None,
                                 (s, Span(int(db), n, 0))))
    assert int(to_host(hip, s, 1)[0]) == int(b.astype(np.uint64).sum()) & 0xFFFFFFFF
    ok(launch(hip, builtin["sum_u32"], grid, block, s, da, u32(0)))
    assert int(to_host(hip, s, 1)[0]) == 0
    for p in (da, db, dst, s):
        ok(hip.hipFree(p))


def test_builtin_layouts_from_device(hip, builtin, cuda_backend):
    for name in cuda_backend.BUILTIN_KERNELS:
        assert cuda_backend.kernel_layout(builtin[name]) == cuda_backend.BUILTIN_LAYOUTS[name], name


def _wait_done(hip, stream, timeout=20.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        r = hip.hipStreamQuery(stream)[0]
        if r != E.hipErrorNotReady:
            return r
        time.sleep(0.005)
    return None


def test_wait_flag_released_by_another_stream(hip, builtin):
    flag = ok(hip.hipHostMalloc(4, 0))
    fl = ctypes.c_uint32.from_address(int(flag))
    fl.value = 0
    s1 = ok(hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking))
    s2 = ok(hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking))
    d = ok(hip.hipMalloc(4))
    ok(launch(hip, builtin["wait_flag"], (1, 1, 1), (32, 1, 1), flag, u32(7), stream=s1))
    ok(launch(hip, builtin["fill_u32"], (1, 1, 1), (1, 1, 1), d, u32(99), u32(1), stream=s1))
    time.sleep(0.05)
    assert hip.hipStreamQuery(s1) == (E.hipErrorNotReady,)
    ok(launch(hip, builtin["set_flag"], (1, 1, 1), (1, 1, 1), flag, u32(7), stream=s2))
    res = _wait_done(hip, s1)
    if res is None:
        fl.value = 7  # release it before failing, so the process can end
        hip.hipStreamSynchronize(s1)
        pytest.fail("wait_flag was not released by set_flag on another stream")
    assert res == OK and fl.value == 7
    assert int(to_host(hip, d, 1)[0]) == 99
    # device-memory flag, released by set_flag from another stream too
    dflag = ok(hip.hipMalloc(4))
    ok(hip.hipMemset(dflag, 0, 4))
    ok(launch(hip, builtin["wait_flag"], (2, 1, 1), (64, 1, 1), dflag, u32(3), stream=s1))
    ok(launch(hip, builtin["set_flag"], (1, 1, 1), (1, 1, 1), dflag, u32(3), stream=s2))
    assert _wait_done(hip, s1) == OK
    for s in (s1, s2):
        ok(hip.hipStreamDestroy(s))
    ok(hip.hipHostFree(flag))
    ok(hip.hipFree(d))
    ok(hip.hipFree(dflag))


def test_kernel_reads_pinned_memory_written_after_launch(hip, builtin):
    """A host write after the launch and before the sync is what the kernel reads."""
    n = 1 << 16
    src = ok(hip.hipHostMalloc(n, 0))
    flag = ok(hip.hipHostMalloc(4, 0))
    view = np.ctypeslib.as_array((ctypes.c_uint8 * n).from_address(int(src)))
    view[:] = 1
    fl = ctypes.c_uint32.from_address(int(flag))
    fl.value = 0
    d = ok(hip.hipMalloc(n))
    s = ok(hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking))
    ok(launch(hip, builtin["wait_flag"], (1, 1, 1), (1, 1, 1), flag, u32(1), stream=s))
    ok(launch(hip, builtin["copy_u8"], (16, 1, 1), (256, 1, 1), d, src, ctypes.c_uint64(n), stream=s))
    view[:] = 0xC3  # the host writer races the queued kernel
    fl.value = 1
    assert _wait_done(hip, s) == OK
    assert (to_host(hip, d, n, np.uint8) == 0xC3).all()
    ok(hip.hipStreamDestroy(s))
    ok(hip.hipHostFree(src))
    ok(hip.hipHostFree(flag))
    ok(hip.hipFree(d))


# ------------------------------------------------------------------- capture and graphs

def test_capture_graph_with_host_functions_launched_many_times(hip, builtin):
    calls = []
    lock = threading.Lock()

    def on_host(ud):
        with lock:
            calls.append(ud)

    cb = HOST_FN(on_host)
    cb_addr = ctypes.cast(cb, ctypes.c_void_p).value
    n = 256
    pinned = ok(hip.hipHostMalloc(4 * n, 0))
    pv = np.ctypeslib.as_array((ctypes.c_uint32 * n).from_address(int(pinned)))
    d = ok(hip.hipMalloc(4 * n))
    out_d = ok(hip.hipMalloc(16))
    s = ok(hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking))
    assert ok(hip.hipStreamIsCapturing(s)) == STATUS.hipStreamCaptureStatusNone
    assert ok(hip.hipThreadExchangeStreamCaptureMode()) == MODE.hipStreamCaptureModeGlobal
    ok(hip.hipStreamBeginCapture(s, MODE.hipStreamCaptureModeGlobal))
    assert ok(hip.hipStreamIsCapturing(s)) == STATUS.hipStreamCaptureStatusActive
    err, status, cid = hip.hipStreamGetCaptureInfo(s)
    assert err == OK and status == STATUS.hipStreamCaptureStatusActive and cid > 0
    ok(hip.hipLaunchHostFunc(s, cb_addr, 1))
    ok(launch(hip, builtin["copy_u8"], (4, 1, 1), (64, 1, 1), d, pinned, ctypes.c_uint64(4 * n), stream=s))
    ok(launch(hip, builtin["sum_u32"], (2, 1, 1), (64, 1, 1), out_d, d, u32(n), stream=s))
    ok(hip.hipLaunchHostFunc(s, cb_addr, 2))
    graph = ok(hip.hipStreamEndCapture(s))
    assert isinstance(graph, ht.ihipGraph)
    assert ok(hip.hipStreamIsCapturing(s)) == STATUS.hipStreamCaptureStatusNone
    err, gexec, node, log = hip.hipGraphInstantiate(graph, 0)
    assert err == OK and isinstance(gexec, ht.hipGraphExec) and node is None and isinstance(log, ht.CStr)
    for i in range(5):
        pv[:] = i + 1  # pinned memory read at each graph launch
        ok(hip.hipGraphLaunch(gexec, s))
        ok(hip.hipStreamSynchronize(s))
        assert int(to_host(hip, out_d, 1)[0]) == n * (i + 1)
    assert calls == [1, 2] * 5
    gexec2 = ok(hip.hipGraphInstantiateWithFlags(graph, 0))
    for _ in range(3):
        ok(hip.hipGraphLaunch(gexec2, None))
    ok(hip.hipDeviceSynchronize())
    assert len(calls) == 16
    for ex in (gexec, gexec2):
        assert hip.hipGraphExecDestroy(ex) == (OK,)
    assert hip.hipGraphDestroy(graph) == (OK,)
    ok(hip.hipStreamDestroy(s))
    ok(hip.hipHostFree(pinned))
    ok(hip.hipFree(d))
    ok(hip.hipFree(out_d))


def test_invalidated_capture_gives_900_then_901(hip, builtin):
    s = ok(hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking))
    d = ok(hip.hipMalloc(64))
    hip.hipGetLastError()
    ok(hip.hipStreamBeginCapture(s, MODE.hipStreamCaptureModeGlobal))
    ok(launch(hip, builtin["fill_u32"], (1, 1, 1), (16, 1, 1), d, u32(1), u32(16), stream=s))
    assert hip.hipStreamSynchronize(s) == (E.hipErrorStreamCaptureUnsupported,)
    assert ok(hip.hipStreamIsCapturing(s)) == STATUS.hipStreamCaptureStatusInvalidated
    assert hip.hipStreamEndCapture(s) == (E.hipErrorStreamCaptureInvalidated, None)
    assert hip.hipGetLastError()[0] in (E.hipErrorStreamCaptureInvalidated, E.hipErrorStreamCaptureUnsupported)
    hip.hipGetLastError()
    # hipMalloc in a Global capture: 900, capture invalidated
    ok(hip.hipStreamBeginCapture(s, MODE.hipStreamCaptureModeGlobal))
    err, p = hip.hipMalloc(256)
    assert err == E.hipErrorStreamCaptureUnsupported and p is None
    assert hip.hipStreamEndCapture(s)[0] == E.hipErrorStreamCaptureInvalidated
    # ThreadLocal too
    ok(hip.hipStreamBeginCapture(s, MODE.hipStreamCaptureModeThreadLocal))
    assert hip.hipMalloc(256)[0] == E.hipErrorStreamCaptureUnsupported
    assert hip.hipStreamEndCapture(s)[0] == E.hipErrorStreamCaptureInvalidated
    hip.hipGetLastError()
    # Relaxed: hipMalloc is allowed and the capture ends cleanly
    ok(hip.hipStreamBeginCapture(s, MODE.hipStreamCaptureModeRelaxed))
    p = ok(hip.hipMalloc(256))
    ok(launch(hip, builtin["fill_u32"], (1, 1, 1), (16, 1, 1), d, u32(2), u32(16), stream=s))
    g = ok(hip.hipStreamEndCapture(s))
    ex = hip.hipGraphInstantiate(g, 0)[1]
    ok(hip.hipGraphLaunch(ex, s))
    ok(hip.hipStreamSynchronize(s))
    assert (to_host(hip, d, 16) == 2).all()
    ok(hip.hipGraphExecDestroy(ex))
    ok(hip.hipGraphDestroy(g))
    ok(hip.hipFree(p))
    # exchanging the thread's mode
    prev = ok(hip.hipThreadExchangeStreamCaptureMode(MODE.hipStreamCaptureModeRelaxed))
    assert prev == MODE.hipStreamCaptureModeGlobal
    assert ok(hip.hipThreadExchangeStreamCaptureMode()) == MODE.hipStreamCaptureModeRelaxed
    assert ok(hip.hipThreadExchangeStreamCaptureMode(prev)) == MODE.hipStreamCaptureModeRelaxed
    ok(hip.hipStreamDestroy(s))
    ok(hip.hipFree(d))
    hip.hipGetLastError()


# ------------------------------------------------------------------- modules, hiprtc

def test_modules_and_hiprtc_user_kernel(hip, hiprtc, builtin, cuda_backend):
    src = (b'#include <hip/hip_runtime.h>\n'
           b'struct P { float a; double b; };\n'
           b'extern "C" __global__ void axpy(float a, const float* x, float* y, unsigned long long n,'
           b' char c, P p) { for (unsigned long long i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;'
           b' i < n; i += hipGridDim_x * hipBlockDim_x) y[i] += a * x[i] + c + (float)(p.a + p.b); }\n')
    props = ok(hip.hipGetDeviceProperties(0))
    err, prog = hiprtc.hiprtcCreateProgram(src, b"axpy.hip", 0, [], [])
    assert err == 0
    assert hiprtc.hiprtcCompileProgram(prog, 1, [b"--offload-arch=" + props.gcnArchName.encode()])[0] == 0
    size = hiprtc.hiprtcGetCodeSize(prog)[1]
    code = bytearray(size)
    hiprtc.hiprtcGetCode(prog, code)
    hiprtc.hiprtcDestroyProgram(prog)
    mod = ok(hip.hipModuleLoadData(code))
    assert isinstance(mod, ht.ihipModule_t)
    f = ok(hip.hipModuleGetFunction(mod, b"axpy"))
    assert isinstance(f, ht.ihipModuleSymbol_t)
    layout = cuda_backend.kernel_layout(f)
    assert [(p.offset, p.size) for p in layout.params] == [(0, 4), (8, 8), (16, 8), (24, 8), (32, 1), (40, 16)]
    assert all(p.kind == "unknown" for p in layout.params)
    n = 1000
    x = np.arange(n, dtype=np.float32)
    dx, dy = to_dev(hip, x), to_dev(hip, np.zeros(n, dtype=np.float32))

    class P(ctypes.Structure):
        _fields_ = [("a", ctypes.c_float), ("b", ctypes.c_double)]
    ok(hip.hipModuleLaunchKernel(f, 2, 1, 1, 128, 1, 1, 0, None, None,
                                 (ctypes.c_float(2.0), dx, dy, ctypes.c_ulonglong(n), ctypes.c_char(b"\x01"),
                                  P(0.5, 0.25))))
    ok(hip.hipDeviceSynchronize())
    y = to_host(hip, dy, n, np.float32)
    assert np.allclose(y, 2.0 * x + 1 + 0.75)
    assert hip.hipModuleGetFunction(mod, b"nope")[0] == E.hipErrorNotFound
    assert hip.hipModuleUnload(mod) == (OK,)
    with pytest.raises(KeyError):
        cuda_backend.kernel_layout(f)
    err, m = hip.hipModuleLoadData(b"\x00" * 64)
    assert err != OK and m is None
    ok(hip.hipFree(dx))
    ok(hip.hipFree(dy))


def test_enum_arguments(hip):
    d = ok(hip.hipMalloc(16))
    buf = np.zeros(4, dtype=np.uint32)
    assert hip.hipMemcpy(buf, d, 16, 2) == (OK,)  # ints are accepted (replay decodes them)
    assert hip.hipMemcpy(buf, d, 16, 77) == (E.hipErrorInvalidValue,)
    ok(hip.hipFree(d))
