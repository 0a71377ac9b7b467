"""Clang offload bundles, plain and compressed (CCOB, zlib and zstd), around real code objects."""
from __future__ import annotations

import hashlib
import importlib.util
import struct
import sys
import tracemalloc
import zlib

import pytest

from hrr.backends.amdgpu import (BundleEntry, CodeObjectError, decompress_bundle, read_bundle, read_code_object,
                                 select_entry)
from hrr.backends.amdgpu.bundle import split_bundle_id

HAS_ZSTD = importlib.util.find_spec("zstandard") is not None or (
    sys.version_info >= (3, 14) and importlib.util.find_spec("compression.zstd") is not None)


def ccob(plain, version=2, method=0, body=None, raw_size=None, digest=None):
    """A compressed bundle written here, independently of the reader."""
    body = zlib.compress(plain) if body is None else body
    digest = struct.unpack_from("<Q", hashlib.md5(plain).digest())[0] if digest is None else digest
    raw_size = len(plain) if raw_size is None else raw_size
    if version == 1:
        return b"CCOB" + struct.pack("<HHIQ", 1, method, raw_size, digest) + body
    fmt = "<HHIIQ" if version == 2 else "<HHQQQ"
    head = 4 + struct.calcsize(fmt)
    return b"CCOB" + struct.pack(fmt, version, method, head + len(body), raw_size, digest) + body


def test_plain_bundle_entries(fixture_bytes):
    entries = read_bundle(fixture_bytes("hip_gfx90a.hipfb"))
    assert [(e.kind, e.triple, e.target, e.size > 0, e.is_amdgcn) for e in entries] == [
        ("host", "x86_64-unknown-linux-gnu", "", False, False),
        ("hipv4", "amdgcn-amd-amdhsa", "gfx90a", True, True)]
    assert entries[1].offset == 4096 and entries[1].bundle_id == "hipv4-amdgcn-amd-amdhsa--gfx90a"


def test_plain_bundle_reads_like_its_code_object(fixture_bytes):
    co = read_code_object(fixture_bytes("hip_gfx90a.co"))
    assert read_code_object(fixture_bytes("hip_gfx90a.hipfb")) == co
    assert read_code_object(fixture_bytes("hip_gfx90a.hipfb"), "gfx90a") == co


def test_compressed_zlib_bundle_picks_the_arch(fixture_bytes):
    data = fixture_bytes("hip_multi_zlib.hipfb")
    assert data[:4] == b"CCOB"
    assert read_code_object(data).processor == "gfx1030"  # the first amdgcn entry
    assert read_code_object(data, "gfx90a") == read_code_object(fixture_bytes("hip_gfx90a.co"))
    assert read_code_object(data, "gfx1030") == read_code_object(fixture_bytes("hip_gfx1030_v4.co"))
    with pytest.raises(CodeObjectError, match="decompressed bundle: no bundle entry for gfx1100; entries: host-"):
        read_code_object(data, "gfx1100")


def test_generic_target_with_dashes_in_its_name(fixture_bytes):
    co = read_code_object(fixture_bytes("hip_multi_zlib.hipfb"), "gfx10-3-generic")
    assert (co.target, co.processor) == ("amdgcn-amd-amdhsa--gfx10-3-generic", "gfx10-3-generic")
    assert [k.kernarg_segment_size for k in co.kernels] == [28, 44, 280]  # code object v6 keeps v5's hidden args


def test_compressed_zstd_bundle(fixture_bytes):
    """zstd is a dependency (zstandard, or Python 3.14's compression.zstd): an install reads
    the zstd-compressed bundles hipcc --offload-compress writes."""
    assert HAS_ZSTD
    data = fixture_bytes("hip_multi_zstd.hipfb")
    assert read_code_object(data, "gfx90a") == read_code_object(fixture_bytes("hip_gfx90a.co"))


def test_zstandard_is_a_dependency_of_the_install():
    from importlib import metadata
    requires = [r.replace(" ", "") for r in metadata.requires("hrr") or ()]
    assert any(r.startswith("zstandard>=") and "python_version<" in r for r in requires), requires


