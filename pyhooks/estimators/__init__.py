"""Canned estimators, feature columns and ``input_fn`` on TensorFlow 2.21 (no ``tf.estimator``).

Canned models (linear, DNN, wide & deep ``dnn_linear_combined_*``), custom
estimators (``estimator(model_fn)`` with ``estimator_spec()``, see
:mod:`pyhooks.estimators.custom`), ``train_and_evaluate()``, SavedModel export
and TensorBoard event files in ``model_dir``. Column constructors and
``input_fn()`` import no TensorFlow; the estimators import it (quietly) when
they first build a graph.

Example:
    >>> from pyhooks.estimators import *
    >>> data = load_mtcars()
    >>> fcs = feature_columns(column_numeric("drat"))
    >>> input = input_fn(data, response="mpg", features=["drat", "cyl"], batch_size=8)
    >>> lr = linear_regressor(feature_columns=fcs)
    >>> history = train(lr, input, steps=4)
    >>> metrics = evaluate(lr, input)
"""

from __future__ import annotations

import importlib

from pyhooks.estimators.datasets import load_mtcars
from pyhooks.estimators.feature_columns import (
    column_bucketized,
    column_categorical_with_hash_bucket,
    column_categorical_with_identity,
    column_categorical_weighted,
    column_categorical_with_vocabulary_file,
    column_categorical_with_vocabulary_list,
    column_crossed,
    column_embedding,
    column_indicator,
    column_numeric,
    feature_columns,
)
from pyhooks.estimators.files import input_fn
from pyhooks.estimators.numpy_input import numpy_input_fn, pandas_input_fn
from pyhooks.estimators.parsing import (
    classifier_parse_example_spec,
    parse_example_spec,
    regressor_parse_example_spec,
)

_CANNED = {"dnn_classifier", "dnn_linear_combined_classifier", "dnn_linear_combined_regressor",
           "dnn_regressor", "evaluate", "linear_classifier", "linear_regressor", "predict",
           "train", "Estimator"}
_CUSTOM = {"CustomEstimator", "EstimatorSpec", "ModeKeys", "RunConfig", "estimator_spec",
           "input_layer", "mode_keys", "run_config"}
_TRAINING = {"EvalSpec", "TrainSpec", "eval_spec", "train_and_evaluate", "train_spec"}

__all__ = sorted([
    "classifier_parse_example_spec",
    "parse_example_spec",
    "regressor_parse_example_spec",
    "column_bucketized",
    "column_categorical_with_hash_bucket",
    "column_categorical_with_identity",
    "column_categorical_weighted",
    "column_categorical_with_vocabulary_file",
    "column_categorical_with_vocabulary_list",
    "column_crossed",
    "column_embedding",
    "column_indicator",
    "column_numeric",
    "feature_columns",
    "input_fn",
    "load_mtcars",
    "numpy_input_fn",
    "pandas_input_fn",
    *_CANNED,
    *_CUSTOM,
    *_TRAINING,
    "estimator",
])


def estimator(model_fn, model_dir=None, config=None, params=None):
    """A custom estimator whose ``model_fn`` builds the model (see :mod:`pyhooks.estimators.custom`)."""
    from pyhooks.estimators.custom import estimator as make

    return make(model_fn, model_dir, config, params)


def __getattr__(name):
    if name in _CANNED or name in _CUSTOM or name in _TRAINING:
        module = ("base" if name == "Estimator" else
                  "custom" if name in _CUSTOM else
                  "training" if name in _TRAINING else "canned")
        value = getattr(importlib.import_module(f"pyhooks.estimators.{module}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'pyhooks.estimators' has no attribute {name!r}")


def __dir__():
    return __all__
