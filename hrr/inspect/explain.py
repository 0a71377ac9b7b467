"""What hrr generates for one catalogue row, printed: ``python -m hrr.inspect.explain NAME``.

For row NAME: the function the sim backend's ``hip`` module runs (``hrr.backends.surface``),
capture's wrapper around it (``hrr.capture.recorder``, as a session with no plugins builds
it), replay's plan for its records and, for a launch row, the launch runner with its
argument check (``hrr.replay.launches``), and the schema's checks generated from the
declared rules (``hrr.events.codec``, ``hrr.api.fields``). Every source shown is the one
compiled (``hrr.codegen.source_of``), or the template it was specialised from.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile

import attrs

from hrr.api.catalogue import Api, get
from hrr.codegen import source_of
from hrr.api.roles import out_role, param_role
from hrr.backends import load_backend
from hrr.capture.session import CaptureSession
from hrr.config import config
from hrr.events import codec
from hrr.events.launch import LAUNCH_RULES
from hrr.replay.launches import args_check_source, fast_shape, runner_source

#: Each part's heading, in the order they are printed.
PARTS = ("surface function (sim backend)", "capture wrapper", "replay plan", "launch runner", "generated checks")


def _heading(title: str) -> str:
    return f"=== {title} ===\n"


def _surface(row: Api, be: object) -> str:
    module = getattr(be, row.module, None)
    fn = getattr(module, row.name, None)
    source = source_of(fn)
    return source if source is not None else f"# the sim backend has no generated function for {row.name}\n"


def _wrapper(row: Api, be: object) -> str:
    root = tempfile.mkdtemp(prefix="hrr-explain-")
    try:
        cfg = attrs.evolve(config(), backend="sim")
        session = CaptureSession(be, cfg, root, plugins=[])  # type: ignore[arg-type]
        try:
            fn = getattr(getattr(session, row.module), row.name, None)
            source = source_of(fn)
            fallback = getattr(fn, "fallback", None)   # a LaunchRecorder (hrr/capture/launches.py)
            if source is None and fallback is not None and source_of(fallback) is not None:
                source = ("# the common launch is recorded by hrr/archive/native/launch.c's LaunchRecorder;\n"
                          "# every other call (and every call on the Python record path) by this wrapper\n"
                          + str(source_of(fallback)))
        finally:
            session.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return source if source is not None else f"# capture does not wrap {row.name} on the sim backend\n"


def _plan(row: Api) -> str:
    lines = [f"# {row.name}: replays {row.replay}" + (f" as {row.replays_as}" if row.replays_as else "")
             + (f" ({row.reason})" if getattr(row, "reason", None) else "")]
    for i, p in enumerate(row.params):
        role = param_role(p.role)
        wire = role.wire
        checked = (f"recorded as {wire.description}" if wire is not None
                   else "any wire value, checked in depth by its role")
        lines.append(f"args[{i}] {p.name}: role {p.role} ({type(role).__name__}), {checked}")
    for j, o in enumerate(row.outs):
        lines.append(f"outs[{j}] {o.name}: role {o.role} ({type(out_role(o.role)).__name__})")
    if row.stream:
        lines.append(f"stream: {row.stream}")
    if row.destroys:
        lines.append(f"destroys: {row.destroys}")
    if row.launch is not None:
        lines.append("launch: extra.launch decoded by LaunchCodec.decoder (kernarg bytes rewritten to replay's "
                     "allocations)" + ("; capture's common shape takes the launch runner" if fast_shape(row) else ""))
    return "\n".join(lines) + "\n"


def _runner(row: Api) -> str:
    fast = fast_shape(row)
    if fast is None:
        return f"# {row.name} has no launch runner: its records take the general path (the replay plan)\n"
    n, _, _, _, ints, dims, nones = fast
    return ("# the row's argument check (args_ok)\n" + args_check_source(n, ints, dims, nones)
            + "\n# the runner, built once per row from this factory\n" + runner_source())


def _checks(row: Api) -> str:
    parts = ["# the schema's fast check of a record, specialised per API from this factory",
             codec.RECORD_CHECK_SOURCE,
             "# the full check, naming the first bad field: the record's fields by their rules, then what they hold",
             codec.SCHEMA_PROBLEM_SOURCE]
    if row.launch is not None:
        parts += ["# extra.launch (format 3's list): the fast check and the check naming the bad item,",
                  "# from its rules: " + ", ".join(f"{r.name} {r.kind}" for r in LAUNCH_RULES.values()),
                  *codec.LAUNCH_LIST_SOURCES]
    return "\n".join(parts)


def explain(name: str) -> str:
    """Every generated part for catalogue row ``name``, each under its heading (PARTS)."""
    row = get(name)
    be = load_backend("sim")
    bodies = (_surface(row, be), _wrapper(row, be), _plan(row), _runner(row), _checks(row))
    return "\n".join(_heading(title) + body for title, body in zip(PARTS, bodies, strict=True))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hrr.inspect.explain",
                                 description="print what hrr generates for one catalogue row")
    ap.add_argument("name", help="a catalogue row, e.g. hipMemcpy")
    args = ap.parse_args(argv)
    try:
        text = explain(args.name)
    except KeyError as exc:
        print(f"hrr: error: {exc.args[0]}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
