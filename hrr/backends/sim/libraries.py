"""The kernel libraries installed here: those published under the entry-point group
``hrr.kernel_libraries`` (hrr's built-in one among them), plus those registered at run
time; and which one a sim code object names (``resolve_code_object``)."""
from __future__ import annotations

from importlib.metadata import entry_points

from hrr.backends.sim.builtin_kernels import LIBRARY as BUILTIN
from hrr.backends.sim.kernels import KernelLibrary
from hrr.hiptypes.simcode import CodeObject, CodeObjectError, decode_code_object

ENTRY_POINT_GROUP = "hrr.kernel_libraries"
_extra_libraries: dict[str, KernelLibrary] = {}
_entry_point_cache: dict[str, KernelLibrary] | None = None


def _major(version: str) -> str:
    return version.split(".", 1)[0]


def installed_libraries() -> dict[str, KernelLibrary]:
    """Every kernel library: entry points (loaded once) plus ones registered at run time."""
    global _entry_point_cache
    if _entry_point_cache is None:
        found: dict[str, KernelLibrary] = {}
        for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            try:
                lib = ep.load()
            except Exception:  # noqa: BLE001 - a broken library must not break the device
                continue
            if isinstance(lib, KernelLibrary):
                found[lib.name] = lib
        if "builtin" not in found:  # e.g. run from a source tree that was never installed
            found["builtin"] = BUILTIN
        _entry_point_cache = found
    return {**_entry_point_cache, **_extra_libraries}


def register_library(library: KernelLibrary) -> None:
    """Install a library without packaging (tests, notebooks)."""
    _extra_libraries[library.name] = library


def unregister_library(name: str) -> None:
    _extra_libraries.pop(name, None)


def resolve_code_object(data: bytes) -> tuple[KernelLibrary, CodeObject]:
    """The installed library a code object names; CodeObjectError when it cannot load here."""
    co = decode_code_object(data)
    lib = installed_libraries().get(co.library)
    if lib is None:
        raise CodeObjectError(f"kernel library {co.library!r} (version {co.version}) is not "
                              f"installed", code="hipErrorNoBinaryForGpu")
    if _major(lib.version) != _major(co.version):
        raise CodeObjectError(f"kernel library {co.library!r} is version {lib.version}, the code "
                              f"object needs {co.version}", code="hipErrorNoBinaryForGpu")
    missing = [k for k in co.kernels if k not in lib.kernels]
    if missing:
        raise CodeObjectError(f"kernel library {co.library!r} lacks {', '.join(missing)}",
                              code="hipErrorNoBinaryForGpu")
    return lib, co
