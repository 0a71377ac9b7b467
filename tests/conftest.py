"""Shared fixtures: programmatic capture and replay on every available backend.

GPU tests carry the ``gpu`` marker and are skipped cleanly where no NVIDIA GPU is present.
"""
from __future__ import annotations

import functools
import random
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


def pytest_sessionfinish(session, exitstatus):
    """The venvs the session built under the temp dir go with it (HRR_KEEP_TEST_VENVS=1 keeps
    them for the next run); a few hundred MB each, they must not pile up."""
    from hippython7 import MADE_HERE, remove_test_venvs

    remove_test_venvs(MADE_HERE)


def pytest_addoption(parser):
    parser.addoption("--shuffle", metavar="SEED", default=None,
                     help="run the tests in a random order drawn from SEED (an integer, or "
                          "'random' for a fresh one); the seed is printed in the header")


def _shuffle_seed(config) -> int | None:
    seed = config.getoption("--shuffle")
    if seed is None:
        return None
    if seed == "random":
        seed = random.SystemRandom().randrange(1 << 32)
        config.option.shuffle = str(seed)  # one seed for the whole run, and for the header
    return int(seed)


def pytest_report_header(config):
    seed = _shuffle_seed(config)
    return None if seed is None else f"test order shuffled: --shuffle {seed}"


def pytest_collection_modifyitems(config, items):
    seed = _shuffle_seed(config)
    if seed is not None:
        random.Random(seed).shuffle(items)
    for item in items:
        if "gpu" in item.keywords:
            reason = _gpu_unavailable_reason()
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(autouse=True)
def _leave_the_gpu_as_found(request):
    """Every GPU test ends with ``hipDeviceReset``: no allocation, host registration,
    module or stream capture leaks into the next test, whatever order they run in."""
    yield
    if "gpu" in request.keywords:
        from hrr.backends import cuda
        cuda.reset_device()


@pytest.fixture
def loose_blobs(monkeypatch):
    """Blobs stored one file each (HRR_PACK_BLOBS=0, read afresh): for the tests that open,
    tamper with or link a blob's own file."""
    from hrr.config import config
    monkeypatch.setenv("HRR_PACK_BLOBS", "0")
    config.cache_clear()
    yield
    config.cache_clear()


BACKENDS = [pytest.param("sim", id="sim"), pytest.param("cuda", id="cuda", marks=pytest.mark.gpu)]


@pytest.fixture(params=BACKENDS)
def backend_name(request) -> str:
    """Each backend this machine can run: the sim always, cuda where a GPU is present."""
    return request.param
