import pytest

import pyhooks
from hooktest_util import FakeClock, counter_graph, make_session
from pyhooks.hooks.global_step_waiter import GlobalStepWaiterHook, GlobalStepWaitTimeout
from pyhooks.hooks.lambda_hook import LambdaHook


@pytest.mark.parametrize("kwargs, error, message", [
    ({"wait_until_step": None}, ValueError, "`wait_until_step` is required, got None."),
    ({"wait_until_step": -1}, ValueError, "`wait_until_step` must be zero or more, got -1."),
    ({"wait_until_step": 1.5}, ValueError, "`wait_until_step` must be a whole number, got 1.5."),
    ({"wait_until_step": "5"}, TypeError, "`wait_until_step` must be a whole number, got '5' (str)."),
    ({"wait_until_step": 5, "timeout_secs": 0}, ValueError, "`timeout_secs` must be positive, got 0."),
])
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error) as info:
        GlobalStepWaiterHook(**kwargs)
    assert str(info.value) == message


def other_worker(g, hook):
    """Makes ``hook.sleep`` advance the global step by one (as another worker would)."""
    sessions = []
    delays = []

    def sleep(secs):
        delays.append(secs)
        sessions[-1].run(g.train_op)

    hook.sleep = sleep
    hook.clock = FakeClock()
    return LambdaHook(after_create_session=lambda session, coord: sessions.append(session)), delays


@pytest.mark.parametrize("runner", ["pyhooks", "tf"])
def test_waits_with_backoff_until_step(runner):
    g = counter_graph()
    with g.graph.as_default():
        hook = GlobalStepWaiterHook(wait_until_step=6.0)
        capture, delays = other_worker(g, hook)
        with make_session([capture, hook], runner) as sess:
            first = sess.run(g.loss)
            second = sess.run(g.loss)
    assert delays == [0.05, 0.1, 0.2, 0.4, 0.8, 1.0]
    assert (first, second) == (7.0, 8.0)  # six waits by the other worker, then ours


def test_zero_does_not_wait():
    g = counter_graph()
    with g.graph.as_default():
        hook = GlobalStepWaiterHook(wait_until_step=0)
        capture, delays = other_worker(g, hook)
        with make_session([capture, hook]) as sess:
            assert sess.run(g.loss) == 1.0
    assert delays == []


def test_timeout_names_step_reached():
    g = counter_graph()
    with g.graph.as_default():
        hook = GlobalStepWaiterHook(wait_until_step=100, timeout_secs=2.5)
        capture, delays = other_worker(g, hook)
        hook.clock = FakeClock(tick=1.0)
        with pytest.raises(TimeoutError) as info:
            with make_session([capture, hook]) as sess:
                sess.run(g.train_op)
    error = info.value
    assert isinstance(error, GlobalStepWaitTimeout) and isinstance(error, pyhooks.PyhooksError)
    assert (error.step, error.wait_until_step) == (2, 100)
    assert str(error) == ("GlobalStepWaiterHook: the global step reached only 2 after 3.0 s "
                          "waiting for step 100 (wait_until_step=100, timeout_secs=2.5).")
    assert error.__notes__ == ["pyhooks: raised in GlobalStepWaiterHook.before_run()"]


def test_needs_global_step():
    g = counter_graph(with_global_step=False)
    with g.graph.as_default():
        with pytest.raises(RuntimeError, match="Global step should be created to use GlobalStepWaiterHook."):
            make_session([GlobalStepWaiterHook(1)])
