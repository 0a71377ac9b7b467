"""A real third-party plugin distribution (./pyproject.toml, package hrr_callcounter) is
installed with pip into a temporary directory and found through the `hrr.plugins` entry
point group like any built-in: `hrr plugins` lists it, `hrr capture --plugins` runs it,
its records land in the archive and replay prints its summary line."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from distinstall import describe, hrr_with, pip_install_target

HERE = Path(__file__).resolve().parent
APP = HERE.parent / "cli" / "apps" / "basic.py"


_describe = describe


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    target = pip_install_target(HERE, tmp_path_factory, "hrr_callcounter")
    assert (target / "hrr_callcounter" / "__init__.py").is_file()
    return target


hrr = hrr_with


def _launch_records(site, archive):
    data = json.loads(hrr(site, "info", archive, "--events", "--json", check=0).stdout)
    (proc,) = data["processes"]
    return proc, [e for e in proc["events"] if e["api"] == "hipModuleLaunchKernel"]


def test_not_installed_without_target(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "hrr.cli.main", "capture", "-o", str(tmp_path / "a"),
                           "--plugins", "callcounter", "--", "python", "-c", "pass"],
                          check=False, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "unknown plugin(s): callcounter" in proc.stderr


def test_hrr_plugins_lists_it(site):
    out = hrr(site, "plugins").stdout
    lines = out.splitlines()
    i = next(i for i, ln in enumerate(lines) if ln.startswith("callcounter "))
    assert lines[i].startswith("callcounter 0.3.1 (hrr_callcounter:CallCounter, from hrr-callcounter)")
    hooks = lines[i + 1]
    for hook in ("hrr_capture_launch", "hrr_capture_manifest", "hrr_replay_before_event",
                 "hrr_replay_summary"):
        assert hook in hooks
    assert any(ln.startswith("privacy ") for ln in lines)  # the built-ins are listed beside it


def test_hrr_plugins_exit_status(site):
    """Every installed plugin loads (needs the built-in plugins to be complete)."""
    hrr(site, "plugins", check=0)


def test_capture_and_replay_with_it(site, tmp_path):
    root = tmp_path / "with"
    proc = hrr(site, "capture", "-o", root, "--plugins", "callcounter,privacy", "--content", "--", "python", APP,
               check=0)
    assert "basic: ok" in proc.stdout
    info, launches = _launch_records(site, root)
    assert info["manifest"]["plugins"] == {"callcounter": "0.3.1", "privacy": "0.1.0"}
    assert info["manifest"]["callcounter"] == {"launches": 1}
    assert launches and all(e["records"] == ["callcounter"] for e in launches)

    replay = hrr(site, "replay", "--strict", root, check=0)
    assert "callcounter: 1 launches recorded, 1 replayed" in replay.stdout
    # Its summary line is printed (the CLI's contract) and comes with the built-in ones, before the result.
    lines = replay.stdout.splitlines()
    assert lines.index("callcounter: 1 launches recorded, 1 replayed") < lines.index("Result: OK")

    # Replay runs the plugins the archive was recorded with; leaving it out is allowed.
    replay = hrr(site, "replay", root, "--plugins", "privacy", "--json", check=0)
    (replayed,) = json.loads(replay.stdout)["processes"]
    assert not any(line.startswith("callcounter:") for line in replayed["plugin_lines"]), replay.stdout


def test_not_selected_does_not_run(site, tmp_path):
    root = tmp_path / "without"
    hrr(site, "capture", "-o", root, "--plugins", "privacy", "--content", "--", "python", APP, check=0)
    info, launches = _launch_records(site, root)
    assert "callcounter" not in info["manifest"]["plugins"]
    assert "callcounter" not in info["manifest"]
    assert launches and all(e["records"] == [] for e in launches)
    replay = hrr(site, "replay", "--strict", "--json", root, check=0)
    (replayed,) = json.loads(replay.stdout)["processes"]
    assert not any("callcounter" in line for line in replayed["plugin_lines"] + replayed["strict_reasons"])


def test_missing_at_replay_is_named_under_strict(site, tmp_path):
    """Recorded with the plugin, replayed where it is not installed: --strict says so."""
    root = tmp_path / "recorded"
    hrr(site, "capture", "-o", root, "--plugins", "callcounter,privacy", "--content", "--", "python", APP,
        check=0)
    proc = subprocess.run([sys.executable, "-m", "hrr.cli.main", "replay", "--strict", "--json", str(root)],
                          check=False, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, _describe(proc)
    (replayed,) = json.loads(proc.stdout)["processes"]
    assert "recorded plugins not installed: callcounter" in replayed["strict_reasons"], _describe(proc)
