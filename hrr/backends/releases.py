"""A backend's ``hip`` and ``hiprtc`` as each installed hip-python release spells them.

hrr's modules take hip-python 10.x's forms. ``release_modules`` gives the module a program
finds under each spelling (``from hip import hip``, ``from rocm.bindings import hip``):
where 7.x is installed, a copy with 7.x's forms of the calls whose signatures changed
(their output struct passed in, fewer parameters), and, where 7.x sits beside 10.x, 7.x's
own names and enum members.
"""
from __future__ import annotations

import ctypes
import enum
import functools
import inspect
import sys
import types
from typing import Any

from hrr.api.catalogue import rows
from hrr.hiptypes.installed import CLASSIC, PRIMARY, Release
from hrr.hiptypes.mirror import UNCATALOGUED_MARK, is_dunder, is_function, is_uncatalogued, uncatalogued_function
from hrr.hiptypes.pointers import REAL_POINTER, as_address
from hrr.hiptypes.structs import as_text


def _release7_fewer_params(mod: types.ModuleType, done: dict[str, Any], real: Any) -> dict[str, Any]:
    """hip-python 7.x's forms of calls whose 7.x binding (in ``real``, 7.x's ``hip``) lacks
    some of 10.x's parameters (e.g. ``hipGraphAddEmptyNode(graph, numDependencies)``: no
    dependency array): 7.x's parameters, the missing ones passed as None."""
    forms: dict[str, Any] = {}
    for name, fn in vars(mod).items():
        real_fn = getattr(real, name, None)
        if name in done or not name.startswith("hip") or not callable(fn) or real_fn is None \
                or is_uncatalogued(fn):
            continue
        try:
            ours, theirs = list(inspect.signature(fn).parameters), inspect.signature(real_fn)
        except (TypeError, ValueError):
            continue
        kept = list(theirs.parameters)
        if kept == ours or not set(kept) < set(ours) or [p for p in ours if p in kept] != kept:
            continue

        def form(*args: Any, _fn: Any = fn, _kept: list = kept, **kwargs: Any) -> Any:
            if len(args) > len(_kept):   # as hip-python 7.x's binding says, never dropped unseen
                raise TypeError(f"{_fn.__name__}() takes {len(_kept)} positional arguments but {len(args)} were given")
            kwargs.update(zip(_kept, args, strict=False))
            return _fn(**kwargs)
        form.__name__ = form.__qualname__ = name
        form.__signature__ = theirs  # type: ignore[attr-defined]
        forms[name] = form
    get_params = getattr(mod, "hipGraphKernelNodeGetParams", None)
    if get_params is not None and "hipGraphKernelNodeGetParams" not in done:
        def hipGraphKernelNodeGetParams(node: Any, pNodeParams: Any) -> tuple:  # noqa: N802,N803
            err, params = get_params(node)
            if params is not None and pNodeParams is not None:
                for field in ("gridDim", "blockDim"):
                    dst, src = getattr(pNodeParams, field), getattr(params, field)
                    dst.x, dst.y, dst.z = src.x, src.y, src.z
                for field in ("func", "sharedMemBytes", "kernelParams", "extra"):
                    setattr(pNodeParams, field, getattr(params, field))
            return (err,)
        forms["hipGraphKernelNodeGetParams"] = hipGraphKernelNodeGetParams
    return forms

# The char arrays of hipDeviceProp_t (C header lengths); its other fields Python cannot set
# are int arrays and nested structs, whose extent hip-python's own getters tell.
_CHAR_ARRAYS = {"name": 256, "gcnArchName": 256, "luid": 8}
_LAYOUTS: dict[type, dict[str, tuple[int, int, int]]] = {}


def _settable(struct: Any, field: str) -> bool:
    try:
        setattr(struct, field, getattr(struct, field))
    except (AttributeError, TypeError, ValueError):
        return False
    return True


