"""hrr's ``hip``/``hiprtc`` surface against the hip-python installed beside it.

Walks every name of hip-python's own ``hip`` and ``hiprtc`` modules (both releases: 10.x
here, 7.x in a venv of its own) and requires it on each backend's modules (the sim, cuda's
built without a driver, and the recorder's under ``hrr capture``); then walks every
function, enum, struct and helper class each backend offers and compares it with
hip-python's own: names,
parameters (names, order, defaults), the number of returned values its docstrings give,
enum members and values, struct fields and their Python types, ``dim3``, the device
array's attributes, and the pointer and handle conversion rules. hip-python imports
without ROCm (only its calls fail), so all of this runs on any machine.

Differences that are known and cannot be fixed in hiptypes are listed in ``ALLOWED``, one
named entry each with its reason; an entry that no longer matches a difference fails too,
so the list only ever shrinks and any new drift fails the test.
"""
from __future__ import annotations

import ast
import ctypes
import importlib
import inspect
import os
import re
import subprocess
import tempfile
import textwrap
import types
from pathlib import Path

import numpy as np
import pytest
from hippython7 import HP7_SPEC, venv_with_hip_python7
from hrrtest import cpu_backends

from hrr import hiptypes as ht
from hrr.api.catalogue import rows
from hrr.backends import releases
from hrr.hiptypes.mathlibs import LIBRARY_ENUMS

REAL = ht.real_modules()
pytestmark = pytest.mark.skipif(not REAL, reason="hip-python is not installed here (CI installs it)")
REAL_HIP, REAL_HIPRTC = REAL if REAL else (None, None)
MISSING = inspect.Parameter.empty

# (what, name): reason. `what` names the aspect compared; a name "backend:function" applies
# to that backend only.
ALLOWED: dict[tuple[str, str], str] = {
    ("signature", "hipStreamWaitValue32"):
        "hrr gives mask the C header's default 0xFFFFFFFF; hip-python requires it (a superset: "
        "every hip-python call is accepted)",
    ("signature", "hipThreadExchangeStreamCaptureMode"):
        "hip-python's binding takes no argument (it treats the C API's in/out mode as output "
        "only, so a program cannot set a mode); hrr's takes none too and also accepts mode=, "
        "as the C API does (test_thread_exchange_capture_mode_takes_no_argument)",
    ("signature", "sim:hiprtcCreateProgram"):
        "the sim's hiprtc (hrr/backends/sim/rtc.py) defaults numHeaders=0, headers=None, "
        "includeNames=None; hip-python requires them (a superset)",
    ("signature", "sim:hiprtcCompileProgram"):
        "the sim's hiprtc defaults numOptions=0, options=None; hip-python requires them (a superset)",
    ("pointer", "empty buffer"):
        "hrr converts a zero-length buffer to NULL, hip-python to the buffer's own address; no "
        "byte is ever read through either",
    ("class", "Pointer"):
        "hrr's look-alike: made on every pointer-returning call and its address read on every "
        "pointer argument (0.2 us through as_address against 15 us for hip-python's, which goes "
        "through the buffer protocol); same public attributes, checked below",
    ("class", "DeviceArray"):
        "hrr's look-alike (hrr/hiptypes/devicearray.py), for the reason given for Pointer: every "
        "public member of hip-python's, same results and errors, compared case by case in "
        "tests/backends/test_devicearray.py",
    ("class", "CStr"):
        "hrr's look-alike: str()/bytes()/== as hip-python's; hip-python's CStr wraps a C char* it "
        "does not own, which a Python-made result has no use for",
    ("class", "hipPointerAttribute_t"):
        "hipPointerGetAttributes returns hrr's look-alike with hip-python's six fields (the "
        "module's hipPointerAttribute_t is hip-python's class, which a 7.x program fills)",
    ("class", "handles"):
        "the handles hrr's calls return (streams, events, modules...) are hrr's look-alikes "
        "(int(), fromObj, as_c_void_p, is_ptr_null), made per call like Pointer; the module's "
        "ihipStream_t and the other handle classes are hip-python's own (its interop layer "
        "derives Cython classes from them), and a handle made from one is accepted",
}
# Attributes of hip-python's helper classes that hrr's look-alikes do not offer, per class.
UNOFFERED = {
    "Pointer": {"createRef"},
    "DeviceArray": set(),
}


