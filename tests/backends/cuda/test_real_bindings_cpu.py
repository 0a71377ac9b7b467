"""cuda bodies against the real cuda-bindings runtime with no driver: each call
reaches CUDA with the arguments its binding takes (a wrong arity is a TypeError before any
driver call, so this catches a body written for another CUDA release), and CUDA's answer
(no driver) comes back as HIP's error."""
from __future__ import annotations

import ctypes

import pytest

from hrr import hiptypes as ht

rt = pytest.importorskip("cuda.bindings.runtime")
from hrr.backends.cuda import _runtime, graph_calls, memory_calls  # noqa: E402 - after the importorskip
from hrr.backends.cuda._runtime import gpu_unavailable_reason  # noqa: E402

# With a driver the made-up handles below would reach it (and crash it): CPU only.
pytestmark = pytest.mark.skipif(gpu_unavailable_reason() is None, reason="a GPU is present here")

NODE = ht.hipGraphNode(0x10)


@pytest.fixture(autouse=True)
def real_runtime(monkeypatch):
    monkeypatch.setattr(_runtime.STATE, "rt", rt)


@pytest.mark.parametrize("call, args", [
    (graph_calls.hipGraphAddDependencies, (0, [NODE], [NODE], 1)),        # CUDA 13: edge data between
    (graph_calls.hipGraphRemoveDependencies, (0, [NODE], [NODE], 1)),
    (graph_calls.hipGraphGetEdges, (0,)),
    (graph_calls.hipGraphGetNodes, (0,)),
    (graph_calls.hipGraphGetRootNodes, (0,)),
    (graph_calls.hipGraphNodeGetDependencies, (0x10,)),
    (graph_calls.hipGraphNodeGetDependentNodes, (0x10,)),
])
def test_graph_queries_and_edges_reach_cuda_with_its_arity(call, args):
    result = call(*args)
    assert result[0] != ht.hipError_t.hipSuccess   # no driver here: CUDA's refusal, mapped
    assert all(v is None for v in result[1:])


def test_a_range_attribute_query_reaches_cuda_with_its_enum():
    # cuda-bindings takes a cudaMemRangeAttribute member, not an int (an AttributeError on the H200)
    answer = (ctypes.c_int32 * 1)()
    result = memory_calls.hipMemRangeGetAttribute(ctypes.addressof(answer), 4, 1, 0x1000, 4)
    assert result[0] != ht.hipError_t.hipSuccess


def test_a_pointer_attribute_query_passes_cudas_enum(monkeypatch):
    # cuda-bindings' driver takes a CUpointer_attribute member (an int failed on the H200);
    # its conversion happens before the driver library is needed
    from cuda.bindings import driver
    monkeypatch.setattr(memory_calls, "driver", lambda: driver)
    word = ctypes.c_uint64()
    try:
        memory_calls.hipPointerGetAttribute(ctypes.addressof(word), 1, 0x1000)
    except AttributeError as exc:
        pytest.fail(f"the attribute reached cuda-bindings as an int: {exc}")
    except Exception:  # noqa: BLE001 - no driver library here: past the argument conversion
        pass
