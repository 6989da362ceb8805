"""Feature columns: construction checks (no TensorFlow) and what they compute in a graph."""

import io
import re

import numpy as np
import pytest

import pyhooks
from pyhooks.estimators import (
    column_bucketized,
    column_categorical_with_hash_bucket,
    column_categorical_with_identity,
    column_categorical_with_vocabulary_list,
    column_crossed,
    column_embedding,
    column_indicator,
    column_numeric,
    feature_columns,
    input_fn,
)
from pyhooks.estimators.feature_columns import FLOAT, INT, STR, STR_OR_INT


# --------------------------------------------------------------------------- construction
def test_feature_columns_groups_and_flattens():
    a, b = column_numeric("a"), column_numeric("b")
    c = column_indicator(column_categorical_with_identity("c", 3))
    assert feature_columns(a, [b, c]) == [a, b, c]
    assert c.name == "c_indicator" and c.dimension == 3
    assert column_bucketized(a, [0, 1]).name == "a_bucketized"
    assert column_crossed(["x", column_categorical_with_identity("y", 2)], 10).name == "x_X_y"


def test_numeric_shape_from_a_tensorshape():
    import tensorflow as tf

    assert column_numeric("x", shape=tf.TensorShape([784])).shape == (784,)
    assert column_numeric("x", shape=tf.TensorShape([28, 28])).dimension == 784
    with pytest.raises(ValueError, match="shape"):
        column_numeric("x", shape=tf.TensorShape([None, 784]))


def test_raw_inputs():
    assert column_numeric("a").raw_inputs() == [("a", FLOAT)]
    assert column_categorical_with_vocabulary_list("s", ["x", "y"]).raw_inputs() == [("s", STR)]
    assert column_categorical_with_vocabulary_list("n", [4, 6.0]).raw_inputs() == [("n", INT)]
    assert column_categorical_with_hash_bucket("h", 5).raw_inputs() == [("h", STR_OR_INT)]
    crossed = column_crossed(["s", column_bucketized(column_numeric("a"), [1])], 7)
    assert crossed.raw_inputs() == [("s", STR_OR_INT), ("a", FLOAT)]


@pytest.mark.parametrize("make, error, words", [
    (lambda: feature_columns(), ValueError, ["at least one"]),
    (lambda: feature_columns("drat"), TypeError, ["'drat'", "str"]),
    (lambda: feature_columns(column_numeric("a"), column_numeric("a", normalizer_fn=abs)),
     ValueError, ["Duplicate", "'a'"]),
    (lambda: column_numeric(""), TypeError, ["key"]),
    (lambda: column_numeric(3), TypeError, ["key", "3"]),
    (lambda: column_numeric("a", shape=0), ValueError, ["shape", "0"]),
    (lambda: column_bucketized(column_numeric("a", shape=2), [1]), ValueError, ["shape", "2"]),
    (lambda: column_numeric("a", normalizer_fn=3), TypeError, ["normalizer_fn"]),
    (lambda: column_categorical_with_vocabulary_list("a", []), ValueError, ["empty"]),
    (lambda: column_categorical_with_vocabulary_list("a", ["x", "x"]), ValueError,
     ["duplicates", "'x'"]),
    (lambda: column_categorical_with_vocabulary_list("a", ["x", 1]), TypeError,
     ["vocabulary_list"]),
    (lambda: column_categorical_with_vocabulary_list("a", ["x"], default_value=0,
                                                     num_oov_buckets=2), ValueError,
     ["both"]),
    (lambda: column_categorical_with_identity("a", 0), ValueError, ["num_buckets", "0"]),
    (lambda: column_categorical_with_identity("a", 3, default_value=3), ValueError,
     ["default_value"]),
    (lambda: column_categorical_with_hash_bucket("a", 1), ValueError, ["hash_bucket_size"]),
    (lambda: column_indicator(column_numeric("a")), TypeError, ["categorical_column"]),
    (lambda: column_embedding(column_numeric("a"), 2), TypeError, ["categorical_column"]),
    (lambda: column_embedding(column_categorical_with_identity("a", 3), 0), ValueError,
     ["dimension"]),
    (lambda: column_embedding(column_categorical_with_identity("a", 3), 2, combiner="max"),
     ValueError, ["combiner"]),
    (lambda: column_bucketized("a", [1]), TypeError, ["source_column"]),
    (lambda: column_bucketized(column_numeric("a"), [2, 1]), ValueError, ["increasing"]),
    (lambda: column_bucketized(column_numeric("a"), []), ValueError, ["boundaries"]),
    (lambda: column_bucketized(column_numeric("a"), ["x"]), TypeError, ["boundaries"]),
    (lambda: column_crossed(["a"], 10), ValueError, ["at least two"]),
    (lambda: column_crossed(["a", column_numeric("b")], 10), TypeError, ["keys"]),
    (lambda: column_crossed(["a", "b"], 0), ValueError, ["hash_bucket_size"]),
])
def test_bad_column_arguments(make, error, words):
    with pytest.raises(error) as raised:
        make()
    for word in words:
        assert word in str(raised.value)


