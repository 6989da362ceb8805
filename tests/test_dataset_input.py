"""A custom estimator's tf.estimator-style input_fn: a function returning a tf.data.Dataset.

The model and the input functions are those of TensorFlow's custom estimator
tutorial (premade_estimator.py / iris_data.py), made small. Results are checked
against the same network computed with numpy from the trained variables.
"""

import json
import os
import re

import numpy as np
import pytest

import pyhooks
from pyhooks.estimators import tf1

tf = pytest.importorskip("tensorflow")
v1 = tf.compat.v1
N, BATCH = 150, 32


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    x = {"a": rng.random(N).astype(np.float32), "b": rng.random(N).astype(np.float32)}
    return x, (x["a"] * 3).astype(np.int64)


def model_fn(features, labels, mode, params):
    """The tutorial's classifier: a hidden layer, three classes."""
    params.setdefault("labels_seen", []).append((mode, labels))
    inputs = tf.stack([tf.cast(features["a"], tf.float32), tf.cast(features["b"], tf.float32)],
                      axis=1)
    hidden = tf1.layers.dense(inputs, 8, activation=tf.nn.relu, name="hidden")
    logits = tf1.layers.dense(hidden, 3, name="logits")
    predicted = tf.argmax(logits, 1)
    if mode == tf1.estimator.ModeKeys.PREDICT:
        return tf1.estimator.EstimatorSpec(mode, predictions={"class_ids": predicted,
                                                              "logits": logits})
    loss = v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == tf1.estimator.ModeKeys.EVAL:
        return tf1.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            "accuracy": v1.metrics.accuracy(labels, predicted)})
    train_op = v1.train.AdagradOptimizer(0.3).minimize(loss, global_step=v1.train.get_global_step())
    return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def train_input_fn(features, labels, batch_size, data=tf.data):
    dataset = data.Dataset.from_tensor_slices((dict(features), labels))
    return dataset.shuffle(1000, seed=1).repeat().batch(batch_size)


def eval_input_fn(features, labels, batch_size, data=tf.data):
    inputs = dict(features) if labels is None else (dict(features), labels)
    return data.Dataset.from_tensor_slices(inputs).batch(batch_size)


def numpy_logits(model, x):
    """The network's logits computed with numpy from the model's latest checkpoint."""
    value = model.get_variable_value
    inputs = np.stack([x["a"], x["b"]], axis=1).astype(np.float64)
    hidden = np.maximum(inputs @ value("hidden/kernel") + value("hidden/bias"), 0)
    return hidden @ value("logits/kernel") + value("logits/bias")


def mean_batch_loss(logits, y):
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    losses = -log_p[np.arange(len(y)), y]
    return np.mean([losses[i:i + BATCH].mean() for i in range(0, len(y), BATCH)])


class StepRecorder(pyhooks.SessionRunHook):
    """Finds the global step and the loss in the loop's graph at begin(); fetches the loss with
    each step and reads the step after it."""

    def begin(self):
        self.step_tensor = v1.train.get_global_step()
        self.loss_tensor = v1.get_collection(v1.GraphKeys.LOSSES)[0]
        self.planned = pyhooks.run_info().steps
        self.steps, self.losses = [], []

    def before_run(self, run_context):
        return pyhooks.SessionRunArgs(self.loss_tensor)

    def after_run(self, run_context, run_values):
        self.losses.append(float(run_values.results))
        self.steps.append(int(run_context.session.run(self.step_tensor)))


def estimator(tmp_path, **params):
    return tf1.estimator.Estimator(model_fn, model_dir=str(tmp_path / "model"), params=params,
                                   config=tf1.estimator.RunConfig(tf_random_seed=3))


