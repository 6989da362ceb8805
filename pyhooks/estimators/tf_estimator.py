"""``tf.estimator``'s names, for TensorFlow 1.x programs that build their model in a ``model_fn``.

TensorFlow 2.21 has no ``tf.estimator``. A program written for it runs on
pyhooks once ``import tensorflow as tf`` becomes
``from pyhooks.estimators import tf1 as tf``: ``tf.estimator`` is then this
module, ``tf.layers`` is :mod:`pyhooks.estimators.layers`, ``tf.contrib`` has
the essentials of :mod:`pyhooks.estimators.contrib`, and every other name is
``tf.compat.v1``'s (``tf.losses``, ``tf.train``, ``tf.metrics``, ``tf.nn``...).

Here, with tf.estimator's arguments:

* :class:`Estimator` (``model_fn``, ``model_dir``, ``config``, ``params``): a
  pyhooks custom estimator; ``train()``, ``evaluate()``, ``predict()`` (a list
  of one dict per example), ``export_savedmodel()``, ``get_variable_value()``...
* :class:`EstimatorSpec`, :class:`ModeKeys` (``TRAIN``, ``EVAL``, ``PREDICT``:
  ``"train"``, ``"eval"``, ``"infer"``, as in TensorFlow),
  :class:`RunConfig`;
* ``inputs.numpy_input_fn`` and ``inputs.pandas_input_fn``
  (:func:`pyhooks.estimators.numpy_input_fn`, :func:`pyhooks.estimators.pandas_input_fn`),
  and an ``input_fn`` function returning a ``tf.data.Dataset``
  (:mod:`pyhooks.estimators.dataset_input`);
* :class:`TrainSpec`, :class:`EvalSpec`, :func:`train_and_evaluate`.

The canned estimators take pyhooks' feature columns: ``tf.estimator.DNNClassifier``
and the others are an ``AttributeError`` naming their pyhooks function
(``pyhooks.dnn_classifier()``) and ``tf.feature_column``'s counterparts.

Example:
    >>> from pyhooks.estimators import tf1 as tf
    >>> def model_fn(features, labels, mode, params):
    ...     logits = tf.layers.dense(features["x"], 3)
    ...     if mode == tf.estimator.ModeKeys.PREDICT:
    ...         return tf.estimator.EstimatorSpec(mode, predictions={"logits": logits})
    ...     ...
    >>> model = tf.estimator.Estimator(model_fn, params={"learning_rate": 0.1})
"""

from __future__ import annotations

import os
import types

from pyhooks.estimators import custom, training
from pyhooks.estimators.config import RunConfig
from pyhooks.estimators.custom import ModeKeys
from pyhooks.estimators.inputs import InputFn
from pyhooks.estimators.numpy_input import numpy_input_fn, pandas_input_fn
from pyhooks.estimators.training import train_and_evaluate

__all__ = ["Estimator", "EstimatorSpec", "EvalSpec", "ModeKeys", "RunConfig", "TrainSpec",
           "inputs", "train_and_evaluate"]

inputs = types.SimpleNamespace(numpy_input_fn=numpy_input_fn, pandas_input_fn=pandas_input_fn)
inputs.__doc__ = "``tf.estimator.inputs``: ``numpy_input_fn`` and ``pandas_input_fn``."

_CANNED = {
    "LinearRegressor": "linear_regressor", "LinearClassifier": "linear_classifier",
    "DNNRegressor": "dnn_regressor", "DNNClassifier": "dnn_classifier",
    "DNNLinearCombinedRegressor": "dnn_linear_combined_regressor",
    "DNNLinearCombinedClassifier": "dnn_linear_combined_classifier",
}
_OTHERS = {
    "BoostedTreesClassifier": "boosted trees went with tf.estimator; use pyhooks.dnn_classifier() "
                              "or a gradient boosting library (xgboost, lightgbm)",
    "BoostedTreesRegressor": "boosted trees went with tf.estimator; use pyhooks.dnn_regressor() "
                             "or a gradient boosting library (xgboost, lightgbm)",
    "export": "Estimator.export_savedmodel(export_dir_base) serves the model_fn's "
              "predictions under the signature serving_default, from placeholders named after "
              "the input's columns; there are no serving input receivers or export outputs",
    "Exporter": "train_and_evaluate() evaluates; export with Estimator.export_savedmodel()",
    "LatestExporter": "train_and_evaluate() evaluates; export with Estimator.export_savedmodel()",
    "FinalExporter": "train_and_evaluate() evaluates; export with Estimator.export_savedmodel()",
    "WarmStartSettings": "give the model_dir of the trained model to Estimator(model_dir=) to "
                         "continue from its checkpoint",
    "experimental": "tf.estimator.experimental is gone; early stopping and others: "
                    "pyhooks' hooks",
}


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    if name in _CANNED:
        raise AttributeError(
            f"tf.estimator.{name} is pyhooks.{_CANNED[name]}(), with pyhooks' feature columns "
            f"(pyhooks.column_numeric(), column_categorical_with_vocabulary_list()... for "
            f"tf.feature_column's) and its input from pyhooks.input_fn() or "
            f"tf.estimator.inputs.numpy_input_fn().")
    if name in _OTHERS:
        raise AttributeError(f"tf.estimator.{name} is not in pyhooks: {_OTHERS[name]}.")
    raise AttributeError(f"tf.estimator.{name} is not in pyhooks; tf.estimator's names here are "
                         f"{', '.join(__all__)}.")


