"""numpy_input_fn() and pandas_input_fn(): TensorFlow 1's tf.estimator.inputs on pyhooks."""

import numpy as np
import pytest

import pyhooks
from pyhooks.estimators import (
    column_bucketized,
    column_categorical_with_hash_bucket,
    column_categorical_with_identity,
    column_indicator,
    column_numeric,
    dnn_classifier,
    estimator,
    estimator_spec,
    feature_columns,
    input_fn,
    input_layer,
    layers,
    linear_regressor,
    load_mtcars,
    numpy_input_fn,
    pandas_input_fn,
    run_config,
)
from pyhooks.estimators import tf1

tf = pytest.importorskip("tensorflow")
v1 = tf.compat.v1


@pytest.fixture(scope="module")
def mtcars():
    return load_mtcars()


def test_numpy_input_fn_trains_as_the_same_input_fn(mtcars, tmp_path):
    x = {"drat": mtcars["drat"], "wt": mtcars["wt"]}
    columns = feature_columns(column_numeric("drat"), column_numeric("wt"))
    results = []
    for name, make in (("numpy", lambda: numpy_input_fn(x, mtcars["mpg"], batch_size=8,
                                                         shuffle=False)),
                       ("input", lambda: input_fn(dict(x, mpg=mtcars["mpg"]), ["drat", "wt"],
                                                  "mpg", batch_size=8, shuffle=False))):
        model = linear_regressor(columns, model_dir=str(tmp_path / name), seed=1)
        history = model.train(make(), steps=3)
        results.append((history.to_dict()["total_losses"],
                        model.predict(make(), as_dict=True)["predictions"]))
    assert results[0][0] == results[1][0]
    np.testing.assert_array_equal(results[0][1], results[1][1])
    inp = numpy_input_fn(x, mtcars["mpg"], shuffle=True)
    assert (inp.batch_size, inp.num_epochs, inp.queue_capacity, inp.shuffle) == (128, 1, 1000, True)
    assert inp.response == ["y"] and inp.features == ["drat", "wt"]
    assert pyhooks.numpy_input_fn is numpy_input_fn


def test_numpy_input_fn_epochs_and_prediction_without_y(mtcars):
    x = {"drat": mtcars["drat"]}
    model = linear_regressor(feature_columns(column_numeric("drat")))
    # one epoch of 32 rows in batches of 5: 7 steps, then the input ends
    history = model.train(numpy_input_fn(x, mtcars["mpg"], batch_size=5, shuffle=True), steps=100)
    assert history.to_dict()["steps"][-1] == 7
    # repeating forever: the steps asked for
    forever = numpy_input_fn(x, mtcars["mpg"], batch_size=5, num_epochs=None, shuffle=True)
    assert model.train(forever, steps=10).to_dict()["steps"][-1] == 17
    assert len(model.predict(numpy_input_fn(x, shuffle=False))) == 32


def test_numpy_input_fn_matrix_features_and_labels_for_a_model_fn():
    rng = np.random.default_rng(3)
    images = rng.normal(size=(40, 4)).astype(np.float32)
    targets = np.stack([images.sum(1), images[:, 0]], axis=1)  # two outputs

    def model_fn(features, labels, mode):
        out = layers.dense(tf.cast(features, tf.float32), 2)
        if labels is None:
            return estimator_spec(mode, predictions={"out": out})
        loss = v1.losses.mean_squared_error(tf.cast(labels, tf.float32), out)
        train_op = v1.train.GradientDescentOptimizer(0.05).minimize(
            loss, global_step=v1.train.get_global_step())
        return estimator_spec(mode, predictions={"out": out}, loss=loss, train_op=train_op)

    model = estimator(model_fn)
    inp = numpy_input_fn({"pixels": images}, targets, batch_size=10, num_epochs=None,
                         shuffle=True)
    assert inp.response == ["y_0", "y_1"]
    model.train(inp, steps=60)
    out = model.predict(numpy_input_fn({"pixels": images}, shuffle=False), as_dict=True)["out"]
    assert out.shape == (40, 2)
    assert np.mean((out - targets) ** 2) < np.mean(targets ** 2) / 2


