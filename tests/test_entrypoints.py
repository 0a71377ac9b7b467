"""hrr's entry-point scan finds what importlib.metadata finds: the first distribution of
each name on the import path, every entry point of the group, none of another group."""
from __future__ import annotations

import sys
from importlib import metadata

import pytest

from hrr.entrypoints import entry_points_in

GROUP = "hrr.test_entrypoints"


def _dist(site, dist: str, text: str) -> None:
    info = site / f"{dist}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(text)


@pytest.fixture
def sites(tmp_path, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    _dist(first, "alpha", f"[console_scripts]\nalpha = alpha:main\n\n[{GROUP}]\nb = alpha:B\na = alpha:A\n")
    _dist(first, "beta", "[console_scripts]\nbeta = beta:main\n")
    # A second copy of alpha later on the path: importlib counts only the first.
    _dist(second, "alpha", f"[{GROUP}]\nshadowed = alpha_old:X\n")
    _dist(second, "Gamma.Extra", f"[{GROUP}.other]\nno = g:N\n\n[{GROUP}]\ngamma = gamma:G\n")
    monkeypatch.syspath_prepend(str(second))
    monkeypatch.syspath_prepend(str(first))
    assert sys.path.index(str(first)) < sys.path.index(str(second))


def test_the_scan_finds_what_importlib_finds(sites):
    ours = [(ep.name, ep.value, ep.group) for ep in entry_points_in(GROUP)]
    theirs = sorted((ep.name, ep.value, ep.group) for ep in metadata.entry_points(group=GROUP))
    assert ours == theirs == [("a", "alpha:A", GROUP), ("b", "alpha:B", GROUP), ("gamma", "gamma:G", GROUP)]


def test_a_group_whose_name_only_starts_another_is_not_matched(sites):
    assert [ep.name for ep in entry_points_in(f"{GROUP}.other")] == ["no"]
    assert entry_points_in("hrr.test_entrypoints_none") == []


def test_entry_points_keep_their_distribution(sites):
    (a, *_) = entry_points_in(GROUP)
    assert a.dist is not None and a.dist.version == "1.0"
