"""Lifecycle of pyhooks.MonitoredSession against an in-memory fake session (no TensorFlow)."""

import collections
import functools

import pytest

import pyhooks
from pyhooks.session import MonitoredSession
from tests.fakes import FakeCreator, FakeTensor, RecordingHook


def methods(log, name):
    return [entry[1] for entry in log if entry[0] == name]


def test_call_order_of_a_normal_run():
    log = []
    hooks = [RecordingHook("a", log), RecordingHook("b", log)]
    creator = FakeCreator()
    with MonitoredSession(creator, hooks) as sess:
        sess.run(FakeTensor("x"))
        sess.run(FakeTensor("x"))
    assert log == [
        ("a", "begin"), ("b", "begin"),
        ("a", "after_create_session"), ("b", "after_create_session"),
        ("a", "before_run"), ("b", "before_run"), ("a", "after_run"), ("b", "after_run"),
        ("a", "before_run"), ("b", "before_run"), ("a", "after_run"), ("b", "after_run"),
        ("a", "end"), ("b", "end"),
    ]
    assert creator.sessions[0].closed


def test_begin_runs_before_graph_is_finalized():
    creator = FakeCreator()
    seen = []

    class Hook(pyhooks.SessionRunHook):
        def begin(self):
            seen.append(creator.graph.finalized)

    MonitoredSession(creator, [Hook()]).close()
    assert seen == [False] and creator.graph.finalized


def test_context_is_shared_and_session_is_raw():
    log = []
    a, b = RecordingHook("a", log), RecordingHook("b", log)
    creator = FakeCreator()
    x = FakeTensor("x")
    with MonitoredSession(creator, [a, b]) as sess:
        sess.run(x, feed_dict={"f": 1})
    assert a.contexts[0] is b.contexts[0]
    ctx = a.contexts[0]
    assert ctx.session is creator.sessions[0]
    assert ctx.original_args.fetches is x and ctx.original_args.feed_dict == {"f": 1}


def test_each_hook_gets_exactly_what_it_asked_for():
    log = []
    x, y = FakeTensor("x"), FakeTensor("y")
    Pair = collections.namedtuple("Pair", "first second")
    a = RecordingHook("a", log, fetches={"y": y, "both": Pair(x, [y])})
    b = RecordingHook("b", log, fetches=y)
    c = RecordingHook("c", log)
    with MonitoredSession(FakeCreator(), [a, b, c]) as sess:
        result = sess.run({"out": (x, [x])})
    assert result == {"out": ("x@0", ["x@0"])}
    assert a.results == [{"y": "y@0", "both": Pair("x@0", ["y@0"])}]
    assert isinstance(a.results[0]["both"], Pair)
    assert b.results == ["y@0"]
    assert c.results == [None]


def test_duplicate_fetches_are_sent_once():
    log = []
    x = FakeTensor("x")
    hooks = [RecordingHook(str(i), log, fetches=x) for i in range(5)]
    creator = FakeCreator()
    with MonitoredSession(creator, hooks) as sess:
        sess.run([x, x])
    flat = creator.sessions[0].calls[0][0]
    assert flat == [x]
    assert all(h.results == ["x@0"] for h in hooks)


def test_no_hooks_pass_arguments_through_untouched():
    creator = FakeCreator()
    fetches = {"a": FakeTensor("a")}
    feeds = {"f": 1}
    with MonitoredSession(creator, []) as sess:
        sess.run(fetches, feed_dict=feeds)
    assert creator.sessions[0].calls == [(fetches, feeds, None)]


def test_feeds_are_merged():
    log = []
    seen = {}
    x = FakeTensor("x", lambda step, feeds: seen.update(feeds))
    a = RecordingHook("a", log, feeds={"p": 1})
    b = RecordingHook("b", log, feeds={"q": 2})
    with MonitoredSession(FakeCreator(), [a, b]) as sess:
        sess.run(x, feed_dict={"r": 3})
    assert seen == {"p": 1, "q": 2, "r": 3}


def test_same_tensor_fed_by_two_hooks_is_an_error():
    log = []
    t = FakeTensor("input:0")
    hooks = [RecordingHook("a", log, feeds={t: 1}), RecordingHook("b", log, feeds={t: 2})]
    sess = MonitoredSession(FakeCreator(), hooks)
    with pytest.raises(RuntimeError, match=r"Same tensor is fed by two hooks\. Conflict\(s\): input:0"):
        sess.run(FakeTensor("x"))


