"""A linear model's dense weights: one matrix in the graph, one variable per column on disk.

The graph keeps the dense columns' weights in one matrix (one matmul, one
optimizer update a step); checkpoints hold each column's weights, and their
optimizer slots, under tf.estimator's names, and a checkpoint of that layout
(one variable per column, as tf.estimator and earlier pyhooks wrote) restores.
"""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

import pyhooks  # noqa: E402
from pyhooks.estimators import (  # noqa: E402
    column_categorical_with_identity, column_numeric, feature_columns, input_fn,
    linear_regressor)


def silent():
    return pyhooks.ProgressBarHook(writer=lambda text: None)


def data(rows=64, seed=0):
    rng = np.random.default_rng(seed)
    return {"a": rng.normal(size=rows).astype(np.float32),
            "b": rng.normal(size=(rows, 2)).astype(np.float32),
            "c": rng.integers(0, 3, rows),
            "y": rng.normal(size=rows).astype(np.float32)}


def columns():
    return feature_columns(column_numeric("a"), column_numeric("b", shape=2),
                           column_categorical_with_identity("c", num_buckets=3))


def model(model_dir, **kwargs):
    return linear_regressor(columns(), model_dir=str(model_dir), **kwargs)


def inputs(values, **kwargs):
    return input_fn(values, ["a", "b", "c"], "y", batch_size=16, shuffle=False, **kwargs)


def by_hand(est, values):
    """The model's predictions from its checkpoint's per-column weights, in NumPy."""
    w = {name: est.get_variable_value(f"linear/linear_model/{name}/weights")
         for name in ("a", "b", "c")}
    bias = est.get_variable_value("linear/linear_model/bias_weights")
    return (values["a"][:, None] @ w["a"] + values["b"] @ w["b"] + w["c"][values["c"]]
            + bias)[:, 0]


def predicted(est, values):
    return np.array([p["predictions"][0] for p in est.predict(
        input_fn({k: v for k, v in values.items() if k != "y"}, ["a", "b", "c"],
                 batch_size=16, shuffle=False))])


@pytest.mark.parametrize("optimizer", ["Ftrl", "Adam"])
def test_checkpoints_hold_one_variable_per_column_with_its_slots(tmp_path, optimizer):
    est = model(tmp_path, optimizer=optimizer)
    est.train(inputs(data(), num_epochs=None), steps=5, hooks=[silent()])
    shapes = dict(tf.train.list_variables(est.latest_checkpoint()))
    assert shapes["linear/linear_model/a/weights"] == [1, 1]
    assert shapes["linear/linear_model/b/weights"] == [2, 1]
    assert shapes["linear/linear_model/c/weights"] == [3, 1]
    slots = {"Ftrl": ["Ftrl", "Ftrl_1"], "Adam": ["Adam", "Adam_1"]}[optimizer]
    for name in ("a", "b"):
        for slot in slots:
            assert shapes[f"linear/linear_model/{name}/weights/{slot}"] == shapes[
                f"linear/linear_model/{name}/weights"]
    assert not [n for n in shapes if n.startswith("linear/dense_weights")]
    assert sorted(est.get_variable_names()) == sorted(shapes)
    values = data(seed=1)
    np.testing.assert_allclose(predicted(est, values), by_hand(est, values), rtol=1e-5,
                               atol=1e-6)


def test_a_resumed_call_continues_with_the_optimizer_state_of_each_column(tmp_path):
    """5 + 5 steps in two estimators (the second restores weights and Adam's slots) train
    as 10 steps in one: the same batches, the same weights."""
    values = data()
    first = model(tmp_path / "two", optimizer="Adam")
    first.train(inputs(values, num_epochs=None), steps=5, hooks=[silent()])
    second = model(tmp_path / "two", optimizer="Adam")
    # the next 5 batches of the same stream: 5 * 16 rows on from the start
    later = {k: np.roll(v, -80 % len(v), axis=0) for k, v in values.items()}
    second.train(inputs(later, num_epochs=None), steps=5, hooks=[silent()])
    straight = model(tmp_path / "one", optimizer="Adam")
    straight.train(inputs(values, num_epochs=None), steps=10, hooks=[silent()])
    for name in ("a", "b", "c"):
        np.testing.assert_allclose(
            second.get_variable_value(f"linear/linear_model/{name}/weights"),
            straight.get_variable_value(f"linear/linear_model/{name}/weights"), rtol=1e-6)


