"""The compute architecture NVRTC compiles for: the current device's ``sm_XY``, found once
(sm_90 without a driver or GPU). Both the built-in kernel library and hiprtc ask it."""
from __future__ import annotations

import threading

from hrr.backends.cuda import _runtime

DEFAULT_ARCH = "sm_90"

_arch_lock = threading.Lock()
_arch: str | None = None


def device_arch() -> str:
    """``sm_XY`` of the current device, or sm_90 when no driver/GPU is present."""
    global _arch
    if _arch is not None:
        return _arch
    with _arch_lock:
        arch = DEFAULT_ARCH
        if _runtime.driver_present():
            try:
                _runtime.require_driver()
                rt = _runtime.STATE.rt
                err, dev = rt.cudaGetDevice()
                if int(err) == 0:
                    e1, major = rt.cudaDeviceGetAttribute(
                        rt.cudaDeviceAttr.cudaDevAttrComputeCapabilityMajor, dev)
                    e2, minor = rt.cudaDeviceGetAttribute(
                        rt.cudaDeviceAttr.cudaDevAttrComputeCapabilityMinor, dev)
                    if int(e1) == 0 and int(e2) == 0:
                        arch = f"sm_{major}{minor}"
            except Exception:  # noqa: BLE001 - no usable device: the default arch
                arch = DEFAULT_ARCH
        _arch = arch
        return arch
