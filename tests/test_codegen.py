"""hrr/codegen.py: lazy functions are written and compiled at their first call, keep their
identity, and run the compiled body directly afterwards."""
from __future__ import annotations

import threading

from hrr import codegen
from hrr.codegen import SOURCE_ATTR, function_source, lazy_function, source_of


def _counting_source(made: list) -> callable:
    def make() -> str:
        made.append(1)
        return function_source("f", ["*args", "**kwargs"], ["return (_k, args, kwargs)"])
    return make


def test_a_lazy_function_is_compiled_at_its_first_call_only():
    made: list = []
    f = lazy_function("f", _counting_source(made), {"_k": 7}, "test f")
    assert made == [] and getattr(f, SOURCE_ATTR, None) is None
    held = f                                   # somebody keeps the object before the first call
    assert f(1, x=2) == (7, (1,), {"x": 2}) and made == [1]
    assert held(3) == (7, (3,), {}) and made == [1]
    assert held.__code__ is not codegen._TRAMPOLINE_CODE and held.__code__.co_name == "f"
    assert "return (_k, args, kwargs)" in source_of(f)


def test_source_of_builds_a_lazy_function():
    made: list = []
    f = lazy_function("f", _counting_source(made), {"_k": 1})
    assert "def f(*args, **kwargs):" in source_of(f) and made == [1]
    assert f() == (1, (), {}) and made == [1]


def test_threads_calling_first_get_the_same_results():
    made: list = []
    f = lazy_function("f", _counting_source(made), {"_k": 2})
    out: list = []
    go = threading.Barrier(8)

    def call(i: int) -> None:
        go.wait()
        out.append(f(i))
    threads = [threading.Thread(target=call, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(out) == [(2, (i,), {}) for i in range(8)] and 1 <= len(made) <= 8


def test_capture_compiles_a_wrapper_only_once_its_call_is_made(tmp_path):
    import attrs

    from hrr.capture.session import CaptureSession
    from hrr.config import config
    from hrrtest import fresh_backend
    be = fresh_backend("sim")
    s = CaptureSession(be, attrs.evolve(config(), backend="sim"), str(tmp_path / "a"), plugins=[])
    try:
        assert getattr(s.hip.hipGetDevice, SOURCE_ATTR, None) is None
        assert getattr(s.hip.hipMalloc, SOURCE_ATTR, None) is None
        assert s.hip.hipGetDevice()[0] == 0
        assert "append_call" in getattr(s.hip.hipGetDevice, SOURCE_ATTR)
        assert getattr(s.hip.hipMalloc, SOURCE_ATTR, None) is None
    finally:
        s.close()
