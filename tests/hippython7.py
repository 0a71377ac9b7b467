"""hip-python 7.x in a virtual environment of its own (the 7.x and 10.x releases cannot
share one), kept between runs; shared by the conformance test and the examples test."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HP7_SPEC = "hip-python>=7,<8"
HP7_DEPS = ["numpy", "attrs", "msgpack", "pluggy", "xxhash", "click", "rich"]


def venv_with_hip_python7(root: Path | None = None) -> tuple[Path | None, str]:
    """The python of a venv holding hip-python 7.x and hrr's runtime dependencies (hrr
    itself comes from PYTHONPATH), at ``root`` (default: HRR_HIP_PYTHON7_VENV, else under
    the temp dir); (None, pip's last words) when it cannot be installed."""
    if root is None:
        default = Path(tempfile.gettempdir()) / f"hrr-hip-python7-venv-{os.getuid()}"
        root = Path(os.environ.get("HRR_HIP_PYTHON7_VENV") or default)
    py, ready = root / "bin" / "python", root / "hrr-ready"
    if ready.exists():
        return py, ""
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(root)], check=True, capture_output=True)
    proc = subprocess.run([str(py), "-m", "pip", "install", "-q", HP7_SPEC, *HP7_DEPS],
                          capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode != 0:
        return None, (proc.stderr.strip().splitlines() or ["no output"])[-1]
    ready.write_text("ok\n")
    return py, ""
