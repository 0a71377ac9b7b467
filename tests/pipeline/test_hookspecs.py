"""The hookspecs are the plugin author's reference: every hook is annotated and documents
each argument, what it returns, and (firstresult hooks) that the first answer wins."""
from __future__ import annotations

import inspect

import pytest

from hrr.pipeline import hookspecs

HOOKS = [getattr(hookspecs, name) for name in hookspecs.HOOK_NAMES]


def test_every_hook_is_listed_once():
    defined = sorted(n for n, v in vars(hookspecs).items() if n.startswith("hrr_") and callable(v))
    assert list(hookspecs.HOOK_NAMES) == defined and len(defined) == 10
    assert set(hookspecs.CAPTURE_HOOKS) == {n for n in defined if n.startswith("hrr_capture_")}


@pytest.mark.parametrize("spec", HOOKS, ids=lambda f: f.__name__)
def test_each_hook_is_typed_and_documented(spec):
    sig = inspect.signature(spec)
    doc = inspect.getdoc(spec) or ""
    assert sig.return_annotation is not inspect.Signature.empty
    for name, param in sig.parameters.items():
        assert param.annotation is not inspect.Parameter.empty, name
        assert f":param {name}:" in doc, name
    assert ":returns:" in doc
    firstresult = getattr(spec, f"{hookspecs.PROJECT}_spec")["firstresult"]
    assert ("Stops at first non-None result" in doc) == firstresult


def test_annotations_name_the_plugin_api():
    """The annotations resolve (TYPE_CHECKING imports) to the classes hrr.pipeline exports."""
    import typing

    import hrr.pipeline as api
    hints = typing.get_type_hints(hookspecs.hrr_capture_launch, localns=vars(api))
    assert hints["ctx"] is api.CaptureContext and hints["launch"] is api.LaunchInfo
    hints = typing.get_type_hints(hookspecs.hrr_replay_before_event, localns=vars(api))
    assert hints["ctx"] is api.ReplayContext and hints["event"] is api.Event
