"""Skip logic for the cuda backend's GPU tests: a test marked ``gpu`` runs only where
cuda-bindings, an NVIDIA driver (libcuda.so.1) and at least one GPU are present."""
from __future__ import annotations

import functools

import pytest


@functools.lru_cache(maxsize=1)
def gpu_unavailable_reason() -> str | None:
    from hrr.backends.cuda._runtime import gpu_unavailable_reason as why
    return why()


def pytest_collection_modifyitems(config, items):
    reason = None
    for item in items:
        if "gpu" in item.keywords and "backends/cuda" in str(item.fspath).replace("\\", "/"):
            if reason is None:
                reason = gpu_unavailable_reason() or ""
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


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


@pytest.fixture(scope="session")
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