# tf.estimator users' datasets are TensorFlow 1's (tf1.data, R's tf$data) or TensorFlow 2's
@pytest.mark.parametrize("api", [tf.data, tf1.data], ids=["tf.data", "tf1.data"])
def test_the_tutorials_input_functions_train_evaluate_and_predict(tmp_path, data, api):
    x, y = data
    model = estimator(tmp_path)
    recorder = StepRecorder()
    history = model.train(input_fn=lambda: train_input_fn(x, y, BATCH, api), steps=60,
                          hooks=[recorder])
    assert history.to_dict()["steps"][-1] == 60 and history.stop.reason == "steps"
    assert recorder.steps == list(range(1, 61)) and recorder.planned == 60
    assert np.isfinite(recorder.losses).all() and len(recorder.losses) == 60

    logits = numpy_logits(model, x)
    metrics = model.evaluate(input_fn=lambda: eval_input_fn(x, y, BATCH, api))
    assert metrics["global_step"] == 60
    assert metrics["accuracy"] == pytest.approx(np.mean(logits.argmax(axis=1) == y))
    assert metrics["loss"] == pytest.approx(mean_batch_loss(logits, y), rel=1e-5)
    assert metrics["accuracy"] > 0.6  # it learned

    predictions = model.predict(input_fn=lambda: eval_input_fn(x, None, BATCH, api))
    assert len(predictions) == N  # one pass, in the dataset's order
    np.testing.assert_allclose(np.stack([p["logits"] for p in predictions]), logits, atol=1e-5)
    # a dataset of (features, labels): predict() reads the features, as tf.estimator did
    labelled = model.predict(input_fn=lambda: eval_input_fn(x, y, BATCH, api))
    np.testing.assert_allclose(np.stack([p["logits"] for p in labelled]), logits, atol=1e-5)
    # labels predict() does not read are not looked at (these could not be read)
    sparse_labels = model.predict(input_fn=lambda: _sparse(x, y, labels=True))
    np.testing.assert_allclose(np.stack([p["logits"] for p in sparse_labels]), logits, atol=1e-5)
    seen = {mode: labels is None for mode, labels in model.params["labels_seen"]}
    assert seen == {"train": False, "eval": False, "infer": True}

    # the data contract, recorded from the dataset's element spec
    with open(os.path.join(model.model_dir, "pyhooks_schema.json"), encoding="utf-8") as file:
        schema = json.load(file)
    assert [(c["name"], c["kind"], c["dtype"], c["shape"]) for c in schema["features"]] == \
        [("a", "numeric", "float32", []), ("b", "numeric", "float32", [])]
    assert [(c["name"], c["kind"], c["dtype"]) for c in schema["response"]] == \
        [("y", "integer", "int64")]
    # the export serves the recorded features
    served = tf.saved_model.load(model.export_savedmodel(str(tmp_path / "export")))
    out = served.signatures["serving_default"](a=tf.constant(x["a"][:5]),
                                               b=tf.constant(x["b"][:5]))
    np.testing.assert_allclose(out["logits"].numpy(), logits[:5], atol=1e-5)
    # arrays follow the same contract: numpy_input_fn() on the dataset-trained model
    same = model.evaluate(tf1.estimator.inputs.numpy_input_fn(x, y, batch_size=BATCH,
                                                              shuffle=False))
    assert same["accuracy"] == metrics["accuracy"] and same["loss"] == pytest.approx(
        metrics["loss"], rel=1e-6)


def test_a_dataset_that_ends_ends_training_and_sizes_its_progress(tmp_path, data):
    x, y = data
    model = estimator(tmp_path)
    recorder = StepRecorder()
    history = model.train(lambda: eval_input_fn(x, y, BATCH), hooks=[recorder])
    assert recorder.planned == 5 and recorder.steps == [1, 2, 3, 4, 5]  # ceil(150 / 32)
    assert (history.stop.reason, history.stop.step) == ("end_of_input", 5)
    history = model.train(lambda: eval_input_fn(x, y, BATCH), steps=100, hooks=[recorder])
    assert recorder.planned == 5 and (history.stop.reason, history.stop.step) == \
        ("end_of_input", 10)
    history = model.train(lambda: eval_input_fn(x, y, BATCH), steps=3, hooks=[recorder])
    assert recorder.planned == 3 and (history.stop.reason, history.stop.step) == ("steps", 13)
    # each call builds its own graph (its dataset's), as tf.estimator did: one kept per mode
    assert len(model._states) == 1


def test_the_input_fn_gets_mode_params_and_config_as_tensorflow_passed_them(tmp_path, data):
    x, y = data
    calls = []

    def input_fn(params, mode, config):
        calls.append((mode, params["batch_size"], config.tf_random_seed))
        features = dict(x) if mode == tf1.estimator.ModeKeys.PREDICT else (dict(x), y)
        return tf.data.Dataset.from_tensor_slices(features).batch(params["batch_size"])

    model = estimator(tmp_path, batch_size=50)
    model.train(input_fn, steps=2)
    model.evaluate(input_fn)
    assert len(model.predict(input_fn)) == N
    assert calls == [("train", 50, 3), ("eval", 50, 3), ("infer", 50, 3)]


