"""The contract module: names, fields and order as TensorFlow's; no TensorFlow import."""

import subprocess
import sys
from types import SimpleNamespace

import pytest

import pyhooks
from pyhooks.hook import overridden_methods


def test_session_run_args_fields_and_defaults():
    args = pyhooks.SessionRunArgs("loss")
    assert args == ("loss", None, None)
    assert args._fields == ("fetches", "feed_dict", "options")
    options = SimpleNamespace(trace_level=0)  # stands for a RunOptions (no TensorFlow here)
    assert pyhooks.SessionRunArgs("a", {"x": 1}, options).options is options


@pytest.mark.parametrize("kwargs, message", [
    ({"feed_dict": [1, 2]}, r"`feed_dict` must be a dict \{tensor: value\} or None, got \[1, 2\] \(list\)"),
    ({"feed_dict": "x:0"}, r"`feed_dict` must be a dict .*got 'x:0' \(str\)"),
    ({"options": "FULL_TRACE"}, r"`options` must be a tf.compat.v1.RunOptions or None, got "
                                r"'FULL_TRACE' \(str\)"),
])
def test_session_run_args_refuses_feeds_and_options_of_another_type(kwargs, message):
    """Named when the hook builds its args, not by the session in the middle of a step."""
    with pytest.raises(TypeError, match=message):
        pyhooks.SessionRunArgs("loss", **kwargs)


def test_session_run_values_fields():
    values = pyhooks.SessionRunValues(results=1, options=2, run_metadata=3)
    assert values._fields == ("results", "options", "run_metadata")
    assert tuple(values) == (1, 2, 3)


def test_context_request_stop():
    args = pyhooks.SessionRunArgs("f")
    ctx = pyhooks.SessionRunContext(args, "sess")
    assert ctx.original_args is args and ctx.session == "sess"
    assert not ctx.stop_requested
    ctx.request_stop()
    assert ctx.stop_requested


def test_context_defer_stop_holds_the_request_and_says_whether_there_was_one():
    ctx = pyhooks.SessionRunContext(pyhooks.SessionRunArgs("f"), "sess")
    assert ctx.defer_stop() is False
    ctx.request_stop()
    assert ctx.defer_stop() is True
    assert not ctx.stop_requested
    assert ctx.defer_stop() is False  # held once: now the holder's
    ctx.request_stop()
    assert ctx.stop_requested


def test_base_hook_methods_are_noops():
    hook = pyhooks.SessionRunHook()
    assert hook.begin() is None
    assert hook.before_run(None) is None
    assert hook.after_error(None, ValueError()) is None
    assert overridden_methods(hook) == frozenset()


def test_overridden_methods_sees_subclass_and_instance_overrides():
    class Hook(pyhooks.SessionRunHook):
        def after_run(self, run_context, run_values):
            pass

    class Child(Hook):
        def end(self, session):
            pass

    assert overridden_methods(Hook()) == {"after_run"}
    assert overridden_methods(Child()) == {"after_run", "end"}
    child = Child()
    child.begin = lambda: None
    assert overridden_methods(child) == {"after_run", "end", "begin"}


def test_overridden_methods_of_duck_typed_hooks_and_other_descriptors():
    class Duck:  # not a SessionRunHook: only what it has
        def before_run(self, run_context):
            return None

        after_run = staticmethod(lambda run_context, run_values: None)

    duck = Duck()
    assert overridden_methods(duck) == {"before_run", "after_run"}
    duck.end = lambda session: None
    assert overridden_methods(duck) == {"before_run", "after_run", "end"}


def test_explicit_method_set_wins():
    class Declared(pyhooks.SessionRunHook):
        pyhooks_methods = ("before_run",)

        def after_run(self, run_context, run_values):
            pass

    assert overridden_methods(Declared()) == {"before_run"}


def test_import_pyhooks_does_not_import_tensorflow():
    code = ("import sys, pyhooks; heavy = [m for m in ('tensorflow', 'rpy2', 'tensorboard') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_public_names_are_sorted_and_importable_lazily():
    assert pyhooks.__all__ == sorted(pyhooks.__all__)
    for name in ("SessionRunHook", "MonitoredSession", "SecondOrStepTimer", "PyhooksError",
                 "NanLossDuringTrainingError"):
        assert name in pyhooks.__all__
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        pyhooks.nope  # noqa: B018


def test_errors_hierarchy():
    assert issubclass(pyhooks.NanLossDuringTrainingError, pyhooks.PyhooksError)
    assert issubclass(pyhooks.NanLossDuringTrainingError, RuntimeError)
