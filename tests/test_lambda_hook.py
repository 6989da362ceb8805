import pytest

import pyhooks
from hooktest_util import counter_graph, make_session
from pyhooks.hook import overridden_methods
from pyhooks.hooks.lambda_hook import LambdaHook


@pytest.mark.parametrize("kwargs, message", [
    ({"before_run": 3}, "`before_run` must be callable or None, got 3 (int)."),
    ({"after_error": "f"}, "`after_error` must be callable or None, got 'f' (str)."),
    ({"name": 1}, "`name` must be a non-empty string, got 1."),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(TypeError) as info:
        LambdaHook(**kwargs)
    assert str(info.value) == message


def test_only_given_methods_are_declared():
    hook = LambdaHook(begin=lambda: None, end=lambda session: None)
    assert hook.pyhooks_methods == frozenset({"begin", "end"})
    assert overridden_methods(hook) == frozenset({"begin", "end"})
    assert hook.hook_name == "LambdaHook"
    assert LambdaHook().before_run(None) is None  # the missing ones are no-ops
    assert overridden_methods(LambdaHook()) == frozenset()


def recording_hook(g, calls):
    return LambdaHook(
        begin=lambda: calls.append("begin"),
        after_create_session=lambda session, coord: calls.append("after_create_session"),
        before_run=lambda context: pyhooks.SessionRunArgs({"x": g.loss}),
        after_run=lambda context, values: calls.append(("after_run", values.results["x"])),
        end=lambda session: calls.append("end"), name="recorder")


@pytest.mark.parametrize("runner", ["pyhooks", "tf"])
def test_full_lifecycle(runner):
    g = counter_graph()
    calls = []
    with g.graph.as_default():
        with make_session([recording_hook(g, calls)], runner) as sess:
            sess.run(g.train_op)
            sess.run(g.train_op)
    assert calls == ["begin", "after_create_session", ("after_run", 1.0), ("after_run", 2.0), "end"]


@pytest.mark.parametrize("runner", ["pyhooks", "tf"])
def test_partial_hook_under_both_runners(runner):
    g = counter_graph()
    seen = []
    with g.graph.as_default():
        hook = LambdaHook(after_run=lambda context, values: seen.append(values.results))
        with make_session([hook], runner) as sess:
            sess.run(g.train_op)
    assert seen == [None]


def test_errors_name_the_hook_and_after_error_runs():
    g = counter_graph()
    errors = []

    def fail(context, values):
        raise ValueError("bad value")

    with g.graph.as_default():
        hook = LambdaHook(after_run=fail, after_error=lambda s, e: errors.append(e), name="my_hook")
        with pytest.raises(ValueError) as info:
            with make_session([hook]) as sess:
                sess.run(g.train_op)
    assert info.value.__notes__ == ["pyhooks: raised in my_hook.after_run()"]
    assert errors == [info.value]
    assert "my_hook" in repr(hook) and "after_run, after_error" in repr(hook)