@pytest.fixture(params=cpu_backends("hrr.backends."))
def backend(request):
    return importlib.import_module(request.param)


def _functions(mod) -> dict:
    """The HIP calls the module implements (not the stand-ins for the others)."""
    return {n: f for n, f in vars(mod).items()
            if n.startswith("hip") and callable(f) and not isinstance(f, type)
            and getattr(f, "__module__", None) != "enum" and not ht.is_uncatalogued(f)}


def _missing_names(mod, real) -> list[str]:
    """Every name of hip-python's module ``real`` (its module dunders aside) that ``mod``
    lacks, or offers as anything but hip-python's own object or, for a function, a callable
    (a stand-in with hip-python's parameters; an implemented one's are compared below)."""
    bad = []
    for name in dir(real):
        if name.startswith("__") and name.endswith("__"):
            continue
        theirs, ours = getattr(real, name), getattr(mod, name, MISSING)
        if ours is MISSING:
            bad.append(f"{name}: absent")
        elif isinstance(theirs, types.ModuleType):   # e.g. hiprtc.ext: hrr's own, over hrr's calls
            if not isinstance(ours, types.ModuleType):
                bad.append(f"{name}: not a module")
        elif callable(theirs) and not isinstance(theirs, type):
            if not callable(ours) or ht.is_uncatalogued(ours) and _params(ours) != _params(theirs):
                bad.append(f"{name}: not a function with hip-python's parameters")
        elif ours is not theirs and not (isinstance(theirs, int) and ours == theirs):
            bad.append(f"{name}: not hip-python's own object")
    return bad


def test_every_hip_python_name_is_offered(backend):
    """The interop layer (hip-python-interop) reads ~800 names of hip-python's ``hip`` at
    import, private ``_X__Base`` enum bases included: every one is on hrr's modules."""
    for mod, real in ((backend.hip, REAL_HIP), (backend.hiprtc, REAL_HIPRTC)):
        bad = _missing_names(mod, real)
        assert not bad, f"{len(bad)} of hip-python's names wrong on {mod.__name__}:\n" + "\n".join(bad[:40])
        if hasattr(real, "__all__"):
            assert mod.__all__ == list(real.__all__)


def test_hip_python_classes_are_its_own(backend):
    """Under each of hip-python's class names (handles, structs) is hip-python's class: a
    Cython module deriving from it checks its size and vtable at import."""
    import enum
    for mod, real in ((backend.hip, REAL_HIP), (backend.hiprtc, REAL_HIPRTC)):
        for name in dir(real):
            value = getattr(real, name)
            if isinstance(value, type) and not issubclass(value, enum.Enum):
                assert getattr(mod, name) is value, f"{mod.__name__}.{name}"


def _params(fn) -> list[tuple[str, object]]:
    return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]


def _settle(found: set[tuple[str, str]], what: str, details: dict) -> None:
    """Every difference found must be allowed, and every allowance of this kind found."""
    allowed = {k for k in ALLOWED if k[0] == what}
    new = sorted(k for k in found - allowed if k[0] == what)
    assert not new, "drift from hip-python:\n" + "\n".join(f"{k}: {details.get(k, '')}" for k in new)


def test_every_function_has_hip_pythons_name_and_parameters(backend):
    found, details = set(), {}
    for mod, real in ((backend.hip, REAL_HIP), (backend.hiprtc, REAL_HIPRTC)):
        for name, fn in _functions(mod).items():
            if name == "SUPPORTED_APIS":
                continue
            real_fn = getattr(real, name, None)
            if real_fn is None:
                found.add(("missing", name))
                details["missing", name] = f"{mod.__name__}.{name} is not in hip-python's {real.__name__}"
                continue
            if _params(fn) != _params(real_fn):
                key = ("signature", f"{backend.NAME}:{name}")
                key = key if key in ALLOWED else ("signature", name)
                found.add(key)
                details[key] = f"hrr {inspect.signature(fn)} vs hip-python {inspect.signature(real_fn)}"
    _settle(found, "missing", details)
    _settle(found, "signature", details)
    stale = {k for k in ALLOWED if k[0] == "signature"
             and (":" not in k[1] or k[1].startswith(backend.NAME + ":"))} - found
    assert not stale, f"allow-list entries that no longer differ (remove them): {sorted(stale)}"


