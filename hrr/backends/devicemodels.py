"""The AMD GPUs the sim device can be (``HRR_SIM_DEVICE``), and the AMD processors (``gfx...``
targets) a program may compile for.

Each ``DeviceModel`` holds what HIP's ``hipGetDeviceProperties`` derives from the hardware
(``hrr.backends.sim.device_calls`` turns it into the hipDeviceProp_t and the
hipDeviceGetAttribute answers, so the two never disagree). The numbers are what ROCm's HIP
reports, in HIP's units (clocks in kHz, sizes in bytes, ``multiProcessorCount`` as HIP
counts it: work-group processors on an RDNA card), for one device as HIP sees it (an MI250X
is two devices, one per graphics compute die: the model is one of them).

Sources (public):

- ROCm's GPU specification table (docs/reference/gpu-specs.rst in ROCm/rocm-docs,
  rocm.docs.amd.com/en/latest/reference/gpu-specs.html): LLVM target, VRAM, compute units,
  wavefront size, LDS, L2 of every model.
- ROCm/clr hipamd/src/hip_device.cpp (ihipGetDeviceProperties) and hip_device_runtime.cpp
  (hipDeviceGetAttribute): how each field is derived, e.g. sharedMemPerMultiprocessor = LDS per
  CU x CUs, regsPerBlock = regsPerMultiprocessor, maxGridSize = (INT32_MAX, 65535, 65535).
- hipDeviceProp_t dumps from mt4g benchmark reports: an MI300X (VF) under ROCm 6.4
  (totalGlobalMem 205822885888, clockRate 2100000, memoryClockRate 1300000, memoryBusWidth
  8192, l2CacheSize 4 MiB, asicRevision 1) and an MI210 under ROCm 6.3 and 7.1 (68702699520
  bytes, 1700000 / 1600000 kHz, 4096 bits, 8 MiB L2; HIP 7.1 reports regsPerBlock 131072 and
  maxBlocksPerMultiProcessor 32 where 6.x reported 65536 and 2: the models follow HIP 7.1,
  the release the sim reports).
- MI250X: a Cray compiler log of HIP's properties (AMD Instinct MI250X, 110 CUs,
  gfx90a:sramecc+:xnack-, 68702699520 bytes) and AMD's MI250X specifications (1700 MHz peak
  engine clock, 1.6 GHz HBM2e on an 8192-bit interface, 4096 bits per die).
- Radeon RX 7900 XTX: rocminfo (gfx1100, chip id 0x744c, 96 CUs, wavefront 32, 1024 work-items
  per CU, 2304 MHz, 25149440 KiB of VRAM, 6 MiB L2) and PyTorch's view of HIP's properties
  (multi_processor_count 48, total_memory 24560 MiB); regsPerBlock is derived (1536 VGPRs x 32
  lanes x 2 SIMDs), not read from a dump.
- LLVM's AMDGPUUsage (the processor table, target features and default wavefront sizes).
"""
from __future__ import annotations

import re
from typing import Iterable

import attrs

from hrr.errors import UsageError

INT32_MAX = (1 << 31) - 1
DEFAULT = "mi300x"
ENV = "HRR_SIM_DEVICE"


@attrs.frozen
class DeviceModel:
    """One AMD GPU as HIP describes it (the fields hipDeviceProp_t takes from the hardware)."""

    key: str                      # what HRR_SIM_DEVICE names it
    name: str                     # hipDeviceProp_t.name (HIP's marketing name)
    gcn_arch_name: str            # target id: processor and target features
    compute_units: int            # multiProcessorCount
    physical_compute_units: int   # hipDeviceAttributePhysicalMultiProcessorCount
    wavefront: int                # warpSize
    total_global_mem: int         # bytes
    lds: int                      # LDS per CU = per block (sharedMemPerBlock, ...PerMultiProcessor)
    l2_cache: int                 # bytes
    clock_khz: int                # clockRate (peak engine clock)
    memory_clock_khz: int         # memoryClockRate
    memory_bus_width: int         # bits
    max_threads_per_cu: int       # maxThreadsPerMultiProcessor
    max_blocks_per_cu: int        # maxBlocksPerMultiProcessor
    registers: int                # regsPerBlock and regsPerMultiprocessor
    major: int                    # GFX IP version
    minor: int
    pci_chip_id: int              # the PCI device id (hipDeviceAttributePciChipId)
    asic_revision: int
    xccs: int                     # accelerator complex dies (hipDeviceAttributeNumberOfXccs)
    max_vgprs_per_thread: int
    max_threads_per_block: int = 1024
    max_threads_dim: tuple[int, int, int] = (1024, 1024, 1024)
    max_grid_size: tuple[int, int, int] = (INT32_MAX, 65535, 65535)
    pci_vendor_id: int = 0x1002   # AMD

    @property
    def processor(self) -> str:
        """The processor of the target id: ``gfx942`` of ``gfx942:sramecc+:xnack-``."""
        return self.gcn_arch_name.split(":", 1)[0]

    def describe(self) -> str:
        """``mi300x (AMD Instinct MI300X, gfx942:sramecc+:xnack-)``."""
        return f"{self.key} ({self.name}, {self.gcn_arch_name})"


