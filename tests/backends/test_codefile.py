"""hipModuleLoad's file, read one way everywhere (backends and capture)."""
from __future__ import annotations

import pytest

from hrr.hiptypes.codefile import code_file_path, read_code_file


def test_a_path_as_str_bytes_or_a_nul_terminated_buffer(tmp_path):
    f = tmp_path / "k.co"
    f.write_bytes(b"\x7fELF code")
    for name in (str(f), str(f).encode(), bytearray(str(f).encode() + b"\0junk")):
        assert code_file_path(name) == str(f)
        assert read_code_file(name) == b"\x7fELF code"


def test_a_limit_reads_one_byte_past_it_and_a_missing_file_is_oserror(tmp_path):
    f = tmp_path / "big.co"
    f.write_bytes(b"x" * 100)
    assert len(read_code_file(f.as_posix(), limit=10)) == 11
    with pytest.raises(OSError):
        read_code_file(tmp_path / "nothere.co")
