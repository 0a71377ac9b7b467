"""hrr/replay/runs.py: which records a run of equal launches takes (the C ``equal_run`` and
the Python one must agree on every case), and ``repeat_launch``."""
from __future__ import annotations

import pytest

from hrr.replay import native
from hrr.replay.runs import equal_run, python_equal_run, repeat_launch

EXT, WHY = native.extension()
IMPLEMENTATIONS = [pytest.param(python_equal_run, id="python"),
                   pytest.param(EXT.equal_run if EXT is not None else None, id="c",
                                marks=pytest.mark.skipif(EXT is None, reason=f"not built: {WHY}"))]

LAUNCH = {"launch": ["fill_u32", [1, 1, 1], [4, 1, 1], b"\x00" * 16, [[0, 4096, 0]]]}
TEMPLATE = [7, 1, "hipModuleLaunchKernel", [5, 1, 1, 1, 4, 1, 1, 0, 0, None, None], 0, [], LAUNCH]


def _record(seq: int, **change) -> tuple:
    value = [seq, 1, "hipModuleLaunchKernel", [5, 1, 1, 1, 4, 1, 1, 0, 0, None, None], 0, [],
             {"launch": ["fill_u32", [1, 1, 1], [4, 1, 1], b"\x00" * 16, [[0, 4096, 0]]]}]
    for at, v in change.items():
        value[int(at[1:])] = v
    return (seq, seq * 100, value)


# records not taken: each one stops the run where it stands
NOT_TAKEN = [
    ("another thread", _record(8, f1=2)),
    ("another call", _record(8, f2="hipLaunchKernel")),
    ("a float where the int was", _record(8, f3=[5, 1.0, 1, 1, 4, 1, 1, 0, 0, None, None])),
    ("True where 1 was", _record(8, f3=[5, True, 1, 1, 4, 1, 1, 0, 0, None, None])),
    ("another argument", _record(8, f3=[5, 2, 1, 1, 4, 1, 1, 0, 0, None, None])),
    ("a shorter argument list", _record(8, f3=[5, 1, 1, 1, 4, 1, 1, 0, 0, None])),
    ("an error recorded", _record(8, f4=1)),
    ("an output recorded", _record(8, f5=[1])),
    ("other kernarg bytes", _record(8, f6={"launch": ["fill_u32", [1, 1, 1], [4, 1, 1], b"\x01" + b"\x00" * 15,
                                                      [[0, 4096, 0]]]})),
    ("a bytearray for the bytes", _record(8, f6={"launch": ["fill_u32", [1, 1, 1], [4, 1, 1],
                                                            bytearray(16), [[0, 4096, 0]]]})),
    ("another pointer word", _record(8, f6={"launch": ["fill_u32", [1, 1, 1], [4, 1, 1], b"\x00" * 16,
                                                       [[0, 4096, 8]]]})),
    ("plugin records beside the launch", _record(8, f6={**LAUNCH, "records": {"x": [1]}})),
    ("the launch under another key", _record(8, f6={"launch2": LAUNCH["launch"]})),
    ("a tuple for a list", _record(8, f3=(5, 1, 1, 1, 4, 1, 1, 0, 0, None, None))),
    ("a negative seq", _record(-1)),
    ("a seq that is a float", (8, 800, [8.0, *_record(8)[2][1:]])),
    ("a seq that is a bool", (8, 800, [True, *_record(8)[2][1:]])),
    ("a short record", (8, 800, _record(8)[2][:6])),
    ("a tuple record", (8, 800, tuple(_record(8)[2]))),
    ("an item that is not a triple", (8, _record(8)[2])),
    ("a refused record", object()),
]


@pytest.mark.parametrize("run", IMPLEMENTATIONS)
def test_equal_records_are_taken_up_to_the_first_that_is_not(run):
    items = iter([_record(8), _record(9), _record(1 << 64 - 1), _record(11, f2="hipDeviceSynchronize"), _record(12)])
    count, item = run(items, TEMPLATE, 100)
    assert count == 3 and item[2][2] == "hipDeviceSynchronize"
    assert next(items)[0] == 12          # nothing past the stopping item was taken


@pytest.mark.parametrize("run", IMPLEMENTATIONS)
@pytest.mark.parametrize("label, record", NOT_TAKEN, ids=[n for n, _ in NOT_TAKEN])
def test_a_record_unlike_the_template_stops_the_run(run, label, record):
    count, item = run(iter([_record(8), record, _record(10)]), TEMPLATE, 100)
    assert count == 1 and item is record


@pytest.mark.parametrize("run", IMPLEMENTATIONS)
def test_the_limit_and_the_end_stop_it_with_nothing_left_over(run):
    items = iter([_record(s) for s in range(8, 20)])
    assert run(items, TEMPLATE, 5) == (5, None)
    assert next(items)[0] == 13
    assert run(items, TEMPLATE, 100) == (6, None)
    assert run(iter([]), TEMPLATE, 100) == (0, None)
    assert run(iter([_record(8)]), TEMPLATE, 0) == (0, None)


@pytest.mark.parametrize("run", IMPLEMENTATIONS)
def test_deep_values_are_compared_to_a_bound_and_not_taken_past_it(run):
    def deep(levels: int) -> list:
        value: list = []
        for _ in range(levels):
            value = [value]
        return value
    template = [7, 1, "x", [deep(100)], 0, [], {}]
    record = (8, 0, [8, 1, "x", [deep(100)], 0, [], {}])   # equal, but not the same object
    assert run(iter([record]), template, 10) == (0, record)   # past 32 levels: not taken (the runner checks it)
    shallow = (8, 0, [8, 1, "x", [deep(20)], 0, [], {}])
    assert run(iter([shallow]), [7, 1, "x", [deep(20)], 0, [], {}], 10) == (1, None)


@pytest.mark.parametrize("run", IMPLEMENTATIONS)
def test_a_template_that_is_not_a_record_is_an_error(run):
    with pytest.raises(ValueError, match="wire record"):
        run(iter([]), TEMPLATE[:6], 1)


def test_the_c_one_is_used_where_it_builds():
    assert equal_run() is (EXT.equal_run if EXT is not None else python_equal_run)


class Flaky:
    """A prepared launch failing at its calls numbered in ``fail_at`` (from 0)."""

    def __init__(self, fail_at: set[int]) -> None:
        self.calls, self.fail_at = 0, fail_at

    def __call__(self) -> tuple:
        self.calls += 1
        return (719,) if self.calls - 1 in self.fail_at else (0,)


def test_repeat_launch_makes_it_n_times_and_stops_at_a_failure():
    ok = Flaky(set())
    assert repeat_launch(ok, 4) == (4, (0,)) and ok.calls == 4
    bad = Flaky({2})
    assert repeat_launch(bad, 5) == (2, (719,)) and bad.calls == 3


def test_repeat_launch_uses_the_backends_own_repeat():
    class Prepared:
        def repeat(self, n):
            return n, ("done",)

        def __call__(self):
            raise AssertionError("repeat was not used")
    assert repeat_launch(Prepared(), 9) == (9, ("done",))
