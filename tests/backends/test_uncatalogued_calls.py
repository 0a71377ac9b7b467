"""A HIP call hrr does not know, on the sim and cuda backends: an AttributeError subclass
whose message names the function, the backend and docs/api-coverage.md; under `hrr run`
and `hrr capture` the program dies with that message."""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hrr.backends import hiptypes as ht
from hrr.backends.hiptypes import UncataloguedCall
from hrrtest import cpu_backends

APP = Path(__file__).resolve().parent / "apps" / "uncatalogued_call.py"


@pytest.mark.parametrize("backend", cpu_backends())
@pytest.mark.parametrize(("module", "name"), [("hip", "hipFooBar"), ("hiprtc", "hiprtcFooBar"),
                                              ("hip", "hipDeviceGetNoSuchThing")])
def test_unknown_hip_name_names_function_backend_and_doc(backend, module, name):
    mod = getattr(importlib.import_module(f"hrr.backends.{backend}"), module)
    assert not hasattr(mod, name)
    assert getattr(mod, name, "fallback") == "fallback"
    with pytest.raises(UncataloguedCall) as info:
        getattr(mod, name)
    assert isinstance(info.value, AttributeError)
    text = str(info.value)
    for needle in (f"{module}.{name}", f"{backend} backend", "docs/api-coverage.md", "catalogue"):
        assert needle in text, text


def test_a_hip_python_name_without_the_hip_prefix_is_named_too():
    real = ht.real_modules()
    if not real:
        pytest.skip("hip-python is not installed here (CI installs it)")
    from hrr.backends import sim
    names = sorted(n for n in vars(real[0]) if not n.startswith(("_", "hip")) and n not in vars(sim.hip))
    assert names, "hip-python's hip has names outside the hip prefix that hrr lacks"
    with pytest.raises(UncataloguedCall, match=names[0]):
        getattr(sim.hip, names[0])


def test_other_names_stay_plain_attribute_errors():
    """Import machinery and introspection ask modules for dunders and other names: those
    get the ordinary AttributeError, not the HIP message."""
    from hrr.backends import sim
    for name in ("__path__", "__wrapped__", "numpy", "foo"):
        with pytest.raises(AttributeError) as info:
            getattr(sim.hip, name)
        assert type(info.value) is AttributeError, name


@pytest.mark.parametrize("command", ["run", "capture"])
def test_a_program_calling_one_dies_with_the_message(command, tmp_path):
    env = {**os.environ}
    env.pop("HRR_MODE", None)
    extra = ["-o", str(tmp_path / "a"), "--plugins", ""] if command == "capture" else []
    proc = subprocess.run([sys.executable, "-m", "hrr.cli.main", command, *extra, "--backend", "sim", "--",
                           sys.executable, str(APP)], capture_output=True, text=True, timeout=120, env=env,
                          check=False)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "before the unknown call" in proc.stdout and "not reached" not in proc.stdout
    last = [line for line in proc.stderr.splitlines() if "hipFooBar" in line]
    assert last and "UncataloguedCall: hip.hipFooBar is not offered by hrr's sim backend" in last[-1], proc.stderr
    assert "docs/api-coverage.md" in last[-1]
