"""docs/api-coverage.md is what ``python -m hrr.cli.coverage`` writes, and what it writes
follows the catalogue (counts, rows, backends' bodies, hip-python's uncovered functions)."""
from __future__ import annotations

import re

import pytest

from hrr.cli import coverage
from hrr.api.catalogue import UNREPLAYABLE, Api, P, extended, rows

STALE = f"docs/api-coverage.md is stale: regenerate it with `{coverage.COMMAND}`"


def test_committed_doc_is_what_the_generator_writes():
    committed = coverage.DOC.read_text()
    written = coverage.render()
    if coverage.backend_bodies()["cuda"] is None:
        pytest.skip("the cuda backend does not import here, so its column cannot be written")
    real = coverage.hip_python_functions()
    if real is not None and f"Against hip-python {real[0]}:" in committed:
        assert committed == written, STALE
    else:  # another hip-python release (or none): its uncovered list differs; the rest may not
        assert coverage.catalogue_part(committed) == coverage.catalogue_part(written), STALE


def test_counts_and_rows_follow_the_catalogue():
    row = Api("hipCoverageProbe", "probe", (P("x"),), replay=UNREPLAYABLE, reason="a test row | with a bar")
    before = coverage.render()
    n = len(tuple(rows()))
    assert f"hrr catalogues **{n}** functions" in before
    with extended(row):
        after = coverage.render()
    assert f"hrr catalogues **{n + 1}** functions" in after
    assert "### probe (1)" in after
    # no backend has a body for it; the reason's bar is escaped so the table keeps its columns
    assert re.search(r"\| `hipCoverageProbe` \| unreplayable \| a test row \\\| with a bar \| — \| — \| — \|", after)
    unreplayable = sum(r.replay == UNREPLAYABLE for r in rows())
    assert f"| {UNREPLAYABLE} | {unreplayable + 1} |" in after


def test_uncovered_list_is_hip_pythons_functions_less_the_catalogue():
    real = coverage.hip_python_functions()
    if real is None:
        pytest.skip("hip-python is not installed here (CI installs it)")
    _, funcs = real
    text = coverage.render()
    uncovered = text.split(coverage.UNCOVERED_HEADING, 1)[1]
    catalogued = {r.name for r in rows()}
    for name in catalogued:
        assert f"`{name}`" not in uncovered
    some = next(n for n in funcs["hip"] if n not in catalogued and n.startswith("hipArray"))
    assert f"`{some}`" in uncovered
    total = sum(len(f) for f in funcs.values())
    covered = len(catalogued & (set(funcs["hip"]) | set(funcs["hiprtc"])))
    assert f"modules have {total} functions; {covered} are catalogued" in text


def test_check_flag_fails_on_a_stale_file(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(coverage, "DOC", tmp_path / "api-coverage.md")
    assert coverage.main([]) == 0
    assert coverage.main(["--check"]) == 0
    coverage.DOC.write_text(coverage.DOC.read_text().replace("**", "", 2))
    assert coverage.main(["--check"]) == 1
    assert coverage.COMMAND in capsys.readouterr().err
