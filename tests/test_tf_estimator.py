"""tf.estimator's names (pyhooks.estimators.tf_estimator, ``tf1.estimator``), through real TensorFlow."""

import os

import numpy as np
import pytest

from pyhooks.estimators import (
    CustomEstimator,
    EvalSpec as PyhooksEvalSpec,
    EstimatorSpec as PyhooksEstimatorSpec,
    ModeKeys as PyhooksModeKeys,
    RunConfig as PyhooksRunConfig,
    mode_keys,
    numpy_input_fn,
    tf1,
    tf_estimator,
)

tf = pytest.importorskip("tensorflow")
v1 = tf.compat.v1


def test_the_names_are_pyhooks_own():
    est = tf1.estimator
    assert est is tf_estimator
    assert est.ModeKeys is PyhooksModeKeys and est.RunConfig is PyhooksRunConfig
    assert est.inputs.numpy_input_fn is numpy_input_fn
    assert issubclass(est.Estimator, CustomEstimator)
    assert issubclass(est.EstimatorSpec, PyhooksEstimatorSpec)
    assert issubclass(est.EvalSpec, PyhooksEvalSpec)
    assert sorted(dir(est)) == sorted(est.__all__)


def test_mode_keys_are_tensorflows_strings_in_python_and_in_r_s_mode_keys():
    # tf.estimator.ModeKeys: TRAIN "train", EVAL "eval", PREDICT "infer"
    assert (tf1.estimator.ModeKeys.TRAIN, tf1.estimator.ModeKeys.EVAL,
            tf1.estimator.ModeKeys.PREDICT) == ("train", "eval", "infer")
    assert mode_keys() == {"TRAIN": "train", "EVAL": "eval", "PREDICT": "infer"}


def _model_fn(features, labels, mode, params):
    out = tf.reshape(tf1.layers.dense(features["x"], 1), [-1])
    if mode == tf1.estimator.ModeKeys.PREDICT:
        return tf1.estimator.EstimatorSpec(mode=mode, predictions={"y": out})
    loss = v1.losses.mean_squared_error(labels, out)
    train_op = v1.train.GradientDescentOptimizer(params["rate"]).minimize(
        loss, global_step=v1.train.get_global_step())
    return tf1.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op, export_outputs={})


def test_estimator_with_tensorflows_arguments_trains_evaluates_predicts(tmp_path):
    grid = np.linspace(0, 1, 64)
    x = np.stack([grid, grid ** 2], axis=1)  # two values per example: features["x"] is [batch, 2]
    y = 3 * grid + 1
    model = tf1.estimator.Estimator(model_fn=_model_fn, model_dir=str(tmp_path / "m"),
                                    config=tf1.estimator.RunConfig(tf_random_seed=1),
                                    params={"rate": 0.5})
    train_input = tf1.estimator.inputs.numpy_input_fn(x={"x": x}, y=y, batch_size=16,
                                                      num_epochs=None, shuffle=True)
    model.train(input_fn=train_input, steps=200)
    metrics = model.evaluate(input_fn=tf1.estimator.inputs.numpy_input_fn(
        x={"x": x}, y=y, shuffle=False))
    assert metrics["global_step"] == 200 and metrics["loss"] < 0.05
    predictions = model.predict(input_fn=tf1.estimator.inputs.numpy_input_fn(
        x={"x": x}, shuffle=False))
    assert len(predictions) == 64
    assert abs(predictions[0]["y"] - 1) < 0.3
    assert model.get_variable_value("global_step") == 200


def test_train_and_evaluate_with_tensorflows_specs(tmp_path):
    grid = np.linspace(0, 1, 32)
    x = np.stack([grid, 1 - grid], axis=1)
    data = tf1.estimator.inputs.numpy_input_fn(x={"x": x}, y=2 * x[:, 0], batch_size=8,
                                               num_epochs=None, shuffle=True)
    once = tf1.estimator.inputs.numpy_input_fn(x={"x": x}, y=2 * x[:, 0], shuffle=False)
    model = tf1.estimator.Estimator(_model_fn, model_dir=str(tmp_path), params={"rate": 0.1})
    tf1.estimator.train_and_evaluate(
        model, tf1.estimator.TrainSpec(data, max_steps=20),
        tf1.estimator.EvalSpec(once, steps=None, exporters=None, throttle_secs=0))
    assert model.get_variable_value("global_step") == 20


def _one_tensor_model_fn(features, labels, mode):
    out = tf.reshape(tf1.layers.dense(features["x"], 1), [-1])
    loss = None if labels is None else v1.losses.mean_squared_error(labels, out)
    train_op = None if labels is None else v1.train.GradientDescentOptimizer(0.5).minimize(
        loss, global_step=v1.train.get_global_step())
    return tf1.estimator.EstimatorSpec(mode, predictions=out, loss=loss, train_op=train_op)


class _Counted(tf1.train.SessionRunHook):
    def __init__(self):
        self.runs = 0

    def after_run(self, run_context, run_values):
        self.runs += 1


