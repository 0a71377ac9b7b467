"""The hip-python releases installed here, found without importing hrr's own ``hip``.

hip-python 10.x (``rocm.bindings``) and 7.x (its ``hip`` package) may both be installed:
``RELEASES`` holds each, ``PRIMARY`` the one hrr's types come from (10.x where installed),
``CLASSIC`` the one a program's ``from hip import hip`` finds (7.x where installed).
"""
from __future__ import annotations

import dataclasses
import importlib
import importlib.machinery
import importlib.util
import os
import sys
from typing import Any


@dataclasses.dataclass(frozen=True)
class Release:
    """One hip-python release installed here: its major version and its own ``hip``,
    ``hiprtc`` and ``util`` modules."""

    major: int
    hip: Any
    hiprtc: Any
    util: Any

    @property
    def text_type(self) -> type:
        """The Python type of hipDeviceProp_t's C strings: 7.x gives bytes, 10.x str."""
        return bytes if self.major == 7 else str


def _release10() -> Release | None:
    """hip-python 10.x, imported by its own names (``rocm.bindings``), or None."""
    try:
        from rocm.bindings import hip as real_hip, hiprtc as real_hiprtc, util  # hip-python 10.x
    except Exception:  # noqa: BLE001 - any import failure means "not available"
        return None
    if getattr(real_hip, "SUPPORTED_APIS", None) is not None:   # hrr's own module sits there
        return None
    return Release(10, real_hip, real_hiprtc, util)


def _release7() -> Release | None:
    """hip-python 7.x, whose ``hip`` package holds the bindings themselves (10.x's ``hip``
    package only re-exports ``rocm.bindings``), or None. Its files are looked at before
    anything is imported: hip-python 10's package is not imported for nothing, and the
    package hrr installs as ``hip`` (no spec) is never taken for hip-python's."""
    try:
        spec = importlib.util.find_spec("hip")
    except (ImportError, ValueError):   # ValueError: hrr's own package (its __spec__ is None)
        return None
    places = list(spec.submodule_search_locations or ()) if spec is not None else []
    suffixes = (*importlib.machinery.EXTENSION_SUFFIXES, ".py")
    if not any(os.path.exists(os.path.join(place, "hip" + suffix)) for place in places for suffix in suffixes):
        return None
    try:
        real_hip = importlib.import_module("hip.hip")
        real_hiprtc = importlib.import_module("hip.hiprtc")
        importlib.import_module("hip._util.types")
    except Exception:  # noqa: BLE001
        return None
    if getattr(real_hip, "SUPPORTED_APIS", None) is not None:
        return None
    return Release(7, real_hip, real_hiprtc, sys.modules["hip._util"])


def _installed_releases() -> dict[int, Release]:
    found = {}
    for probe in (_release10, _release7):
        release = probe()
        if release is not None:
            found[release.major] = release
    return found


# Every hip-python release installed here. hip-python 10.x's packages (rocm-bindings-*) and
# 7.x's ``hip`` package can sit side by side (``pip install hrr``, then ``pip install
# 'hip-python<8'``): a program's ``from hip import hip`` then finds 7.x, its ``from
# rocm.bindings import hip`` 10.x, and hrr mirrors each under its own name.
RELEASES: dict[int, Release] = _installed_releases()
# The release hrr's types come from (10.x where installed) ...
PRIMARY: Release | None = RELEASES.get(10) or RELEASES.get(7)
# ... and the one a program's ``from hip import hip`` finds (7.x where installed).
CLASSIC: Release | None = RELEASES.get(7) or PRIMARY
_real: tuple[Any, Any, Any] | None = None if PRIMARY is None else (PRIMARY.hip, PRIMARY.hiprtc, PRIMARY.util)


def real_modules() -> tuple[Any, ...]:
    """hip-python's own ``hip`` and ``hiprtc`` modules (empty when it is not installed); of
    10.x when both 7.x and 10.x are installed."""
    return () if _real is None else (_real[0], _real[1])


def real_util() -> Any:
    """hip-python's ``util`` package (``util.types``: Pointer, DeviceArray, CStr), or None."""
    return None if _real is None else _real[2]

# The Python type of hipDeviceProp_t's C strings (``name``, ``gcnArchName``): hip-python
# 10.x gives str, 7.x bytes (its examples do ``b"--offload-arch=" + props.gcnArchName``).
# With no hip-python installed, hrr mirrors 10.x.
HIP_PYTHON_MAJOR = None if PRIMARY is None else PRIMARY.major
TEXT_TYPE: type = bytes if HIP_PYTHON_MAJOR == 7 else str
