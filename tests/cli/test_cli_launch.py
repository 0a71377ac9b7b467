"""hrr.cli.launch.run_child: what runs while COMMAND runs, and its status."""
from __future__ import annotations

import os
import sys

from hrr.cli import launch


def test_while_running_is_called_once_the_child_has_started(tmp_path):
    flag = tmp_path / "started"
    # the child waits for the file the callback writes: the callback runs before wait()
    script = (f"import os, time\nfor _ in range(600):\n    if os.path.exists({str(flag)!r}): raise SystemExit(3)\n"
              f"    time.sleep(0.05)\nraise SystemExit(9)\n")
    seen = []
    status = launch.run_child((sys.executable, "-c", script), dict(os.environ),
                              while_running=lambda: seen.append(flag.write_text("x")))
    assert status == 3 and len(seen) == 1


def test_a_failing_while_running_still_waits_for_the_child():
    def fails():
        raise ImportError("no such module")
    status = launch.run_child((sys.executable, "-c", "raise SystemExit(4)"), dict(os.environ), while_running=fails)
    assert status == 4
