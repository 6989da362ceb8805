"""What ``model_fn``s of TensorFlow 1.x took from ``tf.contrib``, on TensorFlow 2.21.

``tf.contrib`` went with TensorFlow 2. tfestimators' documentation and tests
built models with a few of its functions; they are here with TensorFlow
1.x's arguments, defaults and variable names (R: ``tf$contrib$...``):

* :mod:`pyhooks.estimators.contrib.layers`: ``fully_connected``, ``stack``,
  ``dropout``, ``optimize_loss``;
* :mod:`pyhooks.estimators.contrib.framework`: ``get_global_step``,
  ``get_or_create_global_step``;
* :mod:`pyhooks.estimators.contrib.learn`: ``datasets.load_dataset("mnist")``,
  ``datasets.mnist.read_data_sets()``.

Any other name is an ``AttributeError`` that names what to use instead.

Example:
    >>> from pyhooks.estimators import tf1 as tf
    >>> logits = tf.contrib.layers.stack(features, tf.contrib.layers.fully_connected,
    ...                                  [10, 20, 10])
    >>> train_op = tf.contrib.layers.optimize_loss(
    ...     loss, tf.contrib.framework.get_global_step(), learning_rate=0.1,
    ...     optimizer="Adagrad")
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["framework", "layers", "learn"]

_GONE = {
    "estimator": "tf.contrib.estimator is gone: use the estimators of pyhooks.estimators",
    "data": "tf.contrib.data is gone: use tf.data",
    "rnn": "tf.contrib.rnn is gone: use Keras' recurrent layers in an eager loop",
    "slim": "tf.contrib.slim is gone: use tf.layers (pyhooks.estimators.layers)",
}


def lazy_names(package, names, gone):
    """A package's ``__getattr__``: its submodules ``names`` imported when first read,
    any other name an ``AttributeError`` with the text ``gone(name)``."""

    def __getattr__(name):
        if name in names:
            module = importlib.import_module(f"{package}.{name}")
            setattr(sys.modules[package], name, module)
            return module
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(gone(name))

    return __getattr__


__getattr__ = lazy_names(__name__, __all__,
                         lambda name: gone_message(f"tf.contrib.{name}", _GONE.get(name)))


def __dir__():
    return list(__all__)


def gone_message(what, instead=None):
    """The error text for a ``tf.contrib`` name pyhooks does not provide."""
    text = instead or (f"{what} was removed from TensorFlow 2: use tf.layers (dense, dropout, "
                       "conv2d, max_pooling2d, flatten) and tf.train's optimizers (R: tf$layers, "
                       "tf$train)")
    return (f"{text}. pyhooks provides tf.contrib.layers.fully_connected, stack, dropout and "
            "optimize_loss, tf.contrib.framework.get_global_step, and "
            "tf.contrib.learn.datasets.load_dataset(\"mnist\").")
