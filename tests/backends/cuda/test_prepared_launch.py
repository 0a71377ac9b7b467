"""hrr.backends.cuda.native's PreparedLaunch, against a stand-in for cuLaunchKernel (a ctypes
callback): the arguments and bytes the driver is handed, what a result becomes, bad input."""
from __future__ import annotations

import ctypes

import pytest

from hrr.backends.cuda.native import extension

EXT, WHY = extension()
pytestmark = pytest.mark.skipif(EXT is None, reason=f"the prepared-launch extension was not built: {WHY}")

LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *([ctypes.c_uint] * 7), ctypes.c_void_p, ctypes.c_void_p,
                          ctypes.POINTER(ctypes.c_void_p))


class FakeDriver:
    """cuLaunchKernel as a callback: keeps what each call was handed; answers ``result``."""

    def __init__(self, result: int = 0) -> None:
        self.calls: list[tuple] = []
        self.result = result
        self.fn = LAUNCH(self._launch)
        self.address = ctypes.cast(self.fn, ctypes.c_void_p).value

    def _launch(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        words = [extra[i] or 0 for i in range(5)]
        assert words[0] == 1 and words[2] == 2 and words[4] == 0   # BUFFER_POINTER, BUFFER_SIZE, END
        size = ctypes.c_size_t.from_address(words[3]).value
        data = ctypes.string_at(words[1], size)
        self.calls.append((f or 0, (gx, gy, gz), (bx, by, bz), shared, stream or 0, params, data))
        return self.result


def _prepared(driver: FakeDriver, kernargs: bytes = b"\x01" * 8 + b"\x02" * 4, **over):
    args = dict(launch=driver.address, function=0x1234, grid=(3, 2, 1), block=(64, 1, 1), shared=128,
                stream=0x5678, kernargs=kernargs, ok=("ok",), on_error=lambda r: ("err", r))
    args.update(over)
    return EXT.PreparedLaunch(**args)


def test_a_call_hands_the_driver_the_launch_and_a_copy_of_the_bytes():
    driver = FakeDriver()
    data = bytearray(b"\x07" * 16)
    p = _prepared(driver, kernargs=bytes(data))
    data[:] = b"\0" * 16            # the object keeps its own copy
    assert p() == ("ok",) and p() == ("ok",)
    assert driver.calls == [(0x1234, (3, 2, 1), (64, 1, 1), 128, 0x5678, None, b"\x07" * 16)] * 2
    assert p.size == 16


def test_a_driver_error_goes_through_on_error():
    driver = FakeDriver(result=719)
    assert _prepared(driver)() == ("err", 719)


def test_no_arguments_still_hands_a_buffer_of_size_zero():
    driver = FakeDriver()
    assert _prepared(driver, kernargs=b"")() == ("ok",)
    assert driver.calls[0][-1] == b""


@pytest.mark.parametrize("over, words", [
    ({"grid": (1, 2)}, "tuples of three ints"),
    ({"block": [1, 1, 1]}, "tuples of three ints"),
    ({"grid": (1 << 32, 1, 1)}, "grid must be an int in [0, 2**32)"),
    ({"block": (-1, 1, 1)}, "block must be an int in [0, 2**32)"),
    ({"shared": 1 << 40}, "shared must be an int in [0, 2**32)"),
    ({"launch": 0}, "launch must not be 0"),
    ({"on_error": 5}, "on_error must be callable"),
])
def test_bad_descriptions_are_value_errors(over, words):
    with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")
                       .replace("*", r"\*")):
        _prepared(FakeDriver(), **over)


def test_it_takes_no_arguments_and_is_made_once():
    driver = FakeDriver()
    p = _prepared(driver)
    with pytest.raises(TypeError, match="takes no arguments"):
        p(1)
    with pytest.raises(TypeError, match="made once"):
        p.__init__(driver.address, 1, (1, 1, 1), (1, 1, 1), 0, 0, b"", None, print)
    unmade = EXT.PreparedLaunch.__new__(EXT.PreparedLaunch)
    with pytest.raises(TypeError, match="was not made"):
        unmade()
    assert driver.calls == []


