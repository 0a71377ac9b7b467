"""Every hook a plugin can implement, in one place.

Plugins are objects (modules or instances) with methods marked ``@hookimpl``; they are
found through the ``hrr.plugins`` entry-point group (see ``manager.py``). Hooks are
called with keyword arguments; an implementation may accept a subset of them.

Capture hooks (``hrr_capture_*``) and the watchers registered with ``ctx.watch`` are
called by hrr one implementation at a time, never through pluggy's hook caller: an
implementation that raises (or returns a record that is not msgpack-native) is recorded
in the manifest's ``plugin_failures`` and its plugin is disabled for the rest of the
capture, while the application's HIP call returns exactly what it would have
uncaptured. So a capture hook cannot be a wrapper (``wrapper=True`` or
``hookwrapper=True``): the plugin manager refuses such a plugin when it loads, naming it.
Replay hooks go through pluggy as usual.

Per-call hot paths do not go through pluggy: a capture stage that wants to see
individual calls subscribes in ``hrr_capture_start`` with ``ctx.watch(...)`` for the API
names it cares about, and calls nobody watches pay nothing.
"""
from __future__ import annotations

import pluggy

PROJECT = "hrr"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


# ----------------------------------------------------------------------------- capture
@hookspec
def hrr_capture_start(ctx):
    """Capture begins in a process (and again in a forked child, with a fresh archive).

    ``ctx`` is the CaptureContext: the backend, the content policy, the allocation
    table, ``ctx.watch(apis, before=..., after=...)`` to see individual calls,
    ``ctx.put_blob(kind, data)``, ``ctx.add_unreplayable(...)`` and ``ctx.shared`` (a dict
    stages share, keyed by plugin name). Not firstresult; return value ignored."""


@hookspec(firstresult=True)
def hrr_capture_content_allowed(ctx, kind):
    """May content of data kind ``kind`` (a name from ``hrr.inventory``) be written?

    Asked once per kind when capture starts. Return False to veto, True to allow, None
    to abstain; firstresult: the first non-None answer wins; with no answer, allowed."""


@hookspec
def hrr_capture_launch(ctx, launch):
    """A kernel launch is about to run. ``launch`` is a LaunchInfo: the API, function
    handle, kernel name and layout, kernarg bytes, the pointer words found, the stream
    and the stream's handle value. Return a record (msgpack-native) to attach to the
    launch event under this plugin's name, or None. Not firstresult: every stage runs."""


@hookspec
def hrr_capture_manifest(ctx):
    """Capture is closing: return a dict of manifest fields to add (or None)."""


@hookspec
def hrr_capture_fork_child(ctx):
    """This process is a fork()ed child and capture now records into its own
    ``pid-<pid>/``; reset per-process state (locks are already released)."""


# ------------------------------------------------------------------------------ replay
@hookspec
def hrr_replay_start(ctx):
    """Replay of one process archive begins. ``ctx`` is the ReplayContext: the manifest,
    the backend, ``ctx.translate(addr)``, ``ctx.allocation(base)``, ``ctx.read_blob``,
    ``ctx.enqueue_host_fn(stream, fn)``, ``ctx.refuse(...)``, ``ctx.shared``."""


@hookspec
def hrr_replay_before_event(ctx, event, stream):
    """An event is about to replay; ``stream`` is replay's own stream handle for it (or
    None). Queue work ahead of it with ``ctx.enqueue_host_fn``. Raise
    ``hrr.pipeline.context.EventRefused`` to end the event before it runs (it is counted
    and named). Not firstresult."""


@hookspec
def hrr_replay_after_event(ctx, event, result):
    """An event has replayed; ``result`` is the backend's return tuple (or None when it
    did not run)."""


@hookspec
def hrr_replay_summary(ctx):
    """Replay is done: return a list of summary lines (str) to print, or None."""


@hookspec
def hrr_replay_strict_failures(ctx):
    """Return a list of reasons that make ``--strict`` fail (empty or None when none)."""
