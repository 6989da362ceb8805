"""Custom estimators (estimator(model_fn)), TF1-style layers, run_config, through real TensorFlow."""

import re

import numpy as np
import pytest

from pyhooks import HistorySaverHook, LambdaHook
from pyhooks.estimators import (
    ModeKeys,
    column_numeric,
    estimator,
    estimator_spec,
    feature_columns,
    input_fn,
    input_layer,
    load_mtcars,
    mode_keys,
    run_config,
)
from pyhooks.estimators import layers, tf1

tf = pytest.importorskip("tensorflow")
v1 = tf.compat.v1


@pytest.fixture(scope="module")
def data():
    return load_mtcars()


def regression_fn(features, labels, mode, params):
    """tfestimators' abalone model_fn, in Python: two hidden layers, SGD, an rmse metric."""
    hidden = layers.dense(features, 10, activation=tf.nn.relu)
    hidden = layers.dense(hidden, 10, activation=tf.nn.relu)
    predictions = tf.reshape(layers.dense(hidden, 1), [-1])
    if mode == ModeKeys.PREDICT:
        return estimator_spec(mode, predictions={"mpg": predictions})
    loss = v1.losses.mean_squared_error(labels, predictions)
    rmse = v1.metrics.root_mean_squared_error(labels, predictions)
    optimizer = v1.train.GradientDescentOptimizer(params["learning_rate"])
    train_op = optimizer.minimize(loss, global_step=v1.train.get_global_step())
    return estimator_spec(mode, predictions={"mpg": predictions}, loss=loss, train_op=train_op,
                          eval_metric_ops={"rmse": rmse})


def test_custom_estimator_trains_evaluates_predicts(data, tmp_path):
    inp = input_fn(data, ["drat", "wt"], "mpg", batch_size=8, shuffle=False)
    model = estimator(regression_fn, model_dir=str(tmp_path), params={"learning_rate": 0.01},
                      config=run_config(tf_random_seed=7))
    untrained = model.evaluate(inp)["loss"]
    history = model.train(input_fn(data, ["drat", "wt"], "mpg", batch_size=8, num_epochs=None,
                                   seed=3), steps=60)
    assert history.to_dict()["steps"][-1] == 60
    metrics = model.evaluate(inp)
    assert metrics["global_step"] == 60
    assert set(metrics) == {"loss", "rmse", "global_step"}
    # rmse over the data is the root of the mean of the batches' mean squared errors (equal batches)
    assert metrics["rmse"] == pytest.approx(np.sqrt(metrics["loss"]), rel=1e-4)
    predictions = model.predict(inp, as_dict=True)
    assert predictions["mpg"].shape == (32,)
    # the predictions are those of the checkpointed weights, computed again in numpy
    w = {name: model.get_variable_value(name) for name in model.get_variable_names()}
    x = np.stack([data["drat"], data["wt"]], axis=1)
    h = np.maximum(x @ w["dense/kernel"] + w["dense/bias"], 0)
    h = np.maximum(h @ w["dense_1/kernel"] + w["dense_1/bias"], 0)
    expected = (h @ w["dense_2/kernel"] + w["dense_2/bias"])[:, 0]
    np.testing.assert_allclose(predictions["mpg"], expected, rtol=1e-6)
    # training lowered the error (the untrained model predicts about 0: mpg is about 20)
    assert metrics["loss"] < untrained / 2
    assert [p["mpg"] for p in model.predict(inp)][:3] == list(predictions["mpg"][:3])


def test_features_are_a_dict_and_their_matrix(data):
    seen = {}

    def model_fn(features, labels, mode):
        seen["keys"] = sorted(features)
        seen["dtypes"] = {k: t.dtype.name for k, t in features.items()}
        matrix = tf.convert_to_tensor(features)
        seen["matrix"] = (matrix.dtype.name, matrix.shape.as_list())
        seen["labels"] = None if labels is None else (labels.dtype.name, labels.shape.as_list())
        seen["mode"] = mode
        out = tf.reduce_sum(matrix, axis=1)
        return estimator_spec(mode, predictions=out)

    model = estimator(model_fn)
    values = model.predict(input_fn(data, ["cyl", "drat"], "mpg"), as_dict=True)
    assert seen["keys"] == ["cyl", "drat"]
    assert seen["dtypes"] == {"cyl": "float64", "drat": "float64"}
    assert seen["matrix"] == ("float64", [None, 2])
    assert seen["labels"] == ("float64", [None])  # given in every mode when the input has them
    assert seen["mode"] == "infer"
    np.testing.assert_allclose(values["predictions"], data["cyl"] + data["drat"])


