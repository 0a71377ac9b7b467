"""Every hook an hrr plugin can implement, in one place.

A plugin is an object (a module, a class the entry point names, or an instance) whose
methods are marked ``@hrr.pipeline.hookimpl``; it is installed under the ``hrr.plugins``
entry-point group (see ``manager.py``). Hooks are called with keyword arguments, so an
implementation may accept any subset of a hook's parameters, in any order.

Capture hooks (``hrr_capture_*``), and the watchers a plugin registers with
:meth:`hrr.pipeline.CaptureContext.watch`, run inside the application's own HIP calls.
hrr calls them itself, one implementation at a time in pluggy's order (``tryfirst`` and
``trylast`` are honoured), instead of through pluggy's hook caller: an implementation that
raises, or returns a record that is not msgpack-native, is named in the manifest's
``plugin_failures`` and its plugin is disabled for the rest of the capture, while the
application's call returns exactly what it would have returned uncaptured. A wrapper
(``wrapper=True`` or ``hookwrapper=True``) could not wrap anything there, so a plugin
that implements a capture hook as one is refused when it loads, with an error naming the
plugin and the hook; ``hrr capture`` skips it (one warning line) when it is merely
installed, and refuses to start when it is asked for with ``--plugins``.

Replay hooks (``hrr_replay_*``) go through pluggy's hook caller: wrappers, ``tryfirst``,
``trylast`` and firstresult work there as pluggy documents them.

Per-call work never goes through pluggy: a capture stage that wants to see individual
calls subscribes in :func:`hrr_capture_start` with ``ctx.watch(...)``, naming the calls
by a catalogue query (``launching()``, ``allocating("pinned")``...); calls that nobody
watches cost nothing.

At replay, :func:`hrr_replay_before_event` and :func:`hrr_replay_after_event` keep
pluggy's semantics, and a plugin that implements them sees every event unless it names
the calls it wants in :func:`hrr_replay_start` with ``ctx.watch(<plugin name>, apis)``:
the replayer then builds, once per call, a hook caller over only the plugins that want
that call (pluggy's ``subset_hook_caller``), and a call no plugin wants makes no pluggy
call at all.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from hrr.events.model import Event
    from hrr.pipeline.capture import CaptureContext
    from hrr.pipeline.context import LaunchInfo
    from hrr.pipeline.replay import ReplayContext

PROJECT = "hrr"
hookspec = pluggy.HookspecMarker(PROJECT)
#: Marks a plugin method as the implementation of the hook of the same name.
hookimpl = pluggy.HookimplMarker(PROJECT)


# ----------------------------------------------------------------------------- capture
@hookspec
def hrr_capture_start(ctx: CaptureContext) -> None:
    """Capture begins in a process. (A ``fork()``-ed child keeps its plugins' state and
    gets :func:`hrr_capture_fork_child` instead.)

    Set up here: subscribe to individual calls with ``ctx.watch``, publish an object
    other stages use in ``ctx.shared[<plugin name>]``, register a lock with
    ``ctx.register_fork_lock``.

    :param ctx: The capture context: the raw backend (``ctx.hip``, whose calls are not
        recorded), the configuration, the allocation table, the content policy
        (``ctx.content_allowed``), ``ctx.put_blob``, ``ctx.add_unreplayable``, ``ctx.shared``.
    :returns: Nothing; a return value is ignored.
    """


@hookspec(firstresult=True)
def hrr_capture_content_allowed(ctx: CaptureContext, kind: str) -> bool | None:
    """May bytes of data kind ``kind`` be written to the archive?

    Asked once per content kind when capture starts (``--content`` and
    ``--metadata-only`` override every answer). Stops at first non-None result; with no
    answer at all, the kind is allowed.

    :param ctx: The capture context.
    :param kind: A data kind registered in ``hrr.inventory`` (one of
        :data:`hrr.pipeline.CONTENT_KINDS`).
    :returns: False to veto the kind, True to allow it, None to abstain.
    """


@hookspec
def hrr_capture_launch(ctx: CaptureContext, launch: LaunchInfo) -> Any:
    """A kernel launch is about to run (whichever launch call the application used).

    Every implementation runs, in pluggy's order, on the launching thread; a slow one
    slows every launch.

    :param ctx: The capture context.
    :param launch: The launch, normalised: the call's name, the function handle, the
        kernel's name and argument layout, the kernarg bytes, the kernarg words that
        point into tracked allocations, the stream (value and the application's object),
        grid and block.
    :returns: A record (msgpack-native: dicts, lists, str, bytes, ints, floats, bools,
        None) attached to the launch event under this plugin's name, where replay finds
        it with ``event.records(<plugin name>)``; or None to attach nothing.
    """


@hookspec
def hrr_capture_manifest(ctx: CaptureContext) -> dict[str, Any] | None:
    """Capture is closing in this process: add fields to its manifest.

    :param ctx: The capture context.
    :returns: A dict of JSON-serialisable manifest fields (merged into the manifest's
        top level), or None. A value that is not JSON counts as the plugin's failure.
    """


@hookspec
def hrr_capture_fork_child(ctx: CaptureContext) -> None:
    """This process is a ``fork()``-ed child, and capture now records into an archive
    of its own (``pid-<pid>/``) that holds none of the parent's blobs.

    Reset per-process state here (content deduplicated against blobs the parent wrote,
    for instance). The locks registered with ``ctx.register_fork_lock`` are already
    released.

    :param ctx: The capture context, carried over from the parent.
    :returns: Nothing; a return value is ignored.
    """


# ------------------------------------------------------------------------------ replay
@hookspec
def hrr_replay_start(ctx: ReplayContext) -> None:
    """Replay of one process archive begins (before its first event). A plugin whose
    per-event hooks care about some calls only names them here with
    ``ctx.watch(<plugin name>, apis)`` (see the module's docstring).

    :param ctx: The replay context: the manifest, the raw backend (``ctx.hip``),
        ``ctx.translate`` and ``ctx.allocation`` (capture addresses to replay's),
        ``ctx.read_blob``, ``ctx.enqueue_host_fn``, ``ctx.refuse``, ``ctx.counters`` and
        ``ctx.shared``.
    :returns: Nothing; a return value is ignored.
    """


@hookspec
def hrr_replay_before_event(ctx: ReplayContext, event: Event, stream: Any) -> None:
    """An event is about to replay. Queue work ahead of it on its stream with
    ``ctx.enqueue_host_fn``, or end it before it runs by raising
    :class:`hrr.pipeline.EventRefused` (``ctx.refuse``): replay counts the refusal under
    its category and names it in the summary.

    :param ctx: The replay context.
    :param event: The recorded call (``event.api``, ``event.args`` as recorded,
        ``event.err``, ``event.records(<plugin name>)``).
    :param stream: Replay's own stream object for the event, or None (the null stream,
        or a call with no stream).
    :returns: Nothing; a return value is ignored.
    """


@hookspec
def hrr_replay_after_event(ctx: ReplayContext, event: Event, result: tuple | None) -> None:
    """An event has replayed (or was skipped).

    :param ctx: The replay context.
    :param event: The recorded call.
    :param result: The backend's return tuple (error code first), or None when the call
        did not run.
    :returns: Nothing; a return value is ignored.
    """


@hookspec
def hrr_replay_summary(ctx: ReplayContext) -> list[str] | None:
    """Replay of one process archive is done: say what this plugin did.

    :param ctx: The replay context (``ctx.counters`` holds what stages counted).
    :returns: Lines for the summary, or None.
    """


@hookspec
def hrr_replay_strict_failures(ctx: ReplayContext) -> list[str] | None:
    """Replay is done: what this plugin saw that must fail ``hrr replay --strict``.

    :param ctx: The replay context.
    :returns: One reason per failure (str), or None or an empty list when none.
    """


#: Every hook, by name.
HOOK_NAMES: tuple[str, ...] = tuple(sorted(n for n in dir() if n.startswith("hrr_")))
#: The hooks hrr calls one implementation at a time (so they may not be wrappers).
CAPTURE_HOOKS: tuple[str, ...] = tuple(n for n in HOOK_NAMES if n.startswith("hrr_capture_"))
