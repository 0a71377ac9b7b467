"""No HIP API name is spelled as a string in capture, replay, the pipeline or the plugins:
every list of "calls that do X" there is a query on the catalogue's rows, so a new row is
seen everywhere it belongs."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from hrr.api.catalogue import CATALOGUE

ROOT = Path(__file__).resolve().parents[2]
API_NAME = re.compile(r"^(hip[A-Z]\w+|hiprtc\w+)$")

DIRECTORIES = [
    pytest.param("hrr/capture", id="capture"),
    pytest.param("hrr/replay", id="replay"),
    pytest.param("hrr/pipeline", id="pipeline"),
    pytest.param("plugins", id="plugins"),
]


def api_literals(source: str, filename: str) -> list[str]:
    """``file:line: 'name'`` for every str constant in ``source`` that is an API name."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and (node.value in CATALOGUE or API_NAME.match(node.value)):
            found.append(f"{filename}:{node.lineno}: {node.value!r}")
    return found


@pytest.mark.parametrize("directory", DIRECTORIES)
def test_no_api_name_is_a_string_literal(directory):
    files = sorted((ROOT / directory).rglob("*.py"))
    assert files, directory
    found = [hit for path in files
             for hit in api_literals(path.read_text(), str(path.relative_to(ROOT)))]
    assert not found, "HIP API names spelled as strings (use a catalogue query):\n" + "\n".join(found)


def test_the_walk_finds_names_in_every_place_a_string_can_be():
    source = ("X = 'hipMalloc'\n"
              "def f(a=('hipFree',)):\n"
              "    return {'hiprtcCompileProgram': a, 'k': f'{a} hipMemcpy'}\n"
              "DOC = 'hipMalloc and hipFree'\n")
    assert api_literals(source, "m.py") == [
        "m.py:1: 'hipMalloc'", "m.py:2: 'hipFree'", "m.py:3: 'hiprtcCompileProgram'"]