def __dir__():
    return list(__all__)


class Estimator(custom.CustomEstimator):
    """``tf.estimator.Estimator(model_fn, model_dir, config, params)``: a custom estimator.

    Args:
        model_fn: ``model_fn(features, labels, mode, params, config)`` returning an
            :class:`EstimatorSpec` (``params`` and ``config`` optional, as in
            TensorFlow). ``features`` is a dict of the input's columns.
        model_dir: where checkpoints and event files go (default: the config's,
            else a new temporary directory).
        config: a :class:`RunConfig`, or None.
        params: a dict of hyperparameters passed to ``model_fn``.
        warm_start_from: not supported (None only): give a trained model's
            directory as ``model_dir`` to continue from its checkpoint.
    """

    def __init__(self, model_fn, model_dir=None, config=None, params=None, warm_start_from=None):
        if warm_start_from is not None:
            raise ValueError("`warm_start_from` is not supported: give the trained model's "
                             "directory as `model_dir` to continue from its checkpoint.")
        super().__init__(model_fn, model_dir=model_dir, config=config, params=params)
        self._one_prediction = False  # whether the model_fn predicts one tensor, not a dict

    @property
    def model_fn(self):
        """The ``model_fn`` this estimator calls."""
        return self._model_fn

    def eval_dir(self, name=None):
        """Where ``evaluate(name=)`` writes its TensorBoard metrics: ``model_dir/eval`` or
        ``model_dir/eval_<name>``, as in TensorFlow."""
        return os.path.join(self.model_dir, "eval" if not name else f"eval_{name}")

    def _call_model_fn(self, features, labels, mode):
        spec = super()._call_model_fn(features, labels, mode)
        if mode == ModeKeys.PREDICT:
            self._one_prediction = not isinstance(spec.predictions, dict)
        return spec

    # TensorFlow's order of the arguments (pyhooks' own estimators take steps before hooks)
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None,
              chief_only_hooks=None):
        """Trains as :meth:`pyhooks.estimators.Estimator.train` (and returns its history);
        ``chief_only_hooks`` is pyhooks' (EstimatorSpec's ``training_chief_hooks``)."""
        return super().train(input_fn, steps=steps, hooks=hooks, max_steps=max_steps,
                             saving_listeners=saving_listeners,
                             chief_only_hooks=chief_only_hooks)

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Evaluates as :meth:`pyhooks.estimators.Estimator.evaluate`."""
        return super().evaluate(input_fn, steps=steps, hooks=hooks, name=name,
                                checkpoint_path=checkpoint_path)

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        """The predictions, as TensorFlow's ``predict`` yields them, in a :class:`Predictions`
        list (which ``next()`` reads as it read TensorFlow's generator).

        One item per example (``yield_single_examples=False``: per batch of the
        input): a dict ``{key: value}``, or the value itself when the
        ``model_fn``'s ``predictions`` is one tensor rather than a dict.
        """
        if not yield_single_examples and not isinstance(input_fn, InputFn):
            raise ValueError("predict(yield_single_examples=False) cuts the predictions into the "
                             "input's batches of batch_size: give an input made by "
                             "numpy_input_fn() or input_fn(); a function returning a "
                             "tf.data.Dataset takes yield_single_examples=True only.")
        merged = super().predict(input_fn, hooks=hooks, predict_keys=predict_keys, as_dict=True,
                                 checkpoint_path=checkpoint_path)
        rows = len(next(iter(merged.values()))) if merged else 0
        size = 1 if yield_single_examples else input_fn.batch_size
        parts = [{key: (value[i] if yield_single_examples else value[i:i + size])
                  for key, value in merged.items()} for i in range(0, rows, size)]
        return Predictions([part["predictions"] for part in parts] if self._one_prediction
                           else parts)

    def export_savedmodel(self, export_dir_base, serving_input_receiver_fn=None,
                          assets_extra=None, as_text=False, checkpoint_path=None,
                          strip_default_attrs=True):
        """A SavedModel of the predictions, with TensorFlow's arguments (see
        :func:`pyhooks.estimators.export.export_savedmodel`).

        It serves the ``model_fn``'s predictions from placeholders named after
        the input's columns, as a receiver of
        ``build_raw_serving_input_receiver_fn`` did: ``serving_input_receiver_fn``
        and ``assets_extra`` are refused; ``strip_default_attrs`` is accepted.
        """
        if serving_input_receiver_fn is not None:
            raise ValueError("`serving_input_receiver_fn` is not supported: the SavedModel "
                             "serves the predictions from placeholders named after the input's "
                             "columns (a raw receiver); call export_savedmodel(export_dir_base).")
        if assets_extra:
            raise ValueError("`assets_extra` is not supported: copy the files into the export's "
                             "assets.extra directory after exporting.")
        return super().export_savedmodel(export_dir_base, checkpoint_path=checkpoint_path,
                                         as_text=as_text)

    export_saved_model = export_savedmodel  # TensorFlow 1.13's name


class Predictions(list):
    """What :meth:`Estimator.predict` returns: a list (``len()``, indexing, ``for``) that
    ``next()`` also reads, item after item, as TensorFlow's generator was read
    (``next(estimator.predict(input_fn))``)."""

    def __init__(self, items):
        super().__init__(items)
        self._read = 0  # items next() has returned

    def __next__(self):
        if self._read >= len(self):
            raise StopIteration
        self._read += 1
        return self[self._read - 1]


class EstimatorSpec(custom.EstimatorSpec):
    """``tf.estimator.EstimatorSpec``, with TensorFlow's arguments (see :func:`estimator_spec`).

    ``export_outputs``, ``scaffold`` and ``training_chief_hooks`` are accepted when
    None or empty only: pyhooks' SavedModel serves ``predictions``, its sessions
    build their own scaffold, and hooks for the chief go to
    ``train(chief_only_hooks=)``.
    """

    __slots__ = ()

    def __init__(self, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None,
                 export_outputs=None, training_chief_hooks=None, training_hooks=None,
                 scaffold=None, evaluation_hooks=None, prediction_hooks=None):
        if export_outputs:
            raise ValueError("EstimatorSpec(export_outputs=) is not supported: "
                             "export_savedmodel() serves the `predictions`.")
        if scaffold is not None:
            raise ValueError("EstimatorSpec(scaffold=) is not supported: pyhooks' sessions "
                             "make their own scaffold (initializers, saver).")
        if training_chief_hooks:
            raise ValueError("EstimatorSpec(training_chief_hooks=) is not supported: give "
                             "hooks for the chief to train(chief_only_hooks=), or "
                             "training_hooks= for every worker.")
        super().__init__(mode, predictions=predictions, loss=loss, train_op=train_op,
                         eval_metric_ops=eval_metric_ops, training_hooks=training_hooks,
                         evaluation_hooks=evaluation_hooks, prediction_hooks=prediction_hooks)


class TrainSpec(training.TrainSpec):
    """``tf.estimator.TrainSpec(input_fn, max_steps=None, hooks=None)``."""


class EvalSpec(training.EvalSpec):
    """``tf.estimator.EvalSpec``, with TensorFlow's arguments; ``exporters`` must be None."""

    def __init__(self, input_fn, steps=100, name=None, hooks=None, exporters=None,
                 start_delay_secs=120, throttle_secs=600):
        if exporters:
            raise ValueError("EvalSpec(exporters=) is not supported: export with "
                             "Estimator.export_savedmodel() after train_and_evaluate().")
        super().__init__(input_fn, steps=steps, name=name, hooks=hooks,
                         start_delay_secs=start_delay_secs, throttle_secs=throttle_secs)
