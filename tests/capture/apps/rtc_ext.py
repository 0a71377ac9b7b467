"""hip-python's hiprtc extensions, reached every way a program spells them: ``hiprtc.ext``,
``from hip import hiprtc_pyext`` and (hip-python 10) ``rocm.bindings.hiprtc_pyext``; each
must be hrr's, over the hiprtc it installed, so the link state it makes is recorded."""
import sys
import warnings

from hip import hiprtc, hiprtc_pyext
from rocm.bindings import hiprtc_pyext as rocm_pyext
from rocm.bindings.hiprtc_pyext import hiprtcLinkCreate2

warnings.simplefilter("ignore", DeprecationWarning)
assert hiprtc_pyext is hiprtc.ext is rocm_pyext is sys.modules["hip.hiprtc_pyext"], (hiprtc_pyext, hiprtc.ext)
assert hiprtcLinkCreate2 is hiprtc.ext.hiprtcLinkCreate2
for make in (hiprtc.ext.hiprtcLinkCreate2, hiprtcLinkCreate2):
    err, state = make(hipJitOptionOptimizationLevel=2)
    assert int(err) == 0, err
    assert int(hiprtc.hiprtcLinkDestroy(state)[0]) == 0
print("rtc_ext: ok")
