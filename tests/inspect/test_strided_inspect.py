"""hrr dump and hrr info on the 2D copies of issue 10: a strided endpoint is shown like a
copy endpoint, its bytes are its packed rows, a peer copy is device to device."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from hrr.inspect.dump import DumpFilter, iter_dump
from hrrtest import capture


def _app(hip, rtc, be):
    d, pitch = hip.hipMallocPitch(8, 2)[1:]
    hip.hipMemcpy2D(d, pitch, np.arange(32, dtype=np.uint8), 16, 8, 2, hip.hipMemcpyKind.hipMemcpyHostToDevice)
    e = hip.hipMalloc(16)[1]
    hip.hipMemcpyPeer(e, 0, d, 0, 16)


def test_dump_names_a_strided_endpoint_and_its_row_bytes(tmp_path):
    capture(tmp_path, _app)
    entries = {e["api"]: e for e in iter_dump(str(tmp_path), DumpFilter()) if "process" not in e}
    copy = entries["hipMemcpy2D"]
    assert copy["copy"] == {"direction": "H2D", "bytes": 16}
    assert copy["args"]["src"]["in"] == "host" and copy["args"]["src"]["bytes"] == 16
    assert copy["args"]["dst"]["in"] == "allocation"
    assert entries["hipMemcpyPeer"]["copy"] == {"direction": "D2D", "bytes": 16}


def test_info_counts_a_strided_blob(tmp_path):
    capture(tmp_path, _app)
    out = subprocess.run([sys.executable, "-m", "hrr.cli.main", "info", "--json", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    text = json.dumps(json.loads(out.stdout))
    assert '"references": 1' in text and '"referenced_bytes": 16' in text, text
