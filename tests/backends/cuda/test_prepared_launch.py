"""hrr.backends.cuda.native's PreparedLaunch, against a stand-in for cuLaunchKernel (a ctypes
callback): the arguments and bytes the driver is handed, what a result becomes, bad input."""
from __future__ import annotations

import ctypes

import pytest

from hrr.backends.cuda.native import extension

EXT, WHY = extension()
pytestmark = pytest.mark.skipif(EXT is None, reason=f"the prepared-launch extension was not built: {WHY}")

LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *([ctypes.c_uint] * 7), ctypes.c_void_p, ctypes.c_void_p,
                          ctypes.POINTER(ctypes.c_void_p))


class FakeDriver:
    """cuLaunchKernel as a callback: keeps what each call was handed; answers ``result``."""

    def __init__(self, result: int = 0) -> None:
        self.calls: list[tuple] = []
        self.result = result
        self.fn = LAUNCH(self._launch)
        self.address = ctypes.cast(self.fn, ctypes.c_void_p).value

    def _launch(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        words = [extra[i] or 0 for i in range(5)]
        assert words[0] == 1 and words[2] == 2 and words[4] == 0   # BUFFER_POINTER, BUFFER_SIZE, END
        size = ctypes.c_size_t.from_address(words[3]).value
        data = ctypes.string_at(words[1], size)
        self.calls.append((f or 0, (gx, gy, gz), (bx, by, bz), shared, stream or 0, params, data))
        return self.result


def _prepared(driver: FakeDriver, kernargs: bytes = b"\x01" * 8 + b"\x02" * 4, **over):
    args = dict(launch=driver.address, function=0x1234, grid=(3, 2, 1), block=(64, 1, 1), shared=128,
                stream=0x5678, kernargs=kernargs, ok=("ok",), on_error=lambda r: ("err", r))
    args.update(over)
    return EXT.PreparedLaunch(**args)


def test_a_call_hands_the_driver_the_launch_and_a_copy_of_the_bytes():
    driver = FakeDriver()
    data = bytearray(b"\x07" * 16)
    p = _prepared(driver, kernargs=bytes(data))
    data[:] = b"\0" * 16            # the object keeps its own copy
    assert p() == ("ok",) and p() == ("ok",)
    assert driver.calls == [(0x1234, (3, 2, 1), (64, 1, 1), 128, 0x5678, None, b"\x07" * 16)] * 2
    assert p.size == 16


def test_a_driver_error_goes_through_on_error():
    driver = FakeDriver(result=719)
    assert _prepared(driver)() == ("err", 719)


def test_no_arguments_still_hands_a_buffer_of_size_zero():
    driver = FakeDriver()
    assert _prepared(driver, kernargs=b"")() == ("ok",)
    assert driver.calls[0][-1] == b""


@pytest.mark.parametrize("over, words", [
    ({"grid": (1, 2)}, "tuples of three ints"),
    ({"block": [1, 1, 1]}, "tuples of three ints"),
    ({"grid": (1 << 32, 1, 1)}, "grid must be an int in [0, 2**32)"),
    ({"block": (-1, 1, 1)}, "block must be an int in [0, 2**32)"),
    ({"shared": 1 << 40}, "shared must be an int in [0, 2**32)"),
    ({"launch": 0}, "launch must not be 0"),
    ({"on_error": 5}, "on_error must be callable"),
])
def test_bad_descriptions_are_value_errors(over, words):
    with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")
                       .replace("*", r"\*")):
        _prepared(FakeDriver(), **over)


def test_it_takes_no_arguments_and_is_made_once():
    driver = FakeDriver()
    p = _prepared(driver)
    with pytest.raises(TypeError, match="takes no arguments"):
        p(1)
    with pytest.raises(TypeError, match="made once"):
        p.__init__(driver.address, 1, (1, 1, 1), (1, 1, 1), 0, 0, b"", None, print)
    unmade = EXT.PreparedLaunch.__new__(EXT.PreparedLaunch)
    with pytest.raises(TypeError, match="was not made"):
        unmade()
    assert driver.calls == []


def _fake_driver_state(monkeypatch, driver: FakeDriver, size: int) -> int:
    """The cuda backend as if ready, with ``driver`` as libcuda's cuLaunchKernel and one
    function (returned) of a ``size``-byte layout."""
    from hrr.backends.cuda import _runtime, modules
    from hrr.hiptypes.kernargs import KernelLayout, ParamSpec

    class Lib:
        cuLaunchKernel = driver.fn
    monkeypatch.setattr(_runtime.STATE, "ready", True)
    monkeypatch.setattr(_runtime.STATE, "libcuda", Lib())
    monkeypatch.setattr(modules, "ensure_context", lambda: None)
    fh = 0xF00D
    layout = KernelLayout(tuple(ParamSpec(8 * i, 8, "value") for i in range(size // 8)))
    monkeypatch.setitem(modules._layouts, fh, layout)
    return fh


def test_the_backend_prepares_what_launch_kernargs_would_launch(monkeypatch):
    import hrr.backends.cuda as cuda
    from hrr.backends.cuda import hip_api
    from hrr.hiptypes import hipError_t
    driver = FakeDriver()
    fh = _fake_driver_state(monkeypatch, driver, 16)
    p = cuda.launch_kernargs.prepare(fh, (2, 1, 1), (32, 1, 1), 0, None, b"\x05" * 16)
    assert type(p).__name__ == "PreparedLaunch"
    assert p() == (hipError_t.hipSuccess,)
    assert driver.calls == [(fh, (2, 1, 1), (32, 1, 1), 0, 0, None, b"\x05" * 16)]
    driver.result = 1   # CUDA_ERROR_INVALID_VALUE
    assert p() == (hipError_t.hipErrorInvalidValue,) and hip_api._tls.last == hipError_t.hipErrorInvalidValue
    # not the layout's size, or an unknown function: launch_kernargs would go through hip
    assert cuda.launch_kernargs.prepare(fh, (1, 1, 1), (1, 1, 1), 0, None, b"\x05" * 8) is None
    assert cuda.launch_kernargs.prepare(fh + 1, (1, 1, 1), (1, 1, 1), 0, None, b"\x05" * 16) is None
