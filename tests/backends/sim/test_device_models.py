"""The sim device is an AMD GPU to the program (hrr.backends.devicemodels, HRR_SIM_DEVICE):
the model's properties and every attribute agree, the queries that report memory, names and
PCI ids say the same, the choice is a usage error when it names no model, the manifest
records the model and replay uses it, hiprtc compiles for the targets programs name, and a
native kernel sees the wavefront size of the target it was compiled for."""
from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hrr.archive.manifest import decode as decode_manifest
from hrr.backends import devicemodels, sim
from hrr import hiptypes as ht
from hrr.backends.devicemodels import MODELS
from hrr.backends.sim import hip, hiprtc
from hrr.backends.sim.native.toolchain import find_toolchain
from hrr.config import config
from hrr.errors import FormatError, UsageError
from hrrtest import capture, only, replay, text

E = ht.hipError_t
A = ht.hipDeviceAttribute_t
R = ht.hiprtcResult
OK = E.hipSuccess
INT32_MAX = (1 << 31) - 1
H2D, D2H = ht.hipMemcpyKind.hipMemcpyHostToDevice, ht.hipMemcpyKind.hipMemcpyDeviceToHost
needs_compiler = pytest.mark.skipif(find_toolchain() is None, reason="no C++ compiler for native kernels here")


@pytest.fixture
def sim_device(monkeypatch):
    """Set HRR_SIM_DEVICE as a process started with it would read it (None: unset)."""
    def choose(name: str | None) -> None:
        if name is None:
            monkeypatch.delenv("HRR_SIM_DEVICE", raising=False)
        else:
            monkeypatch.setenv("HRR_SIM_DEVICE", name)
        config.cache_clear()
    choose(None)
    yield choose
    monkeypatch.delenv("HRR_SIM_DEVICE", raising=False)
    config.cache_clear()
    sim.reset_device()


def on(key: str) -> devicemodels.DeviceModel:
    """A fresh sim device as the model called ``key``."""
    model = MODELS[key]
    sim.reset_device(model)
    return model


# ---- the table ---------------------------------------------------------------------------------

def test_the_table_holds_amd_gpus_with_their_targets_and_wavefronts():
    assert {"mi300x", "mi250x"} <= set(MODELS) and devicemodels.DEFAULT == "mi300x"
    assert MODELS["mi300x"].gcn_arch_name == "gfx942:sramecc+:xnack-"
    assert MODELS["mi250x"].gcn_arch_name == "gfx90a:sramecc+:xnack-"
    assert any(m.wavefront == 32 for m in MODELS.values()), "an RDNA card: wave32"
    for key, m in MODELS.items():
        assert m.key == key and m.gcn_arch_name.startswith("gfx") and m.name
        processor, features = devicemodels.parse_target_id(m.gcn_arch_name)   # a target LLVM knows
        assert m.wavefront == (64 if processor.startswith("gfx9") else 32), key
        assert m.total_global_mem > 1 << 30 and m.compute_units > 0 and m.l2_cache > 0 and m.lds == 64 << 10
        assert m.max_threads_per_block == 1024 and m.max_grid_size == (INT32_MAX, 65535, 65535)
        assert m.pci_vendor_id == 0x1002 and 0x7000 <= m.pci_chip_id <= 0x7FFF


def test_a_name_that_is_no_model_is_a_usage_error_naming_the_models():
    assert devicemodels.lookup(" MI250X ") is MODELS["mi250x"]
    with pytest.raises(UsageError) as err:
        devicemodels.lookup("mi999")
    assert "HRR_SIM_DEVICE='mi999'" in str(err.value) and all(k in str(err.value) for k in MODELS)