def test_zstd_without_a_module_says_so(fixture_bytes, monkeypatch):
    for name in ("zstandard", "compression", "compression.zstd"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(CodeObjectError, match=r"zstd-compressed and no zstd module .*pip install zstandard") as e:
        read_code_object(fixture_bytes("hip_multi_zstd.hipfb"))
    assert e.value.offset == 6


@pytest.mark.parametrize("version", [1, 2, 3])
def test_every_ccob_version(fixture_bytes, version):
    plain = fixture_bytes("hip_gfx90a.hipfb")
    assert decompress_bundle(ccob(plain, version)) == plain


@pytest.mark.parametrize("kwargs,words,at", [
    ({"version": 9}, "format version 9 is unknown", 4),
    ({"method": 7}, "compression method 7 is unknown", 6),
    ({"digest": 1}, "does not match the header's MD5", 16),
    ({"raw_size": 100}, "inflates to more than the 100 bytes", 24),
    ({"raw_size": 1 << 30}, "claims 1073741824 bytes uncompressed (limit", 12),
    ({"body": b"\x78\x9c\xff\xff"}, "zlib stream is corrupt", 24),
    ({"body": zlib.compress(b"x" * 5000)[:-30]}, "zlib stream is corrupt", 24),
])
def test_bad_compressed_bundles(fixture_bytes, kwargs, words, at):
    with pytest.raises(CodeObjectError) as e:
        decompress_bundle(ccob(fixture_bytes("hip_gfx90a.hipfb"), **kwargs))
    assert words in str(e.value) and e.value.offset == at


def test_decompression_is_capped():
    # 32 KiB of zlib that claims 1000 bytes and would inflate to 32 MiB: never inflated whole.
    bomb = ccob(b"\0" * (32 << 20), raw_size=1000)
    tracemalloc.start()
    try:
        with pytest.raises(CodeObjectError, match="inflates to more than the 1000 bytes"):
            decompress_bundle(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    with pytest.raises(CodeObjectError, match="limit 4096"):
        decompress_bundle(ccob(b"\0" * 8192), max_size=4096)


def test_file_size_past_the_input(fixture_bytes):
    data = bytearray(fixture_bytes("hip_multi_zlib.hipfb"))
    struct.pack_into("<I", data, 8, len(data) + 1)
    with pytest.raises(CodeObjectError, match=f"claims {len(data) + 1} bytes; the input has {len(data)}"):
        read_code_object(bytes(data))


def test_entry_past_the_end(fixture_bytes):
    data = bytearray(fixture_bytes("hip_gfx90a.hipfb"))
    second = 24 + 8 + 24 + len("host-x86_64-unknown-linux-gnu-")
    struct.pack_into("<Q", data, second + 8, 1 << 62)
    with pytest.raises(CodeObjectError, match=r"bundle entry 1 \(hipv4-amdgcn-amd-amdhsa--gfx90a\) data of") as e:
        read_code_object(bytes(data))
    assert e.value.offset == 4096


def test_errors_inside_an_entry_carry_its_offset(fixture_bytes):
    data = bytearray(fixture_bytes("hip_gfx90a.hipfb"))
    data[4096 + 0x12] = 0  # e_machine of the gfx90a code object
    with pytest.raises(CodeObjectError, match="bundle entry 'hipv4-amdgcn-amd-amdhsa--gfx90a': ELF machine") as e:
        read_code_object(bytes(data))
    assert e.value.offset == 4096 + 0x12


@pytest.mark.parametrize("bundle_id,want", [
    ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", ("hipv4", "amdgcn-amd-amdhsa", "gfx90a:xnack-")),
    ("hip-amdgcn-amd-amdhsa-gfx906", ("hip", "amdgcn-amd-amdhsa", "gfx906")),
    ("openmp-amdgcn-amd-amdhsa--gfx1100:sramecc+:xnack+", ("openmp", "amdgcn-amd-amdhsa", "gfx1100:sramecc+:xnack+")),
    ("host-x86_64-unknown-linux-gnu-", ("host", "x86_64-unknown-linux-gnu", "")),
    ("hipv4-amdgcn-amd-amdhsa--gfx9-4-generic:xnack-", ("hipv4", "amdgcn-amd-amdhsa", "gfx9-4-generic:xnack-")),
    ("", ("", "", ""))])
def test_split_bundle_id(bundle_id, want):
    assert split_bundle_id(bundle_id) == want


def entries(*targets):
    ids = [f"hipv4-amdgcn-amd-amdhsa--{t}" for t in targets]
    return tuple(BundleEntry(i, 64, 8, *split_bundle_id(i)) for i in ids)


@pytest.mark.parametrize("targets,arch,want", [
    (("gfx90a:xnack+", "gfx90a:xnack-", "gfx90a"), "gfx90a:xnack-", "gfx90a:xnack-"),
    (("gfx90a:xnack+", "gfx90a:xnack-", "gfx90a"), "gfx90a", "gfx90a"),
    (("gfx90a:xnack+", "gfx90a:xnack-"), "gfx90a:sramecc+", "gfx90a:xnack+"),
    (("gfx90a", "gfx942"), "gfx942:sramecc+:xnack-", "gfx942"),
    (("gfx1030", "gfx90a"), None, "gfx1030")])
def test_select_entry(targets, arch, want):
    assert select_entry(entries(*targets), arch).target == want


def test_select_entry_refuses_a_contradicting_feature():
    with pytest.raises(CodeObjectError, match="no bundle entry for gfx90a:xnack-; entries: .*gfx90a:xnack\\+"):
        select_entry(entries("gfx90a:xnack+"), "gfx90a:xnack-")
    host = (BundleEntry("host-x86_64-unknown-linux-gnu-", 0, 0, *split_bundle_id("host-x86_64-unknown-linux-gnu-")),)
    with pytest.raises(CodeObjectError, match=r"no bundle entry \(amdgcn, non-empty\); entries: host-"):
        select_entry(host)


@pytest.mark.parametrize("mutate,words", [
    (lambda d: d[:30], "bundle entry count of 8 bytes runs past"),
    (lambda d: d[:24] + struct.pack("<Q", 1 << 40) + d[32:], "claims 1099511627776 entries"),
    (lambda d: d[:48] + struct.pack("<Q", 1 << 20) + d[56:], "id claims 1048576 bytes"),
    (lambda d: d[:56] + b"\xff" + d[57:], "id is not ASCII"),
    (lambda d: d[:56] + b"\n" + d[57:], "control characters")])
def test_bad_plain_bundle(fixture_bytes, mutate, words):
    with pytest.raises(CodeObjectError, match="offset 0x") as e:
        read_code_object(mutate(fixture_bytes("hip_gfx90a.hipfb")))
    assert words in str(e.value)
