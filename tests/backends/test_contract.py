"""Every backend module implements the whole backend contract (``hrr.backends.contract``):
each member is there, a method with the contract's parameters, a flag a bool, and capture
and replay can call it without asking first. mypy checks the same of each module's types."""
from __future__ import annotations

import contextlib
import importlib
import inspect
import types

import pytest

from hrr.backends import BACKEND_MODULES
from hrr.backends.contract import Backend

MEMBERS = {name: value for name, value in vars(Backend).items()
           if not name.startswith("_") and (isinstance(value, property) or inspect.isfunction(value))}
FLAGS = ("PASSTHROUGH_UNCATALOGUED", "HIP_PYTHON_ITSELF", "DEVICE_MEMORY_IS_HOST_MEMORY")


def _backend(name: str) -> types.ModuleType:
    try:
        return importlib.import_module(BACKEND_MODULES[name])
    except ImportError as exc:
        pytest.skip(f"backend {name} cannot be imported here: {exc}")


def test_the_contract_names_what_capture_and_replay_use():
    assert {"NAME", "hip", "hiprtc", "kernel_layout", "last_error_detail", "device_manifest",
            "device_for_replay", "reset_device", "archive_kernels", "bounded_stalls", "launch_kernargs",
            "runtime_unavailable_reason", *FLAGS} <= set(MEMBERS)


@pytest.mark.parametrize("name", sorted(BACKEND_MODULES))
def test_each_backend_module_implements_the_whole_contract(name):
    mod = _backend(name)
    missing = sorted(m for m in MEMBERS if not hasattr(mod, m))
    assert not missing, f"{name} lacks {missing}"
    assert mod.NAME == name
    assert isinstance(mod.hip, types.ModuleType) and isinstance(mod.hiprtc, types.ModuleType)
    for flag in FLAGS:
        assert type(getattr(mod, flag)) is bool, flag
    assert mod.launch_kernargs is None or callable(mod.launch_kernargs)
    for member, declared in MEMBERS.items():
        if isinstance(declared, property):
            continue
        wanted = [p for p in inspect.signature(declared).parameters if p != "self"]
        params = inspect.signature(getattr(mod, member)).parameters
        required = [p for p, v in params.items() if v.default is inspect.Parameter.empty]
        assert len(required) <= len(wanted) <= len(params), f"{name}.{member}{inspect.signature(getattr(mod, member))}"


@pytest.mark.parametrize("name", sorted(BACKEND_MODULES))
def test_the_neutral_capabilities_answer_without_a_device(name):
    mod = _backend(name)
    with mod.archive_kernels(False), mod.bounded_stalls(1.0):
        pass
    assert isinstance(mod.archive_kernels(True), contextlib.AbstractContextManager)
    if name != "sim":   # the sim's answers need its device; a GPU backend's are constants
        assert mod.device_manifest() is None and mod.last_error_detail() == ""
        assert mod.runtime_unavailable_reason() is None or name == "hip"


def test_the_sims_capabilities():
    from hrr.backends import sim
    from hrr.backends.sim import streams as streams_of_sim
    assert sim.DEVICE_MEMORY_IS_HOST_MEMORY and not sim.HIP_PYTHON_ITSELF and not sim.PASSTHROUGH_UNCATALOGUED
    before = streams_of_sim.STALL_TIMEOUT_S
    with sim.bounded_stalls(before / 2):
        assert streams_of_sim.STALL_TIMEOUT_S == before / 2
    assert streams_of_sim.STALL_TIMEOUT_S == before
    assert set(sim.device_manifest()) == {"model", "name", "arch"}


def test_bodies_are_registered_by_their_family_module():
    from hrr.api.catalogue import CATALOGUE
    from hrr.backends.bodies import Bodies
    from hrr.backends.sim import api
    for family in api.FAMILIES:
        assert family.bodies and all(CATALOGUE[n].family in family.families for n in family.bodies)
    assert set(api.BODIES) == set(api.hip.SUPPORTED_APIS)
    body = Bodies("event")
    with pytest.raises(ValueError, match="not a catalogue row of event"):
        body.table({"hipMalloc": lambda size: None})
    body.table({"hipEventQuery": lambda ev: None})
    with pytest.raises(ValueError, match="two bodies"):
        body.table({"hipEventQuery": lambda ev: None})


def test_cuda_bodies_are_registered_by_their_family_module():
    from hrr.api.catalogue import CATALOGUE
    from hrr.backends import cuda
    from hrr.backends.cuda import hip_api, hiprtc_api
    for family in (*hip_api.FAMILIES, hiprtc_api.body):
        assert family.bodies and all(CATALOGUE[n].family in family.families for n in family.bodies)
    assert set(hip_api.BODIES) == set(cuda.hip.SUPPORTED_APIS)
    assert set(hiprtc_api.body.bodies) == set(cuda.SUPPORTED_HIPRTC_APIS)
