"""What a new user reads when something goes wrong: an uncatalogued call points to an
installed command (`hrr coverage`) and its traceback ends at the program's own line; a
misspelt name says hip-python has none; contradicting flags are a usage error; the cuda
backend without its extra names the pip command; a long end reason wraps whole."""
from __future__ import annotations

import json
import os

from cli_helpers import hrr


APP = """
import sys
from hip import hip
if sys.argv[1] == "uncatalogued":
    hip.hipCtxCreate(0, 0)
else:
    hip.hipMallocc(4)
"""


def _frames(stderr: str) -> list[str]:
    return [ln.strip() for ln in stderr.splitlines() if ln.strip().startswith('File "')]


def test_uncatalogued_call_points_to_hrr_coverage_and_ends_at_the_programs_line(tmp_path):
    (tmp_path / "app.py").write_text(APP)
    proc = hrr("run", "python", "app.py", "uncatalogued", cwd=tmp_path)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("hrr.hiptypes.UncataloguedCall: hip.hipCtxCreate") and "`hrr coverage`" in last
    assert "docs/api-coverage.md" not in proc.stderr
    frames = _frames(proc.stderr)
    assert "app.py" in frames[-2] and not any(os.sep + "hrr" + os.sep in f for f in frames), proc.stderr
    listed = hrr("coverage", check=0).stdout
    assert "`hipCtxCreate`" in listed and "hipMalloc" in listed


def test_a_misspelt_name_says_hip_python_has_none(tmp_path):
    (tmp_path / "app.py").write_text(APP)
    proc = hrr("run", "python", "app.py", "typo", cwd=tmp_path)
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("AttributeError:") and "has no such name either" in last
    assert "did you mean 'hipMalloc'" in last
    assert not any(os.sep + "hrr" + os.sep in f for f in _frames(proc.stderr)), proc.stderr


def test_content_and_metadata_only_together_is_a_usage_error(tmp_path):
    (tmp_path / "app.py").write_text("print('ran')\n")
    proc = hrr("capture", "--content", "--metadata-only", "-o", "a.hrr", "--", "python", "app.py", cwd=tmp_path)
    assert proc.returncode == 64 and "contradict" in proc.stderr and "ran" not in proc.stdout
    assert not (tmp_path / "a.hrr").exists()


def test_cuda_without_its_extra_names_the_pip_command(tmp_path):
    fake = tmp_path / "shadow" / "cuda"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('No module named cuda.bindings')\n")
    (tmp_path / "app.py").write_text("print('ran')\n")
    proc = hrr("run", "--backend", "cuda", "python", "app.py", cwd=tmp_path,
               env={"PYTHONPATH": str(fake.parent)})
    assert proc.returncode == 69 and "pip install 'hrr[cuda]'" in proc.stderr, proc.stderr


def test_a_long_end_reason_is_never_cut_mid_word(tmp_path):
    message = "the input tensor shape does not match the expected layout " * 6 + "END"
    (tmp_path / "app.py").write_text(f"raise ValueError({message!r})\n")
    hrr("capture", "--content", "--plugins", "privacy", "-o", "a.hrr", "--", "python", "app.py",
        cwd=tmp_path, check=1)
    replayed = hrr("replay", "a.hrr", cwd=tmp_path).stdout
    lines = replayed.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("Program: "))
    told = " ".join(ln.strip() for ln in lines[start:start + 6] if ln.startswith(("Program: ", "  ")))
    assert message in told, replayed                     # wrapped, whole
    info = hrr("info", "a.hrr", cwd=tmp_path, check=0).stdout
    assert "…" in info and "(below)" in info   # the cell, cut at a word (rich may wrap between them)
    assert message in " ".join(ln.strip() for ln in info.splitlines()), info
    assert json.loads(hrr("info", "--json", "a.hrr", cwd=tmp_path, check=0).stdout)


def test_clip_words_cuts_at_a_word_and_says_where_the_rest_is():
    from hrr.archive.manifest import clip_words, describe_ended

    text = "alpha beta gamma delta epsilon"
    assert clip_words(text, 100) == text
    assert clip_words(text, 14, "(more: x)") == "alpha beta …" " (more: x)"
    long = {"how": "exception", "exception": "E", "message": "word " * 400}
    said = describe_ended(long)
    assert said.endswith("(all of it: manifest.json, ended.message)") and " wor " not in said