def test_the_variable_is_read_once_with_the_others(sim_device):
    assert config().sim_device is None and devicemodels.selected() is MODELS["mi300x"]
    sim_device("mi250x")
    assert config().sim_device == "mi250x" and devicemodels.selected() is MODELS["mi250x"]
    os.environ["HRR_SIM_DEVICE"] = "rx7900xtx"     # no cache_clear: the first reading stands
    assert devicemodels.selected() is MODELS["mi250x"]
    sim.reset_device()
    assert hip.hipGetDeviceProperties(0)[1].name == ht.as_text(b"AMD Instinct MI250X")


# ---- what the device answers ---------------------------------------------------------------------

# hipDeviceGetAttribute member (after "hipDeviceAttribute") -> the hipDeviceProp_t field HIP reads
# it from (ROCm/clr hip_device_runtime.cpp), with an index for array fields.
FROM_PROPS: dict[str, str | tuple[str, int]] = {
    "EccEnabled": "ECCEnabled", "AccessPolicyMaxWindowSize": "accessPolicyMaxWindowSize",
    "AsyncEngineCount": "asyncEngineCount", "CanMapHostMemory": "canMapHostMemory",
    "CanUseHostPointerForRegisteredMem": "canUseHostPointerForRegisteredMem", "ClockRate": "clockRate",
    "ComputeMode": "computeMode", "ComputePreemptionSupported": "computePreemptionSupported",
    "ConcurrentKernels": "concurrentKernels", "ConcurrentManagedAccess": "concurrentManagedAccess",
    "CooperativeLaunch": "cooperativeLaunch", "CooperativeMultiDeviceLaunch": "cooperativeMultiDeviceLaunch",
    "DeviceOverlap": "deviceOverlap", "DirectManagedMemAccessFromHost": "directManagedMemAccessFromHost",
    "GlobalL1CacheSupported": "globalL1CacheSupported", "HostNativeAtomicSupported": "hostNativeAtomicSupported",
    "Integrated": "integrated", "IsMultiGpuBoard": "isMultiGpuBoard", "KernelExecTimeout": "kernelExecTimeoutEnabled",
    "L2CacheSize": "l2CacheSize", "LocalL1CacheSupported": "localL1CacheSupported",
    "LuidDeviceNodeMask": "luidDeviceNodeMask", "ComputeCapabilityMajor": "major", "ComputeCapabilityMinor": "minor",
    "ManagedMemory": "managedMemory", "MaxBlocksPerMultiProcessor": "maxBlocksPerMultiProcessor",
    "MaxBlockDimX": ("maxThreadsDim", 0), "MaxBlockDimY": ("maxThreadsDim", 1), "MaxBlockDimZ": ("maxThreadsDim", 2),
    "MaxGridDimX": ("maxGridSize", 0), "MaxGridDimY": ("maxGridSize", 1), "MaxGridDimZ": ("maxGridSize", 2),
    "MaxSurface1D": "maxSurface1D", "MaxTexture1DWidth": "maxTexture1D", "MaxTexture1DLinear": "maxTexture1DLinear",
    "MaxTexture1DMipmap": "maxTexture1DMipmap", "MaxTexture2DWidth": ("maxTexture2D", 0),
    "MaxTexture2DHeight": ("maxTexture2D", 1), "MaxTexture3DWidth": ("maxTexture3D", 0),
    "MaxTexture3DHeight": ("maxTexture3D", 1), "MaxTexture3DDepth": ("maxTexture3D", 2),
    "MaxTextureCubemap": "maxTextureCubemap", "MaxThreadsPerBlock": "maxThreadsPerBlock",
    "MaxThreadsPerMultiProcessor": "maxThreadsPerMultiProcessor", "MaxPitch": "memPitch",
    "MemoryBusWidth": "memoryBusWidth", "MemoryClockRate": "memoryClockRate",
    "MultiGpuBoardGroupID": "multiGpuBoardGroupID", "MultiprocessorCount": "multiProcessorCount",
    "PageableMemoryAccess": "pageableMemoryAccess",
    "PageableMemoryAccessUsesHostPageTables": "pageableMemoryAccessUsesHostPageTables",
    "PciBusId": "pciBusID", "PciDeviceId": "pciDeviceID", "PciDomainId": "pciDomainID", "PciDomainID": "pciDomainID",
    "PersistingL2CacheMaxSize": "persistingL2CacheMaxSize", "MaxRegistersPerBlock": "regsPerBlock",
    "MaxRegistersPerMultiprocessor": "regsPerMultiprocessor", "ReservedSharedMemPerBlock": "reservedSharedMemPerBlock",
    "MaxSharedMemoryPerBlock": "sharedMemPerBlock", "SharedMemPerBlockOptin": "sharedMemPerBlockOptin",
    "SharedMemPerMultiprocessor": "sharedMemPerMultiprocessor",
    "StreamPrioritiesSupported": "streamPrioritiesSupported", "SurfaceAlignment": "surfaceAlignment",
    "TextureAlignment": "textureAlignment", "TexturePitchAlignment": "texturePitchAlignment",
    "TotalConstantMemory": "totalConstMem", "TotalGlobalMem": "totalGlobalMem",
    "UnifiedAddressing": "unifiedAddressing",
    "WarpSize": "warpSize", "MemoryPoolsSupported": "memoryPoolsSupported",
    "HostRegisterSupported": "hostRegisterSupported",
    "MemoryPoolSupportedHandleTypes": "memoryPoolSupportedHandleTypes",
    "MaxSharedMemoryPerMultiprocessor": "maxSharedMemoryPerMultiProcessor",
    "CooperativeMultiDeviceUnmatchedFunc": "cooperativeMultiDeviceUnmatchedFunc",
    "CooperativeMultiDeviceUnmatchedGridDim": "cooperativeMultiDeviceUnmatchedGridDim",
    "CooperativeMultiDeviceUnmatchedBlockDim": "cooperativeMultiDeviceUnmatchedBlockDim",
    "CooperativeMultiDeviceUnmatchedSharedMem": "cooperativeMultiDeviceUnmatchedSharedMem",
    "IsLargeBar": "isLargeBar", "AsicRevision": "asicRevision",
}
# Members HIP answers from the device, not from hipDeviceProp_t: the model's value, or the sim's.
FROM_MODEL = {"PhysicalMultiProcessorCount": "physical_compute_units", "NumberOfXccs": "xccs",
              "PciChipId": "pci_chip_id", "MaxAvailableVgprsPerThread": "max_vgprs_per_thread"}
