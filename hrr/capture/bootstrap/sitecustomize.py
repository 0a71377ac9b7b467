"""hrr's bootstrap: selects the backend (and starts capture) in every Python process
that ``hrr run`` / ``hrr capture`` starts. Only acts when HRR_MODE is set."""
import os
import sys

if os.environ.get("HRR_MODE"):
    try:
        from hrr.capture.activate import activate_from_env
        activate_from_env()
    except Exception as exc:  # noqa: BLE001 - say why, then stop: never run unrecorded
        sys.stderr.write(f"hrr: could not start {os.environ.get('HRR_MODE')}: {exc}\n")
        os._exit(3)
