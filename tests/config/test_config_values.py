"""The environment variables as hrr.config reads them (os.environ, once per process).

Each test clears the cache of ``config()`` so that the real loader reads the variables the
test set, and clears it again afterwards so that no other test sees them."""
from __future__ import annotations

import pytest

from hrr.config import config

MiB = 1024 * 1024
VARS = ("HIP_HRR_HOST_SNAPSHOTS", "HIP_HRR_HOST_SNAPSHOT_MAX_MB", "HIP_HRR_CAPTURE_CONTENT", "HRR_PACK_BLOBS",
        "HRR_BACKEND")


@pytest.fixture
def env(monkeypatch):
    for name in VARS:
        monkeypatch.delenv(name, raising=False)
    config.cache_clear()

    def read(**values):
        for name, value in values.items():
            monkeypatch.setenv(name, value)
        config.cache_clear()
        return config()
    yield read
    config.cache_clear()


def test_defaults(env):
    cfg = env()
    assert cfg.host_snapshots is True
    assert cfg.host_snapshot_max_bytes == 64 * MiB
    assert cfg.capture_content_env is False
    assert cfg.backend == "sim"


# The contract: on unless set to something other than `true` or a non-zero number.
ON = ["true", "TRUE", "True", "1", "2", "-1", "0.5", " 1 ", "1e3", "inf"]
OFF = ["false", "0", "0.0", "-0", "no", "off", "yes", "", "nan", "0x1", "truee"]


@pytest.mark.parametrize("value", ON)
def test_host_snapshots_on(env, value):
    assert env(HIP_HRR_HOST_SNAPSHOTS=value).host_snapshots is True


@pytest.mark.parametrize("value", OFF)
def test_host_snapshots_off(env, value):
    assert env(HIP_HRR_HOST_SNAPSHOTS=value).host_snapshots is False


@pytest.mark.parametrize("value", ON)
def test_capture_content_on(env, value):
    assert env(HIP_HRR_CAPTURE_CONTENT=value).capture_content_env is True


@pytest.mark.parametrize("value", OFF)
def test_capture_content_off(env, value):
    assert env(HIP_HRR_CAPTURE_CONTENT=value).capture_content_env is False


@pytest.mark.parametrize("value,expected", [
    ("1", MiB), ("0.5", MiB // 2), ("0.001", 1048), ("128", 128 * MiB), ("0", 0),
    ("-3", 0),                                              # below zero: nothing snapshotted
    ("", 64 * MiB), ("  ", 64 * MiB), ("abc", 64 * MiB),   # not a number: the default
    ("nan", 64 * MiB), ("inf", 64 * MiB), ("-inf", 64 * MiB),  # not finite: the default
])
def test_max_mb(env, value, expected):
    assert env(HIP_HRR_HOST_SNAPSHOT_MAX_MB=value).host_snapshot_max_bytes == expected


def test_backend(env):
    assert env(HRR_BACKEND="cuda").backend == "cuda"


def test_read_once_per_process(env, monkeypatch):
    first = env(HIP_HRR_HOST_SNAPSHOTS="0", HIP_HRR_HOST_SNAPSHOT_MAX_MB="2")
    monkeypatch.setenv("HIP_HRR_HOST_SNAPSHOTS", "1")
    monkeypatch.setenv("HIP_HRR_HOST_SNAPSHOT_MAX_MB", "9")
    again = config()                       # no cache_clear: the first reading stands
    assert again is first
    assert again.host_snapshots is False and again.host_snapshot_max_bytes == 2 * MiB


def test_backend_choice_is_read_once_with_the_rest(env, monkeypatch):
    """``load_backend()`` takes HRR_BACKEND from the one read of the environment: a
    change after that read changes nothing (contract 4: each is read once)."""
    from hrr.backends import load_backend
    env(HRR_BACKEND="sim")
    monkeypatch.setenv("HRR_BACKEND", "no-such-backend")
    assert load_backend().NAME == "sim"


def test_blobs_are_packed_unless_told_otherwise(env):
    """A long capture makes a few pack files, not one file per distinct buffer."""
    assert env().pack_blobs is True
    assert env(HRR_PACK_BLOBS="0").pack_blobs is False