SIM_CONSTANTS = {"VirtualMemoryManagementSupported": 0, "HostNumaId": 0, "DmaBufSupported": 0,
                 "GPUDirectRDMAWithHipVMMSupported": 0, "HandleTypeFabricSupported": 0, "HdpMemFlushCntl": 0,
                 "HdpRegFlushCntl": 0, "CanUseStreamWaitValue": 1, "ImageSupport": 0, "FineGrainSupport": 1,
                 "WallClockRate": 100_000, "ExpertSchedMode": 0, "MaxDynDataPrefetchRegions": 0}


@pytest.mark.parametrize("key", list(MODELS))
def test_every_attribute_agrees_with_the_properties(key):
    """hip-python's hip_deviceattributes walks every member: each one the sim answers is the
    props field HIP reads it from (ints clamped to INT32_MAX, as HIP's size_t ones are)."""
    model = on(key)
    err, props = hip.hipGetDeviceProperties(0)
    assert err == OK
    answered = 0
    for name, member in A.__members__.items():   # aliases too (EccEnabled is CudaCompatibleBegin's value)
        err, value = hip.hipDeviceGetAttribute(member, 0)
        short = name[len("hipDeviceAttribute"):]
        if err != OK or short.endswith(("Begin", "End")):
            assert (err, value) in ((E.hipErrorInvalidValue, None), (OK, value)), member
            continue
        answered += 1
        if short in FROM_PROPS:
            source = FROM_PROPS[short]
            want = getattr(props, source[0])[source[1]] if isinstance(source, tuple) else getattr(props, source)
            assert value == min(int(want), INT32_MAX), (key, short, value, want)
        elif short in FROM_MODEL:
            assert value == getattr(model, FROM_MODEL[short]), (key, short)
        else:
            assert value == SIM_CONSTANTS[short], (key, short)   # KeyError: an attribute nobody checks
    assert answered >= 95   # HIP answers all but the range markers, unused slots and array limits


