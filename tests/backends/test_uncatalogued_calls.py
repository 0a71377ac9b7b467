"""A hip-python function hrr does not implement, on the sim and cuda backends: the name is
there (as in hip-python: a program or a library binds it at import), and calling it raises
UncataloguedCall, whose message names the function, the backend and the installed command
that lists what hrr covers; under `hrr run` and `hrr capture` the program dies with that
message. A name hip-python lacks is a plain AttributeError saying so."""
from __future__ import annotations

import importlib
import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hrr import hiptypes as ht
from hrr.hiptypes import UncataloguedCall
from hrr.errors import HrrError
from hrrtest import cpu_backends

APP = Path(__file__).resolve().parent / "apps" / "uncatalogued_call.py"
REAL = ht.real_modules()
NEEDS_HIP_PYTHON = pytest.mark.skipif(not REAL, reason="hip-python is not installed here (CI installs it)")


def uncatalogued(mod, real) -> list[str]:
    """hip-python's functions that ``mod`` (an hrr module) does not implement."""
    return sorted(n for n in vars(mod) if n.startswith("hip") and ht.is_uncatalogued(getattr(mod, n))
                  and callable(getattr(real, n, None)))


@NEEDS_HIP_PYTHON
@pytest.mark.parametrize("backend", cpu_backends())
@pytest.mark.parametrize("module", ["hip", "hiprtc"])
def test_an_uncatalogued_function_is_there_and_raises_when_called(backend, module):
    mod = getattr(importlib.import_module(f"hrr.backends.{backend}"), module)
    real = REAL[0] if module == "hip" else REAL[1]
    names = uncatalogued(mod, real)
    if not names:
        pytest.skip(f"hrr implements every function of hip-python's {module}")
    name = names[0]
    fn = getattr(mod, name)                       # looking it up is fine ...
    assert hasattr(mod, name) and callable(fn)
    assert inspect.signature(fn) == inspect.signature(getattr(real, name))
    assert not mod.has_symbol(name) and not mod.has_symbol(name.encode())
    with pytest.raises(UncataloguedCall) as info:  # ... calling it is not
        fn(0)
    assert isinstance(info.value, NotImplementedError) and isinstance(info.value, HrrError)
    assert not isinstance(info.value, AttributeError)
    text = str(info.value)
    for needle in (f"{module}.{name}", f"{backend} backend", "catalogue", ht.COVERAGE_COMMAND):
        assert needle in text, text
    assert info.value.function == name and info.value.backend == backend


@NEEDS_HIP_PYTHON
@pytest.mark.parametrize("backend", cpu_backends())
def test_has_symbol_tells_what_the_backend_implements(backend):
    hip = importlib.import_module(f"hrr.backends.{backend}").hip
    assert hip.has_symbol("hipMalloc") and hip.has_symbol(b"hipFree")
    assert not hip.has_symbol("hipMallocc") and not hip.has_symbol("hipError_t")


@pytest.mark.parametrize("backend", cpu_backends())
@pytest.mark.parametrize(("module", "name", "near"), [("hip", "hipMallocc", "hipMalloc"),
                                                      ("hiprtc", "hiprtcFooBar", None),
                                                      ("hip", "hipDeviceGetNoSuchThing", None)])
def test_a_name_hip_python_lacks_is_a_plain_attribute_error(backend, module, name, near):
    mod = getattr(importlib.import_module(f"hrr.backends.{backend}"), module)
    assert not hasattr(mod, name)
    assert getattr(mod, name, "fallback") == "fallback"
    with pytest.raises(AttributeError) as info:
        getattr(mod, name)
    assert type(info.value) is AttributeError
    text = str(info.value)
    assert repr(name) in text
    if REAL:
        assert "hip-python" in text and "no such name" in text, text
        if near:
            assert f"did you mean {near!r}" in text, text


def test_other_names_stay_plain_attribute_errors():
    """Import machinery and introspection ask modules for dunders and other names: those
    get the ordinary AttributeError, not the HIP message."""
    from hrr.backends import sim
    for name in ("__path__", "__wrapped__", "numpy", "foo"):
        with pytest.raises(AttributeError) as info:
            getattr(sim.hip, name)
        assert type(info.value) is AttributeError, name
    with pytest.raises(AttributeError) as info:
        _ = sim.hip.__wrapped__
    assert "did you mean" not in str(info.value) and "hip-python" not in str(info.value)


@NEEDS_HIP_PYTHON
@pytest.mark.parametrize("command", ["run", "capture"])
def test_a_program_calling_one_dies_with_the_message(command, tmp_path):
    from hrr.backends import sim
    name = uncatalogued(sim.hip, REAL[0])[0]
    env = {**os.environ}
    env.pop("HRR_MODE", None)
    extra = ["-o", str(tmp_path / "a"), "--plugins", ""] if command == "capture" else []
    proc = subprocess.run([sys.executable, "-m", "hrr.cli.main", command, *extra, "--backend", "sim", "--",
                           sys.executable, str(APP), name], capture_output=True, text=True, timeout=120, env=env,
                          check=False)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "before the unknown call" in proc.stdout and "not reached" not in proc.stdout
    last = [line for line in proc.stderr.splitlines() if name in line]
    assert last and f"UncataloguedCall: hip.{name} is not offered by hrr's sim backend" in last[-1], proc.stderr
    assert ht.COVERAGE_COMMAND in last[-1]
