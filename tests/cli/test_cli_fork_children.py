"""fork()ed children under `hrr capture`, recorded and replayed as they ran: on the sim a
child has its own copy of the device; on a GPU a child of a process that had initialised
the runtime gets hipErrorNotInitialized from every call, and replay reproduces that
(`--strict` passes on the GPU and on the sim) instead of diverging."""
from __future__ import annotations

import json

import pytest
from cli_helpers import app, capture, describe, hrr, info_json, pid_dirs

CHILDREN = 20
NOT_INITIALIZED, INVALID_VALUE = 3, 1


def _children(root):
    out = []
    for d in pid_dirs(root):
        manifest = json.loads((d / "manifest.json").read_text())
        if "forked_from" in manifest:
            out.append((d, manifest))
    return out


def _child_errors(root, pid):
    events = info_json(root / f"pid-{pid}", events=True)["processes"][0]["events"]
    return [(e["api"], e["err"]) for e in events]


def test_sim_fork_children_keep_a_device(tmp_path):
    root = tmp_path / "a.hrr"
    proc = capture(root, *app("fork_bad_free.py", 2), env={"HRR_BACKEND": "sim"})
    assert proc.stdout.count("hipErrorInvalidValue") == 2, describe(proc)
    children = _children(root)
    assert len(children) == 2
    for _, manifest in children:
        assert manifest["forked_from"]["device"] == "inherited", manifest
        assert _child_errors(root, manifest["pid"]) == [("hipFree", INVALID_VALUE)]
    hrr("replay", "--strict", root, check=0)


@pytest.mark.gpu
def test_gpu_fork_children_replay_as_they_ran(tmp_path):
    root = tmp_path / "a.hrr"
    proc = hrr(
        "capture", "-o", root, "--backend", "cuda", "--plugins", "privacy", "--content", "--",
        *app("fork_bad_free.py", CHILDREN), timeout=300, check=0)
    assert proc.stdout.count("hipErrorNotInitialized") == CHILDREN, describe(proc)
    children = _children(root)
    assert len(children) == CHILDREN
    for d, manifest in children:
        assert manifest["forked_from"]["device"] == "lost", manifest
        assert _child_errors(root, manifest["pid"]) == [("hipFree", NOT_INITIALIZED)], d
    for backend in ("cuda", "sim"):
        out = hrr("replay", "--strict", "--backend", backend, root, timeout=300)
        assert out.returncode == 0, describe(out)
        assert out.stdout.count("hipErrorNotInitialized, as recorded") == CHILDREN, describe(out)
