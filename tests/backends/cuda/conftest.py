"""Fixtures for the cuda backend's tests. Tests marked ``gpu`` are skipped where no
NVIDIA driver and GPU are present by the suite-wide hook in tests/conftest.py.
The built-in module is loaded per test: every GPU test ends with a device reset
(tests/conftest.py), which unloads it."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def cuda_backend():
    from hrr.backends import cuda
    return cuda


@pytest.fixture(scope="session")
def hip(cuda_backend):
    return cuda_backend.hip


@pytest.fixture(scope="session")
def hiprtc(cuda_backend):
    return cuda_backend.hiprtc


@pytest.fixture
def builtin(cuda_backend, hip):
    """The built-in kernel module loaded on the GPU: {name: function handle}."""
    code = cuda_backend.builtin_code_object()
    err, mod = hip.hipModuleLoadData(code)
    assert err == hip.hipError_t.hipSuccess, err
    funcs = {}
    for name in cuda_backend.BUILTIN_KERNELS:
        err, f = hip.hipModuleGetFunction(mod, name.encode())
        assert err == hip.hipError_t.hipSuccess, (name, err)
        funcs[name] = f
    funcs["__module__"] = mod
    return funcs
