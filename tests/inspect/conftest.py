"""Archives of examples/serving_step.py, captured once for the inspection tests."""
from __future__ import annotations

from pathlib import Path

import pytest
from inspect_helpers import EXAMPLE, describe, hrr_cli


def _capture(root: Path) -> Path:
    # Every installed plugin (pinned_snapshot, graph_capture, privacy), content on.
    proc = hrr_cli("capture", "--content", "-o", root, "--", "python", EXAMPLE)
    assert proc.returncode == 0, describe(proc)
    return root


@pytest.fixture(scope="session")
def serving_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _capture(tmp_path_factory.mktemp("serving") / "a")


@pytest.fixture(scope="session")
def serving_archive_again(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _capture(tmp_path_factory.mktemp("serving") / "b")