@pytest.mark.parametrize("release", ["10", "7"])
def test_thread_exchange_capture_mode_takes_no_argument(backend, release):
    """hip-python's hipThreadExchangeStreamCaptureMode() takes no argument (the mode is an
    output); hrr's, in either release's spelling, takes none, and mode= still sets one."""
    hip = backend.hip if release == "10" else releases.release_module(
        backend.hip, ht.Release(7, REAL_HIP, REAL_HIPRTC, ht.real_util()))
    mode = ht.hipStreamCaptureMode
    err, previous = hip.hipThreadExchangeStreamCaptureMode()
    if err != 0:      # cuda without a GPU: the call fails, its arguments were still accepted
        assert backend.NAME == "cuda" and previous is None
        return
    assert hip.hipThreadExchangeStreamCaptureMode(mode=mode.hipStreamCaptureModeRelaxed) == (0, previous)
    assert hip.hipThreadExchangeStreamCaptureMode() == (0, mode.hipStreamCaptureModeRelaxed)
    assert hip.hipThreadExchangeStreamCaptureMode(mode=previous) == (0, mode.hipStreamCaptureModeRelaxed)
    if release == "7":   # 7.x's binding takes no positional argument: never dropped unseen
        with pytest.raises(TypeError):
            hip.hipThreadExchangeStreamCaptureMode(mode.hipStreamCaptureModeRelaxed)


def test_return_counts_match_hip_pythons_docstrings():
    """hip-python documents each result as 'A tuple of size N'; hrr's row returns err + outs."""
    wrong = []
    for row in rows():
        if row.module not in ("hip", "hiprtc"):   # the math libraries: tests/backends/test_mathlib_surface.py
            continue
        doc = getattr(REAL_HIP if row.module == "hip" else REAL_HIPRTC, row.name).__doc__ or ""
        sizes = re.findall(r"tuple` of size (\d+)", doc)
        expected = int(sizes[0]) if sizes else 1
        if expected != 1 + len(row.outs):
            wrong.append(f"{row.name}: hip-python returns {expected}, hrr {1 + len(row.outs)}")
    assert not wrong, "\n".join(wrong)


