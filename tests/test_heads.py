"""The heads' losses with their gradients written out equal TensorFlow's, values and gradients."""

import numpy as np
import pytest

from pyhooks.estimators import heads

tf = pytest.importorskip("tensorflow")
v1 = tf.compat.v1


def _values_and_gradients(loss_of, labels, logits):
    """``loss_of(labels, logits)`` and its gradient for ``logits``, in a graph of unknown batch
    size (where TensorFlow's own gradient adds its shape bookkeeping)."""
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [None, logits.shape[1]])
        z = v1.placeholder(tf.float32, [None, labels.shape[1]])
        loss = loss_of(z, x)
        # a weighted sum upstream, so that the gradient's upstream values are not all ones
        weights = tf.range(1.0, tf.cast(tf.shape(x)[0], tf.float32) + 1.0)
        total = tf.reduce_sum(tf.reshape(loss, [-1]) * weights)
        gradient, = tf.gradients(total, [x])
        with v1.Session(graph=graph) as session:
            return session.run([loss, gradient], {x: logits, z: labels})


@pytest.mark.parametrize("scale", [1.0, 30.0])  # 30: exp() of the logits would overflow
def test_logistic_loss_and_its_gradient_are_tensorflows(scale):
    rng = np.random.default_rng(1)
    logits = (rng.normal(size=(64, 1)) * scale).astype(np.float32)
    logits[:3, 0] = [0.0, 90.0, -90.0]
    labels = rng.integers(0, 2, size=(64, 1)).astype(np.float32)
    mine = _values_and_gradients(lambda z, x: heads._logistic_loss(tf, z, x), labels, logits)
    theirs = _values_and_gradients(
        lambda z, x: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x), labels, logits)
    for a, b in zip(mine, theirs):
        assert np.all(np.isfinite(a))
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dimension", [1, 3])
def test_squared_error_and_its_gradient_are_tensorflows(dimension):
    rng = np.random.default_rng(2)
    logits = rng.normal(size=(50, dimension)).astype(np.float32) * 10
    labels = rng.normal(size=(50, dimension)).astype(np.float32) * 10
    mine = _values_and_gradients(lambda z, x: heads._squared_error(tf, z, x), labels, logits)
    theirs = _values_and_gradients(
        lambda z, x: tf.reduce_sum(tf.math.squared_difference(x, z), axis=1), labels, logits)
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-5)
