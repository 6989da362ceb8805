"""tf.contrib's essentials (pyhooks.estimators.contrib), in graphs and in a custom estimator."""

import numpy as np
import pytest

from pyhooks.estimators import estimator, estimator_spec, input_fn, tf1

tf = pytest.importorskip("tensorflow")
v1 = tf.compat.v1
contrib = tf1.contrib


def _run(outputs, feed=None):
    with v1.Session() as session:
        session.run(v1.global_variables_initializer())
        return session.run(outputs, feed)


def test_fully_connected_is_relu_of_weights_plus_biases_with_tf1_names():
    with tf.Graph().as_default():
        x = tf.constant(np.arange(6.0).reshape(2, 3))
        out = contrib.layers.fully_connected(x, 4)
        linear = contrib.layers.fully_connected(x, 2, activation_fn=None, scope="logits")
        names = [v.op.name for v in v1.global_variables()]
        assert names == ["fully_connected/weights", "fully_connected/biases", "logits/weights",
                         "logits/biases"]
        assert out.dtype == tf.float64 and out.shape.as_list() == [2, 4]
        weights, biases, got, got_linear, lw, lb = _run(
            [v1.global_variables()[0], v1.global_variables()[1], out, linear,
             v1.global_variables()[2], v1.global_variables()[3]])
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(got, np.maximum(x @ weights + biases, 0))
    np.testing.assert_allclose(got_linear, x @ lw + lb)
    assert np.all(biases == 0) and np.any(weights != 0)


def test_a_normalizer_takes_the_place_of_the_biases():
    seen = {}

    def normalizer(values, scale):
        seen["scale"] = scale
        return values * scale

    with tf.Graph().as_default():
        x = tf.ones([2, 3])
        out = contrib.layers.fully_connected(x, 2, activation_fn=None, normalizer_fn=normalizer,
                                             normalizer_params={"scale": 10.0})
        assert [v.op.name for v in v1.global_variables()] == ["fully_connected/weights"]
        weights, got = _run([v1.global_variables()[0], out])
    assert seen == {"scale": 10.0}
    # float32 sums of random weights: a value near 0 may differ in its 6th digit
    np.testing.assert_allclose(got, 10.0 * (np.ones((2, 3)) @ weights), rtol=1e-5, atol=1e-5)


def test_stack_applies_the_layer_once_per_argument_in_named_scopes():
    with tf.Graph().as_default():
        x = tf.ones([5, 3])
        out = contrib.layers.stack(x, contrib.layers.fully_connected, [4, (6,), [2]],
                                   activation_fn=None)
        names = [v.op.name for v in v1.global_variables()]
        assert out.shape.as_list() == [5, 2]
    assert names == [f"Stack/fully_connected_{i}/{w}" for i in (1, 2, 3)
                     for w in ("weights", "biases")]
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="stack_args"):
            contrib.layers.stack(tf.ones([1, 2]), contrib.layers.fully_connected, [])
        with pytest.raises(TypeError, match="`layer` must be a layer function"):
            contrib.layers.stack(tf.ones([1, 2]), "fully_connected", [2])
        inner = contrib.layers.stack(tf.ones([1, 2]), contrib.layers.fully_connected, [3],
                                     scope="mine")
        assert inner.name.startswith("mine/fully_connected_1/")


def test_dropout_keeps_values_when_not_training_and_scales_the_kept_ones():
    with tf.Graph().as_default():
        x = tf.ones([1000])
        kept = contrib.layers.dropout(x, keep_prob=0.5, is_training=False)
        dropped = contrib.layers.dropout(x, keep_prob=0.5, seed=1)  # is_training=True: TF1's default
        switch = v1.placeholder(tf.bool, [])
        either = contrib.layers.dropout(x, keep_prob=0.25, is_training=switch)
        with v1.Session() as session:
            same, half = session.run([kept, dropped])
            off, on = (session.run(either, {switch: flag}) for flag in (False, True))
    np.testing.assert_array_equal(same, np.ones(1000))
    assert set(np.unique(half)) == {0.0, 2.0} and 350 < np.count_nonzero(half) < 650
    np.testing.assert_array_equal(off, np.ones(1000))
    assert set(np.unique(on)) == {0.0, 4.0}
    with pytest.raises(ValueError, match="keep_prob"):
        contrib.layers.dropout(x, keep_prob=0)


def test_optimize_loss_by_name_with_its_learning_rate_variable_and_summaries():
    with tf.Graph().as_default():
        step = v1.train.get_or_create_global_step()
        w = v1.get_variable("w", [], initializer=v1.constant_initializer(3.0))
        loss = tf.square(w)
        train = contrib.layers.optimize_loss(loss, contrib.framework.get_global_step(),
                                             learning_rate=0.25, optimizer="SGD")
        summaries = [np.asarray(tf.get_static_value(s.op.inputs[0])).item().decode()  # tags
                     for s in v1.get_collection(v1.GraphKeys.SUMMARIES)]
        assert "OptimizeLoss/learning_rate" in [v.op.name for v in v1.global_variables()]
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            first = session.run(train)
            assert session.run([step, w]) == [1, pytest.approx(1.5)]  # 3 - 0.25 * 2 * 3
    assert first == 9.0  # the loss of the step's forward pass, before its update
    assert {"OptimizeLoss/loss", "OptimizeLoss/global_norm/gradient_norm",
            "OptimizeLoss/gradients/w", "OptimizeLoss/gradient_norm/w"} <= set(summaries)
    assert any(tag.startswith("OptimizeLoss/learning_rate") for tag in summaries)


