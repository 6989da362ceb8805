"""TensorFlow 1.x's API for ``model_fn``s: ``tf.compat.v1`` with ``layers`` from pyhooks.

R's exported ``tf`` object is this module: ``tf$layers$dense``,
``tf$losses$mean_squared_error``, ``tf$train$GradientDescentOptimizer``,
``tf$metrics$accuracy``, ``tf$nn$relu``... as tfestimators' users wrote them.
Every name but ``layers`` (see :mod:`pyhooks.estimators.layers`) is
``tf.compat.v1``'s. TensorFlow is imported on first use.
"""

from __future__ import annotations


def __getattr__(name):
    if name == "layers":
        from pyhooks.estimators import layers

        return layers
    if name.startswith("__"):
        raise AttributeError(name)
    if name == "contrib":
        raise AttributeError(
            "tf.contrib was removed from TensorFlow 2: use tf.layers (dense, dropout, conv2d, "
            "max_pooling2d, flatten) and tf.train's optimizers (R: tf$layers, tf$train).")
    from pyhooks.estimators._quiet import import_tensorflow

    return getattr(import_tensorflow().compat.v1, name)


def __dir__():
    from pyhooks.estimators._quiet import import_tensorflow

    return sorted(set(dir(import_tensorflow().compat.v1)) | {"layers"})
