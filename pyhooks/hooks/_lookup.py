"""Finding the loss and other tensors a built-in hook needs in the default graph (from ``begin()``).

The global step: :func:`pyhooks.hooks._common.global_step_read`.
"""

from __future__ import annotations

from pyhooks.errors import HookSetupError
from pyhooks.hooks._common import current_backend

__all__ = ["HookSetupError", "check_exclusive", "check_fetches", "check_has", "find_loss",
           "graph_element"]


def check_fetches(value, where, allow_none=False):
    """``TypeError`` naming ``where`` unless ``value`` is something a session can fetch.

    Fetchable: a tensor, an operation or a variable (a TensorFlow or Keras
    object), a graph element's name, or a list, tuple or dict of them. A
    number or an array would fail only when the session runs.
    """
    if value is None and allow_none:
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            check_fetches(item, f"{where}[{i}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            check_fetches(item, f"{where}[{key!r}]")
        return
    module = type(value).__module__ or ""
    if isinstance(value, str) and value:
        return
    if module.split(".")[0] in ("tensorflow", "keras", "tf_keras") or hasattr(
            value, "_as_graph_element"):
        return
    raise TypeError(f"`{where}` must be a tensor, an operation, a variable or a tensor name "
                    f"(or a list or dict of them), got {value!r} ({type(value).__name__}).")


def check_has(name, value, methods, what):
    """``TypeError`` naming ``name`` unless ``value`` is None or has every one of ``methods``."""
    if value is not None and not all(callable(getattr(value, m, None)) or hasattr(
            type(value), m) for m in methods):
        raise TypeError(f"`{name}` must be {what}, got {value!r} ({type(value).__name__}).")
    return value


def check_exclusive(**given):
    """``ValueError`` naming both arguments when two exclusive ones are given.

    The message starts with TensorFlow's words for a timer given both periods.
    """
    names = [name for name, value in given.items() if value is not None]
    if len(names) > 1:
        raise ValueError("Can not provide both every_secs and every_steps. Give at most one of "
                         f"`{names[0]}` and `{names[1]}`, got "
                         + " and ".join(f"{n}={given[n]!r}" for n in names) + ".")


def graph_element(value, what, hook_name):
    """``value`` (a tensor or a tensor name) as an element of the default graph (or backend)."""
    backend = current_backend()
    if backend is not None:
        return backend.element(value, what, hook_name)
    import tensorflow as tf

    graph = tf.compat.v1.get_default_graph()
    try:
        return graph.as_graph_element(value)
    except (KeyError, ValueError, TypeError) as error:
        raise HookSetupError(f"{hook_name}: {what} {value!r} is not a tensor of the graph: "
                             f"{error}") from error


def find_loss(loss, hook_name, required):
    """``loss`` resolved in the graph, else the first tensor of the ``losses`` collection.

    Returns ``None`` when there is no loss and ``required`` is false.
    """
    if loss is not None:
        return graph_element(loss, "`loss`", hook_name)
    backend = current_backend()
    if backend is not None:
        losses = backend.get_collection("losses")
        return losses[0] if losses else None
    import tensorflow as tf

    losses = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.LOSSES)
    if losses:
        return losses[0]
    if required:
        raise HookSetupError(
            f"{hook_name} found no loss: pass `loss=` or add the per-example loss to the "
            "graph collection 'losses' (tf.compat.v1.add_to_collection('losses', loss)).")
    return None