def test_features_alone_give_the_model_fn_no_labels(tmp_path, data):
    x, _ = data

    def autoencoder(features, labels, mode):
        assert labels is None
        inputs = tf.stack([features["a"], features["b"]], axis=1)
        out = tf1.layers.dense(tf1.layers.dense(inputs, 1), 2)
        loss = v1.losses.mean_squared_error(inputs, out)
        train_op = v1.train.AdamOptimizer(0.05).minimize(loss,
                                                         global_step=v1.train.get_global_step())
        return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                           predictions={"out": out})

    model = tf1.estimator.Estimator(autoencoder, model_dir=str(tmp_path),
                                    config=tf1.estimator.RunConfig(tf_random_seed=3))

    def train(steps):
        model.train(lambda: tf.data.Dataset.from_tensor_slices(dict(x)).repeat().batch(BATCH),
                    steps=steps)
        return model.evaluate(lambda: tf.data.Dataset.from_tensor_slices(dict(x)).batch(BATCH))

    early, late = train(10), train(190)
    assert (early["global_step"], late["global_step"]) == (10, 200)
    assert late["loss"] < early["loss"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory, data):
    x, y = data
    model = estimator(tmp_path_factory.mktemp("contract"))
    model.train(lambda: train_input_fn(x, y, BATCH), steps=20)
    return model


def test_other_number_types_are_read_as_recorded(trained, data):
    x, y = data
    expected = trained.evaluate(lambda: eval_input_fn(x, y, BATCH))
    wider = {"a": x["a"].astype(np.float64), "b": x["b"].astype(np.float64)}
    given = trained.evaluate(lambda: eval_input_fn(wider, y.astype(np.int32), BATCH))
    assert given["accuracy"] == expected["accuracy"]
    assert given["loss"] == pytest.approx(expected["loss"], rel=1e-6)


def _dict_labels(x, y):
    return tf.data.Dataset.from_tensor_slices((dict(x), {"kind": y})).batch(BATCH)


@pytest.mark.parametrize("make, error, message", [
    (lambda x, y: eval_input_fn({"a": x["a"]}, y, BATCH), ValueError,
     "its dataset has no feature 'b', which the model was trained on; its features are: a."),
    (lambda x, y: eval_input_fn({"a": x["a"].astype(str), "b": x["b"]}, y, BATCH), TypeError,
     "feature 'a' holds string values; the model was trained on float32 (float) values in it. "
     "Cast it in the dataset (tf.cast)"),
    (lambda x, y: eval_input_fn({"a": np.stack([x["a"], x["a"]], 1), "b": x["b"]}, y, BATCH),
     ValueError, "feature 'a' has the per-example shape [2]; the model was trained on []."),
    (lambda x, y: eval_input_fn(x, y.astype(np.float32), BATCH), TypeError,
     "label 'y' holds float32 values; the model was trained on int64 (integer) values in it."),
    (_dict_labels, ValueError, "its labels are ['kind']; the model was trained with ['y']."),
])
def test_a_dataset_that_breaks_the_data_contract_is_refused_naming_what(trained, data, make,
                                                                        error, message):
    x, y = data
    step = trained.latest_checkpoint()
    with pytest.raises(error, match=re.escape(message)):
        trained.evaluate(lambda: make(x, y))
    with pytest.raises(error, match=re.escape(message)):
        trained.train(lambda: make(x, y), steps=1)
    assert trained.latest_checkpoint() == step  # nothing ran


def _sparse(x, y, labels=False):
    """A dataset whose feature "a" (or whose labels) is a SparseTensor."""
    indices = [[i, 0] for i in range(N)]
    if labels:
        sparse = tf.sparse.SparseTensor(indices, y, [N, 1])
        return tf.data.Dataset.from_tensor_slices((dict(x), sparse)).batch(BATCH)
    sparse = tf.sparse.SparseTensor(indices, x["a"], [N, 1])
    return tf.data.Dataset.from_tensor_slices(({"a": sparse, "b": x["b"]}, y)).batch(BATCH)


