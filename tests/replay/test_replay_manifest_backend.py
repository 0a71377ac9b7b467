"""A manifest that names a backend no hrr has is a damaged archive (exit 4), while a real
backend missing here stays 'backend unavailable' (69)."""
from __future__ import annotations

import json

from click.testing import CliRunner
from hrrtest import capture

from hrr.cli.main import cli


def _app(hip, hiprtc, be):
    assert hip.hipGetDevice()[0] == 0


def _set_backend(root, name):
    (manifest,) = root.glob("pid-*/manifest.json")
    data = json.loads(manifest.read_text())
    data["backend"] = name
    manifest.write_text(json.dumps(data))


def test_a_backend_name_no_hrr_has_is_a_damaged_manifest(tmp_path):
    capture(tmp_path, _app)
    _set_backend(tmp_path, "@x")
    result = CliRunner().invoke(cli, ["replay", str(tmp_path)])
    assert result.exit_code == 4, result.output
    assert "'@x'" in result.output and "manifest.json" in result.output and "--backend" in result.output


def test_the_user_can_replay_it_on_a_backend_they_name(tmp_path):
    capture(tmp_path, _app)
    _set_backend(tmp_path, "@x")
    result = CliRunner().invoke(cli, ["replay", str(tmp_path), "--backend", "sim"])
    assert result.exit_code == 0, result.output
