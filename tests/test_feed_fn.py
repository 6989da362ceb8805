import pytest

from hooktest_util import counter_graph, make_session
from pyhooks.hooks.feed_fn import FeedFnHook
from pyhooks.hooks.lambda_hook import LambdaHook


def test_not_callable():
    with pytest.raises(TypeError, match=r"`feed_fn` must be callable, got \{\} \(dict\)."):
        FeedFnHook({})


@pytest.mark.parametrize("runner", ["pyhooks", "tf"])
def test_feeds_then_ends_cleanly_on_stop_iteration(runner):
    g = counter_graph()
    ended = []
    with g.graph.as_default():
        feeds = iter([{g.delta: 2.0}, {g.delta: 3.0}, {g.delta: 4.0}])
        hooks = [FeedFnHook(lambda: next(feeds)), LambdaHook(end=lambda session: ended.append(
            session.run(g.x)))]
        losses = []
        with make_session(hooks, runner) as sess:
            while not sess.should_stop():
                losses.append(sess.run(g.loss))
    assert losses == [2.0, 5.0, 9.0]
    assert ended == [9.0]  # end() ran: the input ran out, no error


def test_bad_return_value():
    g = counter_graph()
    with g.graph.as_default():
        with pytest.raises(TypeError) as info:
            with make_session([FeedFnHook(lambda: [2.0])]) as sess:
                sess.run(g.train_op)
    assert str(info.value) == "`feed_fn` must return a dict, got [2.0] (list)."
    assert info.value.__notes__ == ["pyhooks: raised in FeedFnHook.before_run()"]


def test_same_tensor_fed_by_caller_is_an_error():
    g = counter_graph()
    with g.graph.as_default():
        with pytest.raises(RuntimeError, match="delta"):
            with make_session([FeedFnHook(lambda: {g.delta: 1.0})]) as sess:
                sess.run(g.train_op, feed_dict={g.delta: 2.0})