def test_hiprtc_return_counts(backend):
    """Call each backend's hiprtc through a whole compile (cuda's is NVRTC, which needs no
    GPU) and a link (cuda's is the driver's: only with a GPU) and compare."""
    hiprtc = backend.hiprtc
    src = b'extern "C" __global__ void fill_u32(unsigned* d, unsigned v, unsigned n) {}'
    calls = {}
    calls["hiprtcCreateProgram"] = hiprtc.hiprtcCreateProgram(src, b"k.cu", 0, [], [])
    prog = calls["hiprtcCreateProgram"][1]
    calls["hiprtcAddNameExpression"] = hiprtc.hiprtcAddNameExpression(prog, b"fill_u32")
    calls["hiprtcCompileProgram"] = hiprtc.hiprtcCompileProgram(prog, 0, [])
    calls["hiprtcGetLoweredName"] = hiprtc.hiprtcGetLoweredName(prog, b"fill_u32")
    rdc = hiprtc.hiprtcCreateProgram(src, b"r.cu", 0, [], [])[1]
    assert hiprtc.hiprtcCompileProgram(rdc, 1, [b"-fgpu-rdc"]) == (0,)
    calls["hiprtcGetBitcodeSize"] = hiprtc.hiprtcGetBitcodeSize(rdc)
    bitcode = bytearray(calls["hiprtcGetBitcodeSize"][1])
    calls["hiprtcGetBitcode"] = hiprtc.hiprtcGetBitcode(rdc, bitcode)
    links = ("hiprtcLinkCreate", "hiprtcLinkAddData", "hiprtcLinkAddFile", "hiprtcLinkComplete",
             "hiprtcLinkDestroy")
    if backend.NAME == "sim" or backend.gpu_unavailable_reason() is None:
        calls["hiprtcLinkCreate"] = hiprtc.hiprtcLinkCreate(0, None, None)
        state = calls["hiprtcLinkCreate"][1]
        kind = hiprtc.hipJitInputType.hipJitInputLLVMBitcode
        calls["hiprtcLinkAddData"] = hiprtc.hiprtcLinkAddData(state, kind, bitcode, len(bitcode), b"r", 0, None, None)
        with tempfile.NamedTemporaryFile(suffix=".o") as f:
            f.write(bitcode)
            f.flush()
            other = hiprtc.hiprtcLinkCreate(0, None, None)[1]
            calls["hiprtcLinkAddFile"] = hiprtc.hiprtcLinkAddFile(other, kind, f.name.encode(), 0, None, None)
            hiprtc.hiprtcLinkDestroy(other)
        calls["hiprtcLinkComplete"] = hiprtc.hiprtcLinkComplete(state)
        calls["hiprtcLinkDestroy"] = hiprtc.hiprtcLinkDestroy(state)
    hiprtc.hiprtcDestroyProgram(rdc)
    calls["hiprtcGetCodeSize"] = hiprtc.hiprtcGetCodeSize(prog)
    calls["hiprtcGetCode"] = hiprtc.hiprtcGetCode(prog, bytearray(calls["hiprtcGetCodeSize"][1]))
    calls["hiprtcGetProgramLogSize"] = hiprtc.hiprtcGetProgramLogSize(prog)
    log_size = max(1, calls["hiprtcGetProgramLogSize"][1])
    calls["hiprtcGetProgramLog"] = hiprtc.hiprtcGetProgramLog(prog, bytearray(log_size))
    calls["hiprtcVersion"] = hiprtc.hiprtcVersion()
    calls["hiprtcGetErrorString"] = hiprtc.hiprtcGetErrorString(hiprtc.hiprtcResult.HIPRTC_SUCCESS)
    calls["hiprtcDestroyProgram"] = hiprtc.hiprtcDestroyProgram(prog)
    called = set(calls) | (set(links) if "hiprtcLinkCreate" not in calls else set())
    assert called == set(_functions(hiprtc)), "a hiprtc function this test does not call"
    for name, result in calls.items():
        assert result[0] == 0, (name, result)
        sizes = re.findall(r"tuple` of size (\d+)", getattr(REAL_HIPRTC, name).__doc__ or "")
        assert len(result) == (int(sizes[0]) if sizes else 1), (name, result)


def test_enums_are_hip_pythons_own_classes(backend):
    for mod, real in ((backend.hip, REAL_HIP), (backend.hiprtc, REAL_HIPRTC)):
        for name, value in vars(mod).items():
            if isinstance(value, type) and issubclass(value, int) and hasattr(value, "__members__"):
                # hrr offers hiprtcResult on hip too (a superset): either module's is fine
                theirs = getattr(real, name, None) or getattr(REAL_HIP, name, None) or getattr(REAL_HIPRTC, name)
                assert theirs is value, f"{mod.__name__}.{name} is not hip-python's enum"
    for name, enum_type in ht.ENUM_TYPES.items():
        if name in LIBRARY_ENUMS:   # a math library's: tests/backends/test_mathlib_surface.py
            continue
        real = getattr(REAL_HIP, name, None) or getattr(REAL_HIPRTC, name)
        assert enum_type is real
        # hrr's fallback tables (used where hip-python is absent) hold the same members
        fallback = ht._HIP_ERRORS if name == "hipError_t" else ht._HIPRTC_RESULTS if name == "hiprtcResult" \
            else ht._ENUMS[name]
        extra = {k: v for k, v in fallback.items() if real.__members__.get(k) != v}
        assert not extra, f"fallback {name} members hip-python does not have with these values: {extra}"


def test_every_hip_python_enum_class_is_offered(backend):
    """Programs name enums of calls hrr may not offer yet (hipDeviceAttribute_t, ...): every
    enum class of hip-python's modules is on hrr's, hip-python's own object."""
    import enum
    for mod, real in ((backend.hip, REAL_HIP), (backend.hiprtc, REAL_HIPRTC)):
        for name, value in vars(real).items():
            if not name.startswith("_") and isinstance(value, type) and issubclass(value, enum.Enum):
                assert getattr(mod, name, None) is value, f"{mod.__name__} lacks hip-python's {name}"


