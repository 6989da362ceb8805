"""``tf.contrib.framework``'s global-step functions of TensorFlow 1.x (R: ``tf$contrib$framework``).

``get_global_step()`` and ``get_or_create_global_step()`` are
``tf.compat.v1.train``'s functions of those names; any other name is an
``AttributeError`` naming the replacement.
"""

from __future__ import annotations

from pyhooks.estimators._quiet import import_tensorflow
from pyhooks.estimators.contrib import gone_message

__all__ = ["get_global_step", "get_or_create_global_step"]


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(gone_message(
        f"tf.contrib.framework.{name}",
        f"tf.contrib.framework.{name} was removed from TensorFlow 2: look for it in "
        "tf.compat.v1 (R: tf$...), e.g. tf.train.list_variables for list_variables"))


def __dir__():
    return list(__all__)


def get_global_step(graph=None):
    """The global step variable of ``graph`` (default: the graph being built), or None."""
    return import_tensorflow().compat.v1.train.get_global_step(graph)


def get_or_create_global_step(graph=None):
    """The global step variable of ``graph``, created if it has none."""
    return import_tensorflow().compat.v1.train.get_or_create_global_step(graph)
