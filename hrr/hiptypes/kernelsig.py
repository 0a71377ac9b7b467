"""Kernel parameters by name and C type, from a kernel's own declaration in HIP C++ source.

A hiprtc program's code object is its source (``kernelsource``), so an archive holds each
kernel's signature: ``extern "C" __global__ void saxpy(float a, const float* x, ...)``.
The readers (``hrr dump``, ``hrr diff``) show a launch's arguments by those names and
types: a ``float`` as 2.5, not as the integer its bits make. The parser is small and
tolerant, not a C++ front end: it finds ``__global__`` declarations whose name is a plain
identifier (templates are skipped: their launched names are mangled), splits the
parameter list at top-level commas and takes each parameter's last identifier as its name.
Untrusted input: the text is bounded and nothing here evaluates it.
"""
from __future__ import annotations

import re
import struct
from typing import Any

import attrs

MAX_SOURCE_CHARS = 8 << 20          # a bigger source is not searched
MAX_PARAMS = 256

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_GLOBAL = re.compile(r"\b__global__\b")
_ATTRIBUTE = re.compile(r"\b(?:__launch_bounds__|__attribute__|__declspec|alignas)\s*\(")
_NAME_THEN_PAREN = re.compile(r"([A-Za-z_]\w*)\s*\($")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_QUALIFIERS = frozenset({"const", "volatile", "__restrict__", "__restrict", "restrict", "struct",
                         "class", "union", "enum", "typename", "register", "__shared__", "__constant__"})


@attrs.frozen
class ParamSig:
    """One kernel parameter as its declaration writes it: ``name`` and its C ``ctype``
    (qualifiers dropped, ``*`` kept: ``float*``, ``unsigned int``)."""

    name: str
    ctype: str


def _balanced(text: str, start: int, open_: str = "(", close: str = ")") -> int:
    """The index just past the bracket closing the one at ``start`` (-1: never closed)."""
    depth = 0
    for i in range(start, min(len(text), start + 65536)):
        c = text[i]
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


def _split_top(text: str) -> list[str]:
    """``text`` split at commas outside (), <>, [] and {}."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "(<[{":
            depth += 1
        elif c in ")>]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def _param(text: str, index: int) -> ParamSig | None:
    text = text.split("=", 1)[0].strip()        # a default argument
    text = re.sub(r"\[[^\]]*\]", "*", text)    # float a[] is a float*
    words = _IDENT.findall(text)
    if not words:
        return None
    stars = "*" * text.count("*") + "&" * text.count("&")
    kept = [w for w in words if w not in _QUALIFIERS]
    if len(kept) >= 2:
        name, type_words = kept[-1], kept[:-1]
    else:                                        # an unnamed parameter: its type alone
        name, type_words = f"param{index}", kept
    return ParamSig(name, " ".join(type_words) + stars)


def kernel_signatures(source: str) -> dict[str, tuple[ParamSig, ...]]:
    """Each ``__global__`` kernel with a plain name that ``source`` declares: its parameters
    in order (the last declaration of a name wins; a definition repeats its prototype)."""
    text = _STRING.sub('""', _COMMENT.sub(" ", source[:MAX_SOURCE_CHARS]))
    found: dict[str, tuple[ParamSig, ...]] = {}
    for m in _GLOBAL.finditer(text):
        i = m.end()
        # skip attributes such as __launch_bounds__(256) between __global__ and the name
        while True:
            attr = _ATTRIBUTE.match(text, i) or re.compile(r"\s+").match(text, i)
            if attr is None:
                break
            if attr.group(0).endswith("("):
                end = _balanced(text, attr.end() - 1)
                if end < 0:
                    break
                i = end
            else:
                i = attr.end()
        paren = text.find("(", i, i + 512)
        if paren < 0 or text[i:paren].count(";") or "<" in text[i:paren]:
            continue
        head = _NAME_THEN_PAREN.search(text[i:paren + 1])
        if head is None:
            continue
        end = _balanced(text, paren)
        if end < 0:
            continue
        inner = text[paren + 1:end - 1].strip()
        if inner in ("", "void"):
            found[head.group(1)] = ()
            continue
        params = [_param(p, k) for k, p in enumerate(_split_top(inner)[:MAX_PARAMS])]
        if all(p is not None for p in params):
            found[head.group(1)] = tuple(p for p in params if p is not None)
    return found


# -- a scalar's value from its bytes, by its C type ----------------------------------------
_FLOATS = {"float": "<f", "double": "<d", "_Float16": "<e", "__half": "<e", "half": "<e", "float16_t": "<e"}
_SIGNED_WORDS = frozenset({"int", "short", "long", "char", "signed", "int8_t", "int16_t", "int32_t",
                           "int64_t", "ptrdiff_t", "intptr_t", "ssize_t", "long long", "size_t"})


def scalar_value(ctype: str, raw: bytes) -> Any:
    """A scalar parameter's value from its little-endian bytes, as its C type reads it: a
    float type as a float, a signed integer type as signed, ``bool`` as a bool, other
    integers unsigned; None when ``ctype`` names a pointer or nothing known (the caller
    shows the raw value)."""
    ctype = ctype.strip()
    if not ctype or ctype.endswith(("*", "&")):
        return None
    fmt = _FLOATS.get(ctype)
    if fmt is not None and struct.calcsize(fmt) == len(raw):
        return struct.unpack(fmt, raw)[0]
    if ctype == "bool" and len(raw) == 1:
        return raw != b"\0"
    words = ctype.split()
    if not words or any(w not in _SIGNED_WORDS and w not in ("unsigned",) and not w.startswith("uint")
                        for w in words) or len(raw) not in (1, 2, 4, 8):
        return None
    signed = "unsigned" not in words and not any(w.startswith("uint") for w in words) and "size_t" not in words
    return int.from_bytes(raw, "little", signed=signed)