def _fake_driver_state(monkeypatch, driver: FakeDriver, size: int) -> int:
    """The cuda backend as if ready, with ``driver`` as libcuda's cuLaunchKernel and one
    function (returned) of a ``size``-byte layout."""
    from hrr.backends.cuda import _runtime, modules
    from hrr.hiptypes.kernargs import KernelLayout, ParamSpec

    class Lib:
        cuLaunchKernel = driver.fn
    monkeypatch.setattr(_runtime.STATE, "ready", True)
    monkeypatch.setattr(_runtime.STATE, "libcuda", Lib())
    monkeypatch.setattr(modules, "ensure_context", lambda: None)
    fh = 0xF00D
    layout = KernelLayout(tuple(ParamSpec(8 * i, 8, "value") for i in range(size // 8)))
    monkeypatch.setitem(modules._layouts, fh, layout)
    return fh


def test_the_backend_prepares_what_launch_kernargs_would_launch(monkeypatch):
    import hrr.backends.cuda as cuda
    from hrr.backends.cuda import hip_api
    from hrr.hiptypes import hipError_t
    driver = FakeDriver()
    fh = _fake_driver_state(monkeypatch, driver, 16)
    p = cuda.launch_kernargs.prepare(fh, (2, 1, 1), (32, 1, 1), 0, None, b"\x05" * 16)
    assert type(p).__name__ == "PreparedLaunch"
    assert p() == (hipError_t.hipSuccess,)
    assert driver.calls == [(fh, (2, 1, 1), (32, 1, 1), 0, 0, None, b"\x05" * 16)]
    driver.result = 1   # CUDA_ERROR_INVALID_VALUE
    assert p() == (hipError_t.hipErrorInvalidValue,) and hip_api._tls.last == hipError_t.hipErrorInvalidValue
    # not the layout's size, or an unknown function: launch_kernargs would go through hip
    assert cuda.launch_kernargs.prepare(fh, (1, 1, 1), (1, 1, 1), 0, None, b"\x05" * 8) is None
    assert cuda.launch_kernargs.prepare(fh + 1, (1, 1, 1), (1, 1, 1), 0, None, b"\x05" * 16) is None


class NodeParams(ctypes.Structure):
    """CUDA_KERNEL_NODE_PARAMS_v2, as the extension hands it."""
    _fields_ = [("func", ctypes.c_void_p), *[(n, ctypes.c_uint) for n in ("gx", "gy", "gz", "bx", "by", "bz")],
                ("shared", ctypes.c_uint), ("params", ctypes.c_void_p), ("extra", ctypes.POINTER(ctypes.c_void_p)),
                ("kern", ctypes.c_void_p), ("ctx", ctypes.c_void_p)]


PP = ctypes.POINTER(ctypes.c_void_p)
GRAPH_TYPES = (ctypes.CFUNCTYPE(ctypes.c_int, PP, ctypes.c_uint),
               ctypes.CFUNCTYPE(ctypes.c_int, PP, ctypes.c_void_p, PP, ctypes.c_size_t, ctypes.POINTER(NodeParams)),
               ctypes.CFUNCTYPE(ctypes.c_int, PP, ctypes.c_void_p, ctypes.c_ulonglong),
               ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p),
               ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p),
               ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p),
               ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)))