def test_constants_have_hip_pythons_values(backend):
    for name, value in ht.CONSTANTS.items():
        assert getattr(backend.hip, name) == value
        if hasattr(REAL_HIP, name):
            assert int(getattr(REAL_HIP, name)) == value, name


def test_device_properties_fields_and_types():
    """Every field of hip-python's hipDeviceProp_t reads with hip-python's Python type from
    the sim's result (bytes vs str for the C strings included), and it is hip-python's class."""
    from hrr.backends.sim import hip
    err, props = hip.hipGetDeviceProperties(0)
    assert err == 0
    assert isinstance(props, REAL_HIP.hipDeviceProp_t)
    default = REAL_HIP.hipDeviceProp_t()
    wrong = [f"{f}: {type(getattr(props, f)).__name__} vs {type(getattr(default, f)).__name__}"
             for f in REAL_HIP.hipDeviceProp_t.PROPERTIES()
             if type(getattr(props, f)) is not type(getattr(default, f))]
    assert not wrong, wrong
    assert type(props.gcnArchName) is ht.TEXT_TYPE and props.name
    assert props.maxThreadsDim == [1024, 1024, 1024]


def test_device_properties_as_the_cuda_body_fills_them():
    """cuda's body passes str names and list dims (no driver needed to build the struct)."""
    props = ht.hipDeviceProp_t(name="NVIDIA H200", gcnArchName="sm_90", maxGridSize=[1, 2, 3],
                               totalGlobalMem=5)
    assert type(props.name) is ht.TEXT_TYPE and type(props.gcnArchName) is ht.TEXT_TYPE
    assert props.maxGridSize == [1, 2, 3] and props.totalGlobalMem == 5 and props.l2CacheSize == 0
    props.warpSize = 32          # a program may write a field, as with hip-python's struct
    props.pciBusID = -1          # outside the C type's range: kept, never an error
    assert props.warpSize == 32 and props.pciBusID == -1


def test_pointer_attribute_fields():
    real = {a for a in dir(REAL_HIP.hipPointerAttribute_t) if not a.startswith("_")
            and a in REAL_HIP.hipPointerAttribute_t.PROPERTIES()}
    mine = ht.hipPointerAttribute_t(ht.hipMemoryType.hipMemoryTypeDevice, 0, 16, 0)
    assert real == {a for a in vars(mine)}


def test_dim3_is_hip_pythons_and_behaves_like_it(backend):
    assert backend.hip.dim3 is REAL_HIP.dim3
    for cls in (REAL_HIP.dim3, ht._dim3):
        d = cls(x=4, z=2)
        assert (d.x, d.y, d.z) == (4, 1, 2) and d[0] == 4 and d[2] == 2 and list(d) == [4, 1, 2]
        assert tuple(cls(5, 6, 7)) == (5, 6, 7)


def test_device_array_attributes(backend):
    from rocm.bindings.util import types as real_types
    ref = real_types.DeviceArray.fromObj(0x1000)
    ref.configure(shape=(64,), _force=True)
    public = {a for a in dir(real_types.DeviceArray) if not a.startswith("_")} - UNOFFERED["DeviceArray"]
    assert public <= set(dir(ht.DeviceArray)), public - set(dir(ht.DeviceArray))
    if backend.NAME == "sim":
        err, mine = backend.hip.hipMalloc(64)
        assert err == 0
    else:
        mine = ht.DeviceArray(0x1000, 64)
    for attr in ("itemsize", "shape", "size", "typestr", "rank", "is_read_only"):
        assert getattr(mine, attr) == getattr(ref, attr), attr
    cai, ref_cai = mine.__cuda_array_interface__, ref.__cuda_array_interface__
    assert set(cai) == set(ref_cai) and cai["shape"] == ref_cai["shape"] and cai["typestr"] == ref_cai["typestr"]
    pub = {a for a in dir(real_types.Pointer) if not a.startswith("_")} - UNOFFERED["Pointer"]
    assert pub <= set(dir(ht.Pointer))


