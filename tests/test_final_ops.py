import logging

import pytest
import tensorflow as tf

import pyhooks

from hooktest_util import counter_graph, make_session, run_loop
from pyhooks.hooks.final_ops import FinalOpsHook


def test_bad_feed_dict():
    with pytest.raises(TypeError, match=r"`final_ops_feed_dict` must be a dict or None, got \[1\] \(list\)."):
        FinalOpsHook([], final_ops_feed_dict=[1])


@pytest.mark.parametrize("final_ops, where, shown", [
    (1, "final_ops", "1 (int)"),
    ([1.5], "final_ops[0]", "1.5 (float)"),
    ({"a": None}, "final_ops['a']", "None (NoneType)"),
    ("", "final_ops", "'' (str)"),
])
def test_what_cannot_be_fetched_is_refused_at_construction(final_ops, where, shown):
    with pytest.raises(TypeError) as info:  # not at end(), after the whole run
        FinalOpsHook(final_ops)
    assert str(info.value) == (f"`{where}` must be a tensor, an operation, a variable or a "
                               f"tensor name (or a list or dict of them), got {shown}.")


@pytest.mark.parametrize("runner", ["pyhooks", "tf"])
def test_values_at_end(runner):
    g = counter_graph()
    with g.graph.as_default():
        hook = FinalOpsHook({"x": g.x.read_value(), "twice": g.delta * 2},
                            final_ops_feed_dict={g.delta: 5.0})
        run_loop([hook], g.train_op, max_steps=3, runner=runner)
        assert hook.final_ops_values is not None
    assert hook.final_ops_values == {"x": 3.0, "twice": 10.0}


def test_single_tensor_and_none():
    g = counter_graph()
    with g.graph.as_default():
        single, none = FinalOpsHook(g.x.read_value()), FinalOpsHook(None)
        assert single.final_ops_values is None
        run_loop([single, none], g.train_op, max_steps=2)
    assert single.final_ops_values == 2.0
    assert none.final_ops_values is None


def test_a_tensor_or_op_name_gives_its_value():
    """"global_step" (an op) and "global_step:0" (a resource handle) both give the step, as
    TensorFlow's hooks resolve names; TensorFlow's session.run gives None and a handle."""
    g = counter_graph()
    with g.graph.as_default():
        tf.identity(g.x, name="x_now")
        hook = FinalOpsHook({"step": "global_step", "handle": "global_step:0",
                             "x": ["x_now", "x_now:0", "x"]})
        run_loop([hook], g.train_op, max_steps=3)
    assert hook.final_ops_values == {"step": 3, "handle": 3, "x": [3.0, 3.0, 3.0]}


@pytest.mark.parametrize("name, message", [
    ("no_such_op", "The name 'no_such_op:0' refers to a Tensor which does not exist"),
    ("init", "The operation, 'init', exists but only has 0 outputs"),
    ("pair", "Name pair is ambiguous, as this `Operation` has multiple outputs"),
])
def test_a_name_without_one_value_is_an_error_naming_it(name, message):
    g = counter_graph()
    with g.graph.as_default():
        tf.no_op(name="init")
        tf.split(tf.constant([1.0, 2.0]), 2, name="pair")
        with pytest.raises(pyhooks.HookSetupError) as info:
            run_loop([FinalOpsHook({"a": [name]})], g.train_op, max_steps=1)
    assert str(info.value).startswith(f"FinalOpsHook: `final_ops`: {name!r} is not a tensor of "
                                      "the graph: ")
    assert message in str(info.value)
    assert "pyhooks: raised in FinalOpsHook.begin()" in info.value.__notes__


def test_out_of_range_at_end_warns_and_is_raised_as_tensorflow_does(caplog):
    with tf.Graph().as_default():
        item = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.range(1)).get_next()
        hook = FinalOpsHook(item + 0)
        with pytest.raises(tf.errors.OutOfRangeError):
            with make_session([hook]) as sess:
                sess.run(item)
    assert hook.final_ops_values is None
    warnings = [r for r in caplog.records if r.name == "pyhooks" and r.levelno == logging.WARNING]
    assert len(warnings) == 1
    message = warnings[0].getMessage()
    assert message.startswith("FinalOpsHook: evaluating `final_ops` in end() raised "
                              "OutOfRangeError")
    assert "dependency back to some input source" in message  # the likely cause, as TF says
