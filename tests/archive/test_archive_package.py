"""The archive package's names load at first use: ``hrr capture`` claims the archive folder
(``fsutil``) before the program starts without loading the reader, and each public name is
still the function or class it names."""
from __future__ import annotations

import subprocess
import sys

import pytest

import hrr.archive as archive_pkg


def test_claiming_a_folder_and_loading_the_plugins_do_not_load_the_reader():
    # what hrr capture does before it starts the program
    probe = ("import sys\nfrom hrr.archive.fsutil import claim_empty_dir\n"
             "from hrr.pipeline.manager import load_plugins\nload_plugins()\n"
             "print(sorted(m for m in ('hrr.archive.reader', 'hrr.archive.writer', 'hrr.events.codec') "
             "if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr


def test_every_public_name_is_what_its_module_defines():
    import importlib
    for module, names in archive_pkg._WHERE.items():
        for name in names:
            assert getattr(archive_pkg, name) is getattr(importlib.import_module(module), name)
    exported = {name for names in archive_pkg._WHERE.values() for name in names}
    assert set(archive_pkg.__all__) == exported <= set(dir(archive_pkg))


def test_repair_is_the_function_after_its_module_loaded():
    import hrr.archive.recovery  # noqa: F401 - binds the submodule's name in the package
    from hrr.archive import repair
    assert callable(repair) and repair.__module__ == "hrr.archive.recovery"


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        archive_pkg.no_such_name  # noqa: B018
