"""hip-python's hiprtc extension module (``hiprtc.ext``, ``hiprtc_pyext``) on hrr's backends:
the same option conversion as hip-python's own helper, ``hiprtcLinkCreate2`` making a link
state through the backend's ``hiprtcLinkCreate``, recorded as that call and replayed."""
from __future__ import annotations

import importlib
import warnings

import pytest

from hrr import hiptypes as ht
from hrr.backends.hiprtc_ext import ext_module
from hrrtest import cpu_backends

# (not hipJitOptionMaxRegisters: hip-python's helper refuses the option whose value is 0 with
# a KeyError, testing the member's truth; hrr's takes it)
OPTIONS = dict(HIPRTC_JIT_FAST_COMPILE=True, hipJitOptionThreadsPerBlock=300, hipJitOptionLto=-1,
               hipJitOptionErrorLogBufferSizeBytes=1024, HIPRTC_JIT_GENERATE_DEBUG_INFO=2)


@pytest.fixture(params=cpu_backends("hrr.backends."))
def backend(request):
    return importlib.import_module(request.param)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return fn(*args, **kwargs)


def test_each_backends_hiprtc_offers_the_extension(backend):
    ext = backend.hiprtc.ext
    assert callable(ext.hiprtcLinkCreate2) and callable(ext.HiprtcLinkCreateOpts)
    assert set(ext.__all__) == {"HiprtcLinkCreateOpts", "hiprtcLinkCreate2"}


def test_options_convert_as_hip_pythons_helper_converts_them():
    real = pytest.importorskip("rocm.bindings.hiprtc_pyext")
    ours = _quiet(ext_module(importlib.import_module("hrr.backends.sim").hiprtc).HiprtcLinkCreateOpts, **OPTIONS)
    theirs = _quiet(real.HiprtcLinkCreateOpts, **OPTIONS)
    assert ours[0] == theirs[0] == len(OPTIONS)
    assert [int(k) for k in ours[1]] == [int(k) for k in theirs[1]]
    assert ours[2] == [getattr(v, "value", v) for v in theirs[2]]
    empty = _quiet(ext_module(importlib.import_module("hrr.backends.sim").hiprtc).HiprtcLinkCreateOpts)
    assert list(empty) == [0, None, None] == list(_quiet(real.HiprtcLinkCreateOpts))


def test_unknown_options_fail_as_in_hip_python(backend):
    opts = backend.hiprtc.ext.HiprtcLinkCreateOpts
    with pytest.raises(AttributeError):
        _quiet(opts, hipJitOptionNoSuchThing=1)
    with pytest.raises(KeyError):
        _quiet(opts, HIPRTC_JIT_NO_SUCH_THING=1)
    with pytest.raises(NotImplementedError):
        _quiet(opts, hipJitOptionNumOptions=1)
    with pytest.raises(IndexError):
        _quiet(opts)[3]


@pytest.mark.skipif(ht.HIP_PYTHON_MAJOR == 7, reason="hip-python 7.x does not deprecate its helpers")
def test_the_helpers_are_deprecated_as_in_hip_python_10(backend):
    with pytest.warns(DeprecationWarning, match="hiprtcLinkCreate2 is deprecated"):
        err, state = backend.hiprtc.ext.hiprtcLinkCreate2()
    if int(err) == 0:
        backend.hiprtc.hiprtcLinkDestroy(state)


def test_an_option_whose_value_is_0_is_taken(backend):
    opts = _quiet(backend.hiprtc.ext.HiprtcLinkCreateOpts, hipJitOptionMaxRegisters=64)
    assert list(opts) == [1, [backend.hiprtc.hipJitOption.hipJitOptionMaxRegisters], [64]]
