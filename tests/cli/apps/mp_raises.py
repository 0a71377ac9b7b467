"""mp_raises.py METHOD: a multiprocessing Process (start method METHOD) whose target makes a
HIP call and raises ValueError, and one whose target raises SystemExit(3). Prints
"EXITCODES <raised> <exit3>" and "PIDS <raised> <exit3>"."""
import multiprocessing
import sys


def boom():
    from hip import hip
    assert hip.hipMalloc(64)[0] == 0
    raise ValueError("the target failed")


def leave():
    from hip import hip
    assert hip.hipGetDeviceCount()[0] == 0
    raise SystemExit(3)


if __name__ == "__main__":
    ctx = multiprocessing.get_context(sys.argv[1])
    procs = [ctx.Process(target=boom), ctx.Process(target=leave)]
    for p in procs:
        p.start()
        p.join()
    print("EXITCODES", *(p.exitcode for p in procs))
    print("PIDS", *(p.pid for p in procs))