def test_same_tensor_fed_by_hook_and_caller_is_an_error():
    log = []
    hook = RecordingHook("a", log, feeds={"lr:0": 1})
    sess = MonitoredSession(FakeCreator(), [hook])
    with pytest.raises(RuntimeError, match=r"by a SessionRunHook and user\. Conflict\(s\): lr:0"):
        sess.run(FakeTensor("x"), feed_dict={"lr:0": 5})


def test_request_stop_takes_effect_after_the_step():
    log = []
    a = RecordingHook("a", log, stop_at=2)
    b = RecordingHook("b", log)
    with MonitoredSession(FakeCreator(), [a, b]) as sess:
        steps = 0
        while not sess.should_stop():
            sess.run(FakeTensor("x"))
            steps += 1
        assert steps == 2
        assert b.runs == 2  # the stopping step finished for every hook
        with pytest.raises(RuntimeError, match="Run called even after should_stop requested."):
            sess.run(FakeTensor("x"))
    assert methods(log, "a")[-1] == "end"


def test_failed_run_skips_after_run_and_end_but_calls_after_error():
    log = []
    hook = RecordingHook("a", log)
    creator = FakeCreator(fail_at={1: ValueError("bad step")})
    with pytest.raises(ValueError, match="bad step"):
        with MonitoredSession(creator, [hook]) as sess:
            sess.run(FakeTensor("x"))
            sess.run(FakeTensor("x"))
    assert methods(log, "a") == ["begin", "after_create_session", "before_run", "after_run",
                                 "before_run", "after_error"]
    assert log[-1] == ("a", "after_error", "ValueError")
    assert creator.sessions[0].closed


def test_stop_iteration_ends_cleanly_with_end():
    log = []
    hook = RecordingHook("a", log)
    creator = FakeCreator(fail_at={2: StopIteration()})
    with MonitoredSession(creator, [hook]) as sess:
        while not sess.should_stop():
            sess.run(FakeTensor("x"))
    assert methods(log, "a")[-2:] == ["before_run", "end"]
    assert "after_error" not in methods(log, "a")


@pytest.mark.parametrize("method", ["before_run", "after_run", "after_create_session", "begin"])
def test_hook_exception_keeps_type_and_names_hook_and_method(method):
    log = []
    bad = RecordingHook("bad", log, raise_in=method)
    other = RecordingHook("other", log)
    with pytest.raises(ValueError) as info:
        with MonitoredSession(FakeCreator(), [other, bad]) as sess:
            sess.run(FakeTensor("x"))
    assert f"pyhooks: raised in RecordingHook.{method}()" in info.value.__notes__
    assert ("other", "after_error", "ValueError") in log
    assert "end" not in methods(log, "other")


@pytest.mark.parametrize("count", [3, 40])  # calls unrolled per hook, and the plain loops
@pytest.mark.parametrize("method", ["before_run", "after_run"])
def test_every_hook_gets_its_own_results_and_an_error_names_its_hook(count, method):
    log = []
    hooks = [RecordingHook(f"h{i}", log, fetches=[FakeTensor(f"t{i}")] if i % 2 else None)
             for i in range(count)]
    with MonitoredSession(FakeCreator(), hooks) as sess:
        assert sess.run(FakeTensor("x")) == "x@0"
        assert sess.run(FakeTensor("x")) == "x@1"
    for i, hook in enumerate(hooks):
        assert hook.results == ([[f"t{i}@0"], [f"t{i}@1"]] if i % 2 else [None, None])
    bad = count // 2

    class Named(RecordingHook):
        hook_name = "TheBadOne"

    log.clear()
    hooks[bad] = Named(f"h{bad}", log, raise_in=method)
    with pytest.raises(ValueError) as info:
        with MonitoredSession(FakeCreator(), hooks) as sess:
            sess.run(FakeTensor("x"))
    assert info.value.__notes__ == [f"pyhooks: raised in TheBadOne.{method}()"]
    called = [name for name, what, *_ in log if what == method]
    assert called == [f"h{i}" for i in range(bad + 1)]  # the hooks after it were not called
    assert ("h0", "after_error", "ValueError") in log


def test_exception_in_end_propagates_with_note_and_closes():
    log = []
    creator = FakeCreator()
    with pytest.raises(ValueError) as info:
        with MonitoredSession(creator, [RecordingHook("a", log, raise_in="end")]) as sess:
            sess.run(FakeTensor("x"))
    assert "pyhooks: raised in RecordingHook.end()" in info.value.__notes__
    assert creator.sessions[0].closed