class FakeGraphs:
    """The driver's graph calls as callbacks over ``driver``: a graph launch hands each of its
    nodes to ``driver`` as a launch, in the chain's order; made and destroyed graphs are counted."""

    def __init__(self, driver: FakeDriver, capturing: int = 0, launch_result: int = 0) -> None:
        self.driver, self.capturing, self.launch_result = driver, capturing, launch_result
        self.graphs: dict[int, list] = {}
        self.execs: dict[int, list] = {}
        self.made = self.destroyed = self.execs_destroyed = self.launches = 0
        self.fns = [t(f) for t, f in zip(GRAPH_TYPES, (self._create, self._add, self._instantiate, self._launch,
                                                       self._exec_destroy, self._destroy, self._is_capturing),
                                         strict=True)]
        self.addresses = tuple(ctypes.cast(f, ctypes.c_void_p).value for f in self.fns)

    def _create(self, out, flags):
        self.made += 1
        out[0] = 0x1000 + self.made
        self.graphs[out[0]] = []
        return 0

    def _add(self, out, graph, deps, ndeps, params):
        nodes = self.graphs[graph]
        assert ndeps == (1 if nodes else 0) and (not nodes or deps[0] == nodes[-1][0])   # a chain
        p = params[0]
        assert p.params is None and p.kern is None and p.ctx is None
        node = 0x5000 + len(nodes)
        size = ctypes.c_size_t.from_address(p.extra[3]).value
        nodes.append((node, (p.func or 0, (p.gx, p.gy, p.gz), (p.bx, p.by, p.bz), p.shared,
                             ctypes.string_at(p.extra[1], size))))
        out[0] = node
        return 0

    def _instantiate(self, out, graph, flags):
        out[0] = 0x9000 + graph
        self.execs[out[0]] = [launch for _, launch in self.graphs[graph]]
        return 0

    def _launch(self, exec_, stream):
        if self.launch_result:
            return self.launch_result
        self.launches += 1
        for f, grid, block, shared, data in self.execs[exec_]:
            self.driver.calls.append((f, grid, block, shared, stream or 0, None, data))
        return 0

    def _exec_destroy(self, exec_):
        self.execs_destroyed += 1
        del self.execs[exec_]
        return 0

    def _destroy(self, graph):
        self.destroyed += 1
        del self.graphs[graph]
        return 0

    def _is_capturing(self, stream, status):
        status[0] = self.capturing
        return 0


ONE = (0x1234, (3, 2, 1), (64, 1, 1), 128, 0x5678, None, b"\x01" * 8 + b"\x02" * 4)


def test_repeat_without_graph_calls_makes_single_launches():
    driver = FakeDriver()
    p = _prepared(driver)
    assert not p.graphs
    assert p.repeat(5000) == (5000, ("ok",))
    assert driver.calls == [ONE] * 5000


def test_a_long_run_goes_through_a_graph_made_and_destroyed_in_the_call():
    driver = FakeDriver()
    graphs = FakeGraphs(driver)
    p = _prepared(driver, graph=graphs.addresses)
    assert p.graphs
    assert p.repeat(5000) == (5000, ("ok",))
    # 9 launches of a 512-node graph, then 392 single launches: 5000 in all, every one the same
    assert driver.calls == [ONE] * 5000 and graphs.launches == 9
    assert graphs.made == graphs.destroyed == graphs.execs_destroyed == 1 and not graphs.graphs and not graphs.execs
    assert p.repeat(2047) == (2047, ("ok",)) and graphs.made == 1   # a short run: single launches
    assert p.repeat(5000, graph=False) == (5000, ("ok",)) and graphs.made == 1


def test_a_capturing_stream_gets_single_launches():
    driver = FakeDriver()
    graphs = FakeGraphs(driver, capturing=1)
    assert _prepared(driver, graph=graphs.addresses).repeat(4096) == (4096, ("ok",))
    assert graphs.made == 0 and len(driver.calls) == 4096


def test_repeat_stops_at_the_first_launch_the_driver_refuses():
    driver = FakeDriver(result=719)
    graphs = FakeGraphs(driver, launch_result=719)
    p = _prepared(driver, graph=graphs.addresses)
    assert p.repeat(4096) == (0, ("err", 719))
    assert graphs.execs_destroyed == 1 and len(driver.calls) == 1   # the graph refused, then one single launch
    assert p.repeat(0) == (0, ("ok",))
    with pytest.raises(ValueError, match="must not be negative"):
        p.repeat(-1)


@pytest.mark.parametrize("graph, words", [((1, 2, 3), "a tuple of 7 addresses"), ((0,) * 7, "must not be 0"),
                                          ([1] * 7, "a tuple of 7 addresses")])
def test_bad_graph_calls_are_value_errors(graph, words):
    with pytest.raises(ValueError, match=words):
        _prepared(FakeDriver(), graph=graph)


def test_the_backend_hands_libcudas_graph_calls_when_it_has_them_all(monkeypatch):
    from hrr.backends.cuda import _runtime, modules
    driver = FakeDriver()
    graphs = FakeGraphs(driver)

    class Lib:
        pass
    for name, fn in zip(modules.GRAPH_CALLS, graphs.fns, strict=True):
        setattr(Lib, name, fn)
    monkeypatch.setattr(_runtime.STATE, "libcuda", Lib())
    assert modules.graph_calls() == graphs.addresses
    delattr(Lib, "cuGraphAddKernelNode_v2")
    assert modules.graph_calls() is None