class _CAI:
    __cuda_array_interface__ = {"shape": (4,), "typestr": "|u1", "data": (0x5000, False), "version": 3}


class _Convertible:
    def as_c_void_p(self):
        return ctypes.c_void_p(0x6000)


def _pointer_cases():
    from rocm.bindings.util import types as real_types
    return {
        "None": None, "int": 0x1234, "c_void_p": ctypes.c_void_p(0x77), "null c_void_p": ctypes.c_void_p(),
        "bytearray": bytearray(4), "bytes": b"abcd", "numpy": np.zeros(4, np.uint8), "c_int": ctypes.c_int(5),
        "array.array": __import__("array").array("i", [1, 2]), "cuda_array_interface": _CAI(),
        "hip-python Pointer": real_types.Pointer(0x88), "hrr Pointer": ht.Pointer(0x99),
        "hip-python DeviceArray": real_types.DeviceArray.fromObj(0xAA), "hrr DeviceArray": ht.DeviceArray(0xBB, 4),
        "as_c_void_p": _Convertible(), "str": "nope", "float": 1.5, "empty buffer": memoryview(b""),
    }


def test_pointer_acceptance_rules():
    """hrr's conversion gives the address hip-python's Pointer.fromObj gives, and refuses
    what it refuses."""
    from rocm.bindings.util import types as real_types
    found, details = set(), {}
    for label, obj in _pointer_cases().items():
        try:
            want: object = int(real_types.Pointer.fromObj(obj))
        except TypeError:
            want = TypeError
        try:
            got: object = ht.as_address(obj)
        except TypeError:
            got = TypeError
        if got != want:
            found.add(("pointer", label))
            details["pointer", label] = f"hrr {got!r} vs hip-python {want!r}"
    _settle(found, "pointer", details)
    assert found == {k for k in ALLOWED if k[0] == "pointer"}, "stale pointer allowance"


def test_handle_acceptance_rules(backend):
    for obj, want in ((None, 0), (0, 0), (0x10, 0x10), (ctypes.c_void_p(0x40), 0x40),
                      (REAL_HIP.ihipStream_t.fromObj(0x20), 0x20), (ht.ihipStream_t(0x30), 0x30)):
        assert ht.as_handle_value(obj) == want
        assert int(backend.hip.ihipStream_t.fromObj(obj)) == want
    for name in (*ht.HANDLE_TYPES, *ht.TYPE_ALIASES):
        assert hasattr(REAL_HIP, name) or hasattr(REAL_HIPRTC, name), f"{name} is not hip-python's"


def test_helper_classes_offered_are_hip_pythons_names(backend):
    for cls in (*ht.VALUE_TYPES, *ht.HANDLE_TYPES.values()):
        name = cls.__name__
        where = (REAL_HIP, REAL_HIPRTC, REAL[0] and __import__("rocm.bindings.util.types").bindings.util.types)
        assert any(hasattr(m, name) for m in where), f"{name} is not a hip-python class name"
        if name not in ("dim3", "hipDeviceProp_t"):
            assert (("class", name) in ALLOWED or ("class", "handles") in ALLOWED
                    and name in ht.HANDLE_TYPES), f"{name}: a look-alike with no allowance"
        # the module offers hip-python's class where its hip module has the name, else hrr's
        real = getattr(REAL_HIP, name, None) or getattr(REAL_HIPRTC, name, None)
        assert getattr(backend.hip, name) is (real or cls), name
    # a handle made from the module's (hip-python's) class is accepted where hrr's is
    err, stream = backend.hip.hipStreamCreate()
    if err == 0:
        same = backend.hip.ihipStream_t.fromObj(int(stream))
        assert backend.hip.hipStreamSynchronize(same) == (0,)
        assert backend.hip.hipStreamDestroy(same) == (0,)