def test_a_checkpoint_of_one_variable_per_column_restores(tmp_path):
    """A checkpoint written with tf.estimator's layout (a variable per column and the
    bias, as tf.estimator and earlier pyhooks saved them) gives the model those weights."""
    values = data()
    est = model(tmp_path)
    est.train(inputs(values), steps=1, hooks=[silent()])  # the model_dir's data schema
    weights = {"a": [[0.5]], "b": [[-1.0], [2.0]], "c": [[0.25], [0.0], [-0.75]]}
    graph = tf.Graph()
    with graph.as_default():
        v1 = tf.compat.v1
        made = [v1.Variable(np.asarray(w, np.float32), name=f"linear/linear_model/{n}/weights")
                for n, w in weights.items()]
        made.append(v1.Variable(np.asarray([3.0], np.float32),
                                name="linear/linear_model/bias_weights"))
        made.append(v1.Variable(np.int64(7), name="global_step"))
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            v1.train.Saver(made).save(session, str(tmp_path / "model.ckpt"), global_step=7)
    assert est.latest_checkpoint().endswith("model.ckpt-7")
    expected = (values["a"] * 0.5 - values["b"][:, 0] + 2 * values["b"][:, 1]
                + np.array([0.25, 0.0, -0.75])[values["c"]] + 3.0)
    np.testing.assert_allclose(predicted(est, values), expected, rtol=1e-5, atol=1e-5)


def test_the_exported_saved_model_serves_the_checkpoints_weights(tmp_path):
    est = model(tmp_path / "model")
    est.train(inputs(data(), num_epochs=None), steps=20, hooks=[silent()])
    serve = tf.saved_model.load(est.export_savedmodel(str(tmp_path / "export"))).signatures[
        "serving_default"]
    values = data(seed=2)
    out = serve(a=tf.constant(values["a"]), b=tf.constant(values["b"]),
                c=tf.constant(values["c"]))["predictions"].numpy().ravel()
    assert np.abs(out).max() > 0.01  # trained weights, not the zeros it starts from
    np.testing.assert_allclose(out, by_hand(est, values), rtol=1e-5, atol=1e-6)


def test_a_checkpoint_hooks_metagraph_keeps_the_layout_without_a_warning(tmp_path, caplog):
    """A CheckpointSaverHook of the user's writes the graph's MetaGraph beside each
    checkpoint: the matrices' column layout is in it (as strings TensorFlow can
    serialize, so it logs no "Issue encountered when serializing"), and the hook's
    checkpoints hold one variable per column."""
    est = model(tmp_path / "model")
    saver = pyhooks.CheckpointSaverHook(str(tmp_path / "hook"), save_steps=1)
    with caplog.at_level("WARNING"):
        est.train(inputs(data(), num_epochs=None), steps=3, hooks=[silent(), saver])
    assert not [r for r in caplog.records if "serializing" in r.getMessage()]
    latest = tf.train.latest_checkpoint(str(tmp_path / "hook"))
    from tensorflow.core.protobuf import meta_graph_pb2

    proto = meta_graph_pb2.MetaGraphDef()
    with open(latest + ".meta", "rb") as f:
        proto.ParseFromString(f.read())
    layout = [b.decode() for b in proto.collection_def["pyhooks_dense_weights"].bytes_list.value]
    assert layout == ['["linear/dense_weights", [["linear/linear_model/a/weights", 1], '
                      '["linear/linear_model/b/weights", 2]]]']
    shapes = dict(tf.train.list_variables(latest))
    assert shapes["linear/linear_model/b/weights"] == [2, 1]
