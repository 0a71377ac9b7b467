"""A launched kernel's parameters by name and C type, for the readers (``dump``, ``diff``).

The archive stores every code object a module was loaded from; a kernel's signature comes
from it: a hiprtc program's source (the sim's and cuda's code objects carry it), or an
AMDGPU code object's metadata (``.name``, ``.type_name``). ``KernelParams`` follows one
process's records (which module holds which code object, which function is which kernel)
and answers a function handle's parameters; ``show_args`` reads a launch's kernarg bytes
by the recorded layout and those parameters: names where the layout has none, floats as
floats. Code objects are read through the reader (checked, under its limits), once each.
"""
from __future__ import annotations

import math
import re
from typing import Any, Callable

from hrr.api.catalogue import Api
from hrr.api.roles import out_role, param_role
from hrr.backends.amdgpu import read_code_object
from hrr.backends.amdgpu.bundle import BUNDLE_MAGIC, CCOB_MAGIC
from hrr.errors import HrrError
from hrr.hiptypes import kernelsource
from hrr.hiptypes.codefile import ELF64_MAGIC
from hrr.hiptypes.kernargs import POINTER, VALUE
from hrr.hiptypes.kernelsig import ParamSig, kernel_signatures, scalar_value

_PLACEHOLDER = re.compile(r"(arg|param)\d+")
MAX_CODE_OBJECTS = 256   # code objects parsed per process (each once)


def signatures_in(code: bytes) -> dict[str, tuple[ParamSig, ...]]:
    """Each kernel's parameters that the code object ``code`` declares (empty: none known)."""
    if kernelsource.is_kernel_source(code):
        try:
            ks = kernelsource.decode(code)
        except kernelsource.KernelSourceError:
            return {}
        found: dict[str, tuple[ParamSig, ...]] = {}
        for unit in ks.units:
            found.update(kernel_signatures(unit.source.decode("utf-8", errors="replace")))
        return found
    if code.startswith((ELF64_MAGIC, BUNDLE_MAGIC, CCOB_MAGIC)):
        try:
            obj = read_code_object(code)
        except (ValueError, HrrError):   # CodeObjectError is a ValueError
            return {}
        # HIP's compiler leaves .name and .type_name out; OpenCL's (and -g builds) keep them
        return {k.name: tuple(ParamSig(a.name or f"param{i}", a.type_name) for i, a in enumerate(user))
                for k in obj.kernels
                if (user := [x for x in k.args if not x.hidden]) and any(a.name or a.type_name for a in user)}
    return {}


class KernelParams:
    """One process's kernels' parameters, from the records seen so far."""

    def __init__(self, read_code: Callable[[str], bytes] | None) -> None:
        self._read = read_code
        self._modules: dict[int, str] = {}                        # module handle -> code object name
        self._by_code: dict[str, dict[str, tuple[ParamSig, ...]]] = {}
        self.functions: dict[int, tuple[ParamSig, ...]] = {}      # function handle -> parameters

    def _signatures(self, code: str) -> dict[str, tuple[ParamSig, ...]]:
        sigs = self._by_code.get(code)
        if sigs is None:
            sigs = {}
            if self._read is not None and len(self._by_code) < MAX_CODE_OBJECTS:
                try:
                    sigs = signatures_in(self._read(code))
                except (HrrError, OSError, ValueError):
                    sigs = {}
            self._by_code[code] = sigs
        return sigs

    def observe(self, row: Api, args: list, err: Any, outs: list, kernel: str | None) -> None:
        """Note a module loaded from a stored code object, or a function got from a module
        (``kernel``: the kernel's name when ``row`` gets a function)."""
        if err != 0 or not outs or type(outs[0]) is not int:
            return
        code = next((a for p, a in zip(row.params, args, strict=False)
                     if param_role(p.role).names_code_object and isinstance(a, str)), None)
        if code is not None and out_role(row.outs[0].role).names_handle:
            self._modules[outs[0]] = code
        elif kernel is not None and args and type(args[0]) is int and args[0] in self._modules:
            sig = self._signatures(self._modules[args[0]]).get(kernel)
            if sig is not None:
                self.functions[outs[0]] = sig

    def forget_module(self, module: int, functions: Any) -> None:
        """A module was unloaded: its handle and its functions' handles may come back as others."""
        self._modules.pop(module, None)
        for fn in functions:
            self.functions.pop(fn, None)


def param_names(layout: list, sig: tuple[ParamSig, ...] | None) -> list[Any]:
    """The layout's parameter names, a signature's where the layout has none (or ``argN``)."""
    names = []
    for i, item in enumerate(layout):
        name = item[3] if isinstance(item, list) and len(item) == 4 else None
        if sig is not None and len(sig) == len(layout) and (not name or (isinstance(name, str)
                                                                        and _PLACEHOLDER.fullmatch(name))):
            name = sig[i].name
        names.append(name)
    return names


def show_args(layout: list, kernargs: bytes, sig: tuple[ParamSig, ...] | None) -> dict[str, Any]:
    """Each kernel parameter the function's layout names, read from the launch's kernarg
    bytes: pointers in hex, scalars by their C type (floats as floats, signed as signed)
    where the signature gives it, else as unsigned ints; anything else as its size."""
    out: dict[str, Any] = {}
    sig = sig if sig is not None and len(sig) == len(layout) else None
    for i, (item, name) in enumerate(zip(layout, param_names(layout, sig), strict=False)):
        if not (isinstance(item, list) and len(item) == 4 and type(item[0]) is int and type(item[1]) is int):
            continue
        offset, size, kind, _ = item
        key = name if isinstance(name, str) and name else f"param{i}"
        if not (0 <= offset and 0 < size and offset + size <= len(kernargs)):
            out[key] = "<outside the kernarg bytes>"
            continue
        raw = kernargs[offset:offset + size]
        typed = scalar_value(sig[i].ctype, raw) if sig is not None and kind != POINTER else None
        if typed is not None:
            # NaN and the infinities as words: JSON has none of them, and NaN equals nothing
            out[key] = typed if not isinstance(typed, float) or math.isfinite(typed) else repr(typed)
        elif kind == POINTER and size == 8 or (size == 8 and sig is not None and sig[i].ctype.endswith("*")):
            out[key] = f"0x{int.from_bytes(raw, 'little'):x}"
        elif kind == VALUE and size in (1, 2, 4, 8):
            out[key] = int.from_bytes(raw, "little")
        else:
            out[key] = {"bytes": size}
    return out
