"""numpy_input_fn() (TensorFlow 1's tf.estimator.inputs.numpy_input_fn) on pyhooks' input pipeline."""

import numpy as np
import pytest

import pyhooks
from pyhooks.estimators import (
    column_numeric,
    estimator,
    estimator_spec,
    feature_columns,
    input_fn,
    layers,
    linear_regressor,
    load_mtcars,
    numpy_input_fn,
)

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
