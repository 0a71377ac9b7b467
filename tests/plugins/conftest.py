"""Fixtures for the plugin tests: programmatic capture and replay on the sim.

``cap(app, plugins=..., **config)`` records ``app(hip, be)`` into a fresh archive directory
and returns it; ``rep(root, plugins=..., limits=...)`` replays it in this process and
returns the ReplayResult.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))

import pinned_helpers as ph

BOTH = ["pinned_snapshot", "graph_capture"]


def _backend(request) -> str:
    # A test that asks for ``backend_name`` runs on every available backend (the sim
    # always, cuda where a GPU is present); the others run on the sim.
    return request.getfixturevalue("backend_name") if "backend_name" in request.fixturenames else "sim"


@pytest.fixture
def cap(tmp_path, request):
    counter = iter(range(1000))
    backend = _backend(request)

    def run(app, plugins=BOTH, **overrides):
        root = tmp_path / f"arch{next(counter)}"
        ph.capture(root, app, plugins=plugins, backend=backend, **overrides)
        return root
    return run


@pytest.fixture
def rep(request):
    backend = _backend(request)

    def run(root, plugins=None, limits=None, strict=True):
        return ph.replay(root, plugins=plugins, limits=limits, strict=strict, backend=backend)
    return run
