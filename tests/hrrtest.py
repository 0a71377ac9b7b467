"""Test helpers: capture an in-process app into an archive, replay it, read results."""
from __future__ import annotations

import functools
import importlib
import os
from typing import Any, Callable

import attrs
import pytest

from hrr.hiptypes.mathlibs import LIBRARIES
from hrr.archive import open_archive
from hrr.backends import load_backend
from hrr.capture.session import CaptureSession
from hrr.config import config
from hrr.replay.engine import ReplayOptions
from hrr.replay.result import ProcessResult, ReplayResult, render
from hrr.replay.run import replay_archive


def fresh_backend(name: str) -> Any:
    backend = load_backend(name)
    if hasattr(backend, "reset_device"):
        backend.reset_device()
    return backend


_SESSIONS: list[Any] = []   # the sessions ``capture`` is running (innermost last)


def capture(root: str | os.PathLike, app: Callable[[Any, Any, Any], Any], *, backend: str = "sim",
            plugins: list[str] | None = None, content: bool = True, **config_overrides: Any) -> Any:
    """Run ``app(hip, hiprtc, backend_module)`` recorded into ``root``; returns app's result."""
    be = fresh_backend(backend)
    cfg = attrs.evolve(config(), backend=backend, content_mode="content" if content else None,
                       **config_overrides)
    session = CaptureSession(be, cfg, str(root), plugins=[] if plugins is None else plugins)
    _SESSIONS.append(session)
    try:
        return app(session.hip, session.hiprtc, be)
    finally:
        _SESSIONS.remove(session)
        session.close()


def libraries_of(backend: Any) -> dict[str, Any]:
    """The math libraries' modules an app under ``capture`` reaches (the session's, recorded),
    or ``backend``'s own outside a capture, by name."""
    if _SESSIONS:
        return dict(_SESSIONS[-1].libraries)
    return {name: backend.library(name) for name in LIBRARIES if backend.library(name) is not None}


def capture_libraries(root: str | os.PathLike, app: Callable[[Any, dict[str, Any]], Any], *,
                      backend: str = "sim") -> Any:
    """Run ``app(hip, libraries)`` recorded into ``root`` (``libraries``: the session's math
    library modules by name, ``hipblas``...); returns app's result."""
    return capture(root, lambda hip, rtc, be: app(hip, _SESSIONS[-1].libraries), backend=backend)


def replay(root: str | os.PathLike, *, backend: str | None = None, strict: bool = True,
           plugins: list[str] | None = None, limits: Any = None, **options: Any) -> ReplayResult:
    """Replay ``root`` in this process; returns the ReplayResult (``text(result)`` for messages)."""
    if backend is not None:
        fresh_backend(backend)
    return replay_archive(str(root), backend=backend, options=ReplayOptions(strict=strict, **options),
                          plugins=[] if plugins is None else plugins, limits=limits)


def text(result: ReplayResult) -> str:
    """The summary ``hrr replay`` would print for ``result``: for assertion messages only."""
    return "\n".join(render(result))


def only(result: ReplayResult) -> ProcessResult:
    """The result of the archive's one process."""
    (proc,) = result.processes
    return proc


def archive_calls(root: str | os.PathLike) -> list[list]:
    """Every event record of the first process archive under ``root``."""
    proc = open_archive(str(root)).processes[0]
    return [item.value for item in proc.events()]


def cpu_backends(prefix: str = "") -> list:
    """``sim`` and ``cuda`` as pytest params (``prefix`` + name, e.g. "hrr.backends."), for
    tests that need no GPU; cuda is skipped, with why, where its extra does not import."""
    out = [pytest.param(prefix + "sim", id="sim")]
    try:
        importlib.import_module("hrr.backends.cuda")
        out.append(pytest.param(prefix + "cuda", id="cuda"))
    except Exception as exc:  # noqa: BLE001 - the cuda extra is absent here
        out.append(pytest.param(prefix + "cuda", id="cuda",
                                marks=pytest.mark.skip(reason=f"cuda backend does not import: {exc}")))
    return out


@functools.lru_cache(maxsize=None)
def compiler_knows_embed() -> bool:
    """Whether the sim's C++ compiler has C23's ``#embed`` (zig's clang does; g++ before 15
    does not): tests that show what ``#embed`` would leak without the sandbox need it."""
    import subprocess  # noqa: PLC0415

    from hrr.backends.sim.native import toolchain  # noqa: PLC0415
    tc = toolchain.find_toolchain()
    if tc is None:
        return False
    probe = b"#if !defined(__has_embed)\n#error no embed\n#endif\n"
    done = subprocess.run([*tc.argv, "-fsyntax-only", "-x", "c++", "-"], input=probe, capture_output=True,
                          timeout=120, check=False)
    return done.returncode == 0