# hip-python 7.x, in a virtual environment of its own (tests/hippython7.py).
HP7_CHECK = textwrap.dedent("""
    import inspect
    from hip import hip as R, hiprtc as RR
    from hrr import hiptypes as ht
    from hrr.backends import load_backend, releases
    assert ht.HIP_PYTHON_MAJOR == 7 and ht.TEXT_TYPE is bytes, ht.HIP_PYTHON_MAJOR
    assert ht.hipError_t is R.hipError_t and ht.hipMemcpyKind is R.hipMemcpyKind and ht.dim3 is R.dim3
    b = load_backend("sim")
    diffs = []
    for mod, real in ((releases.release_module(b.hip), R), (b.hiprtc, RR)):
        for n, fn in vars(mod).items():
            if n.startswith("_") or not callable(fn) or isinstance(fn, type) or n == "SUPPORTED_APIS":
                continue
            if getattr(fn, "__module__", None) == "enum":
                continue
            rf = getattr(real, n, None)
            sig = lambda f: [(p.name, p.default) for p in inspect.signature(f).parameters.values()]
            if rf is None:
                diffs.append(("missing", n))
            elif sig(fn) != sig(rf):
                diffs.append(("signature", n))
    err, props = b.hip.hipGetDeviceProperties(0)
    assert isinstance(props, R.hipDeviceProp_t) and props.gcnArchName == b"gfx942:sramecc+:xnack-", props.gcnArchName
    print(sorted(diffs))
""")
# Every name of 7.x's own modules on what a program imports there (the sim's and cuda's modules
# in 7.x's spelling), printed as the names missing or not 7.x's own object.
NAMES7_CHECK = textwrap.dedent("""
    import importlib, types
    from hip import hip as R, hiprtc as RR
    from hrr import hiptypes as ht
    from hrr.backends import releases
    assert ht.HIP_PYTHON_MAJOR == 7 and ht.CLASSIC is ht.PRIMARY
    bad = []
    for backend in ("sim", "cuda"):
        b = importlib.import_module("hrr.backends." + backend)
        spelt = releases.release_modules(b.hip, b.hiprtc)
        assert spelt["hip"] == spelt["rocm.bindings"]
        for mod, real in zip(spelt["hip"], (R, RR)):
            for n in dir(real):
                if n.startswith("__") and n.endswith("__"):
                    continue
                theirs, ours = getattr(real, n), getattr(mod, n, None)
                if isinstance(theirs, types.ModuleType):   # e.g. hiprtc.ext: hrr's own, over hrr's calls
                    ok = isinstance(ours, types.ModuleType)
                else:
                    ok = ours is theirs or isinstance(theirs, int) and ours == theirs or callable(theirs)
                if ours is None or not ok:
                    bad.append((backend, real.__name__, n))
                elif callable(theirs) and not isinstance(theirs, type) and not callable(ours):
                    bad.append((backend, real.__name__, n))
        try:
            spelt["hip"][0].hipArrayCreate(None)
        except ht.UncataloguedCall:
            pass
        else:
            bad.append((backend, "hipArrayCreate", "did not raise"))
    print(len(dir(R)), sorted(bad)[:40])
""")


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("HRR_SKIP_HIP_PYTHON7") == "1", reason="HRR_SKIP_HIP_PYTHON7=1")
def test_every_hip_python_7_name_is_offered():
    """The walk of test_every_hip_python_name_is_offered against hip-python 7.x's modules
    (its interop layer reads them through ``import hip.hip``)."""
    py, why = venv_with_hip_python7()
    if py is None:
        pytest.skip(f"pip cannot install {HP7_SPEC} here (the package index lacks it?): {why}")
    repo = Path(__file__).resolve().parents[2]
    proc = subprocess.run([str(py), "-c", NAMES7_CHECK], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(repo)}, check=False)
    assert proc.returncode == 0, proc.stderr
    count, bad = proc.stdout.strip().splitlines()[-1].split(" ", 1)
    assert int(count) > 900 and bad == "[]", proc.stdout