@pytest.mark.parametrize("rows", [200, 3000])  # read through tf.data; held in the session
def test_a_dict_y_reaches_the_model_fn_as_a_dict_of_its_own_dtypes(rows):
    """As TensorFlow's numpy_input_fn: labels["kind"] int32 and labels["size"] float64 (a
    matrix of both would make the class ids floats), each row's labels with its features."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(rows, 3)).astype(np.float32)
    y = {"kind": (x[:, 0] > 0).astype(np.int32), "size": x.sum(1).astype(np.float64)}
    seen = []

    def model_fn(features, labels, mode):
        seen.append(labels if labels is None else
                    {key: tensor.dtype.name for key, tensor in labels.items()})
        hidden = layers.dense(features["x"], 8, activation=tf.nn.relu)
        logits, size = layers.dense(hidden, 2), tf.squeeze(layers.dense(hidden, 1), 1)
        kind = tf.argmax(logits, 1, output_type=tf.int32)
        if mode == "infer":
            return estimator_spec(mode, predictions={"kind": kind, "size": size})
        loss = (v1.losses.sparse_softmax_cross_entropy(labels["kind"], logits)
                + v1.losses.mean_squared_error(tf.cast(labels["size"], tf.float32), size))
        train_op = v1.train.AdamOptimizer(0.05).minimize(loss,
                                                         global_step=v1.train.get_global_step())
        return estimator_spec(mode, loss=loss, train_op=train_op, eval_metric_ops={
            "accuracy": v1.metrics.accuracy(labels["kind"], kind),
            "size_mse": v1.metrics.mean_squared_error(tf.cast(labels["size"], tf.float32),
                                                      size)})

    model = estimator(model_fn, config=run_config(tf_random_seed=1))
    model.train(numpy_input_fn({"x": x}, y, batch_size=32, num_epochs=None, shuffle=True),
                steps=150, hooks=[])
    metrics = model.evaluate(numpy_input_fn({"x": x}, y, shuffle=False))
    predicted = model.predict(numpy_input_fn({"x": x}, shuffle=False), as_dict=True)
    assert seen == [{"kind": "int32", "size": "float64"}] * 2 + [None]
    assert metrics["accuracy"] == pytest.approx(np.mean(predicted["kind"] == y["kind"]))
    assert metrics["accuracy"] > 0.9
    assert metrics["size_mse"] == pytest.approx(np.mean((predicted["size"] - y["size"]) ** 2),
                                                rel=1e-4)


def test_a_dict_y_of_one_key_is_still_a_dict():
    x = np.arange(8, dtype=np.float32)
    got = []

    def model_fn(features, labels, mode):
        got.append(sorted(labels))
        out = layers.dense(features["x"][:, None], 1)[:, 0]
        loss = v1.losses.mean_squared_error(labels["y"], out)
        return estimator_spec(mode, loss=loss, train_op=v1.assign_add(
            v1.train.get_global_step(), 1))

    estimator(model_fn).train(numpy_input_fn({"x": x}, {"y": 2 * x}, shuffle=False), hooks=[])
    assert got == [["y"]]


def test_one_column_matrices_reach_a_model_fn_as_tensorflow_gave_them():
    """x and y of shape [n, 1] are [batch, 1] tensors, so that mean_squared_error(labels,
    dense(x, 1)) matches shapes as in TensorFlow 1 (a [batch] label would not)."""
    x = np.linspace(0, 1, 64, dtype=np.float32)[:, None]
    shapes = []

    def model_fn(features, labels, mode):
        shapes.append((features["x"].shape.as_list(), labels.shape.as_list()))
        out = layers.dense(features["x"], 1)
        loss = v1.losses.mean_squared_error(labels, out)
        train_op = v1.train.GradientDescentOptimizer(0.5).minimize(
            loss, global_step=v1.train.get_global_step())
        return estimator_spec(mode, loss=loss, train_op=train_op)

    model = estimator(model_fn)
    model.train(numpy_input_fn({"x": x}, 3 * x + 1, batch_size=16, num_epochs=None,
                               shuffle=True), steps=300, hooks=[])
    assert shapes == [([None, 1], [None, 1])]
    assert model.evaluate(numpy_input_fn({"x": x}, 3 * x + 1, shuffle=False))["loss"] < 1e-3


def test_input_layer_reads_one_column_matrices_as_one_value_per_example():
    """A model_fn's [batch, 1] features through input_layer(): the values of [batch] ones."""
    x = np.array([0.2, 0.7, 0.9], dtype=np.float32)
    c = np.array([2, 0, 1])
    fcs = feature_columns(column_numeric("x"), column_bucketized(column_numeric("x"), [0.5]),
                          column_indicator(column_categorical_with_identity("c", 3)),
                          column_indicator(column_categorical_with_hash_bucket("h", 5)))
    values = []
    for shape in ((-1,), (-1, 1)):
        with tf.Graph().as_default():
            layer = input_layer({"x": tf.constant(x.reshape(shape)),
                                 "c": tf.constant(c.reshape(shape)),
                                 "h": tf.constant(c.reshape(shape))}, fcs)
            with v1.Session() as session:
                session.run(v1.tables_initializer())
                values.append(session.run(layer))
    assert values[0].shape == (3, 1 + 2 + 3 + 5)
    np.testing.assert_array_equal(values[0], values[1])


