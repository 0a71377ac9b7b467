"""The device a ``fork()``-ed child finds when its parent had initialised a GPU runtime: none.

CUDA's runtime does not survive ``fork()``: in such a child every HIP call returns
hipErrorNotInitialized and does nothing (the cuda backend does the same there), while the
compiler (hiprtc) still works. Capture writes ``forked_from.device: "lost"`` in that child's
manifest. Replay runs in one process, where the device is usable, so it replays the
parent's records up to the fork on the real backend (the handles the child's records name)
and then the child's own records on :func:`lost_device` of that backend: each call returns
hipErrorNotInitialized, as the child saw, whatever backend replays it.
"""
from __future__ import annotations

import contextlib
import functools
import types
from typing import Any, Callable

from hrr.api.catalogue import rows
from hrr.backends import surface
from hrr.hiptypes import hipError_t
from hrr.hiptypes.kernargs import KernelLayout

NOT_INITIALIZED = hipError_t.hipErrorNotInitialized
DETAIL = ("this process is a fork() child of one that had initialised the GPU runtime: "
          "no call reaches a device")

# Every call fails before its arguments are looked at, as a runtime that cannot start fails.
_FRAME = surface.Frame("return (_NOT_INITIALIZED, *NONES)\n", "", {"_NOT_INITIALIZED": NOT_INITIALIZED})


def _never(*args: Any) -> None:
    """A body the frame never calls."""


def _as_given(kind: str) -> Callable[[Any], Any]:
    return lambda value: value


@functools.cache
def hip_module() -> types.ModuleType:
    """hip-python's ``hip`` with every catalogued call returning hipErrorNotInitialized."""
    bodies = {row.name: _never for row in rows() if row.module == "hip"}
    return surface.build("hrr.backends.forkchild.hip", "hip-python's hip API with no device (a fork() child's)",
                         bodies, _FRAME, _as_given)


class LostDevice:
    """``backend`` as a fork()ed child of a process that had used it sees it (the backend
    contract): the same name, hiprtc and kernels, and a ``hip`` whose calls all fail."""

    PASSTHROUGH_UNCATALOGUED = False
    HIP_PYTHON_ITSELF = False
    launch_kernargs = None   # a launch goes through hip, which fails it

    def __init__(self, backend: Any) -> None:
        self._backend = backend
        self.NAME: str = backend.NAME
        self.hip = hip_module()
        self.hiprtc = backend.hiprtc
        self.DEVICE_MEMORY_IS_HOST_MEMORY: bool = backend.DEVICE_MEMORY_IS_HOST_MEMORY

    def library(self, name: str) -> types.ModuleType | None:
        """None: a lost device runs no math library either."""
        return None

    def kernel_layout(self, function: Any) -> KernelLayout:
        return self._backend.kernel_layout(function)

    def last_error_detail(self) -> str:
        return DETAIL

    def device_manifest(self) -> dict[str, str] | None:
        return None

    def device_for_replay(self, recorded: Any) -> list[str]:
        return []

    def lost_in_fork_child(self) -> bool:
        return True

    def reset_device(self) -> None:
        """Nothing: there is no device to reset."""

    def archive_kernels(self, trusted: bool, budget: Any = None,
                        seconds_left: Any = None) -> contextlib.AbstractContextManager[Any]:
        return contextlib.nullcontext()

    def bounded_stalls(self, seconds: float) -> contextlib.AbstractContextManager[Any]:
        return contextlib.nullcontext()

    def runtime_unavailable_reason(self) -> str | None:
        return None


def lost_device(backend: Any) -> LostDevice:
    """``backend`` with no device, as a fork()ed child of a process that had used it sees it."""
    return LostDevice(backend)


__all__ = ["LostDevice", "lost_device", "hip_module", "NOT_INITIALIZED", "DETAIL"]
