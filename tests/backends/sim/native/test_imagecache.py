"""The image cache cannot be poisoned: keys are unambiguous, entries are checked against their
key and digest, links and other users' files are not used, and it is bounded (LRU)."""
from __future__ import annotations

import os

import numpy as np
import pytest
from click.testing import CliRunner
from nativerun import Loaded

from hrr import imagecache
from hrr.backends.sim.native import policy, toolchain
from hrr.backends.sim.native.toolchain import SourceUnit, compile_program, find_toolchain
from hrr.cli.main import cli

KERNEL = b'#include "x.h"\nextern "C" __global__ void k(int *x) { x[0] = X; }\n'


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("HRR_CACHE_DIR", str(folder))
    return folder


def _entry(folder, image):
    (path,) = [p for p in folder.glob("*.img") if image in p.read_bytes()]
    return path


def test_units_and_headers_never_share_a_key():
    """Two units (k.hip, x.h) and one unit k.hip with header x.h were one key before."""
    tc = toolchain.Toolchain(("cc",), "cc 1", "gcc")
    two_units = (SourceUnit("k.hip", KERNEL), SourceUnit("x.h", b"#define X 1\n"))
    with_header = (SourceUnit("k.hip", KERNEL, (("x.h", b"#define X 1\n"),)),)
    key = toolchain._cache_key
    keys = {key(tc, two_units, (), (), 64), key(tc, with_header, (), (), 64), key(tc, with_header, ("x.h",), (), 64),
            key(tc, with_header, (), ("x.h",), 64), key(tc, with_header, (), (), 32),
            key(toolchain.Toolchain(("cc",), "cc 2", "gcc"), with_header, (), (), 64)}
    assert len(keys) == 6


@pytest.mark.skipif(find_toolchain() is None, reason="no C++ compiler")
def test_an_entry_copied_under_another_key_is_not_used(cache):
    a = compile_program([SourceUnit("a.hip", b'extern "C" __global__ void k(int *x) { x[0] = 1; }\n')], [])
    b_unit = SourceUnit("b.hip", b'extern "C" __global__ void k(int *x) { x[0] = 2; }\n')
    b = compile_program([b_unit], [])
    a_path, b_path = _entry(cache, a.image), _entry(cache, b.image)
    b_path.write_bytes(a_path.read_bytes())          # a poisoner plants a's image as b's
    assert imagecache.get(b_path.name[:-4], 1 << 30) is None
    again = compile_program([b_unit], [])
    x = np.zeros(1, dtype=np.int32)
    assert again.ok and Loaded(again.image).launch("k", [x]) == 0 and x[0] == 2


@pytest.mark.skipif(find_toolchain() is None, reason="no C++ compiler")
def test_links_and_entries_writable_by_others_are_not_used(cache, tmp_path):
    a = compile_program([SourceUnit("a.hip", b'extern "C" __global__ void k(int *x) { x[0] = 1; }\n')], [])
    path = _entry(cache, a.image)
    name = path.name[:-4]
    assert imagecache.get(name, 1 << 30) == a.image
    os.chmod(path, 0o666)
    assert imagecache.get(name, 1 << 30) is None
    os.chmod(path, 0o600)
    elsewhere = tmp_path / "elsewhere.img"
    os.replace(path, elsewhere)
    os.symlink(elsewhere, path)
    assert imagecache.get(name, 1 << 30) is None
    os.unlink(path)
    os.link(elsewhere, path)                          # a second name for the same file
    assert imagecache.get(name, 1 << 30) is None


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file another user's needs root")
@pytest.mark.skipif(find_toolchain() is None, reason="no C++ compiler")
def test_an_entry_or_a_folder_owned_by_another_user_is_not_used(cache):
    a = compile_program([SourceUnit("a.hip", b'extern "C" __global__ void k(int *x) { x[0] = 1; }\n')], [])
    path = _entry(cache, a.image)
    os.chown(path, 4242, 4242)
    assert imagecache.get(path.name[:-4], 1 << 30) is None
    os.chown(cache, 4242, 4242)
    assert imagecache.cache_dir() is None


def test_a_folder_writable_by_others_is_not_used(cache):
    cache.mkdir()
    os.chmod(cache, 0o777)
    assert imagecache.cache_dir() is None
    os.chmod(cache, 0o700)
    assert imagecache.cache_dir() == cache


def test_least_recently_used_entries_go_past_the_limit(cache, monkeypatch):
    monkeypatch.setenv(imagecache.MAX_BYTES_ENV, str(3 * (1000 + imagecache.HEADER)))
    keys = [imagecache.key([("test", str(i))]) for i in range(5)]
    for i, k in enumerate(keys):
        imagecache.put(k, bytes([i]) * 1000)
        os.utime(cache / f"{k}.img", (i, i))
        if i == 1:
            assert imagecache.get(keys[0], 1 << 20) is not None   # keys[0] used again: newest
    assert [imagecache.get(k, 1 << 20) is not None for k in keys] == [True, False, False, True, True]
    assert imagecache.info()["entries"] == 3


def test_an_entry_over_the_budget_is_not_read(cache):
    k = imagecache.key([("test", "big")])
    imagecache.put(k, b"x" * 5000)
    assert imagecache.get(k, 4999) is None and imagecache.get(k, 5000) == b"x" * 5000


@pytest.mark.skipif(find_toolchain() is None, reason="no C++ compiler")
def test_an_image_over_the_host_budget_leaves_nothing_in_the_cache(cache):
    class Budget:
        cap, used = 64 << 20, 0
    src = b"__device__ char big[200 << 20] = {1};\n" + b'extern "C" __global__ void k(char *x) { x[0] = big[0]; }\n'
    with policy.archive_kernels(False, budget=Budget()):
        result = compile_program([SourceUnit("big.hip", src)], [])
    assert not result.ok
    assert sum(p.stat().st_size for p in cache.rglob("*") if p.is_file()) < 1 << 20


def test_hrr_cache_info_and_clear(cache):
    imagecache.put(imagecache.key([("test", "1")]), b"abc")
    runner = CliRunner()
    out = runner.invoke(cli, ["cache", "info"])
    assert out.exit_code == 0 and str(cache) in out.output and "Entries: 1" in out.output
    out = runner.invoke(cli, ["cache", "clear"])
    assert out.exit_code == 0 and "Removed 1" in out.output
    assert "Entries: 0" in runner.invoke(cli, ["cache", "info"]).output