def test_keyboard_interrupt_calls_after_error_and_propagates():
    log = []
    creator = FakeCreator(fail_at={0: KeyboardInterrupt()})
    with pytest.raises(KeyboardInterrupt):
        with MonitoredSession(creator, [RecordingHook("a", log)]) as sess:
            sess.run(FakeTensor("x"))
    assert log[-1] == ("a", "after_error", "KeyboardInterrupt")
    assert creator.sessions[0].closed


def test_exception_in_after_error_never_replaces_the_original():
    log = []

    class Flaky(pyhooks.SessionRunHook):
        def after_error(self, session, error):
            raise OSError("disk full")

    later = RecordingHook("later", log)
    creator = FakeCreator(fail_at={0: ValueError("original")})
    with pytest.raises(ValueError, match="original") as info:
        with MonitoredSession(creator, [Flaky(), later]) as sess:
            sess.run(FakeTensor("x"))
    assert any("Flaky.after_error() also raised OSError: disk full" in n
               for n in info.value.__notes__)
    assert isinstance(info.value.pyhooks_after_error[0], OSError)
    assert ("later", "after_error", "ValueError") in log  # every hook still gets it


def test_methods_not_overridden_are_never_called(monkeypatch):
    calls = []

    class OnlyAfterRun(pyhooks.SessionRunHook):
        def after_run(self, run_context, run_values):
            calls.append("after_run")

    for name in ("begin", "after_create_session", "before_run", "end", "after_error"):
        monkeypatch.setattr(pyhooks.SessionRunHook, name,
                            lambda self, *a, n=name: pytest.fail(f"base {n} called"))
    with MonitoredSession(FakeCreator(), [OnlyAfterRun()]) as sess:
        sess.run(FakeTensor("x"))
    assert calls == ["after_run"]


def test_not_a_hook_is_a_type_error():
    with pytest.raises(TypeError, match=r"`hooks\[1\]` must be a SessionRunHook, got 'oops' \(str\)"):
        MonitoredSession(FakeCreator(), [pyhooks.SessionRunHook(), "oops"])


def test_hooks_not_a_list_is_a_type_error_and_one_hook_alone_is_a_list_of_it():
    with pytest.raises(TypeError, match=r"^`hooks` must be a list of SessionRunHook, got 3 \(int\)"):
        MonitoredSession(FakeCreator(), 3)
    hook = RecordingHook("a", [])
    with MonitoredSession(FakeCreator(), hook) as sess:
        sess.run(FakeTensor("x"))
    assert sess._hooks == [hook] and hook.runs == 1

    class OnlyAfterError:  # duck-typed, with pyhooks' sixth method alone
        def after_error(self, session, error):
            pass

    assert len(MonitoredSession(FakeCreator(), [OnlyAfterError()])._hooks) == 1


def test_run_step_fn():
    """As TensorFlow's: request_stop() raises StopIteration out of run_step_fn (a with block
    ends cleanly on it) and leaves should_stop() as it was."""
    log = []
    hook = RecordingHook("a", log)
    with MonitoredSession(FakeCreator(), [hook]) as sess:
        assert sess.run_step_fn(
            lambda step_context: step_context.run_with_hooks(FakeTensor("x"))) == "x@0"
        assert sess.run_step_fn(
            lambda step_context: step_context.session.run(FakeTensor("y"))) == "y@1"
        assert hook.runs == 1  # the raw session triggers no hooks
        with pytest.raises(StopIteration):
            sess.run_step_fn(lambda step_context: step_context.request_stop())
        assert not sess.should_stop()
    with MonitoredSession(FakeCreator(), [hook]) as sess:
        while not sess.should_stop():
            sess.run_step_fn(lambda step_context: step_context.request_stop())
        pytest.fail("the StopIteration should have ended the with block")
    assert log[-1] == ("a", "end")


class _StepFns:
    def method(self, step_context):
        return "method"


@pytest.mark.parametrize("step_fn", [lambda: None, lambda ctx: None, lambda a, b: None,
                                     lambda step_context, extra: None])
def test_run_step_fn_refuses_a_step_fn_of_another_arity(step_fn):
    with MonitoredSession(FakeCreator(), []) as sess:
        with pytest.raises(ValueError, match="`step_fn` may either have one `step_context`"):
            sess.run_step_fn(step_fn)
        assert sess.run_step_fn(_StepFns().method) == "method"

        def with_self(self, step_context):
            return self
        assert sess.run_step_fn(functools.partial(with_self, "me")) == "me"


