"""No role name is spelled as a string outside the roles and the catalogue: codec, surface,
recorder, replay, dump, diff and info ask the role (``hrr.api.roles``) for what they need
to know about a kind of value, so a new role is seen everywhere it belongs and no two
places can disagree on, say, which roles are addresses. The built-in plugins name roles
through the plugin API's role classes (``hrr.pipeline.Roles``), never as strings."""
from __future__ import annotations

import ast
from pathlib import Path

from hrr.api.roles import OUT_ROLES, PARAM_ROLES

ROOT = Path(__file__).resolve().parents[2]
ROLE_NAMES = frozenset(PARAM_ROLES) | frozenset(OUT_ROLES)
ALLOWED = ("hrr/api/roles/", "hrr/api/catalogue.py")
# Calls whose string arguments are role names.
ROLE_TAKERS = frozenset({"param_role", "out_role", "param_at", "param_positions", "result_at", "_first"})


def _strings(node: ast.AST) -> list[ast.Constant]:
    """The str constants of ``node`` itself or of a tuple/list/set literal it is."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _mentions_role(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and "role" in n.attr or isinstance(n, ast.Name) and "role" in n.id
               for n in ast.walk(node))


def role_literals(source: str, filename: str) -> list[str]:
    """``file:line: 'name'`` for every role name used as a role in ``source``: compared with
    something called role, handed to a call that takes a role, or listed with other role
    names (a table or tuple of roles)."""
    found: list[ast.Constant] = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_mentions_role(s) for s in sides):
                found += [c for s in sides for c in _strings(s) if c.value in ROLE_NAMES]
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in ROLE_TAKERS:
                found += [c for a in node.args for c in _strings(a) if c.value in ROLE_NAMES]
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
            items = node.keys if isinstance(node, ast.Dict) else node.elts
            strings = [k for k in items if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            if len(strings) >= 2 and len(strings) == len(items) and all(s.value in ROLE_NAMES for s in strings):
                found += strings
    return sorted({f"{filename}:{c.lineno}: {c.value!r}" for c in found})


def _found(folder: str) -> list[str]:
    files = [p for p in sorted((ROOT / folder).rglob("*.py"))
             if not str(p.relative_to(ROOT)).startswith(ALLOWED)]
    assert files
    return [hit for path in files for hit in role_literals(path.read_text(), str(path.relative_to(ROOT)))]


def test_no_role_name_is_a_string_literal_outside_the_roles():
    assert len(list((ROOT / "hrr").rglob("*.py"))) > 50
    found = _found("hrr")
    assert not found, "role names spelled as strings (ask the role in hrr.api.roles):\n" + "\n".join(found)


def test_the_builtin_plugins_name_roles_by_class():
    found = _found("plugins")
    assert not found, "role names spelled as strings (name the role by class: hrr.pipeline.Roles):\n" + "\n".join(found)


def test_the_walk_finds_role_names_wherever_they_act_as_roles():
    source = ("if p.role == 'handle' or role in ('ptr', 'copy_src'):\n"
              "    pass\n"
              "X = {'value': 1, 'enum': 2}\n"
              "i = param_at(row, 'host_range')\n"
              "ok = row.destroys == 'alloc' and extra['launch'] and d.get('name')\n"
              "js = param_positions(row, 'handle', 'graph') + (param_at(row, Roles.Handle, 'graph'),)\n")
    assert role_literals(source, "m.py") == [
        "m.py:1: 'copy_src'", "m.py:1: 'handle'", "m.py:1: 'ptr'", "m.py:3: 'enum'", "m.py:3: 'value'",
        "m.py:4: 'host_range'", "m.py:6: 'handle'"]
