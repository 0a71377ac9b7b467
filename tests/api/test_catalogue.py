"""The catalogue and the backends agree: every API a backend implements has a row."""
from __future__ import annotations

import importlib

import pytest

from hrr.hiptypes.mathlibs import LIBRARIES, TYPES

from hrr.api.catalogue import CATALOGUE, HANDLE_KINDS, NOOP, REAL, UNREPLAYABLE, rows
from hrr.cli.coverage import family_tables as coverage_table
from hrr.hiptypes import ENUM_TYPES

ROLES = {"value", "enum", "ptr", "handle", "copy_dst", "copy_src", "strided", "result_buf", "host_range", "code",
         "name", "dim3", "host_fn", "user_data", "launch", "ignored", "source", "options", "rtc_out",
         "handles", "kernel_node", "memset_node", "host_node", "instantiate_params", "words", "pool_props",
         "attr_value", "lib_array", "lib_pointers", "lib_scalar", "lib_result", "int_array"}
OUT_ROLES = {"alloc", "alias", "handle", "value", "text", "image", "handles"}


@pytest.mark.parametrize("backend", ["sim", "cuda"])
def test_every_backend_api_is_catalogued(backend):
    mod = importlib.import_module(f"hrr.backends.{backend}")
    missing = sorted(set(mod.SUPPORTED_APIS) - set(CATALOGUE))
    assert missing == [], f"{backend} implements APIs the catalogue lacks: {missing}"


@pytest.mark.parametrize("backend", ["sim", "cuda"])
def test_every_catalogue_row_is_implemented(backend):
    mod = importlib.import_module(f"hrr.backends.{backend}")
    offered = set(mod.SUPPORTED_APIS) | set(mod.hiprtc.SUPPORTED_APIS)  # hip and hiprtc rows
    for name in LIBRARIES:   # and each math library's
        offered |= set(mod.library(name).SUPPORTED_APIS)
    assert sorted(set(CATALOGUE) - offered) == []


def test_rows_are_well_formed():
    for row in rows():
        assert row.replay in (REAL, NOOP, UNREPLAYABLE)
        if row.replay != REAL:
            assert row.reason, f"{row.name} must say why it is {row.replay}"
        names = [p.name for p in row.params]
        for p in row.params:
            assert p.role in ROLES, (row.name, p)
            if p.role in ("handle", "handles"):
                assert p.kind in HANDLE_KINDS
            if p.role == "enum":
                assert p.kind in ENUM_TYPES
            if p.size:
                assert p.size in names
        for o in row.outs:
            assert o.role in OUT_ROLES
            if o.size:
                assert o.size in names
        if row.stream:
            assert row.stream in names
        if row.destroys:
            assert row.destroys in ("alloc", "device") or row.destroys in HANDLE_KINDS


def test_coverage_table_lists_every_row():
    table = coverage_table()
    for name in CATALOGUE:
        assert f"`{name}`" in table


def _hip_python_params(fn) -> list[str]:
    first = (fn.__doc__ or "").split("\n")[0]
    inside = first[first.index("(") + 1:first.rindex(")")]
    return [part.split()[-1] for part in inside.split(",") if part.strip()]


def test_parameter_names_match_hip_python():
    real = {"hip": pytest.importorskip("rocm.bindings.hip"), "hiprtc": pytest.importorskip("rocm.bindings.hiprtc"),
            **{name: TYPES[name].real for name in LIBRARIES}}
    for row in rows():
        if real[row.module] is None:   # a math library hip-python does not bind here (see below)
            continue
        fn = getattr(real[row.module], row.name, None)
        assert fn is not None, f"hip-python has no {row.name}"
        theirs = _hip_python_params(fn)
        ours = [p.name for p in row.params if not (p.optional and p.name not in theirs)]
        assert ours == theirs, (row.name, ours, theirs)


def test_docs_coverage_table_is_current():
    from pathlib import Path
    doc = (Path(__file__).resolve().parents[2] / "docs" / "api-coverage.md").read_text()
    assert coverage_table() in doc, "regenerate docs/api-coverage.md from the catalogue"
