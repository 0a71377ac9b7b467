"""Making ``from hip import hip, hiprtc`` resolve to an hrr backend, recorded or not.

``hrr run`` and ``hrr capture`` put ``bootstrap/`` on PYTHONPATH; its sitecustomize
calls ``activate_from_env`` in every Python process started under them.
"""
from __future__ import annotations

import os
import sys
import types
from typing import Any

from hrr.backends import load_backend
from hrr.config import config

_active: dict[str, Any] = {}


def install_hip_package(hip_module: types.ModuleType, hiprtc_module: types.ModuleType) -> None:
    """Make ``hip``, ``hip.hip`` and ``hip.hiprtc`` these modules, even where
    hip-python is installed."""
    pkg: Any = types.ModuleType("hip", doc="hip-python's package, provided by hrr")
    pkg.__path__ = []  # a package, so that "import hip.hip" works
    pkg.hip = hip_module
    pkg.hiprtc = hiprtc_module
    sys.modules["hip"] = pkg
    sys.modules["hip.hip"] = hip_module
    sys.modules["hip.hiprtc"] = hiprtc_module


def activate(mode: str, backend_name: str | None = None) -> Any:
    """Select the backend for this process; in ``capture`` mode also start recording.
    Returns the capture session (or None for ``run``)."""
    from hrr.capture.exits import install_exit_handlers, setting_up
    from hrr.capture.session import CaptureSession

    cfg = config()
    backend = load_backend(backend_name or cfg.backend)
    session = None
    hip_module = backend.hip
    if mode == "capture":
        if not cfg.archive:
            raise RuntimeError("HRR_CAPTURE_ARCHIVE is not set")
        with setting_up():    # a SIGTERM now is acted on once the archive can be closed
            session = CaptureSession(backend, cfg, cfg.archive)
            os.register_at_fork(after_in_child=session.after_fork_in_child)
            install_exit_handlers(session)   # exit, SIGTERM/SIGHUP/SIGINT, multiprocessing children
        hip_module = session.hip
    install_hip_package(hip_module, backend.hiprtc)
    _active["session"] = session
    return session


def activate_from_env() -> None:
    """Entry point of the bootstrap sitecustomize."""
    mode = config().mode
    if mode in ("capture", "run"):
        activate(mode)


def current_session() -> Any:
    """The capture session of this process, if capture is active."""
    return _active.get("session")
