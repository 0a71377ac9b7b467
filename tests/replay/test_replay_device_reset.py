"""A record after hipDeviceReset that still names an allocation from before it is refused:
replay forgot its own allocations with the reset, so it never hands the backend memory
the reset freed."""
from __future__ import annotations

from hostile import D2H, HostileArchive
from hrrtest import replay


def test_a_record_naming_memory_the_reset_freed_is_refused(tmp_path):
    a = HostileArchive(tmp_path)
    p = a.pinned(64)
    a.call("hipDeviceReset", [])
    d = a.device(64)
    a.copy(["a", p, 64, None], ["a", d, 64, None], 64, D2H)  # claims p is still tracked
    a.close()
    code, lines = replay(tmp_path, strict=True)
    text = "\n".join(lines)
    assert code == 3, text
    assert "Refused" in text and "hipMemcpy" in text, text


def test_the_same_archive_without_the_reset_replays(tmp_path):
    """The control: the copy itself is well formed while the allocation lives."""
    a = HostileArchive(tmp_path)
    p = a.pinned(64)
    d = a.device(64)
    a.copy(["a", p, 64, None], ["a", d, 64, None], 64, D2H)
    a.close()
    code, lines = replay(tmp_path, strict=False)
    assert "Refused" not in "\n".join(lines), lines
