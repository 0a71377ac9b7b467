"""A broken third-party plugin, installed for real (tests/thirdparty_plugin/broken, built
and installed with pip into a temporary directory): `hrr plugins` lists each of its
plugins with the reason and exits 0; capture, replay and run skip them with one warning
line per plugin, however many processes the program starts; naming one in --plugins
refuses to capture, in one line."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from distinstall import describe, hrr_with, pip_install_target

TESTS = Path(__file__).resolve().parent.parent
DIST = TESTS / "thirdparty_plugin" / "broken"
APPS = TESTS / "cli" / "apps"
BROKEN = {
    "badargs": ("hrr_brokenplugins:BadArgs",
                "hrr_capture_launch takes lnch, which the hookspec does not pass (it passes: ctx, launch)"),
    "ctorraises": ("hrr_brokenplugins:RaisesAtConstruction",
                   "constructing it raised RuntimeError: needs a licence server"),
    "misspelled": ("hrr_brokenplugins:Misspelled",
                   "unknown hook hrr_capture_lanch (did you mean hrr_capture_launch?)"),
    "noimport": ("hrr_brokenplugins.noimport:Plugin", "import failed: ModuleNotFoundError: No module named "
                                                      "'hrr_brokenplugins_dependency_not_installed'"),
    "wrapper": ("hrr_brokenplugins:Wrapper", "implements hrr_capture_launch with hookwrapper=True; capture "
                                             "hooks cannot be wrappers (use a plain @hookimpl)"),
}
BUILTIN = {"graph_capture", "pinned_snapshot", "privacy"}


_describe = describe


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    target = pip_install_target(DIST, tmp_path_factory, "hrr_brokenplugins")
    return target


hrr = hrr_with


def warning_lines(stderr: str) -> list[str]:
    return sorted(ln for ln in stderr.splitlines() if ln.startswith("hrr: warning: plugin "))


EXPECTED_WARNINGS = sorted(f"hrr: warning: plugin {name!r} ({entry}) is broken and was skipped: {reason}"
                           for name, (entry, reason) in BROKEN.items())


def test_hrr_plugins_lists_each_broken_plugin_with_its_reason(site):
    lines = hrr(site, "plugins", check=0).stdout.splitlines()
    for name, (entry, reason) in BROKEN.items():
        i = lines.index(f"{name} BROKEN ({entry}, from hrr-brokenplugins)")
        assert lines[i + 1] == f"    reason: {reason}"
    for name in BUILTIN:      # the working ones are listed as before, beside them
        i = next(i for i, ln in enumerate(lines) if ln.startswith(f"{name} 0.1.0 ("))
        assert lines[i + 1].startswith("    hooks: hrr_")


def test_capture_skips_them_with_one_warning_each(site, tmp_path):
    """Three processes (parent, subprocess, fork): still one warning per broken plugin."""
    root = tmp_path / "arch"
    proc = hrr(site, "capture", "-o", root, "--content", "--", "python", APPS / "multiproc.py", check=0)
    assert warning_lines(proc.stderr) == EXPECTED_WARNINGS
    manifests = [json.loads((d / "manifest.json").read_text()) for d in root.iterdir()]
    assert len(manifests) == 3
    assert all(set(m["plugins"]) == BUILTIN for m in manifests)
    replay = hrr(site, "replay", "--strict", root, check=0)
    assert warning_lines(replay.stderr) == []      # recorded without them: replay never loads them


def test_naming_a_broken_plugin_refuses_to_capture(site, tmp_path):
    root = tmp_path / "arch"
    proc = hrr(site, "capture", "-o", root, "--plugins", "misspelled,privacy", "--", "python", APPS / "basic.py")
    assert not root.exists()                                  # refused before anything was made
    unknown = hrr(site, "capture", "-o", tmp_path / "u", "--plugins", "nosuch", "--", "python", APPS / "basic.py")
    usage = hrr(site, "capture", "-o", tmp_path / "n", "--plugins", "privacy")   # no command: a usage error
    assert proc.returncode == unknown.returncode == usage.returncode != 0
    assert proc.stderr.splitlines() == [
        "hrr: error: plugin 'misspelled' (hrr_brokenplugins:Misspelled) is broken: unknown hook "
        "hrr_capture_lanch (did you mean hrr_capture_launch?) (fix or uninstall it, or leave it out with --plugins)"]
    assert proc.stdout == ""                                  # the program never ran


def test_run_is_untouched(site):
    proc = hrr(site, "run", "--", "python", APPS / "basic.py", check=0)
    assert "basic: ok" in proc.stdout and warning_lines(proc.stderr) == []


def test_naming_a_capture_wrapper_refuses_to_capture_in_one_line(site, tmp_path):
    """A capture hook implemented as a wrapper: refused before the program starts, in one
    line naming the plugin and the hook (installed but not named, it is skipped: above)."""
    root = tmp_path / "arch"
    proc = hrr(site, "capture", "-o", root, "--plugins", "wrapper,privacy", "--", "python", APPS / "basic.py")
    assert proc.returncode != 0 and not root.exists() and proc.stdout == ""
    entry, reason = BROKEN["wrapper"]
    assert proc.stderr.splitlines() == [f"hrr: error: plugin 'wrapper' ({entry}) is broken: {reason} "
                                        "(fix or uninstall it, or leave it out with --plugins)"]
    assert "hrr_capture_launch" in reason
