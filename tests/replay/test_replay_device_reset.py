"""A record after hipDeviceReset that still names an allocation from before it is refused:
replay forgot its own allocations with the reset, so it never hands the backend memory
the reset freed."""
from __future__ import annotations

from hostile import D2H, HostileArchive
from hrrtest import only, replay, text


def test_a_record_naming_memory_the_reset_freed_is_refused(tmp_path):
    a = HostileArchive(tmp_path)
    p = a.pinned(64)
    a.call("hipDeviceReset", [])
    d = a.device(64)
    a.copy(["a", p, 64, None], ["a", d, 64, None], 64, D2H)  # claims p is still tracked
    a.close()
    result = replay(tmp_path, strict=True)
    assert result.exit_code == 1, text(result)
    assert [r.api for r in only(result).refusals] == ["hipMemcpy"], text(result)


def test_the_same_archive_without_the_reset_replays(tmp_path):
    """The control: the copy itself is well formed while the allocation lives."""
    a = HostileArchive(tmp_path)
    p = a.pinned(64)
    d = a.device(64)
    a.copy(["a", p, 64, None], ["a", d, 64, None], 64, D2H)
    a.close()
    result = replay(tmp_path, strict=False)
    assert only(result).refusals == (), text(result)