def test_input_layer_uses_feature_columns(data):
    def model_fn(features, labels, mode, params, config):
        net = input_layer(features, feature_columns(column_numeric("drat", normalizer_fn=lambda x:
                                                                   x * 2)))
        return estimator_spec(mode, predictions={"twice": tf.reshape(net, [-1])})

    model = estimator(model_fn)
    got = model.predict(input_fn(data, ["drat", "cyl"]), as_dict=True)["twice"]
    np.testing.assert_allclose(got, 2 * data["drat"], rtol=1e-6)


def test_tf1_feature_column_input_layer_takes_pyhooks_columns(data):
    """tfestimators' input_layer() passed its columns to tf.feature_column.input_layer, so
    model_fns call that too: with pyhooks' columns it is pyhooks' input_layer(); with
    TensorFlow's, TensorFlow's; a mix, or TensorFlow's extra arguments, are refused."""
    columns = feature_columns(column_numeric("drat"), column_numeric("wt"))
    seen = {}

    def model_fn(features, labels, mode):
        ours = tf1.feature_column.input_layer(features, columns)
        theirs = tf1.feature_column.input_layer(
            features, [tf1.feature_column.numeric_column("wt"),
                       tf1.feature_column.numeric_column("drat")])
        for bad, word in (([columns[0], tf1.feature_column.numeric_column("wt")], "mixes"),
                          ({"trainable": False}, "`trainable`")):
            with pytest.raises(TypeError, match=word):
                if isinstance(bad, dict):
                    tf1.feature_column.input_layer(features, columns, **bad)
                else:
                    tf1.feature_column.input_layer(features, bad)
        seen["ok"] = True
        return estimator_spec(mode, predictions={"ours": ours, "theirs": theirs,
                                                 "direct": input_layer(features, columns)})

    got = estimator(model_fn).predict(input_fn(data, ["drat", "wt"]), as_dict=True)
    assert seen["ok"]
    expected = np.stack([data["drat"], data["wt"]], axis=1)  # in name order, as TensorFlow
    np.testing.assert_allclose(got["ours"], expected, rtol=1e-6)
    np.testing.assert_allclose(got["theirs"], expected, rtol=1e-6)
    np.testing.assert_array_equal(got["ours"], got["direct"])
    assert tf1.feature_column.numeric_column is v1.feature_column.numeric_column
    assert "input_layer" in dir(tf1.feature_column) and "numeric_column" in dir(tf1.feature_column)


def test_params_and_config_only_when_taken(data):
    calls = []

    def model_fn(features, labels, mode, config):
        calls.append(config)
        return estimator_spec(mode, predictions=tf.reduce_sum(tf.convert_to_tensor(features), 1))

    config = run_config(tf_random_seed=3)
    estimator(model_fn, config=config, params={"a": 1}).predict(input_fn(data, ["drat"]))
    assert calls == [config]


def test_spec_hooks_run_and_classifier_labels(data):
    """Integer labels (class ids), accuracy metric, training_hooks in the loop."""
    runs = []

    def model_fn(features, labels, mode):
        logits = layers.dense(features, 2)
        classes = tf.argmax(logits, 1)
        if mode == ModeKeys.PREDICT:
            return estimator_spec(mode, predictions={"class": classes})
        loss = v1.losses.sparse_softmax_cross_entropy(labels, logits)
        train_op = v1.train.AdagradOptimizer(0.1).minimize(
            loss, global_step=v1.train.get_global_step())
        return estimator_spec(mode, loss=loss, train_op=train_op,
                              eval_metric_ops={"accuracy": v1.metrics.accuracy(labels, classes)},
                              training_hooks=[LambdaHook(after_run=lambda c, v: runs.append(1))])

    data = dict(data, am=data["am"].astype(np.int64))
    inp = input_fn(data, ["wt", "hp"], "am", batch_size=8)
    model = estimator(model_fn)
    model.train(inp, steps=3)
    assert len(runs) == 3
    metrics = model.evaluate(inp)
    assert 0 <= metrics["accuracy"] <= 1


def test_history_and_losses_collection(data):
    hook = HistorySaverHook(every_n_step=1)
    model = estimator(regression_fn, params={"learning_rate": 0.001})
    model.train(input_fn(data, ["drat"], "mpg", batch_size=32), steps=1, hooks=[hook])
    row = hook.history.to_dict()
    assert row["steps"] == [1]
    # the scalar mean squared error of the batch, as the model_fn's loss
    assert row["mean_losses"][0] == pytest.approx(row["total_losses"][0])
    assert 100 < row["mean_losses"][0] < 2000


@pytest.mark.parametrize("fn, words", [
    (lambda f, l, m: estimator_spec(m, predictions=None), ["infer", "predictions"]),
    (lambda f, l, m: "spec", ["estimator_spec", "'spec'"]),
])
def test_bad_model_fn_results(data, fn, words):
    with pytest.raises((ValueError, TypeError)) as error:
        estimator(fn).predict(input_fn(data, ["drat"]))
    for word in words:
        assert word in str(error.value)


