"""A tiny regression graph with a per-example loss, for the history/progress/profiler tests.

Plain functions, no fixtures. With ``lr=0`` the weight stays 0, so the
per-example loss of batch ``k`` is exactly ``y**2`` of that batch: tests know
every value in advance (:func:`expected_losses`).
"""

from __future__ import annotations

import os
import types

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.python.training import training_util  # noqa: E402

import pyhooks  # noqa: E402

BATCH = 4


def labels(batches):
    return np.arange(1, BATCH * batches + 1, dtype=np.float32)


def expected_losses(step):
    """``(mean, total)`` of the per-example loss in the run that reaches global ``step``."""
    y = labels(step)[-BATCH:]
    return float(np.mean(y ** 2)), float(np.sum(y ** 2))


def regression_graph(batches=None, lr=0.0, collect=True):
    """A graph (entered by the caller) whose ``train_op`` takes one batch and adds 1 to the step.

    Args:
        batches: how many batches the input has (``None``: 1000, effectively endless);
            one more ``run`` raises ``OutOfRangeError``.
        lr: learning rate (0 keeps the loss values predictable).
        collect: add the per-example loss to the ``losses`` collection.
    """
    graph = tf.Graph()
    with graph.as_default():
        ns = types.SimpleNamespace(graph=graph)
        ns.global_step = tf.compat.v1.train.get_or_create_global_step()
        read = training_util._get_or_create_global_step_read()
        y = labels(batches or 1000)
        data = tf.data.Dataset.from_tensor_slices((y / 2, y)).batch(BATCH)
        xb, yb = tf.compat.v1.data.make_one_shot_iterator(data).get_next()
        w = tf.compat.v1.get_variable("w", initializer=0.0, use_resource=True)
        ns.per_example = tf.square(xb * w - yb, name="per_example_loss")
        if collect:
            tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.LOSSES, ns.per_example)
        ns.loss = tf.reduce_sum(ns.per_example, name="loss")
        update = tf.compat.v1.train.GradientDescentOptimizer(lr).minimize(ns.loss)
        with tf.control_dependencies([read, update]):
            ns.train_op = tf.compat.v1.assign_add(ns.global_step, 1)
    return ns


def session(hooks, runner="pyhooks"):
    """A monitored session of the chosen runner: ``"pyhooks"`` or ``"tf"``."""
    runner_class = (pyhooks.MonitoredSession if runner == "pyhooks"
                    else tf.compat.v1.train.MonitoredSession)
    return runner_class(session_creator=tf.compat.v1.train.ChiefSessionCreator(), hooks=hooks)


def train(ns, hooks, steps, runner="pyhooks"):
    """Runs ``train_op`` up to ``steps`` times (fewer if a hook stops or the input ends)."""
    done = 0
    with ns.graph.as_default(), session(hooks, runner) as sess:
        while not sess.should_stop() and done < steps:
            sess.run(ns.train_op)
            done += 1
    return done
