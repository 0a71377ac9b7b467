"""hip-python's CUDA interop layer (``hip-python-interop``) in virtual environments of
their own, one per hip-python release, made once per test session (``venv_root``).

The interop installs ``cuda/bindings/`` (and, for 7.x, ``cuda/cudart``...), the very paths
NVIDIA's cuda-bindings owns, so neither can share a venv with hrr's ``[cuda]`` extra; and
hip-python 7.x and 10.x cannot share one either. hrr itself comes from PYTHONPATH (the
``hrr run``/``hrr capture`` bootstrap puts it there for every child process)."""
from __future__ import annotations

import subprocess
from pathlib import Path

from hippython7 import HP7_DEPS, make_venv, venv_root

# release -> what pip installs beside hrr's runtime dependencies
INTEROP_SPECS: dict[str, list[str]] = {
    "7": ["hip-python==7.2.2.562.43", "hip-python-interop==7.2.2.562.43"],
    "10": ["hip-python>=10,<11", "hip-python-interop==10.0.0.0.1.2"],
}
#: What ``venv_with_interop``'s reason starts with when pip could not reach its index (or
#: this Python cannot make a venv at all).
UNREACHABLE = "package index unreachable: "
_OFFLINE_SIGNS = ("NewConnectionError", "Max retries exceeded", "Network is unreachable",
                  "Temporary failure in name resolution", "ConnectTimeout", "ReadTimeout", "ProxyError",
                  "Could not fetch URL")
# ziglang too: the sim compiles a program's nvrtc (hiprtc) source with it when present
INTEROP_DEPS = [*HP7_DEPS, "ziglang>=0.13"]


def venv_with_interop(release: str, root: Path | None = None) -> tuple[Path | None, str]:
    """The python of a venv holding hip-python ``release`` ("7" or "10"), its interop layer
    and hrr's runtime dependencies, at ``root`` (default: HRR_INTEROP<release>_VENV, else
    under the temp dir); (None, pip's last words) when it cannot be installed, prefixed
    with ``UNREACHABLE`` when pip could not reach its package index."""
    specs = INTEROP_SPECS[release]
    if root is None:
        root = venv_root(f"hrr-interop{release}-venv", f"HRR_INTEROP{release}_VENV")
    py, ready = root / "bin" / "python", root / "hrr-ready"
    if ready.exists():
        return py, ""
    why = make_venv(root)
    if why:   # as good as no index: nothing can be installed here
        return None, UNREACHABLE + why
    proc = subprocess.run([str(py), "-m", "pip", "install", "-q", *specs, *INTEROP_DEPS],
                          capture_output=True, text=True, timeout=900, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        offline = any(sign in proc.stderr for sign in _OFFLINE_SIGNS)
        return None, (UNREACHABLE if offline else "") + last
    ready.write_text("ok\n")
    return py, ""
