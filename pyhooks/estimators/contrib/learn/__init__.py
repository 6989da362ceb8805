"""``tf.contrib.learn`` of TensorFlow 1.x: its ``datasets`` (R: ``tf$contrib$learn$datasets``).

Only :mod:`pyhooks.estimators.contrib.learn.datasets` (``load_dataset("mnist")``,
``mnist.read_data_sets()``) is here; any other name is an ``AttributeError``
that names what to use instead.
"""

from __future__ import annotations

from pyhooks.estimators.contrib import gone_message, lazy_names

__all__ = ["datasets"]


__getattr__ = lazy_names(__name__, __all__, lambda name: gone_message(
    f"tf.contrib.learn.{name}",
    f"tf.contrib.learn.{name} is gone: use the estimators of pyhooks.estimators, read "
    "data with NumPy or pandas and give it to input_fn() or numpy_input_fn(), parse "
    "tf.Example records with tf.io.parse_example() and a spec from "
    "classifier_parse_example_spec()"))


def __dir__():
    return list(__all__)
