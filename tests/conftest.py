"""Shared fixtures: programmatic capture and replay on every available backend.

GPU tests carry the ``gpu`` marker and are skipped cleanly where no NVIDIA GPU is present.
"""
from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the shared helper modules below tests/


@functools.lru_cache(maxsize=1)
def _gpu_unavailable_reason() -> str | None:
    try:
        from hrr.backends.cuda._runtime import gpu_unavailable_reason
    except Exception as exc:  # noqa: BLE001 - no cuda backend at all
        return f"cuda backend unavailable: {exc}"
    return gpu_unavailable_reason()


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "gpu" in item.keywords:
            reason = _gpu_unavailable_reason()
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


BACKENDS = [pytest.param("sim", id="sim"), pytest.param("cuda", id="cuda", marks=pytest.mark.gpu)]


@pytest.fixture(params=BACKENDS)
def backend_name(request) -> str:
    """Each backend this machine can run: the sim always, cuda where a GPU is present."""
    return request.param