# --------------------------------------------------------------------------- in a graph
tf = pytest.importorskip("tensorflow")


def evaluate_column(column, feeds, dense=False):
    """Builds ``column`` on constant raw inputs and returns its ids (or dense values)."""
    from pyhooks.estimators.graph import FeatureBuilder as _Builder

    with tf.Graph().as_default():
        raw = {}
        for key, kind in column.raw_inputs():
            values = feeds[key]
            dtype = {FLOAT: tf.float32, INT: tf.int64, STR: tf.string, STR_OR_INT: tf.string}[kind]
            if kind == STR_OR_INT:
                values = [str(v) for v in values]
            raw[(key, kind)] = tf.constant(values, dtype=dtype)
        builder = _Builder(tf, raw)
        out = builder.dense(column) if dense else builder.ids(column)
        with tf.compat.v1.Session() as sess:
            sess.run([tf.compat.v1.global_variables_initializer(),
                      tf.compat.v1.tables_initializer()])
            return sess.run(out)


def test_vocabulary_list_ids():
    column = column_categorical_with_vocabulary_list("s", ["a", "b", "c"])
    assert evaluate_column(column, {"s": ["c", "a", "zzz"]}).tolist() == [2, 0, -1]
    oov = column_categorical_with_vocabulary_list("s", ["a", "b"], num_oov_buckets=3)
    ids = evaluate_column(oov, {"s": ["b", "x", "y", "x"]}).tolist()
    assert ids[0] == 1 and all(2 <= i < 5 for i in ids[1:]) and ids[1] == ids[3]
    numbers = column_categorical_with_vocabulary_list("n", [4, 6, 8], default_value=0)
    assert evaluate_column(numbers, {"n": [8, 5, 4]}).tolist() == [2, 0, 0]


def test_identity_hash_bucketized_crossed_ids():
    identity = column_categorical_with_identity("i", 4, default_value=3)
    assert evaluate_column(identity, {"i": [0, 2, 9, -1]}).tolist() == [0, 2, 3, 3]
    hashed = column_categorical_with_hash_bucket("h", 5)
    ids = evaluate_column(hashed, {"h": ["x", "y", "x", "z"]}).tolist()
    assert all(0 <= i < 5 for i in ids) and ids[0] == ids[2]
    bucketized = column_bucketized(column_numeric("a"), [0, 10])
    assert evaluate_column(bucketized, {"a": [-5.0, 0.0, 9.9, 10.0, 50.0]}).tolist() == [
        0, 1, 1, 2, 2]
    onehot = evaluate_column(bucketized, {"a": [-5.0, 10.0]}, dense=True)
    assert onehot.tolist() == [[1, 0, 0], [0, 0, 1]]
    crossed = column_crossed(["s", bucketized], 100)
    ids = evaluate_column(crossed, {"s": ["a", "a", "b"], "a": [1.0, 1.0, 1.0]}).tolist()
    assert ids[0] == ids[1] and all(0 <= i < 100 for i in ids)


def test_indicator_embedding_numeric_dense():
    vocab = column_categorical_with_vocabulary_list("s", ["a", "b", "c"])
    assert evaluate_column(column_indicator(vocab), {"s": ["b", "q"]}, dense=True).tolist() == [
        [0, 1, 0], [0, 0, 0]]
    embedded = evaluate_column(column_embedding(vocab, 4), {"s": ["a", "a", "q"]}, dense=True)
    assert embedded.shape == (3, 4)
    assert np.allclose(embedded[0], embedded[1]) and np.all(embedded[2] == 0)
    numeric = column_numeric("a", normalizer_fn=lambda x: (x - 1.0) * 2.0)
    assert evaluate_column(numeric, {"a": [1.0, 3.0]}, dense=True).tolist() == [[0.0], [4.0]]


# --------------------------------------------------------------------------- in estimators
@pytest.fixture(scope="module")
def colours():
    rng = np.random.default_rng(1)
    colour = rng.choice(["red", "green", "blue"], size=120)
    size = rng.integers(0, 3, size=120)
    y = (colour == "red").astype(int)
    return {"colour": colour, "size": size, "amount": rng.normal(size=120), "y": y}


def _bar():
    return pyhooks.ProgressBarHook(writer=io.StringIO(), mode="plain")


def test_every_column_kind_trains_in_a_linear_classifier(colours):
    from pyhooks.estimators import linear_classifier

    colour = column_categorical_with_vocabulary_list("colour", ["red", "green", "blue"])
    size = column_categorical_with_identity("size", 3)
    fcs = feature_columns(
        colour, size, column_numeric("amount"),
        column_crossed(["colour", size], 20),
        column_bucketized(column_numeric("amount"), [-1, 0, 1]),
        column_indicator(column_categorical_with_hash_bucket("colour", 7)),
        column_embedding(column_categorical_with_vocabulary_list("colour", ["red", "green"],
                                                                 num_oov_buckets=1), 2))
    model = linear_classifier(fcs)
    features = ["colour", "size", "amount"]
    model.train(input_fn(colours, features, "y", batch_size=20, num_epochs=None), steps=60,
                hooks=[_bar()])
    everything = input_fn(colours, features, "y", batch_size=120)
    assert model.evaluate(everything)["accuracy"] > 0.95
    names = model.get_variable_names()
    assert "linear/linear_model/colour/weights" in names
    assert "linear/linear_model/colour_X_size/weights" in names