MODELS: dict[str, DeviceModel] = {m.key: m for m in (
    DeviceModel("mi300x", "AMD Instinct MI300X", "gfx942:sramecc+:xnack-", compute_units=304,
                physical_compute_units=304, wavefront=64, total_global_mem=205822885888, lds=64 << 10,
                l2_cache=4 << 20, clock_khz=2_100_000, memory_clock_khz=1_300_000, memory_bus_width=8192,
                max_threads_per_cu=2048, max_blocks_per_cu=32, registers=131072, major=9, minor=4,
                pci_chip_id=0x74A1, asic_revision=1, xccs=8, max_vgprs_per_thread=512),
    DeviceModel("mi250x", "AMD Instinct MI250X", "gfx90a:sramecc+:xnack-", compute_units=110,
                physical_compute_units=110, wavefront=64, total_global_mem=68702699520, lds=64 << 10,
                l2_cache=8 << 20, clock_khz=1_700_000, memory_clock_khz=1_600_000, memory_bus_width=4096,
                max_threads_per_cu=2048, max_blocks_per_cu=32, registers=131072, major=9, minor=0,
                pci_chip_id=0x740C, asic_revision=1, xccs=1, max_vgprs_per_thread=512),
    DeviceModel("mi210", "AMD Instinct MI210", "gfx90a:sramecc+:xnack-", compute_units=104,
                physical_compute_units=104, wavefront=64, total_global_mem=68702699520, lds=64 << 10,
                l2_cache=8 << 20, clock_khz=1_700_000, memory_clock_khz=1_600_000, memory_bus_width=4096,
                max_threads_per_cu=2048, max_blocks_per_cu=32, registers=131072, major=9, minor=0,
                pci_chip_id=0x740F, asic_revision=1, xccs=1, max_vgprs_per_thread=512),
    DeviceModel("rx7900xtx", "Radeon RX 7900 XTX", "gfx1100", compute_units=48,
                physical_compute_units=96, wavefront=32, total_global_mem=25753026560, lds=64 << 10,
                l2_cache=6 << 20, clock_khz=2_304_000, memory_clock_khz=1_250_000, memory_bus_width=384,
                max_threads_per_cu=1024, max_blocks_per_cu=32, registers=98304, major=11, minor=0,
                pci_chip_id=0x744C, asic_revision=0, xccs=1, max_vgprs_per_thread=256),
)}


def names() -> tuple[str, ...]:
    """The models' names, as HRR_SIM_DEVICE takes them."""
    return tuple(MODELS)


def lookup(name: str) -> DeviceModel:
    """The model called ``name`` (case and surrounding blanks ignored); UsageError naming the
    models when there is none."""
    model = MODELS.get(name.strip().lower())
    if model is None:
        raise UsageError(f"{ENV}={name!r} names no sim device model; the models are {', '.join(MODELS)}")
    return model


def selected() -> DeviceModel:
    """The model this process's HRR_SIM_DEVICE names (read once, with hrr's other variables),
    the default when it is unset; UsageError when it names none."""
    from hrr.config import config
    return lookup(config().sim_device or DEFAULT)


# ---- targets: what a program compiles for ------------------------------------------------------

#: LLVM's AMDGPU processors (AMDGPUUsage, "Processors"), each with the target features it takes.
_SRAMECC_XNACK = frozenset({"sramecc", "xnack"})
_XNACK = frozenset({"xnack"})
_NONE: frozenset[str] = frozenset()
PROCESSORS: dict[str, frozenset[str]] = {
    **{p: _NONE for p in ("gfx600", "gfx601", "gfx602", "gfx700", "gfx701", "gfx702", "gfx703", "gfx704",
                          "gfx705", "gfx802", "gfx803", "gfx805")},
    **{p: _XNACK for p in ("gfx801", "gfx810", "gfx900", "gfx902", "gfx904", "gfx909", "gfx90c", "gfx9-generic",
                           "gfx1010", "gfx1011", "gfx1012", "gfx1013", "gfx10-1-generic")},
    **{p: _SRAMECC_XNACK for p in ("gfx906", "gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx950",
                                   "gfx9-4-generic")},
    **{p: _NONE for p in ("gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036",
                          "gfx10-3-generic", "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151",
                          "gfx1152", "gfx1153", "gfx11-generic", "gfx1200", "gfx1201", "gfx1250",
                          "gfx12-generic")},
}
#: Options that name the target: hiprtc's own, nvcc's spelling (which hiprtc turns into it)
#: and NVRTC's short one.
_ARCH_OPTION = re.compile(r"^(?:--offload-arch|--gpu-architecture|-arch)=(.*)$")
_ARCH_FLAG = frozenset({"--gpu-architecture", "-arch"})   # the value is the next option
_FEATURE = re.compile(r"^([a-z]+)([+-])$")