def test_canned_estimators_read_one_column_matrices_as_one_value_per_example():
    x = np.linspace(0, 1, 40, dtype=np.float32)
    y = (x > 0.5).astype(np.int64)
    histories, predicted = [], []
    for shape in ((-1,), (-1, 1)):  # vectors, then one-column matrices: the same model
        model = dnn_classifier(hidden_units=[3], n_classes=2, feature_columns=feature_columns(
            column_numeric("x")), config=run_config(tf_random_seed=3))
        inp = numpy_input_fn({"x": x.reshape(shape)}, y.reshape(shape), batch_size=8,
                             shuffle=False)
        histories.append(model.train(inp, steps=5, hooks=[]).to_dict()["total_losses"])
        predicted.append(model.predict(numpy_input_fn({"x": x[:, None]}, shuffle=False),
                                       as_dict=True)["probabilities"])
        # trained on [n] or [n, 1]: either is one value per example to its data contract
        assert model.evaluate(numpy_input_fn({"x": x}, y, shuffle=False))["global_step"] == 5
    assert histories[0] == histories[1]
    np.testing.assert_array_equal(predicted[0], predicted[1])


def test_numpy_input_fn_refuses_bad_input(mtcars):
    x = {"drat": mtcars["drat"]}
    with pytest.raises(TypeError, match="`shuffle` must be True or False, got None"):
        numpy_input_fn(x, mtcars["mpg"])
    with pytest.raises(TypeError, match=r"`x` must be a dict of arrays.*shape \(32,\)"):
        numpy_input_fn(mtcars["drat"], mtcars["mpg"], shuffle=False)
    with pytest.raises(ValueError, match="same number of rows.*'y': 31"):
        numpy_input_fn(x, mtcars["mpg"][:31], shuffle=False)
    with pytest.raises(ValueError, match="both have the key"):
        numpy_input_fn(x, {"drat": mtcars["mpg"]}, shuffle=False)
    with pytest.raises(ValueError, match="batch_size"):
        numpy_input_fn(x, mtcars["mpg"], batch_size=0, shuffle=False)


# --------------------------------------------------------------------------- pandas_input_fn
pd = pytest.importorskip("pandas")


