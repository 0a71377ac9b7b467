"""``hrr cache info`` and ``hrr cache clear``: the sim's cache of compiled native kernel images."""
from __future__ import annotations

import json

import click


@click.group()
def cache() -> None:
    """The cache of native kernel images the sim compiles (HRR_CACHE_DIR,
    HRR_CACHE_MAX_BYTES)."""


@cache.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of text.")
def info(as_json: bool) -> None:
    """Where the cache is, how many entries and bytes it holds, and its limit."""
    from hrr import imagecache
    facts = imagecache.info()
    if as_json:
        click.echo(json.dumps(facts))
        return
    if facts["folder"] is None:
        click.echo("Cache: none usable (the folder cannot be made, or is not this user's alone)")
        return
    click.echo(f"Cache: {facts['folder']}")
    click.echo(f"Entries: {facts['entries']}, {facts['bytes']} bytes of at most {facts['max_bytes']} "
               f"({imagecache.MAX_BYTES_ENV})")


@cache.command()
def clear() -> None:
    """Remove every cached image."""
    from hrr import imagecache
    click.echo(f"Removed {imagecache.clear()} cached images")
