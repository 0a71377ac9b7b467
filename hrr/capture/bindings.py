"""hip-python's module names (``hip``, ``hip.hip``, ``rocm.bindings.hip``...) made to hold
hrr's modules, and which of hip-python's own a program reached past them."""
from __future__ import annotations

import importlib
import sys
import types
from typing import Any, Mapping

from hrr.hiptypes import CLASSIC, RELEASES, real_modules

# What install_hip_package put under each of BINDING_NAMES in this process.
_installed: dict[str, Any] = {}


# The module names under which a program finds hip-python: the ``hip`` package (every
# release) and the ``rocm.bindings`` layout of hip-python 10.
BINDING_NAMES = ("hip.hip", "hip.hiprtc", "rocm.bindings.hip", "rocm.bindings.hiprtc")


def _package(name: str) -> Any:
    """The package ``name``: the real one when it imports (so its other submodules, e.g.
    ``rocm.bindings.util``, keep working), else an empty one hrr makes."""
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - absent or broken: hrr provides the name itself
        pkg: Any = types.ModuleType(name, doc=f"hip-python's {name} package, provided by hrr")
        pkg.__path__ = []  # a package, so that "import rocm.bindings.hip" works
        sys.modules[name] = pkg
        parent, _, leaf = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], leaf, pkg)
        return pkg


def install_hip_package(hip_module: types.ModuleType, hiprtc_module: types.ModuleType, *,
                        classic: tuple[types.ModuleType, types.ModuleType] | None = None,
                        libraries: Mapping[str, types.ModuleType] | None = None) -> None:
    """Make ``hip``, ``hip.hip`` and ``hip.hiprtc``, and hip-python 10's ``rocm.bindings.hip``
    and ``rocm.bindings.hiprtc``, these modules, even where hip-python is installed;
    ``classic``: other modules for the ``hip`` package's names (hip-python 7.x's spelling,
    where 7.x's ``hip`` package sits beside 10.x's ``rocm.bindings``); ``libraries``: the math
    libraries' modules by name (``hip.hipblas`` and ``rocm.bindings.hipblas``, ...)."""
    util = real_util_module()
    real_pkg = _real_hip_package()
    classic_hip, classic_hiprtc = classic or (hip_module, hiprtc_module)
    pkg: Any = types.ModuleType("hip", doc="hip-python's package, provided by hrr")
    if real_pkg is not None:  # its version names and other bindings (hipblas, ...) stay
        pkg.__dict__.update({k: v for k, v in vars(real_pkg).items() if not k.startswith("__")})
    pkg.__path__ = []  # a package, so that "import hip.hip" works
    pkg.hip = classic_hip
    pkg.hiprtc = classic_hiprtc
    sys.modules["hip"] = pkg
    sys.modules["hip.hip"] = classic_hip
    sys.modules["hip.hiprtc"] = classic_hiprtc
    if util is not None:  # hip._util.types.Pointer, as hip-python spells it
        pkg._util = util
        sys.modules["hip._util"] = util
        sys.modules["hip._util.types"] = util.types
    _package("rocm")
    bindings = _package("rocm.bindings")
    bindings.hip = hip_module
    bindings.hiprtc = hiprtc_module
    sys.modules["rocm.bindings.hip"] = hip_module
    sys.modules["rocm.bindings.hiprtc"] = hiprtc_module
    ext = getattr(hiprtc_module, "ext", None)
    if isinstance(ext, types.ModuleType):   # hip-python's hiprtc_pyext, over these calls
        pkg.hiprtc_pyext = bindings.hiprtc_pyext = ext
        sys.modules["hip.hiprtc_pyext"] = sys.modules["rocm.bindings.hiprtc_pyext"] = ext
    for name, module in (libraries or {}).items():
        setattr(pkg, name, module)
        setattr(bindings, name, module)
        sys.modules[f"hip.{name}"] = sys.modules[f"rocm.bindings.{name}"] = module
    _installed.update({name: sys.modules[name] for name in BINDING_NAMES})


def _real_hip_package() -> Any:
    """hip-python's own ``hip`` package, or None (absent, or hrr's already installed)."""
    if not real_modules():
        return None
    try:
        pkg = importlib.import_module("hip")
    except Exception:  # noqa: BLE001 - a broken hip package: hrr's alone
        return None
    return pkg if getattr(pkg, "__path__", None) else None


def real_util_module() -> Any:
    """hip-python's ``util`` package (Pointer, DeviceArray, CStr) of the release the ``hip``
    package holds (7.x's ``hip._util`` beside 10.x), or None."""
    util = CLASSIC.util if CLASSIC is not None else None
    return util if util is not None and hasattr(util, "types") else None


def bypassed_bindings() -> list[str]:
    """The names under which hip-python's own ``hip``/``hiprtc`` modules are reachable in
    this process although hrr installed its own there: the program imported HIP in a way
    hrr did not intercept, so its calls went past the recorder. Asked once, at close."""
    real = [module for release in RELEASES.values() for module in (release.hip, release.hiprtc)]
    installed = _installed
    if not real or not installed:
        return []
    found = set()
    for name, mod in list(sys.modules.items()):
        if any(mod is r for r in real) and installed.get(name) is not mod:
            found.add(name)
    for pkg_name, leaf in (("hip", "hip"), ("hip", "hiprtc"), ("rocm.bindings", "hip"),
                           ("rocm.bindings", "hiprtc")):
        attr: Any = getattr(sys.modules.get(pkg_name), leaf, None)
        if attr is not None and any(attr is r for r in real) and \
                installed.get(f"{pkg_name}.{leaf}") is not attr:
            found.add(f"{pkg_name}.{leaf}")
    return sorted(found)