# Differences from hip-python 7.x beyond those ALLOWED for 10.x (which 7.x shares). The
# calls whose output struct 10.x moved into the result (hipGetDeviceProperties,
# hipPointerGetAttributes, hipGraphInstantiate) get 7.x's form from releases.release_module.
ALLOWED_7: dict[tuple[str, str], str] = {}


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("HRR_SKIP_HIP_PYTHON7") == "1", reason="HRR_SKIP_HIP_PYTHON7=1")
def test_conformance_against_hip_python_7():
    """The same walk against hip-python 7.x (venv cached in HRR_HIP_PYTHON7_VENV, default
    under the temp dir: the first run installs a 67 MB wheel)."""
    py, why = venv_with_hip_python7()
    if py is None:
        pytest.skip(f"pip cannot install {HP7_SPEC} here (the package index lacks it?): {why}")
    repo = Path(__file__).resolve().parents[2]
    proc = subprocess.run([str(py), "-c", HP7_CHECK], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(repo)}, check=False)
    assert proc.returncode == 0, proc.stderr
    diffs = set(ast.literal_eval(proc.stdout.strip().splitlines()[-1]))
    allowed = {("signature", k[1].split(":")[-1]) for k in ALLOWED if k[0] == "signature"} | set(ALLOWED_7)
    assert not diffs - allowed, sorted(diffs - allowed)
    assert set(ALLOWED_7) <= diffs, f"7.x allowances that no longer differ: {sorted(set(ALLOWED_7) - diffs)}"
    # a 7.x program (struct passed in, bytes arch) and a `from hip import hip` one, unchanged,
    # under hrr capture, then replay --strict, all in the 7.x environment
    apps = Path(__file__).resolve().parent / "apps"
    for app in (apps / "props7.py", repo / "tests" / "capture" / "apps" / "style_hip.py"):
        archive = Path(tempfile.mkdtemp()) / "a"
        env = {**os.environ, "PYTHONPATH": str(repo)}
        env.pop("HRR_MODE", None)
        cap = subprocess.run([str(py), "-m", "hrr.cli.main", "capture", "-o", str(archive), "--plugins", "",
                              "--content", "--", str(py), str(app)], capture_output=True, text=True,
                             timeout=300, env=env, check=False)
        assert cap.returncode == 0 and ": ok" in cap.stdout, cap.stdout + cap.stderr
        rep = subprocess.run([str(py), "-m", "hrr.cli.main", "replay", "--strict", str(archive)],
                             capture_output=True, text=True, timeout=300, env=env, check=False)
        assert rep.returncode == 0, rep.stdout + rep.stderr


def test_release7_forms_over_the_sim():
    """releases.release_module's 7.x forms, exercised here with 10.x installed: the program's
    struct is filled, the result sizes are 7.x's."""
    from hrr.backends.sim import hip
    as_if_7 = ht.Release(7, REAL_HIP, REAL_HIPRTC, ht.real_util())   # 7.x's forms over 10.x's names
    mod = releases.release_module(hip, as_if_7)
    assert mod is not hip and mod.hipMalloc is hip.hipMalloc
    assert mod.hipDeviceProp_t is REAL_HIP.hipDeviceProp_t   # the program's struct is hip-python's
    props = mod.hipDeviceProp_t()
    assert mod.hipGetDeviceProperties(props, 0) == (0,)
    assert props.totalGlobalMem == hip.hipGetDeviceProperties(0)[1].totalGlobalMem > 0
    assert props.gcnArchName == ht.as_text(b"gfx942:sramecc+:xnack-") and props.maxThreadsDim == [1024, 1024, 1024]
    err, dev = hip.hipMalloc(16)
    attributes = mod.hipPointerAttribute_t()
    assert mod.hipPointerGetAttributes(attributes, dev) == (0,)
    assert attributes.type == ht.hipMemoryType.hipMemoryTypeDevice and int(attributes.devicePointer) == int(dev)
    err, stream = hip.hipStreamCreate()
    hip.hipStreamBeginCapture(stream, ht.hipStreamCaptureMode.hipStreamCaptureModeGlobal)
    hip.hipMemsetAsync(dev, 1, 16, stream)
    err, graph = hip.hipStreamEndCapture(stream)
    log = bytearray(b"x" * 8)
    result = mod.hipGraphInstantiate(graph, log, len(log))
    assert len(result) == 3 and result[0] == 0 and int(result[1]) and log[0] == 0
    hip.hipGraphExecDestroy(result[1])
    hip.hipGraphDestroy(graph)
    hip.hipStreamDestroy(stream)
    hip.hipFree(dev)