@pytest.mark.parametrize("optimizer", ["Adagrad", "Adam", "Ftrl", "RMSProp"])
def test_optimize_loss_names_and_clipping_and_decay(optimizer):
    with tf.Graph().as_default():
        step = v1.train.get_or_create_global_step()
        w = v1.get_variable("w", [2], initializer=v1.constant_initializer(5.0))
        loss = tf.reduce_sum(tf.square(w))
        train = contrib.layers.optimize_loss(
            loss, step, learning_rate=0.1, optimizer=optimizer, clip_gradients=1.0,
            learning_rate_decay_fn=lambda rate, gs: rate * 0.5, summaries=["loss"],
            increment_global_step=False)
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            before = session.run(loss)
            session.run(train)
            assert session.run(step) == 0
            assert session.run(loss) < before


def test_optimize_loss_takes_optimizer_objects_classes_and_functions():
    with tf.Graph().as_default():
        step = v1.train.get_or_create_global_step()
        w = v1.get_variable("w", [], initializer=v1.constant_initializer(1.0))
        loss = tf.square(w)
        made = []
        contrib.layers.optimize_loss(loss, step, None, v1.train.GradientDescentOptimizer(0.1),
                                     name="a", summaries=[])
        contrib.layers.optimize_loss(loss, step, 0.1, v1.train.AdagradOptimizer, name="b",
                                     summaries=[])
        contrib.layers.optimize_loss(
            loss, step, 0.1, lambda rate: made.append(rate) or v1.train.MomentumOptimizer(
                rate, 0.9), name="c", summaries=[])
        assert len(made) == 1
        with pytest.raises(ValueError, match="'Momentum' is not one of"):
            contrib.layers.optimize_loss(loss, step, 0.1, "Momentum")
        with pytest.raises(ValueError, match="learning_rate"):
            contrib.layers.optimize_loss(loss, step, None, "SGD")
        with pytest.raises(TypeError, match="must return a tf.train optimizer"):
            contrib.layers.optimize_loss(loss, step, 0.1, lambda rate: "sgd", name="d")
        with pytest.raises(ValueError, match="summaries"):
            contrib.layers.optimize_loss(loss, step, 0.1, "SGD", summaries=["weights"])
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="no global step"):
            contrib.layers.optimize_loss(tf.constant(1.0), None, 0.1, "SGD")


def test_names_pyhooks_does_not_provide_say_what_to_use():
    with pytest.raises(AttributeError, match="tf.contrib.learn.read_batch_features is gone"):
        contrib.learn.read_batch_features  # noqa: B018
    with pytest.raises(AttributeError, match="use tf.layers.conv2d"):
        contrib.layers.conv2d  # noqa: B018
    with pytest.raises(AttributeError, match="tf.contrib.framework.list_variables was removed"):
        contrib.framework.list_variables  # noqa: B018
    with pytest.raises(AttributeError, match="pyhooks provides tf.contrib.layers.fully_connected"):
        contrib.nonexistent  # noqa: B018


def test_tfestimators_iris_model_in_a_custom_estimator():
    """The model of tfestimators' tests: stacked layers with dropout as the normalizer."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(150, 4))
    data = {f"x{i}": x[:, i] for i in range(4)}
    data["y"] = ((x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0.5))

    def model_fn(features, labels, mode):
        hidden = tf1.contrib.layers.stack(
            features, tf1.contrib.layers.fully_connected, [10, 20, 10],
            normalizer_fn=tf1.contrib.layers.dropout, normalizer_params={"keep_prob": 0.9})
        logits = tf1.contrib.layers.fully_connected(hidden, 3, activation_fn=None)
        predictions = {"classes": tf.argmax(logits, 1), "probabilities": tf.nn.softmax(logits)}
        if mode == "infer":
            return estimator_spec(mode, predictions=predictions)
        loss = v1.losses.softmax_cross_entropy(tf.one_hot(labels, 3), logits)
        train_op = tf1.contrib.layers.optimize_loss(
            loss, tf1.contrib.framework.get_global_step(), optimizer="Adagrad",
            learning_rate=0.1)
        return estimator_spec(mode, predictions=predictions, loss=loss, train_op=train_op)

    data_in = input_fn(data, [f"x{i}" for i in range(4)], "y", batch_size=10, num_epochs=None)
    model = estimator(model_fn)
    model.train(data_in, steps=150)
    metrics = model.evaluate(input_fn(data, [f"x{i}" for i in range(4)], "y"))
    assert list(metrics) == ["loss", "global_step"] and metrics["global_step"] == 150
    predicted = model.predict(input_fn(data, [f"x{i}" for i in range(4)]), as_dict=True)
    assert predicted["probabilities"].dtype == np.float64  # the features' type
    np.testing.assert_allclose(predicted["probabilities"].sum(1), 1, rtol=1e-12)
    # dropout stays on at prediction (is_training=True, TF1's default), yet it learnt
    assert np.mean(predicted["classes"] == data["y"]) > 0.7
