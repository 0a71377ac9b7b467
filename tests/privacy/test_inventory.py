"""The inventory of archive data kinds, PRIVACY.md and the code agree."""
from __future__ import annotations

import re
from pathlib import Path

from hrr.inventory import CONTENT_KINDS, DATA_KINDS, KINDS_BY_NAME

ROOT = Path(__file__).resolve().parents[2]


def test_privacy_md_lists_exactly_the_registered_kinds():
    text = (ROOT / "PRIVACY.md").read_text()
    listed = dict(re.findall(r"^\| `([a-z0-9_]+)` \| (content|metadata) \|", text, flags=re.M))
    assert listed == {k.name: k.tier for k in DATA_KINDS}


def test_every_content_write_in_the_code_names_a_registered_kind():
    pattern = re.compile(r"""(?:put_blob|content_allowed)\(\s*["']([a-z0-9_]+)["']""")
    literal = re.compile(r"""["']([a-z0-9_]+)["']""")
    used: set[str] = set()
    mentioned: set[str] = set()
    for folder in ("hrr", "plugins"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == "inventory.py":
                continue
            text = path.read_text()
            used.update(pattern.findall(text))
            mentioned.update(literal.findall(text))
    assert used, "the scan must find the content writes"
    assert used - set(KINDS_BY_NAME) == set(), "unregistered data kinds are written"
    assert set(CONTENT_KINDS) - mentioned == set(), "registered content kinds that no code writes"
