"""Plugins that misbehave in one capture hook or watcher each (for test_plugin_failures)."""
from __future__ import annotations

from hrr.pipeline import hookimpl

SECRET = "secret-4711"   # in every exception message: must reach the manifest only in content mode


class Base:
    __version__ = "1.0"

    def __init__(self) -> None:
        self.calls = 0     # calls of the misbehaving hook or watcher

    def fail(self, *args, **kwargs):
        self.calls += 1
        raise ValueError(f"boom {SECRET}")


class Launch(Base):
    @hookimpl
    def hrr_capture_launch(self, ctx, launch):
        self.fail()


class Start(Base):
    @hookimpl
    def hrr_capture_start(self, ctx):
        ctx.watch("start", ["hipMalloc"], before=lambda call: {"never": 1})
        self.fail()


class ContentAllowed(Base):
    @hookimpl
    def hrr_capture_content_allowed(self, ctx, kind):
        self.fail()


class Before(Base):
    @hookimpl
    def hrr_capture_start(self, ctx):
        ctx.watch("before", ["hipMalloc", "hipFree"], before=self.fail)


class After(Base):
    @hookimpl
    def hrr_capture_start(self, ctx):
        ctx.watch("after", ["hipMemcpy"], after=self.fail)


class Manifest(Base):
    @hookimpl
    def hrr_capture_manifest(self, ctx):
        self.fail()


class ManifestNotJson(Base):
    @hookimpl
    def hrr_capture_manifest(self, ctx):
        self.calls += 1
        return {"manifestnotjson": {1, 2}}


class BadRecord(Base):
    @hookimpl
    def hrr_capture_launch(self, ctx, launch):
        self.calls += 1
        return (x for x in ())     # a generator: not msgpack-native


class ForkChild(Base):
    @hookimpl
    def hrr_capture_fork_child(self, ctx):
        self.fail()


class Good:
    """Keeps working next to a failing plugin."""

    __version__ = "1.0"

    def __init__(self) -> None:
        self.launches = 0

    @hookimpl
    def hrr_capture_launch(self, ctx, launch):
        self.launches += 1
        return {"n": self.launches}


class Wrapper:
    __version__ = "1.0"

    @hookimpl(wrapper=True)
    def hrr_capture_launch(self, ctx, launch):
        result = yield
        return result


class HookWrapper:
    __version__ = "1.0"

    @hookimpl(hookwrapper=True)
    def hrr_capture_launch(self, ctx, launch):
        yield


FAILING = {"launch": Launch, "start": Start, "contentallowed": ContentAllowed,
           "before": Before, "after": After, "manifest": Manifest,
           "manifestnotjson": ManifestNotJson, "badrecord": BadRecord, "forkchild": ForkChild}
HOOK = {"launch": "hrr_capture_launch", "start": "hrr_capture_start",
        "contentallowed": "hrr_capture_content_allowed", "before": "watch before hipMalloc",
        "after": "watch after hipMemcpy", "manifest": "hrr_capture_manifest",
        "manifestnotjson": "hrr_capture_manifest", "badrecord": "hrr_capture_launch",
        "forkchild": "hrr_capture_fork_child"}
ERROR = {name: "ValueError" for name in FAILING} | {"manifestnotjson": "TypeError",
                                                    "badrecord": "TypeError"}