@pytest.mark.parametrize("make, call, message", [
    (lambda x, y: (x, y), "train", "returned tuple; a function given as input_fn must return "
     "a tf.data.Dataset of (features, labels) or of features"),
    (lambda x, y: tf.data.Dataset.from_tensor_slices((x["a"], y)).batch(BATCH), "train",
     "its dataset's features must be a dict {name: tensor}, got TensorSpec("),
    (lambda x, y: tf.data.Dataset.from_tensor_slices((dict(x), y)), "train",
     "feature 'a' is a scalar: batch the dataset (dataset.batch(batch_size))."),
    (_sparse, "train", "feature 'a' is a SparseTensorSpec of float32; only dense tensors"),
    (lambda x, y: train_input_fn(x, y, BATCH), "train",
     "Training would never end: the input repeats forever (its dataset's repeat() has no "
     "count) and neither `steps` nor `max_steps` is given."),
    (lambda x, y: train_input_fn(x, y, BATCH), "evaluate",
     "Evaluation would never end: the input repeats forever (its dataset's repeat() has no "
     "count) and `steps` is not given."),
    (lambda x, y: train_input_fn(x, y, BATCH), "predict",
     "repeats forever, so the predictions would never end: predict() makes one pass "
     "(drop its repeat())."),
    # TensorFlow 1's datasets (tf1.data: tf.compat.v1.data) too
    (lambda x, y: tf1.data.Dataset.from_tensor_slices((dict(x), y)).repeat().batch(BATCH),
     "predict", "repeats forever, so the predictions would never end"),
    (lambda x, y: tf1.data.Dataset.from_tensor_slices((dict(x), y)).repeat().batch(BATCH),
     "evaluate", "Evaluation would never end"),
])
def test_what_a_custom_estimator_cannot_read_is_refused_before_any_step(trained, data, make,
                                                                        call, message):
    x, y = data
    step = trained.latest_checkpoint()
    guard = NoStep()  # a refusal that failed would run forever: it fails the test instead
    with pytest.raises((TypeError, ValueError), match=re.escape(message)):
        getattr(trained, call)(lambda: make(x, y), hooks=[guard])
    assert trained.latest_checkpoint() == step


class NoStep(pyhooks.SessionRunHook):
    def before_run(self, run_context):
        raise AssertionError("a step ran: the input was not refused before the loop")


def test_a_canned_estimator_refuses_a_function_naming_what_takes_one(tmp_path, data):
    x, y = data
    model = pyhooks.linear_regressor(pyhooks.feature_columns(pyhooks.column_numeric("a")),
                                     model_dir=str(tmp_path))
    message = ("A function that returns a tf.data.Dataset, as tf.estimator took, is the input of "
               "a custom estimator (estimator(model_fn)) only")
    with pytest.raises(TypeError, match=re.escape(message)):
        model.train(lambda: eval_input_fn(x, y, BATCH), steps=1)
    spec = pyhooks.train_spec(lambda: eval_input_fn(x, y, BATCH), max_steps=1)
    with pytest.raises(TypeError, match=re.escape(message)):
        pyhooks.train_and_evaluate(model, spec, pyhooks.eval_spec(lambda: None))


def test_train_and_evaluate_reads_functions_in_its_specs(tmp_path, data):
    x, y = data
    model = estimator(tmp_path)
    results, _ = tf1.estimator.train_and_evaluate(  # TensorFlow's (metrics, exports)
        model, tf1.estimator.TrainSpec(lambda: train_input_fn(x, y, BATCH), max_steps=30),
        tf1.estimator.EvalSpec(lambda: eval_input_fn(x, y, BATCH), steps=None,
                               start_delay_secs=0, throttle_secs=0))
    final = model.evaluate(lambda: eval_input_fn(x, y, BATCH))
    assert final["global_step"] == 30
    assert results["accuracy"] == final["accuracy"] and results["global_step"] == 30


class FailAt(pyhooks.SessionRunHook):
    def __init__(self, step):
        self.step = step

    def after_run(self, run_context, run_values):
        if run_context.session.run(v1.train.get_global_step()) == self.step:
            raise RuntimeError(f"failed at step {self.step}")


def test_an_error_keeps_what_was_trained_and_the_next_call_resumes(tmp_path, data):
    x, y = data
    model = estimator(tmp_path)
    with pytest.raises(RuntimeError, match="failed at step 7") as raised:
        model.train(lambda: train_input_fn(x, y, BATCH), steps=20, hooks=[FailAt(7)])
    assert (raised.value.pyhooks_stop.reason, raised.value.pyhooks_stop.step) == ("error", 7)
    assert model.latest_checkpoint().endswith("model.ckpt-7")
    history = model.train(lambda: train_input_fn(x, y, BATCH), steps=3)
    assert history.stop.step == 10
    assert history.to_dict()["steps"][-1] == 10


def test_predictions_by_batch_need_an_input_of_known_batch_size(trained, data):
    """tf.estimator's predict(yield_single_examples=False) yielded the input's batches."""
    x, y = data
    with pytest.raises(ValueError, match=re.escape(
            "a function returning a tf.data.Dataset takes yield_single_examples=True only")):
        trained.predict(lambda: eval_input_fn(x, None, BATCH), yield_single_examples=False)
    batches = trained.predict(tf1.estimator.inputs.numpy_input_fn(x, batch_size=BATCH,
                                                                  shuffle=False),
                              yield_single_examples=False)
    assert [len(b["logits"]) for b in batches] == [32, 32, 32, 32, 22]
