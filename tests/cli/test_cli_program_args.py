"""Everything after the program's name is the program's own command line, with or without
``--``: hrr's options go before it (as `time`, `strace` and `nohup` take theirs)."""
from __future__ import annotations

import json

from cli_helpers import hrr

ARGV_APP = "import json, sys; print(json.dumps(sys.argv[1:]))"


def test_capture_without_double_dash_leaves_the_programs_options_alone(tmp_path):
    (tmp_path / "argv.py").write_text(ARGV_APP)
    proc = hrr("capture", "-o", "a1.hrr", "--plugins", "privacy", "python", "argv.py",
               "--backend", "sim", "-o", "a2.hrr", cwd=tmp_path, check=0)
    assert json.loads(proc.stdout) == ["--backend", "sim", "-o", "a2.hrr"]
    assert (tmp_path / "a1.hrr").is_dir() and not (tmp_path / "a2.hrr").exists()


def test_run_passes_help_to_the_program(tmp_path):
    (tmp_path / "argv.py").write_text(ARGV_APP)
    proc = hrr("run", "python", "argv.py", "--help", cwd=tmp_path, check=0)
    assert json.loads(proc.stdout) == ["--help"]
    proc = hrr("run", "--", "python", "argv.py", "--", "-h", cwd=tmp_path, check=0)
    assert json.loads(proc.stdout) == ["--", "-h"]


def test_an_unknown_option_before_the_program_is_a_usage_error(tmp_path):
    (tmp_path / "argv.py").write_text(ARGV_APP)
    proc = hrr("capture", "-o", "x.hrr", "--bogus", "--", "python", "argv.py", cwd=tmp_path)
    assert proc.returncode == 64 and "--bogus" in proc.stderr
    assert not (tmp_path / "x.hrr").exists()
