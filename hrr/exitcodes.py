"""Every exit code hrr uses: the one table that README, ``--help`` and the code read."""
from __future__ import annotations

OK = 0
#: a failed device-to-host check, a failure, a limit reached (replay); the archives differ (diff)
FAILED = 1
#: replay diverged from the recording and stopped early
DIVERGED = 2
#: replay ran, but ``--strict`` refused what it could not do faithfully: a failure, so 1 as
#: replay's contract fixes (0 / 1 / 2); the summary's last line tells it apart
#: (``Result: REFUSED by --strict``)
STRICT_REFUSED = FAILED
#: an archive that does not exist or cannot be read
ARCHIVE_UNREADABLE = 4
#: a bad command line: unknown option, bad value, missing argument (BSD EX_USAGE)
USAGE = 64
#: the chosen backend cannot run here: no driver, no GPU, not in this build (BSD EX_UNAVAILABLE)
BACKEND_UNAVAILABLE = 69
#: ``hrr capture``: COMMAND exited 0 but a process's recording stopped early (BSD EX_IOERR)
INCOMPLETE = 74
#: ``hrr capture`` / ``hrr run``: a Python process under COMMAND could not start hrr, e.g. its
#: interpreter has no hrr installed (BSD EX_CONFIG); one line names the interpreter.
#: ``capture/bootstrap/sitecustomize.py`` repeats the number: it must exit where hrr cannot be imported.
NOT_STARTED = 78
#: ended by Ctrl-C (SIGINT), after a partial summary (128 + SIGINT, as a shell reports it)
INTERRUPTED = 130

TABLE = (
    (OK, "success: every check passed, the archives are equal"),
    (FAILED, "a check failed, a failure, or --strict refused what replay could not do "
             "faithfully (replay: the Result line says which); the archives differ (diff)"),
    (DIVERGED, "replay diverged and stopped early"),
    (ARCHIVE_UNREADABLE, "the archive is missing or cannot be read"),
    (USAGE, "usage error: bad option, value or argument"),
    (BACKEND_UNAVAILABLE, "the chosen --backend cannot run here"),
    (INCOMPLETE, "capture: COMMAND exited 0 but a recording stopped early"),
    (NOT_STARTED, "capture/run: a Python process under COMMAND could not start hrr "
                  "(e.g. hrr is not installed in its interpreter)"),
    (INTERRUPTED, "interrupted by Ctrl-C (a partial summary was printed)"),
)


def epilog(*extra: str) -> str:
    """The exit-code table for a command's ``--help`` (click keeps ``\\b`` blocks as written)."""
    rows = [f"  {code:>3}  {text}" for code, text in TABLE]
    return "\b\nExit codes:\n" + "\n".join([*extra, *rows])


def for_error(exc: BaseException) -> int:
    """The exit code for an error a command ends with."""
    from hrr.errors import (ArchiveError, BackendError, InterpreterError, LimitExceeded, PluginError,
                            UsageError)

    if isinstance(exc, (UsageError, PluginError)):   # a --plugins name unknown or broken
        return USAGE
    if isinstance(exc, InterpreterError):
        return NOT_STARTED
    if isinstance(exc, BackendError):
        return BACKEND_UNAVAILABLE
    if isinstance(exc, LimitExceeded):   # the archive is readable; it asks for more than allowed
        return FAILED
    if isinstance(exc, (ArchiveError, OSError)):
        return ARCHIVE_UNREADABLE
    return FAILED
