"""Fixtures for the sim backend's tests: a fresh device per test, the built-in kernels."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from hrr.backends import sim
from hrr.backends.sim import hip

OK = hip.hipError_t.hipSuccess


@pytest.fixture(autouse=True)
def fresh_device():
    sim.reset_device()
    yield
    sim.reset_device()


class Kernels:
    """The built-in library loaded as a module, with launch helpers."""

    def __init__(self) -> None:
        err, self.module = hip.hipModuleLoadData(sim.builtin_code_object())
        assert err == OK
        self.keep: list = []

    def fn(self, name: str):
        err, f = hip.hipModuleGetFunction(self.module, name.encode())
        assert err == OK
        return f

    def params(self, *values) -> list[int]:
        """kernelParams: the address of each argument; ints become pointers (c_void_p)."""
        objs = [ctypes.c_void_p(v) if isinstance(v, int) else v for v in values]
        self.keep += objs
        return [ctypes.addressof(o) for o in objs]

    def launch(self, name: str, *values, grid=(1, 1, 1), block=(64, 1, 1), stream=None):
        err, = hip.hipModuleLaunchKernel(self.fn(name), *grid, *block, 0, stream,
                                         self.params(*values), None)
        assert err == OK
        return err


@pytest.fixture
def kernels() -> Kernels:
    return Kernels()


def pinned_u32(count: int):
    """A pinned host buffer and a numpy uint32 view of it."""
    err, ptr = hip.hipHostMalloc(count * 4, 0)
    assert err == OK
    return ptr, np.ctypeslib.as_array((ctypes.c_uint32 * count).from_address(int(ptr)))


def device_u32(values) -> tuple:
    arr = np.asarray(values, dtype=np.uint32)
    err, d = hip.hipMalloc(max(arr.nbytes, 4))
    assert err == OK
    assert hip.hipMemcpy(d, arr, arr.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice)[0] == OK
    return d


def read_u32(d, count: int) -> np.ndarray:
    out = np.zeros(count, np.uint32)
    assert hip.hipMemcpy(out, d, out.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost)[0] == OK
    return out


@pytest.fixture
def helpers():
    return type("H", (), {"pinned_u32": staticmethod(pinned_u32),
                          "device_u32": staticmethod(device_u32),
                          "read_u32": staticmethod(read_u32)})
