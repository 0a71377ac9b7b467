"""bench/program_ratios.py times a whole program's run, capture and replay on the sim (one round,
no warm-up: the code path, no time asserted) and names the step that failed."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "bench", "program_ratios.py")

# a few device calls; it checks that it runs in its own folder
PROGRAM = """\
import os
import numpy as np
from hip import hip

assert os.getcwd() == os.path.dirname(os.path.abspath(__file__)), os.getcwd()
err, dev = hip.hipMalloc(1024)
assert err == 0, err
src = np.arange(256, dtype=np.uint32)
dst = np.zeros_like(src)
assert hip.hipMemcpy(dev, src, 1024, hip.hipMemcpyKind.hipMemcpyHostToDevice)[0] == 0
assert hip.hipMemset(dev, 0, 16)[0] == 0
assert hip.hipMemcpy(dst, dev, 1024, hip.hipMemcpyKind.hipMemcpyDeviceToHost)[0] == 0
assert hip.hipDeviceSynchronize()[0] == 0
assert (dst[4:] == src[4:]).all() and not dst[:4].any()
assert hip.hipFree(dev)[0] == 0
"""


def _module():
    spec = importlib.util.spec_from_file_location("hrr_program_ratios", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_one_round_on_the_sim_writes_the_medians_and_their_ratios(tmp_path):
    prog = tmp_path / "app" / "tiny.py"
    prog.parent.mkdir()
    prog.write_text(PROGRAM)
    out = tmp_path / "ratios.json"
    lines: list[str] = []
    _module().run(["--rounds", "1", "--warmup", "0", "--content", "--strict", "--out", str(out), "--", str(prog)],
                  say=lines.append)
    data = json.loads(out.read_text())
    for key in ("run_s", "capture_s", "replay_s", "capture_ratio", "replay_ratio"):
        assert type(data[key]) is float and data[key] > 0, key
    assert data["capture_ratio"] == data["capture_s"] / data["run_s"]
    assert data["replay_ratio"] == data["replay_s"] / data["run_s"]
    meta = data["meta"]
    assert meta["backend"] == "sim" and meta["rounds"] == 1 and meta["program"] == str(prog)
    assert meta["python"] == sys.executable and meta["commit"] and meta["date"]
    assert lines[1].startswith("round 1/1: run ") and lines[-1] == f"wrote {out}"


def test_a_failing_program_stops_at_the_run_step_with_its_status_and_stderr(tmp_path):
    prog = tmp_path / "fails.py"
    prog.write_text("import sys\nprint('the last words', file=sys.stderr)\nsys.exit(3)\n")
    proc = subprocess.run([sys.executable, SCRIPT, "--rounds", "1", "--", str(prog)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1
    assert "step 'run' exited with status 3" in proc.stderr and "the last words" in proc.stderr
    assert "round" not in proc.stdout.split("\n", 1)[1]   # nothing timed after the header