def test_closed_session_should_stop_and_refuses_run():
    sess = MonitoredSession(FakeCreator(), [])
    sess.close()
    assert sess.should_stop()
    with pytest.raises(RuntimeError, match="closed MonitoredSession"):
        sess.run(FakeTensor("x"))


def test_repeated_fetch_list_goes_through_a_cached_callable():
    log = []
    x, y = FakeTensor("x"), FakeTensor("y")
    made = []

    class CallableSession:
        graph = None

        def __init__(self):
            self.runs = 0

        def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
            self.runs += 1
            return [f.fn(0, {}) for f in fetches]

        def make_callable(self, fetches):
            made.append(list(fetches))
            return lambda: [f.fn(1, {}) for f in fetches]

        def close(self):
            pass

    session = CallableSession()

    class Creator:
        def create_session(self):
            return session

    hook = RecordingHook("a", log, fetches=y)
    with MonitoredSession(Creator(), [hook]) as sess:
        results = [sess.run(x) for _ in range(4)]
        fed = sess.run(x, feed_dict={"f": 1})  # feeds: never through the callable
    assert made == [[x, y]]
    assert session.runs == 2
    assert results == ["x@0", "x@1", "x@1", "x@1"] and fed == "x@0"
    assert hook.results == ["y@0", "y@1", "y@1", "y@1", "y@0"]


# --------------------------------------------------------------------------- steady steps
# Hooks that return the same args objects step after step: the plan and the session's
# callable are kept from step to step.
def steady_hooks(log, **bad):
    """Three hooks with constant args (a tuple, a leaf, nothing), as pyhooks' own hooks."""
    x, y = FakeTensor("x"), FakeTensor("y")
    return [RecordingHook("a", log, fetches=(x, y), same_args=True),
            RecordingHook("b", log, fetches=y, same_args=True, **bad),
            RecordingHook("c", log)]


def test_steady_steps_give_every_hook_its_results_in_order():
    log = []
    hooks = steady_hooks(log)
    caller = FakeTensor("t")
    with MonitoredSession(FakeCreator(callables=True), hooks) as sess:
        results = [sess.run(caller) for _ in range(6)]
    assert results == [f"t@{i}" for i in range(6)]
    assert hooks[0].results == [(f"x@{i}", f"y@{i}") for i in range(6)]
    assert hooks[1].results == [f"y@{i}" for i in range(6)]
    assert hooks[2].results == [None] * 6
    step = [(name, what) for name, what, *_ in log if what in ("before_run", "after_run")]
    assert step == [("a", "before_run"), ("b", "before_run"), ("c", "before_run"),
                    ("a", "after_run"), ("b", "after_run"), ("c", "after_run")] * 6
    contexts = hooks[0].contexts
    assert len({id(c) for c in contexts}) == 6 and contexts == hooks[2].contexts


@pytest.mark.parametrize("method", ["before_run", "after_run"])
def test_an_error_in_a_steady_step_names_its_hook_and_calls_after_error(method):
    log = []
    hooks = steady_hooks(log, raise_in=method, raise_at=4)
    caller = FakeTensor("t")  # the same fetch every step, as a train op
    with pytest.raises(ValueError) as info:
        with MonitoredSession(FakeCreator(callables=True), hooks) as sess:
            for _ in range(6):
                sess.run(caller)
    assert info.value.__notes__ == [f"pyhooks: raised in RecordingHook.{method}()"]
    last = [(name, what) for name, what, *_ in log if what == method][-2:]
    assert last == [("a", method), ("b", method)]  # c, after b, was not called
    assert [entry for entry in log if entry[1] == "after_error"] == [
        (name, "after_error", "ValueError") for name in "abc"]
    assert hooks[0].runs == (4 if method == "before_run" else 5)


def test_a_stop_requested_in_a_steady_step_ends_the_loop_after_it():
    log = []
    hooks = steady_hooks(log)
    hooks[1].stop_at = 5
    runs, caller = 0, FakeTensor("t")
    with MonitoredSession(FakeCreator(callables=True), hooks) as sess:
        while not sess.should_stop():
            sess.run(caller)
            runs += 1
        with pytest.raises(RuntimeError, match="should_stop"):
            sess.run(caller)
    assert runs == 5 and hooks[2].runs == 5