def test_train_evaluate_predict_take_tensorflows_positional_arguments(tmp_path):
    """train(input_fn, hooks, steps), evaluate(input_fn, steps, hooks, checkpoint_path) and
    predict(input_fn, predict_keys, hooks, checkpoint_path, yield_single_examples)."""
    x = np.linspace(0, 1, 40)[:, None]
    model = tf1.estimator.Estimator(_one_tensor_model_fn, model_dir=str(tmp_path))
    data = tf1.estimator.inputs.numpy_input_fn({"x": x}, 2 * x[:, 0], batch_size=16,
                                               num_epochs=None, shuffle=True)
    trained, evaluated = _Counted(), _Counted()
    model.train(data, [trained], 5)
    first = model.latest_checkpoint()
    chief = _Counted()
    model.train(data, None, 5, chief_only_hooks=[chief])  # without a strategy: the chief
    assert chief.runs == 5
    once = tf1.estimator.inputs.numpy_input_fn({"x": x}, 2 * x[:, 0], batch_size=16,
                                               shuffle=False)
    assert trained.runs == 5
    assert model.evaluate(once, 2, [evaluated], first, "first")["global_step"] == 5
    assert evaluated.runs == 2
    assert model.model_fn is _one_tensor_model_fn
    assert os.listdir(model.eval_dir("first")) and model.eval_dir() == str(tmp_path / "eval")
    plain = tf1.estimator.inputs.numpy_input_fn({"x": x}, batch_size=16, shuffle=False)
    values = model.predict(plain)  # one tensor: the values themselves, as TensorFlow yields
    batches = model.predict(plain, None, None, first, False)
    assert len(values) == 40 and np.ndim(values[0]) == 0
    assert next(values) == values[0] and next(values) == values[1]  # as TensorFlow's generator
    assert len(list(values)) == 40  # a for loop or list() reads every item, whatever next() did
    assert [len(b) for b in batches] == [16, 16, 8]
    assert not np.allclose(np.concatenate(batches), values)  # step 5's, not step 10's
    np.testing.assert_array_equal(np.concatenate(model.predict(plain, None, None, None, False)),
                                  values)
    by_key = tf1.estimator.Estimator(_model_fn, model_dir=str(tmp_path / "dict"),
                                     params={"rate": 0.1})
    by_key.train(data, steps=2)
    assert [sorted(b) for b in by_key.predict(plain, yield_single_examples=False)] == [["y"]] * 3
    assert sorted(by_key.predict(plain)[0]) == ["y"]


def test_export_saved_model_takes_tensorflows_arguments_and_refuses_a_receiver(tmp_path):
    x = np.linspace(0, 1, 16)[:, None]
    model = tf1.estimator.Estimator(_one_tensor_model_fn, model_dir=str(tmp_path / "m"))
    model.train(tf1.estimator.inputs.numpy_input_fn({"x": x}, x[:, 0], shuffle=False), None, 1)
    with pytest.raises(ValueError, match="`serving_input_receiver_fn` is not supported: the "
                                         "SavedModel serves the predictions from placeholders"):
        model.export_savedmodel(str(tmp_path / "e"), lambda: None)
    with pytest.raises(ValueError, match="`assets_extra` is not supported"):
        model.export_saved_model(str(tmp_path / "e"), assets_extra={"a.txt": "/a.txt"})
    path = model.export_saved_model(str(tmp_path / "e"), strip_default_attrs=True)
    served = tf.saved_model.load(path).signatures["serving_default"]
    got = served(x=tf.constant(x))
    np.testing.assert_allclose(next(iter(got.values())).numpy().ravel(),
                               model.predict(tf1.estimator.inputs.numpy_input_fn(
                                   {"x": x}, shuffle=False)), rtol=1e-6)


def test_what_pyhooks_does_not_take_is_refused_with_the_alternative():
    with pytest.raises(ValueError, match="warm_start_from"):
        tf1.estimator.Estimator(_model_fn, warm_start_from="/somewhere")
    with pytest.raises(ValueError, match="export_outputs"):
        tf1.estimator.EstimatorSpec("infer", predictions={}, export_outputs={"a": 1})
    with pytest.raises(ValueError, match="scaffold"):
        tf1.estimator.EstimatorSpec("train", scaffold=object())
    with pytest.raises(ValueError, match="chief_only_hooks"):
        tf1.estimator.EstimatorSpec("train", training_chief_hooks=[object()])
    with pytest.raises(ValueError, match="exporters"):
        tf1.estimator.EvalSpec(None, exporters=[object()])
    with pytest.raises(AttributeError, match=r"tf.estimator.DNNClassifier is "
                                             r"pyhooks.dnn_classifier\(\)"):
        tf1.estimator.DNNClassifier  # noqa: B018
    with pytest.raises(AttributeError, match="boosted trees went with tf.estimator"):
        tf1.estimator.BoostedTreesClassifier  # noqa: B018
    with pytest.raises(AttributeError, match="tf.estimator.Nope is not in pyhooks; "
                                             "tf.estimator's names here are Estimator"):
        tf1.estimator.Nope  # noqa: B018
