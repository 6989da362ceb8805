"""Finding the loss and other tensors a built-in hook needs in the default graph (from ``begin()``).

The global step: :func:`pyhooks.hooks._common.global_step_read`.
"""

from __future__ import annotations

from pyhooks.errors import HookSetupError
from pyhooks.hooks._common import current_backend

__all__ = ["HookSetupError", "find_loss", "graph_element"]


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