@pytest.mark.parametrize("key", list(MODELS))
def test_the_properties_are_the_models(key):
    model = on(key)
    props = hip.hipGetDeviceProperties(0)[1]
    assert props.name == ht.as_text(model.name.encode())
    assert props.gcnArchName == ht.as_text(model.gcn_arch_name.encode())
    assert props.gcnArchName.startswith(ht.as_text(b"gfx"))   # what programs written for AMD GPUs check
    assert (props.warpSize, props.multiProcessorCount, props.totalGlobalMem, props.l2CacheSize) == (
        model.wavefront, model.compute_units, model.total_global_mem, model.l2_cache)
    assert (props.clockRate, props.memoryClockRate, props.memoryBusWidth) == (
        model.clock_khz, model.memory_clock_khz, model.memory_bus_width)
    assert (props.major, props.minor) == (model.major, model.minor)
    # as HIP derives them: the LDS per CU per block, the whole device's in sharedMemPerMultiprocessor
    assert props.sharedMemPerBlock == props.maxSharedMemoryPerMultiProcessor == props.sharedMemPerBlockOptin == 65536
    assert props.sharedMemPerMultiprocessor == 65536 * model.compute_units
    assert props.regsPerBlock == props.regsPerMultiprocessor == model.registers
    assert props.maxThreadsDim == [1024, 1024, 1024] and props.maxGridSize == [INT32_MAX, 65535, 65535]


@pytest.mark.parametrize("key", list(MODELS))
def test_name_memory_capability_and_pci_queries_say_the_same(key):
    model = on(key)
    props = hip.hipGetDeviceProperties(0)[1]
    assert hip.hipDeviceGetName(256, 0) == (OK, ht.CStr(model.name.encode()))
    assert hip.hipDeviceTotalMem(0) == (OK, props.totalGlobalMem)
    assert hip.hipDeviceComputeCapability(0) == (OK, props.major, props.minor)
    err, free, total = hip.hipMemGetInfo()
    assert err == OK and total == free == props.totalGlobalMem
    err, d = hip.hipMalloc(1 << 20)
    assert err == OK and hip.hipMemGetInfo()[1] == total - (1 << 20)
    assert hip.hipMalloc(total)[0] == E.hipErrorOutOfMemory            # more than the model has left
    assert hip.hipFree(d) == (OK,)
    err, bus = hip.hipDeviceGetPCIBusId(13, 0)
    assert err == OK and bytes(bus) == b"%04x:%02x:%02x.%x" % (props.pciDomainID, props.pciBusID, props.pciDeviceID, 0)
    assert hip.hipDeviceGetByPCIBusId(bus) == (OK, 0)
    assert hip.hipDeviceGetAttribute(A.hipDeviceAttributePciChipId, 0) == (OK, model.pci_chip_id)
    # the limits the model sets: the heap may be as large as the memory, not more
    heap = ht.hipLimit_t.hipLimitMallocHeapSize
    assert hip.hipDeviceSetLimit(heap, total) == (OK,)
    assert hip.hipDeviceSetLimit(heap, total + 1) == (E.hipErrorInvalidValue,)


