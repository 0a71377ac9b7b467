"""Fixtures for the AMD code-object reader: the committed files that
scripts/build_amdgpu_fixtures.sh compiled (no compiler is needed to run these tests)."""
from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixture_bytes():
    return lambda name: (FIXTURES / name).read_bytes()
