"""export_savedmodel(), checkpoint_path and train_and_evaluate(), through real TensorFlow."""

import numpy as np
import pytest

from pyhooks.estimators import (
    column_categorical_with_vocabulary_list,
    column_indicator,
    column_numeric,
    dnn_classifier,
    estimator,
    estimator_spec,
    eval_spec,
    feature_columns,
    input_fn,
    layers,
    linear_regressor,
    load_mtcars,
    train_and_evaluate,
    train_spec,
)

tf = pytest.importorskip("tensorflow")
v1 = tf.compat.v1


@pytest.fixture(scope="module")
def data():
    mtcars = load_mtcars()
    return dict(mtcars, g=np.array(["abc"[int(x) % 3] for x in mtcars["gear"]]))


def test_export_savedmodel_serves_the_predictions(data, tmp_path):
    columns = feature_columns(column_numeric("drat"), column_indicator(
        column_categorical_with_vocabulary_list("cyl", [4, 6, 8])))
    model = dnn_classifier([3], columns, n_classes=3, label_vocabulary=["a", "b", "c"], seed=1)
    model.train(input_fn(data, ["drat", "cyl"], "g", batch_size=8), steps=3)
    path = model.export_savedmodel(str(tmp_path))
    serve = tf.saved_model.load(path).signatures["serving_default"]
    out = serve(drat=tf.constant(data["drat"], tf.float32),
                cyl=tf.constant(data["cyl"].astype(np.int64)))
    expected = model.predict(input_fn(data, ["drat", "cyl"]), as_dict=True)
    np.testing.assert_allclose(out["probabilities"].numpy(), expected["probabilities"], rtol=1e-6)
    assert [c.decode() for c in out["classes"].numpy().ravel()] == list(
        expected["classes"].ravel())


def test_export_savedmodel_of_a_custom_estimator(data, tmp_path):
    def model_fn(features, labels, mode):
        out = tf.reshape(layers.dense(features, 1), [-1])
        if labels is None:  # the SavedModel has no labels
            return estimator_spec(mode, predictions={"mpg": out})
        loss = v1.losses.mean_squared_error(labels, out)
        train_op = v1.train.GradientDescentOptimizer(0.001).minimize(
            loss, global_step=v1.train.get_global_step())
        return estimator_spec(mode, predictions={"mpg": out}, loss=loss, train_op=train_op)

    model = estimator(model_fn)
    with pytest.raises(ValueError, match="train the model"):
        model.export_savedmodel(str(tmp_path))
    model.train(input_fn(data, ["drat", "wt"], "mpg"), steps=2)
    serve = tf.saved_model.load(model.export_savedmodel(str(tmp_path))).signatures[
        "serving_default"]
    got = serve(drat=tf.constant(data["drat"]), wt=tf.constant(data["wt"]))["mpg"].numpy()
    expected = model.predict(input_fn(data, ["drat", "wt"]), as_dict=True)["mpg"]
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_checkpoint_path_and_train_and_evaluate(data, tmp_path):
    model = linear_regressor(feature_columns(column_numeric("drat")), model_dir=str(tmp_path))
    metrics = train_and_evaluate(
        model, train_spec(input_fn(data, ["drat"], "mpg", batch_size=8, num_epochs=None),
                          max_steps=2),
        eval_spec(input_fn(data, ["drat"], "mpg"), steps=None, name="first"))
    assert metrics["global_step"] == 2
    first = model.latest_checkpoint()
    model.train(input_fn(data, ["drat"], "mpg", batch_size=8), steps=3)
    inp = input_fn(data, ["drat"], "mpg")
    assert model.evaluate(inp, checkpoint_path=first)["global_step"] == 2
    assert model.evaluate(inp)["global_step"] == 5
    old = model.predict(inp, as_dict=True, checkpoint_path=first)["predictions"]
    assert not np.allclose(old, model.predict(inp, as_dict=True)["predictions"])
    with pytest.raises(ValueError, match="not a checkpoint"):
        model.predict(inp, checkpoint_path=str(tmp_path / "nothing"))
    with pytest.raises(TypeError, match="train_spec"):
        train_and_evaluate(model, {}, eval_spec(inp))