def test_train_op_must_increment_global_step(data):
    def model_fn(features, labels, mode):
        out = tf.reshape(layers.dense(features, 1), [-1])
        loss = v1.losses.mean_squared_error(labels, out)
        return estimator_spec(mode, loss=loss,
                              train_op=v1.train.GradientDescentOptimizer(0.01).minimize(loss))

    with pytest.raises(ValueError, match="global step"):
        estimator(model_fn).train(input_fn(data, ["drat"], "mpg", num_epochs=None), steps=5)


def test_bad_arguments():
    with pytest.raises(TypeError, match="model_fn"):
        estimator(3)
    with pytest.raises(TypeError, match="params"):
        estimator(lambda f, l, m: None, params=[1])
    with pytest.raises(TypeError, match="config"):
        estimator(lambda f, l, m: None, config={"a": 1})
    with pytest.raises(ValueError, match="mode"):
        estimator_spec("training")
    with pytest.raises(TypeError, match="eval_metric_ops"):
        estimator_spec("eval", eval_metric_ops={"a": 1})
    with pytest.raises(ValueError, match="save_summary_steps"):
        run_config(save_summary_steps=-1)


def test_mode_keys_are_tf_estimators():
    assert mode_keys() == {"TRAIN": "train", "EVAL": "eval", "PREDICT": "infer"}


def test_tf1_module_is_compat_v1_with_pyhooks_layers():
    assert tf1.losses is v1.losses
    assert tf1.train.GradientDescentOptimizer is v1.train.GradientDescentOptimizer
    assert tf1.layers is layers


def test_layers_shapes_and_names():
    with tf.Graph().as_default():
        x = v1.placeholder(tf.float32, [None, 28, 28, 1])
        conv = layers.conv2d(x, 4, [5, 5], padding="same", activation=tf.nn.relu)
        pool = layers.max_pooling2d(conv, 2, 2)
        flat = layers.flatten(pool)
        dense = layers.dense(flat, 3)
        drop = layers.dropout(dense, rate=0.4, training=False)
        assert conv.shape.as_list() == [None, 28, 28, 4]
        assert pool.shape.as_list() == [None, 14, 14, 4]
        assert flat.shape.as_list() == [None, 14 * 14 * 4]
        assert drop.shape.as_list() == [None, 3]
        names = sorted(v.name for v in v1.global_variables())
        assert names == ["conv2d/bias:0", "conv2d/kernel:0", "dense/bias:0", "dense/kernel:0"]
        with pytest.raises(ValueError, match="units"):
            layers.dense(flat, 2.5)
        with pytest.raises(ValueError, match="padding"):
            layers.conv2d(x, 2, 3, padding="full")


@pytest.mark.parametrize("layer", [lambda inputs: layers.dense(inputs, 3),
                                   lambda inputs: layers.conv2d(inputs, 2, 3),
                                   layers.flatten])
@pytest.mark.parametrize("given, said", [(len, "a function"), (None, "None (NULL in R)"),
                                         ({"wt": 1.0}, "a dict")])
def test_layers_name_what_they_got_instead_of_a_tensor(layer, given, said):
    # e.g. R's `input_layer` (pyhooks' function) or `labels` (base R's) outside a model_fn
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match=r"^(dense|conv2d|flatten)\(\): `inputs` must be a "
                                            r"tensor .*, got " + re.escape(said)):
            layer(given)


@pytest.mark.parametrize("names", [["wt", "cyl"], ["cyl", "wt"]])
def test_feature_matrix_keeps_the_input_column_order(data, names):
    def model_fn(features, labels, mode):
        matrix = tf.convert_to_tensor(features)
        return estimator_spec(mode, predictions={"first": matrix[:, 0], "second": matrix[:, 1]})

    got = estimator(model_fn).predict(input_fn(data, names), as_dict=True)
    np.testing.assert_allclose(got["first"], data[names[0]])
    np.testing.assert_allclose(got["second"], data[names[1]])


def test_tf1_has_what_tensorflow_2_removed_from_tf_compat_v1():
    from pyhooks.estimators import contrib, tf_estimator

    assert tf1.layers is layers and tf1.contrib is contrib and tf1.estimator is tf_estimator
    assert tf1.python.ops.parsing_ops.FixedLenFeature is tf.io.FixedLenFeature
    assert tf1.losses is v1.losses and tf1.train is v1.train
    assert {"layers", "contrib", "estimator", "python"} <= set(dir(tf1))


