"""docs/api-coverage.md, written whole from the catalogue: ``python -m hrr.cli.coverage``.

The counts, one table per family (how each call replays, and which backends have a body
for it) and the hip-python functions that no row covers (read from the hip-python
installed here) all come from the code, so the number of catalogued calls is stated
there and nowhere by hand. ``--check`` exits 1 when the committed file is stale; a test
runs the same comparison.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from hrr.api.catalogue import NOOP, REAL, UNREPLAYABLE, Api, rows
from hrr.backends import sim
from hrr.hiptypes import HIP_PYTHON_MAJOR, is_uncatalogued, real_modules
from hrr.hiptypes.mathlibs import LIBRARIES, TYPES

DOC = Path(__file__).resolve().parents[2] / "docs" / "api-coverage.md"
COMMAND = "python -m hrr.cli.coverage"
BACKENDS = ("sim", "cuda", "hip")
UNCOVERED_HEADING = "## hip-python functions not covered"


def _names(mod: Any) -> set[str]:
    return set(vars(mod)) if mod is not None else set()


def _functions(mod: Any) -> set[str]:
    """The HIP functions of a ``hip``/``hiprtc`` module (no classes, enums or helpers, and
    not the stand-ins an hrr module has for hip-python's functions it does not implement)."""
    return {n for n, f in vars(mod).items() if n.startswith("hip") and callable(f)
            and not isinstance(f, type) and getattr(f, "__module__", None) != "enum" and not is_uncatalogued(f)}


def offered_uncatalogued() -> dict[str, set[str]]:
    """Per backend that imports here (sim, cuda), the HIP functions its modules offer that
    are no catalogue row (hiprtc's: the archive keeps the code object the program loads,
    not how it was compiled)."""
    catalogued = {r.name for r in rows()}
    out: dict[str, set[str]] = {}
    for backend in ("sim", "cuda"):
        try:
            mod = importlib.import_module(f"hrr.backends.{backend}")
        except Exception:  # noqa: BLE001 - the cuda extra is absent
            continue
        out[backend] = (_functions(mod.hip) | _functions(mod.hiprtc)) - catalogued
    return out


def backend_bodies() -> dict[str, set[str] | None]:
    """Per backend, the catalogued names its ``hip``/``hiprtc`` modules offer (None: the
    backend cannot be inspected here). The ``hip`` backend is hip-python itself: it passes
    each catalogued call to hip-python's own function, so it has those hip-python has."""
    catalogued = {r.name for r in rows()}
    out: dict[str, set[str] | None] = {"sim": _backend_names(sim) & catalogued}
    try:
        cuda = importlib.import_module("hrr.backends.cuda")
        out["cuda"] = _backend_names(cuda) & catalogued
    except Exception:  # noqa: BLE001 - the cuda extra is absent
        out["cuda"] = None
    if importlib.util.find_spec("hrr.backends.hip") is None:
        out["hip"] = set()
    else:   # what hip-python itself has, where it is installed here
        real = hip_python_functions()
        libraries = {r.name for r in rows() if r.module in LIBRARIES and r.name in _names(TYPES[r.module].real)}
        out["hip"] = catalogued if real is None else \
            catalogued & ({n for fs in real[1].values() for n in fs} | libraries)
    return out


def _backend_names(backend: Any) -> set[str]:
    """Every name of a backend's ``hip``, ``hiprtc`` and math-library modules."""
    return _names(backend.hip) | _names(backend.hiprtc) | {
        n for name in LIBRARIES for n in _names(backend.library(name))}


def hip_python_functions() -> tuple[str, dict[str, list[str]]] | None:
    """(hip-python's version, its ``hip`` and ``hiprtc`` functions by module), or None when
    hip-python is not installed."""
    real = real_modules()
    if not real:
        return None
    version = _hip_python_version() or f"{HIP_PYTHON_MAJOR}.x"
    funcs = {}
    for leaf, mod in zip(("hip", "hiprtc"), real, strict=True):
        funcs[leaf] = sorted(_functions(mod))
    return version, funcs


def _hip_python_version() -> str | None:
    from importlib import metadata
    for dist in ("hip-python", "rocm-bindings", "rocm-bindings-core"):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def family_tables(bodies: dict[str, set[str] | None] | None = None) -> str:
    """Per family (in catalogue order), a Markdown table: API, replay, reason, and a mark for
    each backend that has a body for the call."""
    bodies = backend_bodies() if bodies is None else bodies
    families: dict[str, list[Api]] = {}
    for row in rows():
        families.setdefault(row.family, []).append(row)

    def mark(backend: str, name: str) -> str:
        have = bodies.get(backend)
        return "?" if have is None else ("yes" if name in have else "—")

    out = []
    for family, members in families.items():
        out += [f"### {family} ({len(members)})", "",
                "| API | replay | reason | " + " | ".join(BACKENDS) + " |",
                "| --- | --- | --- | " + " | ".join("---" for _ in BACKENDS) + " |"]
        for row in members:
            reason = row.reason.replace("|", "\\|")
            out.append(f"| `{row.name}` | {row.replay} | {reason} | "
                       + " | ".join(mark(b, row.name) for b in BACKENDS) + " |")
        out.append("")
    return "\n".join(out)


def render() -> str:
    """The whole of docs/api-coverage.md."""
    all_rows = tuple(rows())
    bodies = backend_bodies()
    by_module = {m: sum(r.module == m for r in all_rows) for m in ("hip", "hiprtc", *LIBRARIES)}
    by_replay = {k: sum(r.replay == k for r in all_rows) for k in (REAL, NOOP, UNREPLAYABLE)}
    lines = [
        "# HIP API coverage",
        "",
        f"Generated from `hrr/api/catalogue.py` by `{COMMAND}` (do not edit by hand; "
        "`tests/api/test_coverage_doc.py` fails when this file is stale).",
        "",
        f"hrr catalogues **{len(all_rows)}** functions: {by_module['hip']} of hip-python's `hip`, "
        f"{by_module['hiprtc']} of its `hiprtc`"
        + "".join(f", {by_module[m]} of its `{m}`" for m in LIBRARIES)
        + " (the math libraries: [math-libraries.md](math-libraries.md)). Capture records exactly "
        "these. Every other "
        "name of hip-python's modules is on hrr's too, but a program that calls another HIP "
        "function fails on the sim and cuda backends with `UncataloguedCall` (a "
        "`NotImplementedError`) naming the function and `" + COMMAND + " --stdout`, which prints "
        "this document.",
        "",
        "| replay | rows | meaning |",
        "| --- | --- | --- |",
        f"| {REAL} | {by_replay[REAL]} | replay issues the call and checks its results |",
        f"| {NOOP} | {by_replay[NOOP]} | replay skips it (no device effect), the reason says why |",
        f"| {UNREPLAYABLE} | {by_replay[UNREPLAYABLE]} | replay cannot do it faithfully "
        "(`--strict` fails), the reason says why |",
        "",
        "Bodies per backend (a row without one is, on that backend, a function that raises "
        "`UncataloguedCall` when called): "
        + ", ".join(f"{b} {'?' if bodies[b] is None else len(bodies[b] or ())}" for b in BACKENDS)
        + ". The `hip` backend is hip-python itself: each catalogued call goes to hip-python's "
        "own function (`—`: the installed hip-python has none; `?`: the backend could not be "
        "inspected where this file was generated).",
        "",
        "## Catalogued calls by family",
        "",
        family_tables(bodies),
        UNCOVERED_HEADING,
        "",
    ]
    offered = offered_uncatalogued()
    extra = sorted(set().union(*offered.values())) if offered else []
    lines[-2:-2] = [
        "## Offered but not recorded", "",
        "These functions work under `hrr run` and `hrr capture` but are no catalogue row, so "
        "capture does not record them: hiprtc's compile calls run in the program, and the "
        "archive keeps the code object the program then loads. "
        + (", ".join(f"`{n}` ({'/'.join(b for b in offered if n in offered[b])})" for n in extra)
           or "(none)") + ".", ""]
    real = hip_python_functions()
    if real is None:
        lines += ["hip-python is not installed where this file was generated, so the list is absent.", ""]
    else:
        version, funcs = real
        catalogued = {r.name for r in all_rows}
        total = sum(len(f) for f in funcs.values())
        missing = {m: [n for n in f if n not in catalogued and n not in extra] for m, f in funcs.items()}
        n_missing = sum(len(m) for m in missing.values())
        lines += [f"Against hip-python {version}: its `hip` and `hiprtc` modules have {total} functions; "
                  f"{sum(n in catalogued for f in funcs.values() for n in f)} are catalogued, "
                  f"{sum(n in extra for f in funcs.values() for n in f)} offered but not recorded (above), "
                  f"{n_missing} neither: a program that calls one of these fails on the sim and cuda "
                  "backends.", ""]
        for module, names in missing.items():
            lines += [f"### `{module}`: {len(names)} of {len(funcs[module])} not covered", "",
                      ", ".join(f"`{n}`" for n in names) or "(none)", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def catalogue_part(text: str) -> str:
    """``text`` up to the list of uncovered hip-python functions (which depends on the
    hip-python release installed, while the rest depends on the catalogue alone)."""
    return text.split(UNCOVERED_HEADING, 1)[0]


def main(argv: list[str] | None = None) -> int:
    """Write docs/api-coverage.md (``--check``: exit 1 if it differs, ``--stdout``: print)."""
    ap = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--check", action="store_true", help="exit 1 when the file differs from what would be written")
    ap.add_argument("--stdout", action="store_true", help="print instead of writing")
    args = ap.parse_args(argv)
    text = render()
    if args.stdout:
        sys.stdout.write(text)
        return 0
    if args.check:
        current = DOC.read_text() if DOC.exists() else ""
        if current != text:
            print(f"{DOC} is stale: regenerate it with `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text)
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
