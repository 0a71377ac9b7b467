"""What README.md, DESIGN.md and docs/*.md name in code exists: every `hrr SUBCOMMAND` and
its options (click's own declarations), every `python -m MODULE`, every file path under the
repository's folders, every dotted `hrr.` name (a module or an attribute of one), every
entry-point group and every HRR_/HIP_HRR_ environment variable (read somewhere in the tree).
A name that is another project's, not this repository's, is exempt only as listed below."""
from __future__ import annotations

import importlib
import importlib.util
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "DESIGN.md", *sorted((ROOT / "docs").glob("*.md"))]
CODE = re.compile(r"^```[^\n]*\n(.*?)^```|`([^`\n]+)`", re.S | re.M)
TOP = ("hrr", "tests", "docs", "scripts", "bench", "plugins", "examples", ".ci")
PATH = re.compile(rf"(?<![\w./-])((?:{'|'.join(re.escape(t) for t in TOP)})/[\w./-]*)")
HRR_CMD = re.compile(r"(?:^|[\s(;&|$])hrr ([a-z][a-z-]*)((?: [^|;&]*)?)")
OPTION = re.compile(r"(?<![\w-])(--?[a-zA-Z][\w-]*)")
PY_M = re.compile(r"python3? -m ([\w.]+)")
#: The projects hrr itself depends on (pyproject.toml): their modules exist wherever hrr is
#: installed as it says, also in a test run where one was left out (a GPU machine's --no-deps).
DEPENDENCIES = {re.split(r"[<>=!~\[; ]", d, maxsplit=1)[0].lower().replace("-", "_")
                for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]}
DOTTED = re.compile(r"(?<![\w./-])(hrr(?:_plugins)?(?:\.\w+)+)")
ENV = re.compile(r"\b((?:HIP_)?HRR_[A-Z0-9_]+)\b")

# Paths that name another project's files, in the document that says whose they are.
OTHER_PROJECTS = {
    "outside-programs.md": ("examples/", "scripts/outside-programs/cache/"),   # fetched programs' trees
}


def _spans(text: str) -> list[str]:
    """Every inline code span and fenced block of a document."""
    return [m.group(1) if m.group(1) is not None else m.group(2) for m in CODE.finditer(text)]


def _entry_point_groups() -> set[str]:
    text = (ROOT / "pyproject.toml").read_text()
    return set(re.findall(r'^\[project\.entry-points\."([^"]+)"\]', text, re.M))


def _source_text() -> str:
    parts = []
    for base in ("hrr", "plugins", "scripts", "bench", "tests", ".ci"):
        for p in (ROOT / base).rglob("*"):
            if p.is_file() and p.suffix in (".py", ".sh", ".c", ".h", ".toml", "") and "cache" not in p.parts:
                parts.append(p.read_text(errors="ignore"))
    return "\n".join(parts)


def _resolves(name: str) -> bool:
    """A dotted name is a module, or an attribute path inside the longest module prefix."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        module_name = ".".join(parts[:i])
        try:
            found = importlib.util.find_spec(module_name) is not None
        except (ImportError, ValueError):
            found = False
        if found:
            obj = importlib.import_module(module_name)
            for attr in parts[i:]:
                if not hasattr(obj, attr):
                    return False
                obj = getattr(obj, attr)
            return True
    return False


def problems(doc_name: str, text: str, source: str = "") -> list[str]:
    """Every name in ``text``'s code that does not exist (``source``: the tree's code, for
    environment variables; empty: not checked)."""
    from hrr.cli.main import cli

    out: list[str] = []
    groups = _entry_point_groups()
    exempt = OTHER_PROJECTS.get(doc_name, ())
    for span in _spans(text):
        for line in span.splitlines():
            for m in HRR_CMD.finditer(line):
                sub, rest = m.group(1), m.group(2).split(" -- ")[0]
                cmd = cli.commands.get(sub)
                if cmd is None:
                    out.append(f"`hrr {sub}`: no such command")
                    continue
                known = {o for p in cmd.params for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))}
                known |= {"-h", "--help"}
                out += [f"`hrr {sub} {o}`: no such option" for o in OPTION.findall(rest) if o not in known]
            out += [f"`python -m {mod}`: no such module" for mod in PY_M.findall(line)
                    if not _resolves(mod) and mod.split(".")[0] not in DEPENDENCIES]
            for path in PATH.findall(line):
                path = path.rstrip(".,:;")
                if exempt and path.startswith(exempt):
                    continue
                if not (ROOT / path).exists():
                    out.append(f"{path}: no such file or folder")
        for name in DOTTED.findall(span):
            if name not in groups and not _resolves(name):
                out.append(f"{name}: no such module or attribute")
    if source:
        out += [f"{v}: no code reads it" for v in sorted(set(ENV.findall(text))) if v not in source]
    return out


@pytest.fixture(scope="module")
def source() -> str:
    return _source_text()


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: str(d.relative_to(ROOT)))
def test_every_name_in_the_docs_exists(doc, source):
    assert problems(doc.name, doc.read_text(), source) == []


def test_the_check_finds_what_no_longer_exists():
    text = ("Run `hrr replay --no-such-option A`, `hrr frobnicate A`, `python -m hrr.no_such_module`,\n"
            "`scripts/no-such-script.sh` and `hrr.archive.limits.NO_SUCH_NAME`; set `HRR_NO_SUCH_VAR`.\n"
            "```sh\nhrr info A --json --events -- python app.py --not-hrrs\n```\n")
    assert problems("x.md", text, source="unrelated") == [
        "`hrr replay --no-such-option`: no such option", "`hrr frobnicate`: no such command",
        "`python -m hrr.no_such_module`: no such module", "hrr.no_such_module: no such module or attribute",
        "scripts/no-such-script.sh: no such file or folder",
        "hrr.archive.limits.NO_SUCH_NAME: no such module or attribute",
        "HRR_NO_SUCH_VAR: no code reads it"]
    assert problems("x.md", "`hrr replay --max-record-bytes N A` `hrr.plugins` `python -m hrr.cli.coverage`",
                    source="") == []
