"""Making ``from hip import hip, hiprtc`` (and ``hipblas``, ...) resolve to an hrr backend,
recorded or not.

``hrr run`` and ``hrr capture`` put ``bootstrap/`` on PYTHONPATH; its sitecustomize
calls ``activate_from_env`` in every Python process started under them.
"""
from __future__ import annotations

import os
from typing import Any

from hrr.backends import load_backend
from hrr.backends.releases import release_modules
from hrr.capture.bindings import install_hip_package
from hrr.capture.exits import install_exit_handlers, setting_up
from hrr.config import config
from hrr.hiptypes.mathlibs import LIBRARIES

_active: dict[str, Any] = {}


def activate(mode: str, backend_name: str | None = None) -> Any:
    """Select the backend for this process; in ``capture`` mode also start recording.
    Returns the capture session (or None for ``run``)."""
    cfg = config()
    backend = load_backend(backend_name or cfg.backend)
    session = None
    hip_module, hiprtc_module = backend.hip, backend.hiprtc
    libraries = {name: module for name in LIBRARIES if (module := backend.library(name)) is not None}
    if mode == "capture":
        if not cfg.archive:
            raise RuntimeError("HRR_CAPTURE_ARCHIVE is not set")
        # Start-up cost: the recorder, the plugin manager and the roles load only when
        # recording (``hrr run``'s processes never need them).
        from hrr.capture.session import CaptureSession
        with setting_up():    # a SIGTERM now is acted on once the archive can be closed
            session = CaptureSession(backend, cfg, cfg.archive)
            os.register_at_fork(after_in_child=session.after_fork_in_child)
            install_exit_handlers(session)   # exit, SIGTERM/SIGHUP/SIGINT, multiprocessing children
        hip_module, hiprtc_module, libraries = session.hip, session.hiprtc, session.libraries
    # Each spelling mirrors the release installed under it (7.x's ``hip`` beside 10.x's
    # ``rocm.bindings``: one each). hip-python's own modules (the hip backend) need adapting
    # only to a release they are not; their calls hrr does not implement stay hip-python's.
    itself = backend.HIP_PYTHON_ITSELF
    passthrough = _passthrough(session) if itself else None
    spellings = release_modules(hip_module, hiprtc_module, itself=itself, passthrough=passthrough)
    install_hip_package(*spellings["rocm.bindings"], classic=spellings["hip"], libraries=libraries)
    _active["session"] = session
    return session


def _passthrough(session: Any) -> Any:
    """For hip-python's own functions of another release (7.x's beside 10.x's, on the hip
    backend): each as it is, recorded as an uncatalogued call when capturing."""
    if session is None:
        return lambda name, fn: fn
    from hrr.capture.recorder import Recorder   # start-up cost: only when recording
    recorder = Recorder(session)
    return recorder._passthrough


def activate_from_env() -> None:
    """Entry point of the bootstrap sitecustomize."""
    mode = config().mode
    if mode in ("capture", "run"):
        activate(mode)


def current_session() -> Any:
    """The capture session of this process, if capture is active."""
    return _active.get("session")