def test_dnn_takes_dense_columns_only(colours):
    from pyhooks.estimators import dnn_classifier

    colour = column_categorical_with_vocabulary_list("colour", ["red", "green", "blue"])
    with pytest.raises(ValueError, match="column_indicator"):
        dnn_classifier([4], [colour])
    model = dnn_classifier([6], feature_columns(column_indicator(colour),
                                                column_embedding(colour, 2),
                                                column_numeric("amount")))
    model.train(input_fn(colours, ["colour", "amount"], "y", batch_size=20, num_epochs=None),
                steps=80, hooks=[_bar()])
    assert model.evaluate(input_fn(colours, ["colour", "amount"], "y",
                                   batch_size=120))["accuracy"] > 0.95


def test_column_data_checks_before_training(colours):
    from pyhooks.estimators import linear_regressor

    model = linear_regressor([column_categorical_with_identity("size", 2)])
    with pytest.raises(ValueError) as raised:
        model.train(input_fn(colours, ["size"], "amount"), steps=1)
    assert "'size'" in str(raised.value) and "[0, 2)" in str(raised.value)
    model = linear_regressor([column_categorical_with_vocabulary_list("size", ["a", "b"])])
    with pytest.raises(TypeError, match="must hold strings .* Give the vocabulary as numbers, "
                                        "or make the column text"):
        model.train(input_fn(colours, ["size"], "amount"), steps=1)
    model = linear_regressor([column_categorical_with_identity("colour", 2)])
    with pytest.raises(TypeError, match="whole numbers .* For text \\(or a factor\\), use "
                                        "column_categorical_with_vocabulary_list\\(\\) with its "
                                        "values as strings"):
        model.train(input_fn(colours, ["colour"], "amount"), steps=1)


def _column_model(columns, custom, model_dir):
    """A linear regressor of ``columns``, canned or as a ``model_fn`` over ``input_layer()``."""
    from pyhooks.estimators import (estimator, estimator_spec, input_layer, layers,
                                    linear_regressor, run_config)

    config = run_config(tf_random_seed=3)
    if not custom:
        return linear_regressor(columns, model_dir=model_dir, config=config)

    def model_fn(features, labels, mode):
        out = tf.reshape(layers.dense(input_layer(features, columns), 1), [-1])
        if mode == "infer":
            return estimator_spec(mode, predictions={"predictions": out})
        loss = tf.compat.v1.losses.mean_squared_error(labels, out)
        step = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step())
        return estimator_spec(mode, loss=loss, train_op=step)

    return estimator(model_fn, model_dir=model_dir, config=config)


@pytest.mark.parametrize("make", [
    lambda: column_categorical_with_hash_bucket("k", 7),
    lambda: column_crossed(["k", "s"], 11),
    lambda: column_categorical_with_identity("k", 5),
], ids=["hash_bucket", "crossed", "identity"])
@pytest.mark.parametrize("custom", [False, True], ids=["canned", "model_fn"])
def test_categorical_columns_of_numbers_take_whole_floats_and_refuse_fractions(make, custom,
                                                                               tmp_path):
    # R's numbers are doubles: whole ones are ids or hashed as their integers; a fraction
    # is refused, never rounded (TensorFlow takes no floats in these columns at all)
    columns = [column_indicator(make())]
    k = np.arange(40) % 5
    data = {"k": k, "s": np.where(k % 2 == 0, "a", "b"), "y": k * 1.5}
    model = _column_model(columns, custom, str(tmp_path))
    model.train(input_fn(data, ["k", "s"], "y", batch_size=10, num_epochs=None), steps=40,
                hooks=[_bar()])
    as_ints = model.predict(input_fn(data, ["k", "s"], shuffle=False), as_dict=True)
    as_ints = np.ravel(as_ints["predictions"])
    as_floats = model.predict(input_fn(dict(data, k=k.astype(float)), ["k", "s"], shuffle=False),
                              as_dict=True)
    as_floats = np.ravel(as_floats["predictions"])
    np.testing.assert_array_equal(as_floats, as_ints)
    assert len(set(np.round(as_ints, 4))) > 1  # the ids tell the rows apart
    fractions = input_fn(dict(data, k=np.where(k == 3, 3.5, k).astype(float)), ["k", "s"], "y",
                         batch_size=10)
    with pytest.raises(TypeError, match="'k' holds 3.5 .* trained on whole numbers"):
        model.train(fractions, steps=4, hooks=[_bar()])  # the recorded schema
    fresh = _column_model(columns, custom, str(tmp_path / "fresh"))
    with pytest.raises(Exception) as raised:
        fresh.train(fractions, steps=4, hooks=[_bar()])  # the column itself
    assert re.search(r"['`]k['`] must hold (strings or )?whole numbers .*3\.5", str(raised.value),
                     flags=re.S), str(raised.value)
