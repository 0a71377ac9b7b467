"""The entry points of one group, found the way ``importlib.metadata.entry_points(group=...)``
finds them, at a fraction of its start-up cost.

``importlib.metadata`` parses every installed distribution's ``entry_points.txt`` into
objects before selecting the group: on an image with a few hundred distributions that is
tens of milliseconds in every process hrr records. Here a distribution's file is parsed only
when its text names the group; which distributions count (the first of each normalized name
on the import path) is importlib's own rule."""
from __future__ import annotations

from importlib import metadata


def _normalized_name(dist: metadata.Distribution) -> str:
    name = getattr(dist, "_normalized_name", None)   # importlib's key for "the first of each name"
    if isinstance(name, str):
        return name
    return (dist.metadata["Name"] or "").lower().replace("-", "_").replace(".", "_")


def entry_points_in(group: str) -> list[metadata.EntryPoint]:
    """Every entry point of ``group``, sorted by name; each distribution counted once."""
    header = f"[{group}]"
    seen: set[str] = set()
    found: list[metadata.EntryPoint] = []
    for dist in metadata.distributions():
        key = _normalized_name(dist)
        if key in seen:
            continue
        seen.add(key)
        text = dist.read_text("entry_points.txt")
        if text and header in text:
            found.extend(ep for ep in dist.entry_points if ep.group == group)
    return sorted(found, key=lambda ep: ep.name)
