"""The documents' relative links lead somewhere: every ``[text](path#anchor)`` in README.md,
DESIGN.md, PRIVACY.md, CHANGELOG.md and docs/*.md names a file that exists and, with an
anchor, a heading in it. DESIGN.md stays an overview (the references live in docs/)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([ROOT / n for n in ("README.md", "DESIGN.md", "PRIVACY.md", "CHANGELOG.md")]
              + list((ROOT / "docs").glob("*.md")))
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def _slug(heading: str) -> str:
    # GitHub's anchors: lower case, punctuation other than - and _ dropped, spaces to -.
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text())
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.*)$", text, re.M)}


def _links(path: Path) -> list[str]:
    return [t for t in LINK.findall(FENCE.sub("", path.read_text()))
            if not re.match(r"[a-z]+:", t)]


@pytest.mark.parametrize("doc", [d for d in DOCS if d.exists()], ids=lambda d: str(d.relative_to(ROOT)))
def test_relative_links_resolve(doc):
    broken = []
    for target in _links(doc):
        file, _, anchor = target.partition("#")
        dest = (doc.parent / file).resolve() if file else doc
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading with that anchor")
    assert broken == []


def test_slug_matches_githubs():
    assert _slug("Reader: threat model") == "reader-threat-model"
    assert _slug("Threat model (replaying an untrusted archive)") == "threat-model-replaying-an-untrusted-archive"
    assert _slug("Writer: speed, crash resilience, fork") == "writer-speed-crash-resilience-fork"


def test_design_is_an_overview():
    # Issue 9: DESIGN.md is the architecture a newcomer needs (about 10 KB); references go to docs/.
    assert len((ROOT / "DESIGN.md").read_bytes()) <= 11_000, "move reference material to docs/"
