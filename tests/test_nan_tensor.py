import logging
import math

import numpy as np
import pytest
import tensorflow as tf

import pyhooks
from hooktest_util import counter_graph, make_session
from pyhooks.hooks.nan_tensor import NanLossWarning, NanTensorHook


def train(g, hook, deltas, runner="pyhooks"):
    """Runs one step per delta (x += delta, loss = x); returns the number of steps run."""
    steps = 0
    with make_session([hook], runner) as sess:
        for delta in deltas:
            if sess.should_stop():
                break
            sess.run(g.train_op, feed_dict={g.delta: delta})
            steps += 1
    return steps


@pytest.mark.parametrize("kwargs, message", [
    ({"loss_tensor": None}, "`loss_tensor` must be a tensor or a tensor name, got None."),
    ({"loss_tensor": "loss:0", "fail_on_nan_loss": "no"},
     "`fail_on_nan_loss` must be True or False, got 'no' (str)."),
    ({"loss_tensor": "loss:0", "fail_on_inf": 1}, "`fail_on_inf` must be True or False, got 1 (int)."),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(TypeError) as info:
        NanTensorHook(**kwargs)
    assert str(info.value) == message


@pytest.mark.parametrize("bad, shown", [(math.nan, "nan"), (math.inf, "inf"), (-math.inf, "-inf")])
def test_raises_on_nan_and_inf(bad, shown, caplog):
    g = counter_graph()
    with g.graph.as_default():
        with pytest.raises(pyhooks.NanLossDuringTrainingError) as info:
            train(g, NanTensorHook(g.loss), [1.0, 1.0, bad, 1.0])
    assert str(info.value) == f"Model diverged with loss = {shown} at step 3."
    assert info.value.step == 3
    assert str(info.value.value) == shown
    assert f"Model diverged with loss = {shown} at step 3." in caplog.text


def test_inf_ignored_when_fail_on_inf_false():
    g = counter_graph()
    with g.graph.as_default():
        assert train(g, NanTensorHook(g.loss, fail_on_inf=False), [1.0, math.inf, 1.0]) == 3


def test_warns_and_stops_without_failing(caplog):
    caplog.set_level(logging.WARNING, logger="pyhooks")
    g = counter_graph()
    with g.graph.as_default():
        with pytest.warns(NanLossWarning, match=r"loss = nan at step 2\. Stopping training\."):
            assert train(g, NanTensorHook(g.loss, fail_on_nan_loss=False),
                         [1.0, math.nan, 1.0, 1.0]) == 2
    assert "Model diverged with loss = nan at step 2. Stopping training." in caplog.text


def test_counts_runs_without_global_step():
    g = counter_graph(with_global_step=False)
    with g.graph.as_default():
        vector = tf.stack([g.loss, g.loss * 0.0])
        with pytest.raises(pyhooks.NanLossDuringTrainingError) as info:
            train(g, NanTensorHook(vector), [2.0, -2.0, math.inf])
    assert (info.value.step, info.value.value) == (3, math.inf)


def test_under_tensorflow_monitored_session():
    g = counter_graph()
    with g.graph.as_default():
        with pytest.raises(pyhooks.NanLossDuringTrainingError, match="at step 2"):
            train(g, NanTensorHook("loss:0"), [1.0, np.nan], runner="tf")
