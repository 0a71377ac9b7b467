"""The backend contract: everything capture and replay ask of a backend module.

Each backend package (``hrr.backends.sim``, ``cuda``, ``hip``) is a module that implements
the whole of :class:`Backend`; a capability a backend lacks is there with a neutral value
(``False``, ``None``, ``""``) or a method that does nothing, so capture and replay call it
directly and never probe. ``tests/backends/test_contract.py`` holds every backend module to
it, and mypy checks each module against it there.
"""
from __future__ import annotations

from contextlib import AbstractContextManager
from types import ModuleType
from typing import Any, Callable, Protocol

from hrr.hiptypes.kernargs import KernelLayout


def api_module(backend: Backend, module: str) -> ModuleType | None:
    """The backend's module a catalogue row's ``module`` names: ``hip``, ``hiprtc`` or a math
    library's (None when the backend offers no such library)."""
    if module == "hip":
        return backend.hip
    if module == "hiprtc":
        return backend.hiprtc
    return backend.library(module)


class Backend(Protocol):
    """A backend module as capture and replay use it."""

    @property
    def NAME(self) -> str:
        """The backend's name (``--backend``, the archive's manifest)."""

    @property
    def hip(self) -> ModuleType:
        """hip-python's ``hip`` module on this backend."""

    @property
    def hiprtc(self) -> ModuleType:
        """hip-python's ``hiprtc`` module on this backend."""

    @property
    def PASSTHROUGH_UNCATALOGUED(self) -> bool:
        """Whether ``hip`` has calls the catalogue has no row for that capture passes through
        (recorded as unreplayable): hip-python's own module (the hip backend)."""

    @property
    def HIP_PYTHON_ITSELF(self) -> bool:
        """Whether ``hip`` is hip-python's own release rather than hrr's surface (capture
        adapts it only to a release it is not)."""

    @property
    def DEVICE_MEMORY_IS_HOST_MEMORY(self) -> bool:
        """Whether device memory is this process's RAM (the sim), so replay charges device
        allocations to its host-memory budget."""

    @property
    def launch_kernargs(self) -> Callable[..., tuple] | None:
        """``(function, grid, block, shared, stream, kernargs) -> result``: a launch of packed
        kernel arguments without the hip surface in between, used by replay while its
        ``stands_for`` is the surface function replay would call; None when there is none.
        It may carry ``prepare(function, grid, block, shared, stream, kernargs)``: that launch
        as a zero-argument callable to make again (or None), for runs of equal launch records."""

    def library(self, name: str) -> ModuleType | None:
        """hip-python's math-library module ``name`` (``hipblas``, ...: ``hrr.hiptypes.mathlibs``)
        on this backend, or None when the backend offers none of that name."""

    def kernel_layout(self, function: Any) -> KernelLayout:
        """The parameter layout of a function handle this backend's ``hipModuleGetFunction`` returned."""

    def last_error_detail(self) -> str:
        """What the backend says about this thread's last error ('' when it says nothing)."""

    def device_manifest(self) -> dict[str, str] | None:
        """What a capture's manifest records of the device (``device``), or None."""

    def device_for_replay(self, recorded: Any) -> list[str]:
        """A fresh device before a process replays (the one the manifest's ``device``,
        ``recorded``, names where the backend models devices); returns the summary's notes."""

    def lost_in_fork_child(self) -> bool:
        """Whether this process is a ``fork()``-ed child that cannot use the device because
        its parent had initialised a GPU runtime before the fork (CUDA's does not survive
        one: every call returns hipErrorNotInitialized). False where a child keeps a usable
        device (the sim: its own copy) or where the backend cannot tell."""

    def reset_device(self) -> None:
        """A fresh device; outstanding handles become invalid (nothing where the backend
        cannot reset)."""

    def archive_kernels(self, trusted: bool, budget: Any = None,
                        seconds_left: Callable[[], float] | None = None) -> AbstractContextManager[Any]:
        """While replay runs: the kernels an archive brings are a stranger's (sandboxed),
        or, ``trusted``, run as they are; their compiles and images are bounded by replay's
        host ``budget`` and the ``seconds_left``; a backend that compiles none does nothing."""

    def bounded_stalls(self, seconds: float) -> AbstractContextManager[Any]:
        """While replay runs: a wait that cannot finish ends after ``seconds`` where the
        backend can tell (the sim's scheduler); others do nothing."""

    def runtime_unavailable_reason(self) -> str | None:
        """Why this backend's calls cannot run here, asked once it is imported (None when
        they can, or when the first call is the one to say)."""
