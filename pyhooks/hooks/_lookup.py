"""Finding the loss and other tensors a built-in hook needs in the default graph (from ``begin()``).

The global step: :func:`pyhooks.hooks._common.global_step_read`.
"""

from __future__ import annotations

from pyhooks.errors import HookSetupError
from pyhooks.hooks._common import current_backend, map_leaves

__all__ = ["HookSetupError", "check_exclusive", "check_fetches", "check_has", "find_loss",
           "graph_element", "named_element", "names_as_values", "variable_of_handle"]


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


def check_exclusive(required=False, **given):
    """``ValueError`` naming both arguments when two exclusive ones are given, or
    (``required``) neither.

    The messages start with TensorFlow's words for a timer given both periods, or neither.
    """
    names = [name for name, value in given.items() if value is not None]
    if len(names) > 1:
        raise ValueError("Can not provide both every_secs and every_steps. Give at most one of "
                         f"`{names[0]}` and `{names[1]}`, got "
                         + " and ".join(f"{n}={given[n]!r}" for n in names) + ".")
    if required and not names:
        first, second = given
        raise ValueError("Either every_secs or every_steps should be provided. Give one of "
                         f"`{first}` and `{second}`.")


def named_element(name, graph):
    """What fetching a tensor or op ``name`` should give: its value, as TensorFlow's hooks
    resolve names (``_as_graph_element`` in ``basic_session_run_hooks``).

    ``"x:0"`` is that tensor; ``"x"`` the one output of operation ``x``; a resource
    variable's handle (what a variable's name gives) is the variable, whose fetch
    is its value.

    Raises:
        KeyError: TensorFlow's, naming the name: the graph has no such tensor, or
            operation ``x`` has no output (nothing to give).
        ValueError: operation ``x`` has several outputs (name one, ``"x:1"``).
    """
    if ":" in name:
        element = graph.as_graph_element(name)
    else:
        element = graph.as_graph_element(name + ":0")
        try:
            graph.as_graph_element(name + ":1")
        except (KeyError, ValueError):
            pass
        else:
            raise ValueError(f"Name {name} is ambiguous, as this `Operation` has multiple "
                             "outputs (at least 2).")
    return variable_of_handle(element, graph)


def variable_of_handle(element, graph):
    """The resource variable of ``graph`` whose handle ``element`` is (fetching the
    variable gives its value, fetching the handle a serialized handle), else ``element``."""
    if getattr(element, "dtype", None) is None or element.dtype.name != "resource":
        return element
    for variable in graph.get_collection("variables") + graph.get_collection("local_variables"):
        if getattr(variable, "handle", None) is element:
            return variable
    return element


def names_as_values(fetches, graph, where, handles=False):
    """``fetches`` (a structure) with each tensor or op name replaced by what gives its value
    (:func:`named_element`), and, if ``handles``, each variable's handle tensor by the
    variable; other leaves as they are.

    Raises:
        HookSetupError: a name that gives no value, naming ``where`` and the name.
    """
    def element(leaf):
        if not isinstance(leaf, str):
            return variable_of_handle(leaf, graph) if handles else leaf
        try:
            return named_element(leaf, graph)
        except (KeyError, ValueError) as error:
            message = error.args[0] if error.args else error
            raise HookSetupError(f"{where}: {leaf!r} is not a tensor of the graph: "
                                 f"{message}") from None
    return map_leaves(element, fetches)


def graph_element(value, what, hook_name):
    """``value`` (a tensor or a name, which gives its value) as an element of the default
    graph (or backend)."""
    backend = current_backend()
    if backend is not None:
        return backend.element(value, what, hook_name)
    import tensorflow as tf

    graph = tf.compat.v1.get_default_graph()
    try:
        if isinstance(value, str):
            return named_element(value, graph)
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