def test_pandas_input_fn_trains_as_numpy_input_fn_of_the_same_columns(mtcars):
    frame = pd.DataFrame({"drat": mtcars["drat"], "wt": mtcars["wt"]})
    predicted = []
    for inp in (pandas_input_fn(frame, pd.Series(mtcars["mpg"]), batch_size=8, shuffle=False),
                numpy_input_fn({"drat": mtcars["drat"], "wt": mtcars["wt"]}, mtcars["mpg"],
                               batch_size=8, shuffle=False)):
        model = linear_regressor(feature_columns(column_numeric("drat"), column_numeric("wt")),
                                 config=run_config(tf_random_seed=1))
        assert model.train(inp, hooks=[]).to_dict()["steps"][-1] == 4
        predicted.append(model.predict(pandas_input_fn(frame, shuffle=False),
                                       as_dict=True)["predictions"])
    np.testing.assert_array_equal(predicted[0], predicted[1])
    assert tf1.estimator.inputs.pandas_input_fn is pandas_input_fn


def test_pandas_input_fn_gives_a_model_fn_a_series_as_a_tensor_and_a_data_frame_as_a_dict():
    frame = pd.DataFrame({"x": np.arange(6, dtype=np.float32)})
    seen = []

    def model_fn(features, labels, mode):
        seen.append(sorted(labels) if isinstance(labels, dict) else labels.shape.as_list())
        return estimator_spec(mode, loss=tf.reduce_mean(features["x"]),
                              train_op=v1.assign_add(v1.train.get_global_step(), 1))

    model = estimator(model_fn)
    model.train(pandas_input_fn(frame, pd.Series(np.arange(6)), shuffle=False), hooks=[])
    assert seen == [[None]]
    numbered = pd.DataFrame(np.ones((6, 2)))  # columns 0 and 1: named "0" and "1", as input_fn()
    assert pandas_input_fn(numbered, shuffle=False).features == ["0", "1"]
    model = estimator(model_fn)
    model.train(pandas_input_fn(frame, pd.DataFrame({"a": np.arange(6), "b": np.ones(6)}),
                                shuffle=False), hooks=[])
    assert seen[1:] == [["a", "b"]]


def test_pandas_input_fn_refuses_what_tensorflow_refused():
    frame = pd.DataFrame({"x": [1.0, 2.0], "target": [0, 1]})
    with pytest.raises(TypeError, match="`shuffle` must be True or False, got None"):
        pandas_input_fn(frame)
    with pytest.raises(ValueError, match=r"Index for x and y are mismatched.*reset_index"):
        pandas_input_fn(frame, pd.Series([1, 2], index=[5, 6]), shuffle=False)
    with pytest.raises(ValueError, match=r"`x` already has the column\(s\) \['target'\] of `y`: "
                                         "give another `target_column`"):
        pandas_input_fn(frame, pd.Series([1, 2]), shuffle=False)
    with pytest.raises(TypeError, match="`x` must be a pandas DataFrame, got dict"):
        pandas_input_fn({"x": [1.0]}, shuffle=False)
    with pytest.raises(TypeError, match="`y` must be a pandas Series or DataFrame, got list"):
        pandas_input_fn(frame, [1, 2], shuffle=False)
    with pytest.raises(TypeError, match="`target_column` must be a non-empty string, got 0"):
        pandas_input_fn(frame, pd.Series([1, 2]), shuffle=False, target_column=0)
    twice = pd.DataFrame([[1.0, 2.0]], columns=["a", "a"])  # never read as one 2-wide column
    with pytest.raises(ValueError, match="`x` has more than one column named 'a'"):
        pandas_input_fn(twice, shuffle=False)
    with pytest.raises(ValueError, match="`y` has more than one column named 'a'"):
        pandas_input_fn(frame[["x"]].head(1), twice, shuffle=False)
