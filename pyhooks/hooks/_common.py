"""Small helpers shared by the built-in hooks (private)."""

from __future__ import annotations

__all__ = ["check_bool", "global_step_read"]


def global_step_read(hook_name, required=True):
    """The global step's read tensor of the default graph, as TensorFlow's hooks use.

    Call it in ``begin()``. TensorFlow's ``_get_or_create_global_step_read``
    is used when available: it caches one read tensor per graph (so a second
    ``begin()`` adds nothing) and is the tensor ``training_util`` makes the
    increment wait for, which gives fetched value + 1 == step reached.

    Raises:
        RuntimeError: naming ``hook_name`` if there is no global step and
            ``required``.
    """
    import tensorflow as tf

    try:
        from tensorflow.python.training import training_util

        tensor = training_util._get_or_create_global_step_read()  # noqa: SLF001
    except (ImportError, AttributeError):  # pragma: no cover - private API moved
        tensor = tf.compat.v1.train.get_global_step()
    if tensor is None and required:
        raise RuntimeError(f"Global step should be created to use {hook_name}.")
    return tensor


def check_bool(name, value):
    """Returns ``value`` as ``bool``; ``TypeError`` naming ``name`` unless it is a boolean."""
    if isinstance(value, bool):
        return value
    if type(value).__name__ == "bool_":  # numpy.bool_
        return bool(value)
    raise TypeError(f"`{name}` must be True or False, got {value!r} ({type(value).__name__}).")