class TargetError(ValueError):
    """An option names no AMD processor a program can be compiled for."""


@attrs.frozen
class Target:
    """What a program is compiled for: the processor, the features its target id states and
    the wavefront size its code is built for."""

    processor: str
    features: tuple[tuple[str, bool], ...]
    wavefront: int

    @property
    def target_id(self) -> str:
        return ":".join([self.processor, *(f"{f}{'+' if on else '-'}" for f, on in self.features)])


def arch_options(options: Iterable[str]) -> list[str]:
    """The targets ``options`` name (``--offload-arch=``, ``--gpu-architecture[=]``, ``-arch[=]``),
    in order: hiprtc compiles for the first."""
    found: list[str] = []
    it = iter(options)
    for opt in it:
        m = _ARCH_OPTION.match(opt)
        if m:
            found.append(m.group(1))
        elif opt in _ARCH_FLAG:
            found.append(next(it, ""))
    return found


def parse_target_id(text: str) -> tuple[str, tuple[tuple[str, bool], ...]]:
    """(processor, features) of a target id such as ``gfx90a:sramecc+:xnack-``; TargetError
    when it is not one of an AMD processor LLVM knows, with features it takes."""
    processor, *rest = text.strip().split(":")
    if processor not in PROCESSORS:
        raise TargetError(f"'{text}' is not an AMD GPU processor (hiprtc compiles for gfx targets such as "
                          f"gfx942 or gfx90a:xnack-)")
    features: list[tuple[str, bool]] = []
    for part in rest:
        m = _FEATURE.match(part)
        if m is None or m.group(1) not in PROCESSORS[processor] or m.group(1) in dict(features):
            raise TargetError(f"'{text}': '{part}' is not a target feature of {processor} "
                              f"(it takes {', '.join(sorted(PROCESSORS[processor])) or 'none'})")
        features.append((m.group(1), m.group(2) == "+"))
    return processor, tuple(features)


def _wavefront(processor: str, options: Iterable[str]) -> int:
    """GCN and CDNA run 64-wide wavefronts; RDNA (gfx10 on) 32-wide unless the program asks
    for wave64 (-mwavefrontsize64; the last of it and -mno-wavefrontsize64 wins)."""
    if not re.match(r"gfx1\d", processor):
        return 64
    wave = 32
    for opt in options:
        if opt == "-mwavefrontsize64" and processor != "gfx1250":   # gfx1250 is wave32 only
            wave = 64
        elif opt == "-mno-wavefrontsize64":
            wave = 32
    return wave


def compile_target(options: Iterable[str], default_arch: str) -> Target:
    """The target a hiprtc compile with ``options`` builds for: the first one the options name,
    else ``default_arch`` (the device's, as hiprtc asks the runtime); TargetError when the
    options name something that is not an AMD processor."""
    opts = list(options)
    named = arch_options(opts)
    processor, features = parse_target_id(named[0] if named else default_arch)
    return Target(processor, features, _wavefront(processor, opts))


def cuda_target(options: Iterable[str]) -> bool:
    """Whether the target the options name is NVIDIA's (``sm_90``, ``compute_90``): a CUDA
    program's, handed to hiprtc through hip-python's CUDA interop."""
    named = arch_options(list(options))
    return bool(named) and re.match(r"(sm|compute)_\d", named[0]) is not None


def code_wavefront(options: Iterable[str], default_arch: str, native_kind: str = "") -> int:
    """The wavefront size a kernel source code object was compiled for: its target's (a
    program's own options name it), 32 for CUDA's (``sm_*``, or a cubin beside the source: a
    capture on the cuda backend), the device's when the options name none or no AMD processor."""
    opts = list(options)
    if native_kind == "cubin" or cuda_target(opts):
        return 32
    try:
        return compile_target(opts, default_arch).wavefront
    except TargetError:
        return compile_target((), default_arch).wavefront


def load_refusal(options: Iterable[str], model: DeviceModel, native_kind: str = "") -> str | None:
    """Why ``model`` cannot run code compiled with ``options`` (None when it can): a target id
    of another processor, or with a feature the device's settings contradict, is refused by a
    GPU's loader (hipErrorNoBinaryForGpu). A code object built for another kind of GPU (a
    cubin beside the source: the cuda backend's), or whose options name no AMD processor (from
    before the sim had models), is not one a GPU would check: no refusal."""
    named = arch_options(list(options))
    if not named or native_kind:
        return None
    try:
        processor, features = parse_target_id(named[0])
    except TargetError:
        return None
    device_processor, device_features = parse_target_id(model.gcn_arch_name)
    if processor != device_processor:
        return (f"the code object was compiled for {named[0]}, the device ({model.name}) is "
                f"{model.gcn_arch_name}")
    settings = dict(device_features)
    for feature, on in features:
        if feature in settings and settings[feature] != on:
            return (f"the code object was compiled for {named[0]}, the device ({model.name}) runs "
                    f"{model.gcn_arch_name}")
    return None