def test_matrix_input_column_with_column_numeric_shape(tmp_path):
    """A row of 16 numbers per example, read by column_numeric(shape=16) and exported."""
    from pyhooks.estimators import column_numeric as numeric
    from pyhooks.estimators import linear_classifier

    rng = np.random.default_rng(0)
    x = rng.uniform(size=(200, 16))
    data = {"x": x, "y": (x[:, :8].sum(1) > x[:, 8:].sum(1)).astype(np.int64)}
    inp = input_fn(data, "x", "y", batch_size=20)
    model = linear_classifier(feature_columns(numeric("x", shape=16)), seed=0)
    model.train(inp, steps=10)
    assert model.get_variable_value("linear/linear_model/x/weights").shape == (16, 1)
    logits = model.predict(inp, as_dict=True)["logits"]
    w = model.get_variable_value("linear/linear_model/x/weights")
    b = model.get_variable_value("linear/linear_model/bias_weights")
    np.testing.assert_allclose(logits, x @ w + b, rtol=1e-5, atol=1e-5)
    serve = tf.saved_model.load(model.export_savedmodel(str(tmp_path))).signatures[
        "serving_default"]
    np.testing.assert_allclose(serve(x=tf.constant(x, tf.float32))["logits"].numpy(), logits,
                               atol=1e-5)
    with pytest.raises(ValueError, match="holds 16"):
        linear_classifier(feature_columns(numeric("x"))).train(inp, steps=1)


# What a hook's before_run returns, step by step (the runner builds a callable per fetch
# structure): a dict by name, a list, one tensor, a tuple beside an op, and a structure that
# changes between steps.
FETCH_SHAPES = {
    "dict of a name": lambda step, tensor: {"value": "subnormal:0"},
    "list": lambda step, tensor: [tensor],
    "one tensor": lambda step, tensor: tensor,
    "tuple with an op": lambda step, tensor: (tensor.op, tensor),
    "changing": lambda step, tensor: [tensor] if step % 2 else {"value": tensor},
}


def _first_value(results):
    """The fetched value whatever structure held it."""
    if isinstance(results, dict):
        return results["value"]
    if isinstance(results, (list, tuple)):
        return results[-1]
    return results


@pytest.mark.parametrize("shape", sorted(FETCH_SHAPES))
def test_a_subnormal_float_comes_out_as_in_a_plain_tensorflow_session(data, tmp_path, shape):
    """The estimator's steps run in the calling thread: a value below float32's normal
    range is flushed to zero there as TensorFlow's own threads flush it, seen by a hook's
    fetch in train(), in evaluate()'s metric and in predict()."""
    import pyhooks

    def subnormal():
        tiny = v1.get_variable("tiny", initializer=1e-30, trainable=False)
        return tf.identity(tiny * 1e-9, name="subnormal")  # 1e-39

    def model_fn(features, labels, mode):
        predictions = layers.dense(features, 1)[:, 0]
        shown = {"mpg": predictions,
                 "subnormal": tf.zeros_like(predictions, tf.float32) + subnormal()}
        if mode == ModeKeys.PREDICT:
            return estimator_spec(mode, predictions=shown)
        loss = v1.losses.mean_squared_error(labels, predictions)
        if mode == ModeKeys.EVAL:
            # scaled back up inside the step, where a flush shows (the metric's value is
            # read in a later call); evaluate() runs its steps in TensorFlow's pool today,
            # and must agree with it whichever thread runs them
            return estimator_spec(mode, loss=loss, eval_metric_ops={
                "scaled": v1.metrics.mean(shown["subnormal"] * 1e30)})
        train_op = v1.train.GradientDescentOptimizer(0.001).minimize(
            loss, global_step=v1.train.get_global_step())
        return estimator_spec(mode, predictions=shown, loss=loss, train_op=train_op)

    graph = tf.Graph()
    with graph.as_default(), v1.Session() as plain:
        product = subnormal()
        plain.run(v1.global_variables_initializer())
        expected = plain.run(product)
    seen = []

    class Fetcher(pyhooks.SessionRunHook):
        def begin(self):
            self.tensor = v1.get_default_graph().get_tensor_by_name("subnormal:0")
            self.step = 0

        def before_run(self, run_context):
            self.step += 1
            return pyhooks.SessionRunArgs(FETCH_SHAPES[shape](self.step, self.tensor))

        def after_run(self, run_context, run_values):
            seen.append(float(_first_value(run_values.results)))

    model = estimator(model_fn, model_dir=str(tmp_path))
    model.train(input_fn(data, ["drat", "wt"], "mpg", batch_size=8, num_epochs=None),
                steps=4, hooks=[Fetcher()])
    predicted = model.predict(input_fn(data, ["drat", "wt"], "mpg", batch_size=8,
                                       shuffle=False), as_dict=True)["subnormal"]
    metric = model.evaluate(input_fn(data, ["drat", "wt"], "mpg", batch_size=8))["scaled"]
    assert expected == 0.0
    assert metric == expected
    assert seen == [expected] * 4
    assert np.all(predicted == expected)
