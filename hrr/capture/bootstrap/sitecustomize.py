"""hrr's bootstrap: selects the backend (and starts capture) in every Python process
that ``hrr run`` / ``hrr capture`` starts. Only acts when HRR_MODE is set."""
import os
import sys

#: hrr.exitcodes.NOT_STARTED, repeated here: this file must exit with it where hrr cannot be imported
EXIT_NOT_STARTED = 78

if os.environ.get("HRR_MODE"):
    import gc

    # hrr's start-up makes tens of thousands of long-lived objects (the catalogue, the
    # backend's module, the session); collecting while they are made finds no garbage and
    # cost every recorded process a full collection. The program starts with the collector
    # as Python left it.
    collecting = gc.isenabled()
    gc.disable()
    try:
        from hrr.capture.activate import activate_from_env
        activate_from_env()
    except ModuleNotFoundError as exc:  # say which interpreter lacks hrr; never run unrecorded
        if (exc.name or "").split(".")[0] != "hrr":
            sys.stderr.write(f"hrr: error: could not start {os.environ.get('HRR_MODE')}: {exc}\n")
        else:
            sys.stderr.write(f"hrr: error: {sys.executable} cannot import hrr: it is not installed for this "
                             f"interpreter (install it there: {sys.executable} -m pip install hrr, or the "
                             f"path of a clone of hrr; or run the program with the python hrr is installed in)\n")
        os._exit(EXIT_NOT_STARTED)
    except Exception as exc:  # noqa: BLE001 - say why, then stop: never run unrecorded
        sys.stderr.write(f"hrr: error: could not start {os.environ.get('HRR_MODE')}: {exc}\n")
        os._exit(EXIT_NOT_STARTED)
    finally:
        if collecting:
            gc.enable()
