"""Kernel parameters by name and C type: from HIP C++ source (hiprtc's code objects, the
sim's and cuda's) and from AMDGPU code object metadata; scalars read by their type."""
from __future__ import annotations

import math
import struct
from pathlib import Path

from hrr.hiptypes import kernelsource
from hrr.hiptypes.kernelsig import ParamSig, kernel_signatures, scalar_value
from hrr.inspect.kernelparams import show_args, signatures_in

AMD_FIXTURES = Path(__file__).resolve().parents[1] / "backends" / "amdgpu" / "fixtures"
SOURCE = """
// __global__ void commented_out(int x)
#define N 4
extern "C" __global__ void saxpy(float a, const float* __restrict__ x, float *y, unsigned int n) {
    if (n) y[0] = a * x[0];   /* __global__ void in_a_comment(double d) */
}
extern "C" __global__ __launch_bounds__(256, 2) void reduce(const double in[], long long* out,
                                                             int n = 3, struct pair p, size_t) {}
extern "C" __global__ void noargs(void) {}
__device__ float helper(float v) { return v; }
"""


def test_signatures_from_source():
    sigs = kernel_signatures(SOURCE)
    assert set(sigs) == {"saxpy", "reduce", "noargs"}
    assert sigs["saxpy"] == (ParamSig("a", "float"), ParamSig("x", "float*"), ParamSig("y", "float*"),
                             ParamSig("n", "unsigned int"))
    assert sigs["reduce"] == (ParamSig("in", "double*"), ParamSig("out", "long long*"), ParamSig("n", "int"),
                              ParamSig("p", "pair"), ParamSig("param4", "size_t"))
    assert sigs["noargs"] == ()


def test_scalars_by_their_c_type():
    assert scalar_value("float", struct.pack("<f", 2.5)) == 2.5
    assert scalar_value("double", struct.pack("<d", -0.125)) == -0.125
    assert scalar_value("int", struct.pack("<i", -3)) == -3
    assert scalar_value("unsigned int", struct.pack("<I", 0xFFFFFFFF)) == 0xFFFFFFFF
    assert scalar_value("uint64_t", struct.pack("<Q", 5)) == 5
    assert scalar_value("long", struct.pack("<q", -7)) == -7
    assert scalar_value("bool", b"\x01") is True
    assert scalar_value("float*", bytes(8)) is None and scalar_value("pair", bytes(8)) is None
    assert scalar_value("float", bytes(8)) is None   # a size the type cannot have: shown raw


def test_show_args_names_floats_and_pointers():
    layout = [[0, 4, "value", ""], [8, 8, "pointer", ""], [16, 8, "pointer", ""], [24, 4, "value", ""]]
    kernargs = struct.pack("<fxxxxQQI", 2.5, 0x1000, 0x2000, 256)
    sig = kernel_signatures(SOURCE)["saxpy"]
    assert show_args(layout, kernargs, sig) == {"a": 2.5, "x": "0x1000", "y": "0x2000", "n": 256}
    assert show_args(layout, kernargs, None) == {"param0": 1075838976, "param1": "0x1000", "param2": "0x2000",
                                                 "param3": 256}
    nan = show_args(layout, struct.pack("<fxxxxQQI", math.nan, 0, 0, 1), sig)["a"]
    assert nan == "nan"   # JSON has no NaN, and a NaN would never equal itself in diff


def test_signatures_in_code_objects():
    container = kernelsource.encode(kernelsource.KernelSource((kernelsource.SourceUnit("k.cpp", SOURCE.encode()),)))
    assert signatures_in(container)["saxpy"][0] == ParamSig("a", "float")
    ocl = signatures_in((AMD_FIXTURES / "ocl_gfx1030.co").read_bytes())
    assert ocl["fill"][:3] == (ParamSig("x", "float*"), ParamSig("s", "float"), ParamSig("count", "long"))
    # HIP's compiler leaves names and types out of the metadata: nothing to add to the layout
    assert signatures_in((AMD_FIXTURES / "hip_gfx90a.co").read_bytes()) == {}
    assert signatures_in(b"\x7fELF\x02\x01 not really") == {} and signatures_in(b"junk") == {}