def _struct_layout(cls: Any) -> dict[str, tuple[int, int, int]]:
    """``(offset, element size, count)`` of each field of hip-python's struct class ``cls``
    that Python cannot set (a char or int array, a nested struct), found once per class by
    reading hip-python's own getters over memory holding two byte patterns."""
    layout = _LAYOUTS.get(cls)
    if layout is not None:
        return layout
    size = int(cls().c_sizeof())
    buf = ctypes.create_string_buffer(size + 64)
    base = ctypes.addressof(buf)
    view = cls.fromObj(base)
    fields = [f for f in cls.PROPERTIES() if not _settable(view, f)]
    # Each byte holds a value from 1 to 127 (ASCII: a text getter decodes it), and the two
    # patterns together name the byte's offset: offset = 127 * (high - 1) + (low - 1).
    reads: list[dict[str, list[int]]] = []
    for pattern in (bytes(k % 127 + 1 for k in range(size)), bytes(k // 127 + 1 for k in range(size))):
        ctypes.memmove(base, pattern, size)
        got: dict[str, list[int]] = {}
        for field in fields:
            value = getattr(view, field)
            if isinstance(value, str):
                value = value.encode("latin-1")
            if isinstance(value, (bytes, bytearray)):
                got[field] = [value[0]] if value else []
            elif isinstance(value, list):
                got[field] = [int(v) & 0xFF for v in value[:2]]
        reads.append(got)
    layout = {}
    for field in fields:
        value = getattr(view, field)
        if field in reads[0] and reads[0][field]:
            offsets = [127 * (hi - 1) + (lo - 1) for lo, hi in zip(reads[0][field], reads[1][field], strict=True)]
            if isinstance(value, list):
                step = offsets[1] - offsets[0] if len(offsets) > 1 else 4
                layout[field] = (offsets[0], step, len(value))
            else:
                layout[field] = (offsets[0], 1, _CHAR_ARRAYS.get(field, 0))
        elif hasattr(value, "c_sizeof"):   # a nested struct: a view into this one's memory
            layout[field] = (int(value) - base, int(value.c_sizeof()), 1)
    _LAYOUTS[cls] = layout
    return layout


def _poke(dst: Any, field: str, value: Any) -> bool:
    """Write ``value`` into field ``field`` of hip-python's struct ``dst`` through its memory
    (for the fields hip-python offers no setter for); False when that cannot be done."""
    spot = _struct_layout(type(dst)).get(field)
    if spot is None or value is None:
        return False
    offset, step, count = spot
    addr = int(dst) + offset
    if field in _CHAR_ARRAYS and count:
        text = as_text(value, bytes)[:count - 1]
        ctypes.memmove(addr, text.ljust(count, b"\0"), count)
    elif isinstance(value, (list, tuple)):
        data = b"".join(int(v).to_bytes(step, "little", signed=int(v) < 0) for v in list(value)[:count])
        ctypes.memmove(addr, data, len(data))
    elif count == 1 and hasattr(value, "c_sizeof"):   # a nested struct (uuid, arch): its bytes
        ctypes.memmove(addr, int(value), min(step, int(value.c_sizeof())))
    else:
        return False
    return True


def _same_enum(value: Any, owner: Any) -> Any:
    """An enum member as the same-named enum of the hip-python module that defines class
    ``owner`` (7.x's hip, beside 10.x's): a 7.x struct's setter takes 7.x's members only."""
    module = sys.modules.get(getattr(owner, "__module__", ""))
    target = getattr(module, type(value).__name__, None)
    return value if target is None or target is type(value) else target(int(value))


def _fill(dst: Any, src: Any, fields: Any) -> None:
    """Copy ``fields`` of ``src`` into the struct ``dst`` a 7.x program passed in. A field
    hip-python offers no setter for goes into hip-python's struct memory, or the instance's
    ``__dict__`` (hrr's subclass reads it from there); a field ``dst`` lacks is left out."""
    for field in fields:
        value = getattr(src, field, None)
        if isinstance(value, enum.Enum):
            value = _same_enum(value, type(dst))
        try:
            setattr(dst, field, value)
            continue
        except (AttributeError, TypeError, ValueError):
            pass
        if isinstance(dst, REAL_POINTER) and hasattr(type(dst), field) and _poke(dst, field, value):
            continue
        if hasattr(dst, "__dict__"):
            dst.__dict__[field] = value


def _release7_forms(mod: types.ModuleType, real: Any) -> dict[str, Any]:
    """hip-python 7.x's forms of the calls whose output struct 10.x moved into the result,
    over the module's 10.x functions (so capture records the 10.x row underneath); ``real``
    is 7.x's ``hip``, whose signatures the forms take."""
    forms: dict[str, Any] = {}
    props_of = getattr(mod, "hipGetDeviceProperties", None)
    if props_of is not None:
        def hipGetDeviceProperties(prop: Any, deviceId: Any) -> tuple:  # noqa: N802
            err, props = props_of(deviceId)
            if props is not None and prop is not None:
                names = type(props).PROPERTIES() if hasattr(type(props), "PROPERTIES") else vars(props)
                _fill(prop, props, names)
            return (err,)
        forms["hipGetDeviceProperties"] = hipGetDeviceProperties
    attrs_of = getattr(mod, "hipPointerGetAttributes", None)
    if attrs_of is not None:
        def hipPointerGetAttributes(attributes: Any, ptr: Any) -> tuple:  # noqa: N802
            err, attrs = attrs_of(ptr)
            if attrs is not None and attributes is not None:
                _fill(attributes, attrs, ("type", "device", "devicePointer", "hostPointer",
                                          "isManaged", "allocationFlags"))
            return (err,)
        forms["hipPointerGetAttributes"] = hipPointerGetAttributes
    instantiate = getattr(mod, "hipGraphInstantiate", None)
    if instantiate is not None:
        def hipGraphInstantiate(graph: Any, pLogBuffer: Any, bufferSize: Any) -> tuple:  # noqa: N802,N803
            err, graph_exec, error_node, log = instantiate(graph, bufferSize)
            if pLogBuffer is not None and log is not None and int(bufferSize) > 0:
                text = bytes(log)[:int(bufferSize) - 1] + b"\0"
                ctypes.memmove(as_address(pLogBuffer), text, len(text))
            return (err, graph_exec, error_node)
        forms["hipGraphInstantiate"] = hipGraphInstantiate
    func_attrs_of = getattr(mod, "hipFuncGetAttributes", None)
    if func_attrs_of is not None:
        def hipFuncGetAttributes(attr: Any, func: Any) -> tuple:  # noqa: N802
            err, attrs = func_attrs_of(func)
            if attrs is not None and attr is not None:
                _fill(attr, attrs, ("binaryVersion", "cacheModeCA", "constSizeBytes", "localSizeBytes",
                                    "maxDynamicSharedSizeBytes", "maxThreadsPerBlock", "numRegs",
                                    "preferredShmemCarveout", "ptxVersion", "sharedSizeBytes"))
            return (err,)
        forms["hipFuncGetAttributes"] = hipFuncGetAttributes
    forms.update(_release7_fewer_params(mod, forms, real))
    for fn in forms.values():
        fn.__doc__ = f"hip-python 7.x's {fn.__name__}, over hrr's 10.x call."
    return forms


def _enum_map(release: Release) -> dict[type, type]:
    """Each enum class of hrr's hip-python release (PRIMARY) to the same-named one of
    ``release``, where they differ."""
    out: dict[type, type] = {}
    if PRIMARY is None:
        return out
    for ours, theirs in ((PRIMARY.hip, release.hip), (PRIMARY.hiprtc, release.hiprtc)):
        for key in dir(ours):
            cls, other = getattr(ours, key), getattr(theirs, key, None)
            if isinstance(cls, type) and issubclass(cls, enum.Enum) and isinstance(other, type) \
                    and issubclass(other, enum.Enum) and other is not cls:
                out[cls] = other
    return out


def _in_release(fn: Any, convert: Any) -> Any:
    """``fn`` whose results' enum members are ``release``'s (``convert`` maps one item)."""
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        return tuple(map(convert, result)) if type(result) is tuple else result
    return call


def _beside(mod: types.ModuleType, release: Release, passthrough: Any) -> dict[str, Any]:
    """The names of ``mod`` (PRIMARY's spelling) that ``release``'s module spells its own way:
    its classes, enums and constants, the module-level enum members, stand-ins (or, with
    ``passthrough``, its own functions) for its functions that ``mod`` does not implement,
    and hrr's functions returning ``release``'s enum members."""
    leaf = mod.__name__.rsplit(".", 1)[-1]
    real = release.hiprtc if leaf == "hiprtc" else release.hip
    backend = next((info[2] for v in vars(mod).values() if (info := getattr(v, UNCATALOGUED_MARK, None))), "hrr")
    enum_map = _enum_map(release)
    catalogued = {row.name for row in rows()}

    def convert(value: Any) -> Any:
        target = enum_map.get(type(value))
        if target is None:
            return value
        try:
            return target(int(value))
        except ValueError:   # a value this release's enum lacks: left as it is
            return value
    out: dict[str, Any] = {}
    for key, value in vars(mod).items() if enum_map else ():
        if is_function(value) and not is_uncatalogued(value) and key.startswith("hip"):
            out[key] = _in_release(value, convert)
        elif isinstance(value, enum.Enum):
            out[key] = convert(value)
    for key in dir(real):
        if is_dunder(key):
            continue
        value = getattr(real, key)
        if isinstance(value, types.ModuleType) and isinstance(vars(mod).get(key), types.ModuleType):
            continue   # hrr's own module under that name (hiprtc.ext, over hrr's calls) stays
        if not is_function(value):
            out[key] = value
        elif passthrough is not None:   # hip-python itself: a call hrr does not catalogue stays 7.x's own
            if key not in catalogued:
                out[key] = passthrough(key, value)
        elif key not in vars(mod) or is_uncatalogued(vars(mod)[key]):   # a stand-in with 7.x's signature
            out[key] = uncatalogued_function(leaf, key, backend, value)
    if hasattr(real, "__all__"):
        out["__all__"] = list(real.__all__)
    if "has_symbol" in vars(mod):
        out["has_symbol"] = mod.has_symbol
    return out


def release_module(mod: types.ModuleType, release: Release | None = None, *,
                   passthrough: Any = None) -> types.ModuleType:
    """``mod`` (a backend's ``hip`` or ``hiprtc``, in PRIMARY's spelling) as ``release``
    spells it (default: CLASSIC, the release a program's ``from hip import hip`` finds):
    itself for 10.x or none; for 7.x a copy with 7.x's forms of the calls that changed,
    and, where 7.x sits beside 10.x, 7.x's own names and enum members. ``passthrough(name,
    fn)`` gives, for a backend that is hip-python itself, what to offer for 7.x's own
    function ``fn`` that ``mod`` does not implement (default: a stand-in raising
    UncataloguedCall when called)."""
    release = CLASSIC if release is None else release
    if release is None or release.major != 7:
        return mod
    forms = {} if mod.__name__.endswith("hiprtc") else _release7_forms(mod, release.hip)
    if not forms and release is PRIMARY:   # hiprtc, in 7.x's own spelling already
        return mod
    out = types.ModuleType(mod.__name__, mod.__doc__)
    out.__dict__.update({k: v for k, v in vars(mod).items() if k not in ("__name__", "__doc__")})
    out.__dict__.update(forms)
    if PRIMARY is not None and release is not PRIMARY:
        out.__dict__.update(_beside(out, release, passthrough))
    return out


def release_modules(hip_module: types.ModuleType, hiprtc_module: types.ModuleType, *, itself: bool = False,
                    passthrough: Any = None) -> dict[str, tuple[types.ModuleType, types.ModuleType]]:
    """The ``(hip, hiprtc)`` a program finds under each spelling, ``"hip"`` (``from hip
    import hip``) and ``"rocm.bindings"``, for a backend's modules: each mirrors the release
    installed under that name (7.x's ``hip`` beside 10.x's ``rocm.bindings``: one each).
    ``itself``: the modules are hip-python's own (the ``hip`` backend), which need adapting
    only to a release they are not."""
    modern = (hip_module, hiprtc_module)
    if CLASSIC is None or CLASSIC.major != 7 or (itself and CLASSIC is PRIMARY):
        return {"hip": modern, "rocm.bindings": modern}
    classic = (release_module(hip_module, CLASSIC, passthrough=passthrough),
               release_module(hiprtc_module, CLASSIC, passthrough=passthrough))
    return {"hip": classic, "rocm.bindings": classic if CLASSIC is PRIMARY else modern}