@pytest.mark.parametrize("key", list(MODELS))
def test_occupancy_is_the_models(key, kernels):
    model = on(key)
    kernels.__init__()   # the module on this device
    f = kernels.fn("fill_u32")
    wave = model.wavefront
    # a 33-thread block takes whole wavefronts: 64 threads on CDNA, two 32-wide waves on RDNA
    assert hip.hipOccupancyMaxActiveBlocksPerMultiprocessor(f, 33, 0) == (
        OK, min(model.max_blocks_per_cu, model.max_threads_per_cu // (-(-33 // wave) * wave)))
    err, grid, block = hip.hipOccupancyMaxPotentialBlockSize(f, 0, 0)
    assert err == OK and grid == hip.hipOccupancyMaxActiveBlocksPerMultiprocessor(f, block, 0)[1] * model.compute_units


# ---- the usage error at the start of run, capture and replay -------------------------------------

def _hrr(*args: str, device: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, HRR_SIM_DEVICE=device)
    env.pop("HRR_MODE", None)
    return subprocess.run([sys.executable, "-m", "hrr.cli.main", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.mark.parametrize("command", [["run", "--", sys.executable, "-c", "pass"],
                                     ["capture", "-o", "out.hrr", "--", sys.executable, "-c", "pass"],
                                     ["replay", "no-such-archive"]])
def test_a_value_naming_no_model_is_a_one_line_usage_error(command, tmp_path):
    from hrr.exitcodes import USAGE
    proc = _hrr(*command, device="mi999", cwd=tmp_path)
    assert proc.returncode == USAGE, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hrr: error: HRR_SIM_DEVICE='mi999'"), proc.stderr
    assert all(k in lines[0] for k in MODELS) and "Traceback" not in proc.stderr
    assert not (tmp_path / "out.hrr").exists()          # nothing started


def test_a_program_under_hrr_run_sees_the_chosen_model(tmp_path):
    prog = ("from hip import hip\n"
            "p = hip.hipGetDeviceProperties(0)[1]\n"
            "print(p.name, p.gcnArchName, p.warpSize)\n")
    proc = _hrr("run", "--", sys.executable, "-c", prog, device="rx7900xtx", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["Radeon", "RX", "7900", "XTX", "gfx1100", "32"]


# ---- the manifest, hrr info and replay -----------------------------------------------------------

def _fill_app(hip, hiprtc, backend):
    """A launch of the built-in fill_u32 and a device-to-host copy of its result."""
    err, module = hip.hipModuleLoadData(backend.builtin_code_object())
    err, fn = hip.hipModuleGetFunction(module, b"fill_u32")
    err, d = hip.hipMalloc(256)
    args = [ctypes.c_void_p(int(d)), ctypes.c_uint32(7), ctypes.c_uint32(64)]
    assert hip.hipModuleLaunchKernel(fn, 1, 1, 1, 64, 1, 1, 0, None, [ctypes.addressof(a) for a in args], None)[0] == 0
    out = np.zeros(64, np.uint32)
    assert hip.hipMemcpy(out, d, 256, D2H)[0] == 0
    return hip.hipGetDeviceProperties(0)[1].gcnArchName, out


def _manifest(root: Path) -> tuple[Path, dict]:
    (path,) = root.glob("pid-*/manifest.json")
    return path, json.loads(path.read_text())


def test_the_manifest_records_the_model_and_info_shows_it(tmp_path, sim_device):
    sim_device("mi250x")
    arch, out = capture(tmp_path, _fill_app)
    assert arch == ht.as_text(b"gfx90a:sramecc+:xnack-") and out.tolist() == [7] * 64
    _, manifest = _manifest(tmp_path)
    assert manifest["device"] == {"model": "mi250x", "name": "AMD Instinct MI250X", "arch": "gfx90a:sramecc+:xnack-"}
    from hrr.cli.info import archive_info, render_info
    shown = render_info(archive_info(str(tmp_path)))
    assert "device mi250x (AMD Instinct MI250X, gfx90a:sramecc+:xnack-)" in shown


def test_older_manifests_read_and_a_bad_device_is_refused():
    base = {"format_version": 3, "pid": 1, "backend": "sim", "plugins": {}, "content_mode": "content",
            "host_snapshots": False, "unreplayable_apis": [], "counts": {}, "clean_shutdown": True}
    assert "device" not in decode_manifest(json.dumps(base).encode(), "m")          # before models
    good = dict(base, device={"model": "mi300x", "name": "AMD Instinct MI300X", "arch": "gfx942"})
    assert decode_manifest(json.dumps(good).encode(), "m")["device"]["model"] == "mi300x"
    for bad in ("mi300x", {"name": "x"}, {"model": 3}, {"model": "x" * 300}, {"model": "m", "arch": ["gfx942"]}):
        with pytest.raises(FormatError, match="device"):
            decode_manifest(json.dumps(dict(base, device=bad)).encode(), "m")


def test_replay_is_the_recorded_model_whatever_the_variable_says(tmp_path, sim_device):
    sim_device("rx7900xtx")
    capture(tmp_path, _fill_app)
    sim_device("mi250x")
    result = replay(tmp_path)
    proc = only(result)
    assert result.exit_code == 0 and proc.checks_passed == 1, text(result)
    assert any("rx7900xtx (Radeon RX 7900 XTX, gfx1100), as recorded" in n and "HRR_SIM_DEVICE=mi250x" in n
               for n in proc.notes), text(result)
    from hrr.backends.sim import device
    assert device.current().model is MODELS["rx7900xtx"]
    sim_device(None)
    proc = only(replay(tmp_path))                       # unset: no note, the same device
    assert proc.checks_passed == 1 and not any(n.startswith("Device:") for n in proc.notes)


def test_an_archive_naming_no_model_replays_byte_exact_on_another(tmp_path, sim_device):
    """An archive from before the sim had models (its gcnArchName was "sim"): the props calls'
    outputs differ on today's device, and are not compared; every device-to-host check passes."""
    capture(tmp_path, _fill_app)
    path, manifest = _manifest(tmp_path)
    del manifest["device"]
    path.write_text(json.dumps(manifest))
    sim_device("mi250x")
    result = replay(tmp_path)
    proc = only(result)
    assert result.exit_code == 0 and proc.checks_passed == 1 and proc.divergence_count == 0, text(result)
    from hrr.backends.sim import device
    assert device.current().model is MODELS["mi250x"] and not device.current().check_targets
    manifest["device"] = {"model": "mi355x"}               # a model this hrr does not know
    path.write_text(json.dumps(manifest))
    proc = only(replay(tmp_path))
    assert proc.checks_passed == 1 and any("'mi355x' is not one this hrr knows" in n for n in proc.notes)


# ---- hiprtc's targets and the native wavefront ---------------------------------------------------

PROBE = b"""
extern "C" __global__ void probe(unsigned int* out) {
  unsigned t = threadIdx.x;
  unsigned long long lanes = __ballot(1);
  out[t * 4 + 0] = warpSize;
  out[t * 4 + 1] = (unsigned)__popcll(lanes);
  out[t * 4 + 2] = (unsigned)__shfl((int)t, 0);
  out[t * 4 + 3] = __AMDGCN_WAVEFRONT_SIZE__;
}
"""


def _compile(options: list[bytes]) -> tuple[int, str, bytes | None]:
    err, prog = hiprtc.hiprtcCreateProgram(PROBE, b"probe.hip", 0, [], [])
    result, = hiprtc.hiprtcCompileProgram(prog, len(options), options)
    log = bytearray(hiprtc.hiprtcGetProgramLogSize(prog)[1])
    hiprtc.hiprtcGetProgramLog(prog, log)
    code = None
    if result == R.HIPRTC_SUCCESS:
        code = bytearray(hiprtc.hiprtcGetCodeSize(prog)[1])
        hiprtc.hiprtcGetCode(prog, code)
        code = bytes(code)
    return int(result), log.decode(errors="replace"), code


def _run_probe(code: bytes, threads: int = 128) -> np.ndarray:
    err, module = hip.hipModuleLoadData(code)
    assert err == OK, sim.last_error_detail()
    fn = hip.hipModuleGetFunction(module, b"probe")[1]
    d = hip.hipMalloc(threads * 16)[1]
    arg = ctypes.c_void_p(int(d))
    assert hip.hipModuleLaunchKernel(fn, 1, 1, 1, threads, 1, 1, 0, None, [ctypes.addressof(arg)], None) == (OK,)
    out = np.zeros(threads * 4, np.uint32)
    assert hip.hipMemcpy(out, d, out.nbytes, D2H) == (OK,)
    return out.reshape(threads, 4)


def test_hiprtc_refuses_a_target_that_is_no_amd_processor():
    on("mi300x")
    for bad in (b"--offload-arch=gfx9999", b"--offload-arch=sim", b"--offload-arch=gfx942:xnack",
                b"--offload-arch=gfx1100:sramecc+"):
        result, log, code = _compile([bad])
        assert result == R.HIPRTC_ERROR_COMPILATION and code is None, bad
        assert "invalid --offload-arch" in log and bad.split(b"=")[1].decode() in log, log


@needs_compiler
@pytest.mark.parametrize("key", ["mi300x", "rx7900xtx"])
def test_the_arch_a_program_builds_from_gcnarchname_compiles_loads_and_runs(key):
    """hip-python's examples: b"--offload-arch=" + props.gcnArchName, or the nvcc spelling
    hiprtc turns into it; a native kernel sees the model's wavefront: warpSize, the lanes a
    ballot spans and where a shuffle's lane 0 is."""
    model = on(key)
    arch = hip.hipGetDeviceProperties(0)[1].gcnArchName
    as_given = b"--offload-arch=" + (arch if isinstance(arch, bytes) else arch.encode())
    for option in (as_given, b"--gpu-architecture=" + model.processor.encode(), None):
        result, log, code = _compile([option] if option else [])
        assert result == 0 and code is not None, log
        probe = _run_probe(code)
        wave = model.wavefront
        assert (probe[:, 0] == wave).all() and (probe[:, 1] == wave).all() and (probe[:, 3] == wave).all()
        assert probe[:, 2].tolist() == [t // wave * wave for t in range(128)]


@needs_compiler
def test_another_amd_target_compiles_and_is_refused_by_the_device_as_on_a_gpu():
    on("mi300x")
    for target in (b"gfx90a", b"gfx942:xnack+"):
        result, log, code = _compile([b"--offload-arch=" + target])
        assert result == 0 and code is not None, log              # hiprtc compiles for what it is told
        err, module = hip.hipModuleLoadData(code)
        assert (err, module) == (E.hipErrorNoBinaryForGpu, None), target
        assert target.decode() in sim.last_error_detail()
    on("mi250x")                                                  # gfx90a's own device runs it
    result, log, code = _compile([b"--offload-arch=gfx90a:xnack-"])
    assert (_run_probe(code)[:, 0] == 64).all()


@needs_compiler
def test_the_wavefront_is_the_targets():
    """An RDNA target asked for wave64 builds 64-wide; a CUDA program's target (hip-python's
    CUDA interop hands hiprtc nvrtc's options) builds 32-wide, as it was written for."""
    on("rx7900xtx")
    result, log, code = _compile([b"--offload-arch=gfx1100", b"-mwavefrontsize64"])
    assert result == 0, log
    assert (_run_probe(code)[:, 1] == 64).all()
    on("mi300x")
    result, log, code = _compile([b"--gpu-architecture=compute_90"])
    assert result == 0 and code is not None, log
    probe = _run_probe(code)
    assert (probe[:, 0] == 32).all() and (probe[:, 1] == 32).all()
