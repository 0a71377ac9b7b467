"""README reads as a user's document: no table cell longer than about a paragraph (the
detail is in docs/commands.md), no words of the project's own process, the dependencies
that make most of the install named with its size, and where hrr writes named."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
DOCS = [ROOT / "README.md", ROOT / "DESIGN.md", *sorted((ROOT / "docs").glob("*.md"))]
MAX_CELL = 420


def test_no_table_cell_is_longer_than_a_paragraph():
    long = []
    for n, line in enumerate(README.splitlines(), 1):
        if line.startswith("|"):
            long += [(n, len(c)) for c in re.split(r"(?<!\\)\|", line)[1:-1] if len(c.strip()) > MAX_CELL]
    assert not long, f"README.md table cells over {MAX_CELL} characters (line, length): {long}"


def test_no_internal_words():
    found = [f"{p.name}:{n}" for p in DOCS for n, line in enumerate(p.read_text().splitlines(), 1)
             if re.search(r"\bthe brief\b|\bbrief's\b|\bissue \d+\b|second stop", line, re.I)]
    assert not found, found


def test_dependencies_and_install_size_are_named():
    deps = README[README.index("The core is enough for the sim backend"):][:900]
    for name in ("hip-python", "xxhash", "rich", "ziglang", "du -sh", "MB"):
        assert name in deps, name
    assert "~/.cache/hrr/kernels" in README and "HRR_CACHE_DIR" in README
    assert not re.search(r"sim (cannot|can't) run hiprtc", README)
