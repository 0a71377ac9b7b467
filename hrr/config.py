"""The environment variables hrr reads, each read once per process."""
from __future__ import annotations

import functools
import math
import os

import attrs

# Set by ``hrr capture`` for the processes it records.
ARCHIVE_ENV = "HRR_CAPTURE_ARCHIVE"      # the archive directory
PLUGINS_ENV = "HRR_PLUGINS"              # comma list; unset: every installed plugin
CONTENT_MODE_ENV = "HRR_CONTENT_MODE"    # "content", "metadata-only" or unset (plugins decide)
MODE_ENV = "HRR_MODE"                    # "capture" or "run"
MAX_ARCHIVE_BYTES_ENV = "HRR_MAX_ARCHIVE_BYTES"    # per pid directory: recording stops past it
WARN_ARCHIVE_BYTES_ENV = "HRR_WARN_ARCHIVE_BYTES"  # per pid directory: one warning past it (1 GiB)
DEFAULT_WARN_ARCHIVE_BYTES = 1 << 30
PACK_BLOBS_ENV = "HRR_PACK_BLOBS"                  # small blobs into pack files during capture
SIM_DEVICE_ENV = "HRR_SIM_DEVICE"                  # the AMD GPU the sim is (hrr.backends.devicemodels)
SIM_KERNEL_TIMEOUT_ENV = "HRR_SIM_KERNEL_TIMEOUT"  # seconds a native sim kernel may run (unset: no limit)
SIM_WORKERS_ENV = "HRR_SIM_WORKERS"                # kernel workers one native launch may use (native.pool)
SIM_WORKERS_MIN_THREADS_ENV = "HRR_SIM_WORKERS_MIN_THREADS"   # threads per worker before a launch is split
NATIVE_RECORD_ENV = "HRR_NATIVE_RECORD"            # 0: record with the Python path, not the native one


# What marks a process as one ``hrr run``/``hrr capture`` started (the bootstrap acts on it).
TRACED_ENV = (MODE_ENV, ARCHIVE_ENV, PLUGINS_ENV, CONTENT_MODE_ENV)


def untraced_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment for a helper process hrr itself starts (a compiler, the
    kernel worker): without the variables that would make it record itself as the program."""
    env = {k: v for k, v in os.environ.items() if k not in TRACED_ENV}
    env.update(extra or {})
    return env


def env_flag_on(value: str | None, *, default: bool) -> bool:
    """The environment flags' rule: on when unset (if ``default``), ``true`` or a non-zero number."""
    if value is None:
        return default
    text = value.strip().lower()
    if text == "true":
        return True
    try:
        number = float(text)
    except ValueError:
        return False
    return not math.isnan(number) and number != 0  # "nan" is not a number


@attrs.frozen
class Config:
    backend: str
    host_snapshots: bool
    host_snapshot_max_bytes: int
    capture_content_env: bool        # HIP_HRR_CAPTURE_CONTENT asks for content
    content_mode: str | None         # forced by the CLI (--content / --metadata-only)
    archive: str | None
    plugins: str | None
    mode: str | None
    max_archive_bytes: int | None    # None: no cap
    warn_archive_bytes: int | None   # None: no warning
    pack_blobs: bool
    sim_device: str | None           # HRR_SIM_DEVICE as set (None: unset, the default model)
    sim_kernel_timeout: float | None = None   # HRR_SIM_KERNEL_TIMEOUT in seconds (None: no limit)
    sim_workers: str | None = None             # HRR_SIM_WORKERS as set (native.pool checks it)
    sim_workers_min_threads: str | None = None   # HRR_SIM_WORKERS_MIN_THREADS as set (likewise)


def _byte_count(value: str | None, default: int | None) -> int | None:
    """A positive whole number of bytes; unset, empty, 0 or not a number: ``default``."""
    if value is None or not value.strip():
        return default
    try:
        n = int(value.strip())
    except ValueError:
        return default
    return n if n > 0 else default


def seconds_or_none(value: str | None) -> float | None:
    """A positive, finite number of seconds; unset, empty, 0 or anything else: None (no limit)."""
    try:
        seconds = float(value) if value is not None and value.strip() else 0.0
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds > 0 else None


def _max_mb(value: str | None) -> int:
    """HIP_HRR_HOST_SNAPSHOT_MAX_MB in bytes; anything but a finite number is the default."""
    if value is None or not value.strip():
        return 64 * 1024 * 1024
    try:
        mb = float(value)
    except ValueError:
        return 64 * 1024 * 1024
    if not math.isfinite(mb):  # nan/inf would crash int() and with it every capture
        return 64 * 1024 * 1024
    return max(0, int(mb * 1024 * 1024))


@functools.cache
def config() -> Config:
    """This process's configuration, read from the environment once."""
    env = os.environ
    return Config(
        backend=env.get("HRR_BACKEND", "") or "sim",
        host_snapshots=env_flag_on(env.get("HIP_HRR_HOST_SNAPSHOTS"), default=True),
        host_snapshot_max_bytes=_max_mb(env.get("HIP_HRR_HOST_SNAPSHOT_MAX_MB")),
        capture_content_env=env_flag_on(env.get("HIP_HRR_CAPTURE_CONTENT"), default=False),
        content_mode=env.get(CONTENT_MODE_ENV) or None,
        archive=env.get(ARCHIVE_ENV) or None,
        plugins=env.get(PLUGINS_ENV),
        mode=env.get(MODE_ENV) or None,
        max_archive_bytes=_byte_count(env.get(MAX_ARCHIVE_BYTES_ENV), None),
        warn_archive_bytes=_byte_count(env.get(WARN_ARCHIVE_BYTES_ENV), DEFAULT_WARN_ARCHIVE_BYTES),
        pack_blobs=env_flag_on(env.get(PACK_BLOBS_ENV), default=True),
        sim_device=(env.get(SIM_DEVICE_ENV) or "").strip() or None,
        sim_kernel_timeout=seconds_or_none(env.get(SIM_KERNEL_TIMEOUT_ENV)),
        sim_workers=env.get(SIM_WORKERS_ENV),
        sim_workers_min_threads=env.get(SIM_WORKERS_MIN_THREADS_ENV),
    )
