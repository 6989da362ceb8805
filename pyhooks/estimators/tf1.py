"""TensorFlow 1.x's API for ``model_fn``s: ``tf.compat.v1`` with what TensorFlow 2 removed.

R's exported ``tf`` object is this module: ``tf$layers$dense``,
``tf$losses$mean_squared_error``, ``tf$train$GradientDescentOptimizer``,
``tf$metrics$accuracy``, ``tf$nn$relu``... as tfestimators' users wrote them.
In Python, ``from pyhooks.estimators import tf1 as tf`` in place of
``import tensorflow as tf`` runs a TensorFlow 1.x estimator program. Every name
is ``tf.compat.v1``'s except:

* ``layers``: :mod:`pyhooks.estimators.layers` (``tf.layers``' functions);
* ``estimator``: :mod:`pyhooks.estimators.tf_estimator` (``Estimator``,
  ``EstimatorSpec``, ``ModeKeys``, ``RunConfig``, ``inputs.numpy_input_fn``...);
* ``feature_column``: :mod:`pyhooks.estimators.feature_column_v1` (TensorFlow's,
  whose ``input_layer`` also takes pyhooks' feature columns);
* ``contrib``: :mod:`pyhooks.estimators.contrib` (``layers.fully_connected``,
  ``stack``, ``dropout``, ``optimize_loss``, ``framework.get_global_step``,
  ``learn.datasets.load_dataset("mnist")``);
* ``python``: TensorFlow's ``tensorflow.python`` package, which TensorFlow 1.x
  exposed as ``tf.python`` (its private modules: ``tf.python.ops.parsing_ops``...).

TensorFlow is imported on first use.
"""

from __future__ import annotations

import importlib

_OWN = {"layers": "pyhooks.estimators.layers", "estimator": "pyhooks.estimators.tf_estimator",
        "contrib": "pyhooks.estimators.contrib",
        "feature_column": "pyhooks.estimators.feature_column_v1"}


def __getattr__(name):
    if name in _OWN:
        return importlib.import_module(_OWN[name])
    if name.startswith("__"):
        raise AttributeError(name)
    from pyhooks.estimators._quiet import import_tensorflow

    tf = import_tensorflow()
    if name == "python":
        return importlib.import_module("tensorflow.python")
    return getattr(tf.compat.v1, name)


def __dir__():
    from pyhooks.estimators._quiet import import_tensorflow

    return sorted(set(dir(import_tensorflow().compat.v1)) | set(_OWN) | {"python"})
