"""Loading a kernel source code object on the sim: compile it (cached), place the image in
device memory and run its kernels in the worker process on the stream's turn."""
from __future__ import annotations

import sys
import time
import weakref
from typing import Any, Callable

import xxhash

from hrr.backends import devicemodels
from hrr.config import SIM_KERNEL_TIMEOUT_ENV, config
from hrr.hiptypes import kernelsource
from hrr.backends.sim.kernels import CodeObjectError, DeviceFault, KernelDef, KernelLibrary, LaunchContext
from hrr.backends.sim.native import abi, compilebox, elfimage, policy, pool, toolchain, worker
from hrr.errors import UsageError

PAGE = 4096

# hrr_status -> the hipError_t name a GPU reports for it
_STATUS_ERRORS = {abi.E_SHAPE: "hipErrorLaunchFailure", abi.E_BARRIER: "hipErrorLaunchFailure",
                  abi.E_TRAP: "hipErrorAssert", abi.E_ABI: "hipErrorInvalidImage"}


class NativeModule:
    """What a loaded kernel source code object adds to a sim Module."""

    def __init__(self, library: KernelLibrary, globals_: dict[str, int], image_base: int) -> None:
        self.library, self.globals, self.image_base = library, globals_, image_base


def compile_source(ks: kernelsource.KernelSource,
                   model: devicemodels.DeviceModel | None = None) -> elfimage.NativeImage:
    """The image of ``ks``, parsed (CodeObjectError with the compiler's log when it does not build),
    with the wavefront size of the target it was compiled for (``model``'s when it names none)."""
    arch = (model or devicemodels.selected()).gcn_arch_name
    wavefront = devicemodels.code_wavefront(ks.options, arch, ks.native_kind)
    result = toolchain.compile_program(ks.units, ks.options, name_expressions=ks.name_expressions,
                                       wavefront=wavefront)
    if not result.ok or result.native is None:
        raise CodeObjectError("the module's HIP C++ source does not compile for the sim:\n" + result.log.strip(),
                              code="hipErrorNoBinaryForGpu")
    return result.native


def load(dev: Any, data: bytes) -> NativeModule:
    """Compile and load a kernel source code object on ``dev`` (CodeObjectError when it cannot)."""
    try:
        ks = kernelsource.decode(data)
    except kernelsource.KernelSourceError as exc:
        raise CodeObjectError(str(exc)) from None
    refused = devicemodels.load_refusal(ks.options, dev.model, ks.native_kind) if dev.check_targets else None
    if refused is not None:   # as a GPU's loader finds no code object for its processor
        raise CodeObjectError(refused, code="hipErrorNoBinaryForGpu")
    try:
        sandbox = policy.use_sandbox(worker.sandbox_support())
        policy.compile_sandbox(compilebox.support())
    except policy.KernelsRefused as exc:
        raise CodeObjectError(str(exc), code="hipErrorNoBinaryForGpu") from None
    # compile_program parsed it: an image that does not parse is a failed compile
    image = compile_source(ks, dev.model)
    try:   # the image is device memory, which on the sim is host memory
        release = policy.charge_host(image.memory_size, "the module's native image")
    except policy.HostBudgetExceeded as exc:
        raise CodeObjectError(str(exc), code="hipErrorOutOfMemory") from None
    alloc = dev.memory.malloc(image.memory_size, align=PAGE)
    if alloc is None:
        release()
        raise CodeObjectError(f"no device memory for the module's image ({image.memory_size} bytes)",
                              code="hipErrorOutOfMemory")
    base = alloc.base
    alloc.storage[:image.memory_size] = memoryview(image.relocated(base))
    if image.private is not None:
        dev.native_private[base] = (base + image.private[0], image.private[1] - image.private[0])
    run_in = worker_for(dev, sandbox)
    splittable = image.private is not None
    kernels = {name: KernelDef(name, k.layout, _runner(run_in, base + image.launch, base + k.entry, name, splittable))
               for name, k in image.kernels.items()}
    digest = xxhash.xxh3_64_hexdigest(data)
    library = KernelLibrary(f"native:{digest}", "1", kernels, {n: size for n, (_, size) in image.globals.items()})
    weakref.finalize(library, release)   # given back with the module
    return NativeModule(library, {n: base + off for n, (off, _) in image.globals.items()}, base)


def worker_for(dev: Any, sandbox: bool) -> Callable[[], pool.WorkerPool]:
    """A getter for ``dev``'s kernel workers (sandboxed or not), made on first use
    (UsageError for a bad HRR_SIM_WORKERS); a forked child's are restarted by the workers
    themselves (``KernelWorker`` forgets its parent's process)."""
    def get() -> pool.WorkerPool:
        w = dev.native_workers.get(sandbox)
        if w is None:
            w = dev.native_workers[sandbox] = pool.WorkerPool(
                dev.memory.device_arena, dev.memory.pinned_arena, sandbox=sandbox,
                registered=lambda: dev.memory.registered_ranges(),   # the current memory's
                private=lambda: live_private(dev), setup=dev.native_settings or pool.settings())
        return w
    return get


def use_workers(dev: Any, setup: pool.Settings | None) -> None:
    """From ``dev``'s next launch on, kernel workers as ``setup`` says (None: as HRR_SIM_WORKERS
    says); the running ones are stopped."""
    for running in dev.native_workers.values():
        running.close()
    dev.native_workers.clear()
    dev.native_settings = setup


def live_private(dev: Any) -> list[tuple[int, int]]:
    """The private pages of ``dev``'s images still loaded (those of an unloaded one are
    forgotten: device addresses are never handed out again)."""
    for base in [b for b in dev.native_private if dev.memory.find_device(b) is None]:
        del dev.native_private[base]
    return list(dev.native_private.values())


def _runner(get_worker: Callable[[], pool.WorkerPool], launch_fn: int, entry: int,
            name: str, splittable: bool) -> Callable[[LaunchContext], None]:
    def run(ctx: LaunchContext) -> None:
        started = time.monotonic()
        try:
            out = get_worker().launch(launch_fn, entry, ctx.args, ctx.grid, ctx.block, ctx.shared,
                                      timeout=config().sim_kernel_timeout, splittable=splittable)
        except (worker.WorkerError, UsageError) as exc:
            raise DeviceFault("hipErrorLaunchFailure", f"kernel {name}: {exc}") from None
        except KeyboardInterrupt:   # the worker is stopped already; the program gets the interrupt
            sys.stderr.write(f"hrr: interrupted (Ctrl-C): the sim's kernel {name} was stopped after "
                             f"{time.monotonic() - started:.1f} s\n")
            sys.stderr.flush()
            raise
        if out.printf:
            sys.stdout.write(out.printf.decode(errors="replace"))
            sys.stdout.flush()
        if out.fault:
            code = ("hipErrorIllegalAddress" if out.bad_address else
                    "hipErrorLaunchTimeOut" if out.timed_out else "hipErrorLaunchFailure")
            where = f" ({SIM_KERNEL_TIMEOUT_ENV})" if out.timed_out else ""
            raise DeviceFault(code, f"kernel {name}: {out.fault}{where}")
        if out.status != abi.OK:
            why = abi.STATUS_NAMES.get(out.status, f"status {out.status}")
            if out.status == abi.E_TRAP and out.trap:
                why += f": {out.trap}"
            raise DeviceFault(_STATUS_ERRORS.get(out.status, "hipErrorLaunchFailure"), f"kernel {name}: {why}")
    return run
